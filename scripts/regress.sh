#!/usr/bin/env bash
# pg_regress suite against a throwaway server of PostgreSQL MAJOR. pg_regress runs as the invoking
# user (it only connects); the server as postgres when that is root, else as that user too.
# hlculid must be installed already (scripts/install.sh, or a package).
# Usage: scripts/regress.sh MAJOR [test ...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=$1; shift

# Every tests/pg_regress/sql/*.sql: setup first (the extension, the err() helper), then the others
# in the order of their names; a file NAME_pgNN.sql tests a feature PostgreSQL NN brought, and runs
# on NN and later (soft_errors_pg16: pg_input_is_valid; copy_on_error_pg17; skip_scan_pg18, uuidv7_pg18).
tests=(setup)
while read -r t; do
  [ "$t" = setup ] && continue
  [[ $t =~ _pg([0-9]+)$ ]] && [ "$major" -lt "${BASH_REMATCH[1]}" ] && continue
  tests+=("$t")
done < <(cd "$REPO/tests/pg_regress/sql" && printf '%s\n' *.sql | sed 's/\.sql$//' | LC_ALL=C sort)
[ $# -gt 0 ] && tests=(setup "$@")

dir=$RUN_ROOT/regress-$major
mkdir -p "$RUN_ROOT"
# RUST_BACKTRACE=1 in the server's environment, as a developer's shell may have it: an error that
# carried a Rust backtrace would show it in the output (window.sql checks none does)
port=$(RUST_BACKTRACE=1 pgcluster create "$dir" "$major" --conf "shared_preload_libraries = 'hlculid'" \
  --conf "hlculid.publisher_id = 42" --conf "timezone = 'UTC'" --conf "max_parallel_workers_per_gather = 0")
trap 'pgcluster stop "$dir"' EXIT

pgxs=$(dirname "$("$(pg_config_for "$major")" --pgxs)")
# root's output beside the server's directory, not in it (postgres owns that one, and root follows
# no link there: docs/development.md, "Without root"); the COPY files, in it, made by the server's user
out=$RUN_ROOT/regress-$major.out
rm -rf "$out"; mkdir "$out"
as_server mkdir "$dir/copy"
set +e
(cd "$REPO/tests/pg_regress" && HLCULID_COPY_DIR="$dir/copy" "$pgxs/../test/regress/pg_regress" \
  --bindir="$(pg_bin "$major")" --host="$dir" --port="$port" --user=postgres \
  --dbname=hlculid_regress --inputdir=. --outputdir="$out" "${tests[@]}")
rc=$?
set -e
if [ $rc -ne 0 ]; then
  head -200 "$out/regression.diffs" 2>/dev/null
  echo "pg_regress (PostgreSQL $major): FAILED; results in $out/results"
fi
exit $rc
