#!/usr/bin/env bash
# make demo: builds and installs hlculid into PostgreSQL 15, starts a throwaway server in .demo/
# (its own port and socket dir, hlculid preloaded) and runs the worked example.
# make demo-stop: stops it.
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
PORT=55415
link=$REPO/.demo

demo_dir() {
  # The server runs as 'postgres'. When it cannot reach the checkout (e.g. one under /root),
  # the cluster lives in /tmp and .demo points to it.
  if runuser -u postgres -- test -x "$REPO" 2>/dev/null; then
    echo "$REPO/.demo"
  else
    echo "$RUN_ROOT/demo"
  fi
}

case "${1:-start}" in
stop)
  if [ -e "$link" ]; then
    cluster_stop "$(readlink -f "$link")"
    echo "demo server stopped"
  fi
  exit 0 ;;
start) ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac

mkdir -p "$RUN_ROOT"
echo "building and installing hlculid into PostgreSQL 15 (release build)..."
install_extension 15
dir=$(demo_dir)
[ -e "$link" ] && cluster_stop "$(readlink -f "$link")"
[ -L "$link" ] && rm -f "$link"
cluster_init 15 "$dir" $PORT "shared_preload_libraries = 'hlculid'" "hlculid.publisher_id = 10" "timezone = 'UTC'"
[ "$dir" != "$link" ] && ln -sfn "$dir" "$link"
cluster_start "$dir"

cluster_psql "$dir" -q <<'SQL'
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
. "$dir/env"
cat <<MSG

The demo server is running (PostgreSQL 15, hlculid preloaded, data in $dir).
  connect:  $(pg_bin 15)/psql -h $dir -p $PORT -U postgres
  stop:     make demo-stop
MSG
