#!/usr/bin/env bash
# Generated SQL scripts: each template sql/src/upgrade/A--B.sql.in becomes the committed
# sql/hlculid--A--B.sql, its hand-written text copied as is, and
#   --@include NAME.sql      replaced by the text of sql/src/NAME.sql, the source the install
#                            script takes through extension_sql_file! (src/*.rs);
#   --@function NAME         replaced by the declaration(s) of the Rust function NAME (every
#                            overload, sorted, each followed by an empty line) as pgrx generates it in the blessed install script
#                            sql/hlculid--B.sql (scripts/schema-check.sh --bless writes it), or
#                            the CREATE FUNCTION NAME statement an extension_sql! block of it has;
#   --@function NAME replace the same, as CREATE OR REPLACE FUNCTION (an existing function
#                            whose declaration changes: same argument names and result).
# So each object's SQL is written once. Run it after blessing the install script. Once B is
# released (its install script frozen in sql/released/), sql/hlculid--A--B.sql is released text
# too, never written again, and its template is retired (removed: `release.sh --bump` does it;
# git history keeps it): the sources it includes go on changing, so it would no longer produce
# the frozen script. A template of a released version fails both modes.
# Usage: scripts/gen-sql.sh           rewrites every generated script
#        scripts/gen-sql.sh --check   fails (listing the difference) when a committed generated
#                                     script is not what its template and sources generate
set -euo pipefail
cd "$(dirname "$0")/.."
install_function() { # install_function TEMPLATE NAME [replace]: NAME's blocks of the install script
  local target=${1##*/}
  target=${target%.sql.in}
  target=${target##*--}
  if [ -f "sql/hlculid--$target.sql" ]; then target=sql/hlculid--$target.sql
  else target=sql/released/hlculid--$target.sql; fi
  [ -f "$target" ] || { echo "gen-sql: $1: no sql/hlculid--${target##*--} (nor one in sql/released/) to take $2 from" >&2; return 1; }
  awk -v name="$2" -v replace="$3" '
    /^\/\* <begin connected objects> \*\/$/ { inblk = 1; keep = 0; buf = ""; next }
    /^\/\* <\/end connected objects> \*\/$/ { if (keep) { printf "%s\n%c", buf, 0; found++ } inblk = 0; next }
    inblk && index($0, "CREATE FUNCTION " name "(") == 1 { # written in extension_sql!: the statement
      stmt = 1; sbuf = ""
      if (replace != "") sub(/^CREATE FUNCTION/, "CREATE OR REPLACE FUNCTION")
    }
    stmt { sbuf = sbuf $0 "\n"; if ($0 ~ /;[[:space:]]*$/) { printf "%s\n%c", sbuf, 0; found++; stmt = 0 }; next }
    inblk && index($0, "CREATE  FUNCTION \"" name "\"(") == 1 {
      keep = 1
      if (replace != "") sub(/^CREATE  FUNCTION/, "CREATE OR REPLACE FUNCTION")
    }
    inblk && !/^-- / && !(buf == "" && /^$/) { buf = buf $0 "\n" }
    END { if (!found) exit 1 }' "$target" | sort -z | tr -d '\0' \
  || { echo "gen-sql: $1: no function $2 in $target" >&2; return 1; }
}
expand() { # expand TEMPLATE: the generated text on stdout
  local line name
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ ^--@function[[:space:]]+([A-Za-z0-9_]+)([[:space:]]+replace)?[[:space:]]*$ ]]; then
      install_function "$1" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]:+replace}" || return 1
    elif [[ $line =~ ^--@include[[:space:]]+([A-Za-z0-9_./-]+)[[:space:]]*$ ]]; then
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
  if [ -e "sql/released/hlculid--${base##*--}.sql" ]; then
    echo "gen-sql: $tpl is the template of $out, released (${base##*--} is frozen in sql/released/):" \
      "retire it (git rm $tpl), the script is never generated again" >&2
    status=1
    continue
  fi
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
