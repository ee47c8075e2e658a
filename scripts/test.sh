#!/usr/bin/env bash
# Everything `make test` runs, on PostgreSQL 15 and 18: lint, the pure core's unit and property
# tests, the #[pg_test]s, the pg_regress suite, and the integration tests against real servers.
# Runs every step even after a failure, then prints one summary line and fails if any step did.
set -uo pipefail
. "$(dirname "$0")/cluster.sh"
cd "$REPO"
mkdir -p "$RUN_ROOT"
majors=${HLCULID_TEST_PG:-"15 18"}
log_dir=$RUN_ROOT/test-logs
rm -rf "$log_dir"; mkdir -p "$log_dir"

passed=0 failed=0 failed_steps=()
count() { # count LOG: number of tests a step's log reports as passed
  local log=$1 n=0
  n=$(grep -hoE 'test result: ok\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
  n=$((n + $(grep -hoE 'All [0-9]+ tests passed' "$log" | awk '{s+=$2} END {print s+0}')))
  n=$((n + $(grep -hoE '^[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')))
  echo "$n"
}
step() { # step NAME COMMAND...
  local name=$1; shift
  local log=$log_dir/${name//[^a-zA-Z0-9_-]/_}.log
  local t0=$SECONDS
  echo "== $name"
  if "$@" >"$log" 2>&1; then
    local n; n=$(count "$log")
    passed=$((passed + n))
    echo "   ok ($n tests, $((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); failed_steps+=("$name")
    echo "   FAILED ($((SECONDS - t0)) s); last lines of $log:"
    tail -40 "$log" | sed 's/^/   | /'
  fi
}

step "fmt" cargo fmt --all --check
step "clippy core" cargo clippy -p hlculid-core --all-targets -- -D warnings
step "clippy pg15" cargo clippy --all-targets --no-default-features --features "pg15 pg_test" -- -D warnings
step "clippy pg18" cargo clippy --all-targets --no-default-features --features "pg18 pg_test" -- -D warnings
step "core unit and property tests" cargo test -p hlculid-core
step "schema snapshot" scripts/schema-check.sh
for major in $majors; do
  pgdata=$RUN_ROOT/pgrx-$major
  rm -rf "$pgdata"; mkdir -p "$pgdata"; chown postgres: "$pgdata"
  step "pg_test pg$major" cargo pgrx test "pg$major" --runas postgres --pgdata "$pgdata/data"
  step "install pg$major" install_extension "$major"
  step "pg_regress pg$major" scripts/regress.sh "$major" --no-install
  step "integration pg$major" scripts/integration.sh "$major" --no-install
done
# The benchmark suite at small sizes, so it never rots (release builds are installed by now).
step "bench --quick" scripts/bench.sh --quick --no-install --pg $majors

echo
if [ $failed -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]} (logs in $log_dir)"
fi
echo "tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
