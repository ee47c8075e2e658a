#!/usr/bin/env bash
# make test (HLCULID_TIER=quick, the default) and make test-full (HLCULID_TIER=full), on every
# supported PostgreSQL major (HLCULID_TEST_PG="15 18" to limit). tests/TIERS.md says what runs in
# which tier.
#   both: one version everywhere and the release steps dry (check-versions.sh, release.sh --check
#         and its test in a scratch clone), META.json and make dist, the crate's package and
#         docs; lint, the pure core's unit, property and fuzz tests, the C declarations; per major one
#         build (cargo profile test-build, installed the way a package manager installs), the
#         schema check on the SQL that build generated, the pg_regress suite and the integration
#         tests (the quick tier at small sizes, without the tests marked `full`); the Citus tests
#         (a coordinator and two workers: on 17 in the quick tier, 16-18 in the full one);
#   quick: clippy of the extension on the newest major, the #[pg_test]s on the oldest and the
#         newest; the packages tested once per install layout (the .deb on 15, the tarball on the
#         newest other major), in a private copy of the install; the client recipes against the
#         newest major, a connection smoke test against the others;
#   full: clippy, the #[pg_test]s and the packages on every major, every client on every major, the
#         soak, fault and cluster tests, 1M-row runs, the long fuzz, the benchmarks at small sizes.
# Nothing is ever removed from the PostgreSQL installs a running server (make demo's) uses.
# Each major's tests run while the next majors build. Runs every step even after a failure, prints
# the slowest steps and tests, then one summary line
# and fails if any step did.
set -uo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
tier=$(test_tier) || exit 2
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
oldest=$(echo $majors | awk '{print $1}') newest=$(echo $majors | awk '{print $NF}')
log_dir=$RUN_ROOT/test-logs
rm -rf "$log_dir"; mkdir -p "$log_dir"
rm -f "$RUN_ROOT"/schema-*.sql # written by this run's builds, read by the schema check
started=$SECONDS

# What the quick tier runs once per layout or at the edges, the full tier on every major.
edge_majors=$(echo "$oldest $newest" | tr ' ' '\n' | awk '!seen[$0]++' | xargs)
bench_majors=$edge_majors
# install layouts: Debian's (15, the .deb) and the PyPI builds' (the newest of the others)
layout_majors=$(for m in $majors; do [ "$m" = 15 ] && echo 15; done
                for m in $majors; do [ "$m" != 15 ] && echo "$m"; done | tail -1)
layout_majors=$(echo $layout_majors)
clippy_majors=$newest # every major builds below; the lints on the newest (full: every major)
if [ "$tier" = full ]; then edge_majors=$majors layout_majors=$majors clippy_majors=$majors; fi
in_list() { [[ " $2 " == *" $1 "* ]]; }
# the Citus suite (tests/citus/): on every major Citus supports (16-18) in the full tier, on 17 in
# the quick one (or the newest of those under test when 17 is not)
citus_majors=$(for m in $majors; do in_list "$m" "$CITUS_MAJORS" && echo "$m"; done | xargs)
if [ "$tier" = quick ] && [ -n "$citus_majors" ]; then
  citus_majors=$(in_list 17 "$citus_majors" && echo 17 || echo "${citus_majors##* }")
fi

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
tests_of() { # tests_of MAJOR: what runs against the installed build of one major (no cargo build)
  local major=$1
  # install, remove and install again from the package, in a private copy of the install
  in_list "$major" "$layout_majors" && step "package pg$major" scripts/package-test.sh "$major"
  step "pg_regress pg$major" scripts/regress.sh "$major"
  step "integration pg$major" scripts/integration.sh "$major"
  # a coordinator and two workers with Citus (16-18): the newest of those in the quick tier
  in_list "$major" "$citus_majors" && step "citus pg$major" scripts/citus.sh "$major"
  if [ "$tier" = full ] || [ "$major" = "$newest" ]; then
    step "clients pg$major" scripts/clients.sh "$major"
  else
    step "clients smoke pg$major" scripts/clients.sh "$major" -m smoke
  fi
}
# The tests of each major run in the background, each as soon as its build is installed, while the
# foreground builds the next majors and runs the #[pg_test]s (the builds keep both cores busy, the
# tests mostly wait on servers): one runner takes the majors one after another (the full tier: two
# runners, every other major each).
run_tests() { # run_tests MAJOR...
  local major
  for major in "$@"; do
    while [ ! -e "$log_dir/built-$major" ]; do
      kill -0 $$ 2>/dev/null || return 1 # the run was stopped
      sleep 1
    done
    tests_of "$major"
  done
}

