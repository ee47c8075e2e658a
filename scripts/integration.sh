#!/usr/bin/env bash
# Integration tests (pytest) against real servers of PostgreSQL MAJOR (15 or 18).
# Usage: scripts/integration.sh MAJOR [--no-install] [pytest args...]
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
major=$1; shift
install=1
if [ "${1:-}" = --no-install ]; then install=0; shift; fi
mkdir -p "$RUN_ROOT"
[ $install = 1 ] && install_extension "$major"
install_released_sql "$major"
export HLCULID_PG=$major HLCULID_RUN_ROOT=$RUN_ROOT/integration HLCULID_PG18_BIN=$PG18_BIN
cd "$REPO"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/integration "$@"
