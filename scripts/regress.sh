#!/usr/bin/env bash
# pg_regress suite against a throwaway cluster of PostgreSQL MAJOR (15 or 18), run as root:
# pg_regress itself runs as root (it only connects), the server as postgres.
# Usage: scripts/regress.sh MAJOR [--no-install] [test ...]
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
major=$1; shift
install=1
if [ "${1:-}" = --no-install ]; then install=0; shift; fi

common=(setup type io functions operators indexes casts copy generate worked_example)
case "$major" in
  15) tests=("${common[@]}") ;;
  *)  tests=("${common[@]}" soft_errors skip_scan) ;;
esac
[ $# -gt 0 ] && tests=(setup "$@")

mkdir -p "$RUN_ROOT"
[ $install = 1 ] && install_extension "$major"
dir=$RUN_ROOT/regress-$major
cluster_init "$major" "$dir" $((55400 + major)) \
  "shared_preload_libraries = 'hlculid'" "hlculid.publisher_id = 42" "timezone = 'UTC'" \
  "max_parallel_workers_per_gather = 0"
cluster_start "$dir"
trap 'cluster_stop "$dir"' EXIT

pgxs=$(dirname "$("$(pg_config_for "$major")" --pgxs)")
out=$dir/out
mkdir -p "$out" "$dir/copy"
chown postgres: "$dir/copy"
set +e
(cd "$REPO/tests/pg_regress" && HLCULID_COPY_DIR="$dir/copy" "$pgxs/../test/regress/pg_regress" \
  --bindir="$(pg_bin "$major")" --host="$dir" --port=$((55400 + major)) --user=postgres \
  --dbname=hlculid_regress --inputdir=. --outputdir="$out" "${tests[@]}")
rc=$?
set -e
if [ $rc -ne 0 ]; then
  cat "$out/regression.diffs" 2>/dev/null | head -200
  echo "pg_regress (PostgreSQL $major): FAILED; results in $out/results"
fi
exit $rc
