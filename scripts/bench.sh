#!/usr/bin/env bash
# Benchmarks (bench/bench.py) on a release build. Usage: scripts/bench.sh [--quick] [--no-install] [bench.py args]
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
install=1 args=()
for a in "$@"; do
  if [ "$a" = --no-install ]; then install=0; else args+=("$a"); fi
done
mkdir -p "$RUN_ROOT"
if [ $install = 1 ]; then
  for major in 15 18; do install_extension "$major"; done
fi
export HLCULID_RUN_ROOT=$RUN_ROOT/bench HLCULID_PG18_BIN=$PG18_BIN
exec "$VENV/bin/python" "$REPO/bench/bench.py" --out "$REPO/bench/out" "${args[@]}"
