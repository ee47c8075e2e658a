#!/usr/bin/env bash
# make demo: builds and installs hlculid into PostgreSQL $HLCULID_DEMO_PG (default 15), starts a
# throwaway server in .demo/ (its own socket dir and a free port, hlculid preloaded) and runs the
# worked example. make demo-stop: stops it.
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=${HLCULID_DEMO_PG:-15}
link=$REPO/.demo

demo_dir() {
  # The server runs as 'postgres' (as the invoking user when that is not root). When it cannot
  # reach the checkout (e.g. one under /root), the cluster lives in /tmp and .demo points to it.
  if as_server test -x "$REPO" 2>/dev/null; then
    echo "$REPO/.demo"
  else
    echo "$RUN_ROOT/demo"
  fi
}

case "${1:-start}" in
stop)
  if [ -e "$link" ]; then
    pgcluster stop "$(readlink -f "$link")"
    echo "demo server stopped"
  fi
  exit 0 ;;
start) ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac

mkdir -p "$RUN_ROOT"
echo "building and installing hlculid into PostgreSQL $major (release build)..."
"$REPO/scripts/install.sh" "$major"
dir=$(demo_dir)
[ -e "$link" ] && pgcluster stop "$(readlink -f "$link")"
[ -L "$link" ] && rm -f "$link"
PORT=$(pgcluster create "$dir" "$major" --conf "shared_preload_libraries = 'hlculid'" \
  --conf "hlculid.publisher_id = 10" --conf "timezone = 'UTC'")
[ "$dir" != "$link" ] && ln -sfn "$dir" "$link"
psql_demo() { "$(pg_bin "$major")/psql" -X -v ON_ERROR_STOP=1 -h "$dir" -p "$PORT" -U postgres "$@"; }

psql_demo -q <<'SQL'
\pset footer off
CREATE EXTENSION hlculid;
\echo
\echo '== Six events from publishers A (0x000A) and B (0x000B) arrive out of order: A3 B1 A1 A2 B2 A4'
CREATE TABLE events (
  id      hlculid PRIMARY KEY DEFAULT hlculid_generate(),
  name    text,
  payload text
);
INSERT INTO events (id, name) VALUES
  ('017FC21C5E7B-0001-000A-AAA333333333', 'A3'),
  ('017FC21C5E7B-0000-000B-BBB444444444', 'B1'),
  ('017FC21C5E7A-0000-000A-AAA111111111', 'A1'),
  ('017FC21C5E7B-0000-000A-AAA222222222', 'A2'),
  ('017FC21C5E7C-0000-000B-BBB555555555', 'B2'),
  ('017FC21C5E7D-0000-000A-AAA666666666', 'A4');
\echo
\echo '== ORDER BY id restores the true order, and each id decodes into time, counter and publisher'
SELECT name, id, d.ts, d.counter, d.publisher
FROM events, hlculid_decode(id) d ORDER BY id;
\echo
\echo '== New events take their ids from this server''s clock (publisher 10, set in postgresql.conf)'
INSERT INTO events (name) VALUES ('live-1'), ('live-2'), ('live-3');
SELECT name, id, d.ts, d.counter, d.publisher
FROM events, hlculid_decode(id) d WHERE name LIKE 'live-%' ORDER BY id;
\echo
\echo '== A time range is an index range scan on the key'
EXPLAIN (COSTS OFF) SELECT name FROM events
WHERE id >= hlculid_min('2022-03-25 17:25:13.467+00') AND id < hlculid_min('2022-03-25 17:25:13.469+00');
\echo
\echo '== The clock'
\x on
SELECT * FROM hlculid_clock();
SQL
cat <<MSG

The demo server is running (PostgreSQL $major, hlculid preloaded, data in $dir).
  connect:  $(pg_bin "$major")/psql -h $dir -p $PORT -U postgres
  stop:     make demo-stop
MSG
