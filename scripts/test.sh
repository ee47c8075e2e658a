#!/usr/bin/env bash
# Everything `make test` runs, on every supported PostgreSQL major (HLCULID_TEST_PG="15 18" to
# limit): lint, the pure core's unit and property tests, the schema check, and per major the
# #[pg_test]s, the packages (built, then installed the way a user installs them), the pg_regress
# suite and the integration tests against real servers; then pg_upgrade 16 -> 18 and the
# benchmarks at small sizes. Runs every step even after a failure, then prints one summary line
# and fails if any step did.
set -uo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
mkdir -p "$RUN_ROOT"
majors=$(test_majors)
log_dir=$RUN_ROOT/test-logs
rm -rf "$log_dir"; mkdir -p "$log_dir"
started=$SECONDS

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
step "clippy core" cargo clippy -p hlculid-core --all-targets --all-features -- -D warnings
for major in $majors; do
  step "clippy pg$major" cargo clippy --all-targets --no-default-features --features "pg$major pg_test" -- -D warnings
done
step "core unit and property tests" cargo test -p hlculid-core --all-features
step "schema snapshot" scripts/schema-check.sh
step "C declarations against each major's headers" scripts/check-c-decls.sh $majors
for major in $majors; do
  # cargo pgrx test, installed into and run from a private copy of the PostgreSQL install: the
  # shared install (make install's, make demo's) and any server running from it are never written.
  step "pg_test pg$major" scripts/pgrx-test.sh "$major"
  step "package pg$major" scripts/package.sh "$major"
  step "install pg$major from its package" scripts/package-test.sh install "$major"
  step "pg_regress pg$major" scripts/regress.sh "$major"
  step "integration pg$major" scripts/integration.sh "$major"
  step "clients pg$major" scripts/clients.sh "$major"
  step "remove and reinstall pg$major package" scripts/package-test.sh reinstall "$major"
done
# The benchmark suite at small sizes, so it never rots (release builds are installed by now), on
# the oldest and the newest major under test: the same code on each, and 18 has the uuidv7 peers.
bench_majors=$(echo $majors | awk '{print $1 ($NF != $1 ? " " $NF : "")}')
step "bench --quick" scripts/bench.sh --quick --no-install --pg $bench_majors
step "crate bench --quick" cargo bench -p hlculid-core --bench ids -- --quick

echo
if [ $failed -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]} (logs in $log_dir)"
fi
echo "make test took $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
echo "tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
