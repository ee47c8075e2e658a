#!/usr/bin/env bash
# The client recipes against a real server of PostgreSQL MAJOR with hlculid installed: the Rust
# crate with tokio-postgres, sqlx and diesel; Python with psycopg 3, asyncpg, SQLAlchemy and
# Django; Node.js with node-postgres and Drizzle; Java with pgjdbc.
# HLCULID_TIER=quick (default) or full: as scripts/integration.sh. make test runs them all against
# the newest major and `-m smoke` (a connection from each language) against the others.
# Usage: scripts/clients.sh MAJOR [pytest args...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=$1; shift
mkdir -p "$RUN_ROOT"
export HLCULID_PG=$major HLCULID_RUN_ROOT=$RUN_ROOT/clients
export HLCULID_TIER=$(test_tier)
cd "$REPO"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider --strict-markers --durations=8 --durations-min=1 tests/clients "$@"
