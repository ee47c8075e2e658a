#!/usr/bin/env bash
# The #[pg_test]s of one major (`cargo pgrx test`), installed into and run from a private copy of
# that major's PostgreSQL install, never the one `make install`, `make demo` and users' servers use.
#
# Why: run as root with --runas, pgrx's test framework installs its debug build with
# `cargo pgrx install --test --sudo`, which ends in `sudo cp` onto each installed file: an in-place
# write over hlculid.so that crashes every server having the old one mapped (a running `make demo`
# server's background worker died with SIGSEGV and took the server down). The framework takes its
# pg_config from $PGRX_HOME/config.toml, so a PGRX_HOME of our own names a copy of the install under
# $RUN_ROOT: PostgreSQL installs are relocatable (pg_config and postgres derive every path from
# their own location), so the copy's directories sit at their original paths under its root. Only
# PGRX_HOME changes, which no build script tracks, so nothing is rebuilt (bindings included).
# Usage: scripts/pgrx-test.sh MAJOR [--pgdata DIR] [cargo pgrx test args, e.g. a test name]
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
major=$1; shift
pgdata=$RUN_ROOT/pgrx-$major
if [ "${1:-}" = --pgdata ]; then pgdata=$2; shift 2; fi
# The copies live in the machine's cache, not the checkout's scratch space: the bindings' build
# script reads $PGRX_HOME/config.toml, and a path that differed per checkout would rebuild them
# (and all of pgrx) in every fresh clone. The per-major lock below keeps checkouts apart.
base=$CACHE_ROOT/pgrx-test
cfg=$(pg_config_for "$major")
root=$base/pg$major             # the copy: the install's directories at their own paths under it
home=$base/home-pg$major        # its PGRX_HOME: pgrx runs every pg_config listed, so only this one
mkdir -p "$home"

# Written only when it changes: cargo reruns pgrx-pg-sys's build script (bindings) when the
# config.toml that script last read is newer than its output.
config=$(printf '[configs]\npg%s = "%s"' "$major" "$root$cfg")
if [ "$(cat "$home/config.toml" 2>/dev/null || true)" != "$config" ]; then
  echo "$config" >"$home/config.toml.tmp" && mv "$home/config.toml.tmp" "$home/config.toml"
fi

exec 9>"$base/pg$major.lock"
flock 9 # one run per major and checkout at a time: the next one replaces the copy
copy_pg_install "$cfg" "$root"
chmod -R a+rX "$base/home-pg$major"; chmod a+rX "$base"
rm -rf "$pgdata"; mkdir -p "$pgdata"; give_to_server "$pgdata"
export PGRX_HOME=$home
runas=(); is_root && runas=(--runas postgres) # PostgreSQL refuses to run as root
with_build_lock cargo pgrx test "pg$major" "${runas[@]}" --pgdata "$pgdata/data" "$@" 9>&- # the lock stays here
