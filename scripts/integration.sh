#!/usr/bin/env bash
# Integration tests (pytest) against real servers of PostgreSQL MAJOR. hlculid must be installed
# already (scripts/install.sh, or a package). Also puts the frozen install scripts of released
# versions (sql/released/) where CREATE EXTENSION ... VERSION finds them, for the upgrade tests,
# into every major set up here (the pg_upgrade test needs the old major's too).
# HLCULID_TIER=quick (default, make test) or full (make test-full): the tests marked `full` run only
# in the full tier, and the others read their sizes from it (tests/TIERS.md).
# Usage: scripts/integration.sh MAJOR [pytest args...] [test_x.py[::test_name]...]
#   (a test file, bare or as tests/integration/test_x.py, runs instead of the whole directory)
set -euo pipefail
shopt -s extglob
. "$(dirname "$0")/env.sh"
major=$1; shift
mkdir -p "$RUN_ROOT"
unwritable=
for m in $ALL_MAJORS; do
  dir=$("$(pg_config_for "$m")" --sharedir)/extension
  # an install this user may not write (root's, run as another user): the upgrade tests of this
  # major need the fixtures there, from a run by root or from a user's own install
  if [ ! -w "$dir" ]; then unwritable+=" $m"; continue; fi
  # hlculid--V.pgM.sql: built for one major (0.1.x); hlculid--V.sql: the same on every major
  for f in "$REPO"/sql/released/hlculid--*.pg"$m".sql "$REPO"/sql/released/hlculid--+([0-9.]).sql; do
    [ -e "$f" ] || continue
    v=$(basename "$f" | sed -E 's/^hlculid--([0-9.]+[0-9])(\.pg[0-9]+)?\.sql$/\1/')
    # by rename: the tests of another major may be reading it (scripts/test.sh runs two at once)
    install -m 644 "$f" "$dir/.hlculid--$v.sql.$$" && mv -f "$dir/.hlculid--$v.sql.$$" "$dir/hlculid--$v.sql"
    # Up to 0.4.0 the control file named no schema: CREATE EXTENSION put it in the first schema of
    # the path, public. A secondary control file per such version says so again (the primary one
    # says pg_catalog since 0.5.0), so CREATE EXTENSION ... VERSION makes what those releases made.
    if [ "$(printf '%s\n' "$v" 0.4.0 | sort -V | tail -n 1)" = 0.4.0 ]; then
      printf "# test fixture (scripts/integration.sh): where hlculid %s was installed\nschema = public\n" "$v" \
        >"$dir/.hlculid--$v.control.$$" && mv -f "$dir/.hlculid--$v.control.$$" "$dir/hlculid--$v.control"
    fi
  done
done
[ -z "$unwritable" ] || echo "integration: the extension directories of PostgreSQL$unwritable are not $(id -un)'s: the released scripts the upgrade tests install are not put there"
export HLCULID_PG=$major HLCULID_RUN_ROOT=$RUN_ROOT/integration HLCULID_STAGE_DIR=$PACKAGE_DIR
export HLCULID_TIER=$(test_tier)
cd "$REPO"
targets=(tests/integration) args=()
for a in "$@"; do
  case $a in
    test_*.py | test_*.py::*) args+=("tests/integration/$a"); targets=() ;;
    tests/*) args+=("$a"); targets=() ;;
    *) args+=("$a") ;;
  esac
done
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider --strict-markers --durations=12 --durations-min=1 \
  "${targets[@]}" "${args[@]}"
