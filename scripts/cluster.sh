# Throwaway PostgreSQL clusters owned by the 'postgres' user; sourced, not run.
# cluster_init MAJOR DIR PORT [conf lines...]   initdb into DIR/data with its own port and socket dir
# cluster_start DIR [env VAR=VALUE...]          start it (optionally with extra environment, e.g. LD_PRELOAD)
# cluster_stop DIR [mode]                       stop it (fast by default)
# cluster_psql DIR [psql args...]               psql as postgres into the cluster
# Each DIR remembers its major version and port in DIR/env.
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"

cluster_init() {
  local major=$1 dir=$2 port=$3; shift 3
  local bin; bin=$(pg_bin "$major")
  cluster_stop "$dir" immediate 2>/dev/null || true
  rm -rf "$dir"
  mkdir -p "$dir"
  chown postgres: "$dir"
  chmod 700 "$dir"
  as_postgres "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  {
    echo "port = $port"
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$dir'"
    echo "fsync = off"
    echo "logging_collector = off"
    echo "log_line_prefix = '%m [%p] '"
    for line in "$@"; do echo "$line"; done
  } >>"$dir/data/postgresql.conf"
  printf 'MAJOR=%s\nPORT=%s\n' "$major" "$port" >"$dir/env"
  chown postgres: "$dir/env"
}

cluster_conf() { # cluster_conf DIR line...: append settings (take effect on restart/reload)
  local dir=$1; shift
  for line in "$@"; do echo "$line"; done >>"$dir/data/postgresql.conf"
}

_cluster_env() { # loads MAJOR and PORT of DIR
  # shellcheck disable=SC1091
  . "$1/env"
}

cluster_start() {
  local dir=$1; shift
  _cluster_env "$dir"
  local bin; bin=$(pg_bin "$MAJOR")
  as_postgres env "$@" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null \
    || { tail -30 "$dir/server.log" >&2; return 1; }
}

cluster_stop() {
  local dir=$1 mode=${2:-fast}
  [ -f "$dir/env" ] || return 0
  _cluster_env "$dir"
  local bin; bin=$(pg_bin "$MAJOR")
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null 2>&1 || true
  fi
}

cluster_psql() {
  local dir=$1; shift
  _cluster_env "$dir"
  local bin; bin=$(pg_bin "$MAJOR")
  "$bin/psql" -X -v ON_ERROR_STOP=1 -h "$dir" -p "$PORT" -U postgres "$@"
}

# Installs the extension into PostgreSQL MAJOR (release build unless HLCULID_PROFILE=debug).
install_extension() {
  local major=$1
  local profile=(--release)
  [ "${HLCULID_PROFILE:-release}" = debug ] && profile=()
  (cd "$REPO" && cargo pgrx install "${profile[@]}" --pg-config "$(pg_config_for "$major")" >"$RUN_ROOT/install-$major.log" 2>&1) \
    || { tail -30 "$RUN_ROOT/install-$major.log" >&2; return 1; }
}

# Puts the frozen install scripts of released versions (sql/released/) where CREATE EXTENSION
# ... VERSION finds them, for the upgrade tests. pgrx installs only the current version's script.
install_released_sql() {
  local major=$1 f v
  local dir; dir=$("$(pg_config_for "$major")" --sharedir)/extension
  for f in "$REPO"/sql/released/hlculid--*.pg"$major".sql; do
    [ -e "$f" ] || continue
    v=$(basename "$f" | sed -E 's/^hlculid--(.+)\.pg[0-9]+\.sql$/\1/')
    install -m 644 "$f" "$dir/hlculid--$v.sql"
  done
}
