#!/usr/bin/env bash
# Benchmarks (bench/bench.py) on a release build.
# Usage: scripts/bench.sh [--quick] [--no-install] [--pg MAJOR...] [bench.py args]
# (a full run without --pg: PostgreSQL 18, and 15 for the workloads whose peers differ)
# A full run writes its report and charts to bench/report/ (committed: what the README cites);
# --quick (run by make test-full) writes to the scratch directory and checks no thresholds.
set -euo pipefail
. "$(dirname "$0")/env.sh"
install=1 quick=0 args=() majors=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-install) install=0 ;;
    --quick) quick=1; args+=("$1") ;;
    --pg) shift; while [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; do majors+=("$1"); shift; done; continue ;;
    *) args+=("$1") ;;
  esac
  shift
done
# --quick runs on every tested major; a full run, on the newest and the oldest (bench.py says which
# workloads run where; under 30 minutes, the subscriptions on 15 about 10 of them).
if [ ${#majors[@]} -eq 0 ]; then
  if [ $quick = 1 ]; then read -ra majors <<<"$(test_majors)"; else majors=(15 18); fi
fi
mkdir -p "$RUN_ROOT"
# One run at a time per checkout: two would share the machine and spoil each other's figures.
# The lock is held by the open descriptor, through the exec below, until bench.py exits.
exec 9>"$RUN_ROOT/bench.lock"
flock -n 9 || { echo "bench: another run of this checkout is in progress ($RUN_ROOT/bench.lock)" >&2; exit 1; }
[ $install = 1 ] && "$REPO/scripts/install.sh" "${majors[@]}"
out=$REPO/bench/report
[ $quick = 1 ] && out=$RUN_ROOT/bench-quick
export HLCULID_RUN_ROOT=$RUN_ROOT/bench
exec "$VENV/bin/python" "$REPO/bench/bench.py" --out "$out" --pg "${majors[@]}" "${args[@]}"
