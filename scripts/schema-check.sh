#!/usr/bin/env bash
# The install script of a version is one committed file, sql/hlculid--VERSION.sql, the same text
# on every PostgreSQL major (what differs by major is decided by the library, or by the guarded
# step in src/types/ops.rs). pgrx generates the SQL from the code, in an order that changes from run to
# run: this check fails unless, on every supported major, the generated script holds exactly the
# objects of the committed one. Released SQL never changes (later versions ship
# sql/hlculid--A--B.sql upgrade scripts), so for a released version this also catches any code
# change that would alter its catalog.
# Usage: scripts/schema-check.sh [--built] [--bless]
#   checks the majors of HLCULID_TEST_PG (default: every supported one);
#   --built: reads the SQL that scripts/package.sh generated when it built each major
#            ($RUN_ROOT/schema-MAJOR.sql; the test tiers build first), instead of building again;
#   --bless: rewrites the committed script from the SQL generated for one major, for unreleased
#            work: the last of HLCULID_TEST_PG, default 18; then regenerates the upgrade scripts
#            (scripts/gen-sql.sh), which take Rust functions' declarations from it;
#            with --built, from the SQL the last scripts/package.sh of that major generated
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
version=$(crate_version)
committed=sql/hlculid--$version.sql
mkdir -p "$RUN_ROOT"
normalise() { # normalise FILE: the objects of a pgrx-generated script, one block each, sorted
  "$VENV/bin/python" "$REPO/tools/schema_normalise.py" "$1"
}
built=0 bless=0
for a in "$@"; do
  case $a in
    --built) built=1 ;;
    --bless) bless=1 ;;
    *) echo "usage: scripts/schema-check.sh [--built] [--bless]" >&2; exit 2 ;;
  esac
done
status=0 newest= majors=$(test_majors)
# Blessing needs one major's SQL (the check proves every major generates the same objects).
[ $bless = 1 ] && majors=$(test_majors | awk '{print $NF}')
for major in $majors; do
  raw=$RUN_ROOT/schema-$major.sql
  if [ $built = 1 ]; then
    [ -f "$raw" ] || { echo "schema-check: no $raw (scripts/package.sh $major writes it)" >&2; exit 1; }
  else
    with_build_lock cargo pgrx schema "pg$major" --pg-config "$(pg_config_for "$major")" -o "$raw" >"$RUN_ROOT/schema-$major.log" 2>&1 \
    || { tail -30 "$RUN_ROOT/schema-$major.log" >&2; echo "schema-check: cargo pgrx schema pg$major failed" >&2; exit 1; }
  fi
  newest=$raw
  [ $bless = 1 ] && continue
  if ! diff -u <(normalise "$committed") <(normalise "$raw"); then
    echo "schema-check: the SQL generated for PostgreSQL $major differs from $committed." >&2
    echo "  Unreleased version: scripts/schema-check.sh --bless. Released: add sql/hlculid--$version--<next>.sql and bump the version." >&2
    status=1
  else
    echo "schema-check: PostgreSQL $major generates exactly the objects of $committed"
  fi
done
if [ $bless = 1 ]; then
  # Source locations change with every edit; they are not part of the script.
  grep -vE '^-- (src/|hlculid::)' "$newest" >"$committed"
  echo "schema-check: wrote $committed"
  # the upgrade scripts take the declarations of Rust functions from it (--@function)
  scripts/gen-sql.sh
fi
exit $status
