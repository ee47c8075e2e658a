#!/usr/bin/env bash
# Generated SQL scripts: each template sql/src/upgrade/A--B.sql.in becomes the committed
# sql/hlculid--A--B.sql, its hand-written text copied as is and every line
#   --@include NAME.sql
# replaced by the text of sql/src/NAME.sql, the source the install script takes through
# extension_sql_file! (src/*.rs). So each object's SQL is written once.
# Usage: scripts/gen-sql.sh           rewrites every generated script
#        scripts/gen-sql.sh --check   fails (listing the difference) when a committed generated
#                                     script is not what its template and sources generate
set -euo pipefail
cd "$(dirname "$0")/.."
expand() { # expand TEMPLATE: the generated text on stdout
  local line name
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ ^--@include[[:space:]]+([A-Za-z0-9_./-]+)[[:space:]]*$ ]]; then
      name=${BASH_REMATCH[1]}
      case $name in */*|.*) echo "gen-sql: $1: include $name: a file of sql/src/ only" >&2; return 1 ;; esac
      [ -f "sql/src/$name" ] || { echo "gen-sql: $1: sql/src/$name does not exist" >&2; return 1; }
      cat "sql/src/$name"
    else
      printf '%s\n' "$line"
    fi
  done <"$1"
}
status=0
shopt -s nullglob
for tpl in sql/src/upgrade/*.sql.in; do
  base=$(basename "$tpl" .sql.in)
  out=sql/hlculid--$base.sql
  tmp=$(mktemp)
  expand "$tpl" >"$tmp" || { rm -f "$tmp"; exit 1; }
  if [ "${1:-}" = --check ]; then
    if ! diff -u "$out" "$tmp"; then
      echo "gen-sql: $out is not what $tpl generates: run scripts/gen-sql.sh and commit it" >&2
      status=1
    else
      echo "gen-sql: $out is what $tpl generates"
    fi
    rm -f "$tmp"
  else
    mv "$tmp" "$out"
    chmod 644 "$out"
    echo "gen-sql: wrote $out"
  fi
done
exit $status
