#!/usr/bin/env bash
# make test (HLCULID_TIER=quick, the default) and make test-full (HLCULID_TIER=full), on every
# supported PostgreSQL major (HLCULID_TEST_PG="15 18" to limit). What runs, in which tier, on which
# majors and in which order is one table, tools/matrix.py's STEPS (tests/TIERS.md shows it): this
# script takes its plan (tools/matrix.py --plan) and runs it: the steps `first`, then the builds
# major by major, each major's `suite` steps in the background as soon as its build is installed
# (HLCULID_TEST_RUNNERS runners), the `after` steps beside them, and the `last` ones once the
# suites have ended. Runs every step even after a failure, prints the slowest steps and tests, then
# one summary line, and fails if any step did.
# Nothing is ever removed from the PostgreSQL installs a running server (make demo's) uses.
#   scripts/test.sh --list             the steps this tier would run, on these majors, in order
#   HLCULID_TEST_STEPS=REGEX scripts/test.sh   only the steps whose name matches (e.g.
#                                      'tools|pg_regress': a major's suites still wait for its
#                                      build steps, run or not)
set -uo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
tier=$(test_tier) || exit 2
case "${1:-}" in
  --list) exec python3 "$REPO/tools/matrix.py" --list --tier "$tier" --majors "$(test_majors)" ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--list]   (HLCULID_TIER, HLCULID_TEST_PG, HLCULID_TEST_STEPS: docs/development.md)" >&2; exit 2 ;;
esac
# The tiers build with the test-build profile (Cargo.toml) into their own package directory; the
# release profile and target/package/ are make package's.
BUILD_PROFILE=test-build PACKAGE_DIR=$REPO/target/test-package
export HLCULID_TIER=$tier HLCULID_PROFILE=$BUILD_PROFILE HLCULID_PACKAGE_DIR=$PACKAGE_DIR
# Cargo's output goes to the machine's build cache (env.sh), shared by every checkout: a fresh clone
# compiles its own two crates, not pgrx, bindgen's bindings and the clients' dependencies again.
# Cargo's fingerprints decide what is stale, and scripts/package.sh and pgrx-test.sh take the
# cache's lock around building and copying out, so two checkouts never swap each other's library.
# A cache grown past HLCULID_CACHE_MAX_GB (default 40) is emptied first.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE_ROOT/cargo-target}
mkdir -p "$CARGO_TARGET_DIR"
if [ "$(du -s --block-size=1G "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1)" -gt "${HLCULID_CACHE_MAX_GB:-40}" ]; then
  echo "the build cache $CARGO_TARGET_DIR is over ${HLCULID_CACHE_MAX_GB:-40} GB: emptied"
  (exec 8>"$CACHE_ROOT/cargo-target.lock"; flock 8; rm -rf "$CARGO_TARGET_DIR"; mkdir -p "$CARGO_TARGET_DIR")
fi
mkdir -p "$RUN_ROOT"
majors=$(test_majors)
# The plan: "runners N", then one line a step: WHEN, MAJOR (or -), NAME and COMMAND, tab-separated
plan=$(python3 "$REPO/tools/matrix.py" --plan --tier "$tier" --majors "$majors") || exit 2
plan_runners=1 plan_when=() plan_major=() plan_name=() plan_cmd=()
while IFS=$'\t' read -r w m n c; do
  if [ "$w" = runners ]; then plan_runners=$m; continue; fi
  plan_when+=("$w") plan_major+=("$m") plan_name+=("$n") plan_cmd+=("$c")
done <<<"$plan"
log_dir=$RUN_ROOT/test-logs
rm -rf "$log_dir"; mkdir -p "$log_dir"
# written by this run's builds, read by the schema check (a run without builds, HLCULID_TEST_STEPS,
# reads the last run's)
[[ " ${plan_when[*]} " == *" build "* ]] && rm -f "$RUN_ROOT"/schema-*.sql
started=$SECONDS

