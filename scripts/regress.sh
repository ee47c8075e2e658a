#!/usr/bin/env bash
# pg_regress suite against a throwaway server of PostgreSQL MAJOR, run as root: pg_regress itself
# runs as root (it only connects), the server as postgres. hlculid must be installed already
# (scripts/install.sh, or a package).
# Usage: scripts/regress.sh MAJOR [test ...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=$1; shift

tests=(setup type io functions operators indexes casts copy generate clock bigint window worked_example partitions uuidv7 tx backfill string_params horizon)
[ "$major" -ge 16 ] && tests+=(soft_errors)   # soft input errors (pg_input_is_valid) are PG16+
[ "$major" -ge 17 ] && tests+=(copy_on_error) # COPY ... ON_ERROR is PG17+
[ "$major" -ge 18 ] && tests+=(skip_scan)     # btree skip scan is PG18+
[ "$major" -ge 18 ] && tests+=(uuidv7_pg18)   # uuidv7(), uuid_extract_version/timestamp are PG18+
[ $# -gt 0 ] && tests=(setup "$@")

dir=$RUN_ROOT/regress-$major
mkdir -p "$RUN_ROOT"
port=$(pgcluster create "$dir" "$major" --conf "shared_preload_libraries = 'hlculid'" \
  --conf "hlculid.publisher_id = 42" --conf "timezone = 'UTC'" --conf "max_parallel_workers_per_gather = 0")
trap 'pgcluster stop "$dir"' EXIT

pgxs=$(dirname "$("$(pg_config_for "$major")" --pgxs)")
out=$dir/out
mkdir -p "$out" "$dir/copy"
chown postgres: "$dir/copy"
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
