#!/usr/bin/env bash
# The Citus tests (tests/citus/, pytest) on PostgreSQL MAJOR: a coordinator and two workers with
# hlculid and Citus preloaded. hlculid must be installed already (scripts/install.sh, or a
# package), Citus by make setup (scripts/setup-citus.sh, from a vendored source tarball); the
# suite skips, saying why, without Citus or on a major Citus does not support (15).
# Usage: scripts/citus.sh MAJOR [pytest args...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=$1; shift
mkdir -p "$RUN_ROOT"
if ! tarball=$(citus_tarball); then
  export HLCULID_CITUS_MISSING="no Citus source tarball ($(citus_tarball_candidates | paste -sd' ' -))"
fi
export HLCULID_PG=$major HLCULID_RUN_ROOT=$RUN_ROOT/citus
export HLCULID_TIER=$(test_tier)
cd "$REPO"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider --strict-markers -rsx --durations=8 --durations-min=1 tests/citus "$@"
