#!/bin/sh
# Installs (or removes) this build of hlculid into the PostgreSQL whose pg_config is given, or the
# first pg_config on PATH. Safe while that server runs: each file is written under a temporary
# name in its final directory and renamed over the old one, so running processes keep the library
# they have mapped and the new one loads when the server next starts. (Copying over a loaded
# library in place, as `cargo pgrx install` does, crashes the server.)
# Usage: install.sh [--uninstall] [PG_CONFIG]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
uninstall=0
if [ "${1:-}" = --uninstall ]; then uninstall=1; shift; fi
pg_config=${1:-pg_config}
command -v "$pg_config" >/dev/null 2>&1 || { echo "install.sh: no pg_config at '$pg_config'" >&2; exit 1; }
major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
built_for=$(cat "$here/PG_MAJOR")
if [ "$major" != "$built_for" ]; then
  echo "install.sh: this build is for PostgreSQL $built_for, but $pg_config is PostgreSQL $major" >&2
  exit 1
fi
libdir=$("$pg_config" --pkglibdir)
extdir=$("$pg_config" --sharedir)/extension

place() { # place FILE DIR MODE
  tmp="$2/.$(basename "$1").$$.tmp"
  cp "$1" "$tmp"
  chmod "$3" "$tmp"
  mv -f "$tmp" "$2/$(basename "$1")"
}

if [ $uninstall = 1 ]; then
  for f in "$here"/lib/*; do rm -f "$libdir/$(basename "$f")"; done
  for f in "$here"/extension/*; do rm -f "$extdir/$(basename "$f")"; done
  echo "hlculid removed from PostgreSQL $major ($libdir, $extdir)"
  exit 0
fi
mkdir -p "$libdir" "$extdir"
# SQL first, library last: a server that loads the new library finds the scripts it expects.
for f in "$here"/extension/*; do place "$f" "$extdir" 644; done
for f in "$here"/lib/*; do place "$f" "$libdir" 755; done
echo "hlculid $(cat "$here/VERSION") installed into PostgreSQL $major ($libdir, $extdir)"
echo "A running server keeps the library it has loaded; restart it to load this one."