echo "tier: $tier, PostgreSQL $majors"
# Release hygiene first (seconds, no build): one version everywhere, the release steps dry, PGXN.
step "versions" scripts/check-versions.sh
step "release --check" scripts/release.sh --check
step "PGXN META.json and make dist" scripts/dist.sh --out "$RUN_ROOT/dist"
step "fmt" cargo fmt --all --check
# the committed upgrade scripts generated from sql/src/upgrade/*.sql.in and the sql/src sources
step "generated SQL" scripts/gen-sql.sh --check
# The suites wait on servers far more than they compute (the machine is mostly idle while they
# run): every major's suite at once in the quick tier, two at a time in the full one, whose soak
# and 1M-row tests do load the machine (HLCULID_TEST_RUNNERS to choose).
runners=${HLCULID_TEST_RUNNERS:-$([ "$tier" = full ] && echo 2 || echo 4)}
tests_pids=
for ((r = 0; r < runners; r++)); do
  run_tests $(echo $majors | awk -v r=$r -v n=$runners '{for (i = 1 + r; i <= NF; i += n) print $i}') \
    >"$log_dir/tests-$r.out" 2>&1 &
  tests_pids="$tests_pids $!"
done
# One build per major (profile test-build): the tarball (and the .deb on 15) and the SQL pgrx
# generated, which the schema check reads; installed into the shared install the way a package
# manager installs (each file renamed into place), so a running server keeps what it loaded.
for major in $majors; do
  step "build pg$major" scripts/package.sh "$major"
  step "build pg$major warning-free" no_warnings "$major"
  step "install pg$major" install_build "$major"
  touch "$log_dir/built-$major"
done
step "schema check" scripts/schema-check.sh --built
# The lints and the core's tests after the builds, beside the majors' suites (before, every suite
# waited for them).
step "clippy core" cargo clippy -p hlculid-core --all-targets --all-features -- -D warnings
for major in $clippy_majors; do
  step "clippy pg$major" cargo clippy --all-targets --no-default-features --features "pg$major pg_test" -- -D warnings
done
step "crate package and docs (hlculid-core)" scripts/crate-check.sh
# core/tests/fuzz.rs: 1M cases per target in the full tier (its default), 50,000 in the quick one
fuzz_cases=${HLCULID_FUZZ_CASES:-$([ "$tier" = full ] && echo 1000000 || echo 50000)}
step "core unit, property and fuzz tests" env HLCULID_FUZZ_CASES="$fuzz_cases" cargo test -p hlculid-core --all-features
step "C declarations against each major's headers" scripts/check-c-decls.sh $majors
# a fake release and bump in a scratch clone, its schema check on the SQL these builds generated
step "release script (scratch clone)" scripts/release-test.sh
# cargo pgrx test, installed into and run from a private copy of the PostgreSQL install: the shared
# install (make install's, make demo's) and any server running from it are never written.
for major in $edge_majors; do
  step "pg_test pg$major" scripts/pgrx-test.sh "$major"
done
wait $tests_pids
cat "$log_dir"/tests-*.out
if [ "$tier" = full ]; then
  # The benchmark suite at small sizes, so it never rots, on the oldest and the newest major: the
  # same code on each, and 18 has the uuidv7 peers. (The test-build profile: no thresholds.)
  step "bench --quick" scripts/bench.sh --quick --no-install --pg $bench_majors
  step "crate bench --quick" cargo bench -p hlculid-core --bench ids -- --quick
fi
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
fi
echo "make test$([ "$tier" = full ] && echo -full) took $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