results=$log_dir/results # one line a step: "ok|FAILED TESTS SECONDS NAME", from every process
: >"$results"
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
  local t0=$SECONDS n
  echo "== $name"
  if "$@" >"$log" 2>&1; then
    n=$(count "$log")
    echo "   ok ($n tests, $((SECONDS - t0)) s)"
    echo "ok $n $((SECONDS - t0)) $name" >>"$results"
  else
    echo "   FAILED ($((SECONDS - t0)) s); last lines of $log:"
    tail -40 "$log" | sed 's/^/   | /'
    echo "FAILED 0 $((SECONDS - t0)) $name" >>"$results"
  fi
}
no_warnings() { # no_warnings MAJOR: the package build of MAJOR (without pg_test) printed no warning
  local log=$RUN_ROOT/package-$1.log
  [ -f "$log" ] || { echo "no build log $log"; return 1; }
  if sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A8 '^warning'; then
    echo "the build of PostgreSQL $1 printed the warnings above ($log): the release library must build warning-free"
    return 1
  fi
}
install_build() { # install_build MAJOR: this run's build into the shared install, file by rename
  "$PACKAGE_DIR/hlculid-$(crate_version)-pg$1-linux-$(uname -m)/install.sh" "$(pg_config_for "$1")"
}
# The tests of each major run in the background, each as soon as its build is installed, while the
# foreground builds the next majors and runs the `after` steps (the builds keep both cores busy, the
# suites mostly wait on servers).
run_phase() { # run_phase WHEN [MAJOR]: the plan's steps of one phase (of one major), in order
  local i
  for i in "${!plan_when[@]}"; do
    [ "${plan_when[$i]}" = "$1" ] || continue
    [ -z "${2:-}" ] || [ "${plan_major[$i]}" = "$2" ] || continue
    step "${plan_name[$i]}" eval "${plan_cmd[$i]}"
  done
}
run_tests() { # run_tests MAJOR...: one runner: the suites of these majors, one major after another
  local major
  for major in "$@"; do
    while [ ! -e "$log_dir/built-$major" ]; do
      kill -0 $$ 2>/dev/null || return 1 # the run was stopped
      sleep 1
    done
    run_phase suite "$major"
  done
}

echo "tier: $tier, PostgreSQL $majors${HLCULID_TEST_STEPS:+, steps matching '$HLCULID_TEST_STEPS'}"
run_phase first
# The suites wait on servers far more than they compute (the machine is mostly idle while they
# run): every major's suite at once in the quick tier, two at a time in the full one, whose soak
# and 1M-row tests do load the machine (the table's runners; HLCULID_TEST_RUNNERS to choose).
runners=${HLCULID_TEST_RUNNERS:-$plan_runners}
tests_pids=
for ((r = 0; r < runners; r++)); do
  run_tests $(echo $majors | awk -v r=$r -v n=$runners '{for (i = 1 + r; i <= NF; i += n) print $i}') \
    >"$log_dir/tests-$r.out" 2>&1 &
  tests_pids="$tests_pids $!"
done
# One build per major, installed the way a package manager installs; then its suites may start.
for major in $majors; do
  run_phase build "$major"
  touch "$log_dir/built-$major"
done
run_phase after
wait $tests_pids
cat "$log_dir"/tests-*.out
run_phase last
passed=$(awk '{s+=$2} END {print s+0}' "$results")
failed=$(grep -c '^FAILED' "$results")
failed_steps=$(grep '^FAILED' "$results" | cut -d' ' -f4- | paste -sd, -)

echo
echo "slowest steps:"
sort -k3,3rn "$results" | head -8 | awk '{t=$3; $1=$2=$3=""; sub(/^ +/, ""); printf "  %4d s  %s\n", t, $0}'
echo "slowest tests (pytest):"
for log in "$log_dir"/integration_pg*.log "$log_dir"/citus_pg*.log "$log_dir"/clients*_pg*.log; do
  [ -f "$log" ] || continue
  major=$(basename "$log" .log | sed 's/.*_pg//')
  grep -E '^[0-9.]+s (call|setup|teardown) ' "$log" | sed "s/\$/ (pg$major)/"
done | sort -rn | head -12 | sed 's/^/  /'
if [ "$failed" -gt 0 ]; then
  echo "failed steps: $failed_steps (logs in $log_dir)"
  # the failing tests by name, last, so that a run whose log only its tail shows still tells them
  grep -hE '^(FAILED|ERROR) [^ ]+::' "$log_dir"/*.log 2>/dev/null | cut -c1-300 | head -20 | sed 's/^/  /'
fi
echo "make test$([ "$tier" = full ] && echo -full) took $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
