#!/usr/bin/env bash
# Benchmarks (bench/bench.py) on a release build.
# Usage: scripts/bench.sh [--quick] [--no-install] [bench.py args]
# A full run writes its report and charts to bench/report/ (committed: what the README cites);
# --quick (run by make test) writes to the scratch directory and checks no thresholds.
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
install=1 quick=0 args=()
for a in "$@"; do
  case "$a" in
    --no-install) install=0 ;;
    --quick) quick=1; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
mkdir -p "$RUN_ROOT"
if [ $install = 1 ]; then
  for major in 15 18; do install_extension "$major"; done
fi
out=$REPO/bench/report
[ $quick = 1 ] && out=$RUN_ROOT/bench-quick
export HLCULID_RUN_ROOT=$RUN_ROOT/bench HLCULID_PG18_BIN=$PG18_BIN
exec "$VENV/bin/python" "$REPO/bench/bench.py" --out "$out" "${args[@]}"
