#!/usr/bin/env bash
# The client recipes against a real server of PostgreSQL MAJOR with hlculid installed: the Rust
# crate with tokio-postgres, sqlx and diesel; Python with psycopg 3, asyncpg, SQLAlchemy and
# Django; Node.js with node-postgres and Drizzle; Java with pgjdbc.
# Usage: scripts/clients.sh MAJOR [pytest args...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=$1; shift
mkdir -p "$RUN_ROOT"
export HLCULID_PG=$major HLCULID_RUN_ROOT=$RUN_ROOT/clients
cd "$REPO"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/clients "$@"
