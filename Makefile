# hlculid: the commands a developer types. All real work lives in scripts/.
.PHONY: setup test demo demo-stop install bench

# One-time (and idempotent) machine set-up: Debian packages, then cargo-pgrx, PostgreSQL 18, pgrx init.
setup:
	scripts/setup-os.sh
	scripts/setup-dev.sh

# Everything, on PostgreSQL 15 and 18 (HLCULID_TEST_PG="15" to limit).
test:
	scripts/test.sh

# A throwaway PostgreSQL 15 server with hlculid preloaded, and the worked example.
demo:
	scripts/demo.sh start

demo-stop:
	scripts/demo.sh stop

# Build and install into PostgreSQL 15 and 18 (release build).
install:
	scripts/install.sh
