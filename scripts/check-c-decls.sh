#!/usr/bin/env bash
# Checks the C declarations src/base/pg_c.rs makes by hand against the server headers of each major
# (tests/c_decls/decls.c, compiled only). Usage: scripts/check-c-decls.sh [MAJOR...]
set -euo pipefail
. "$(dirname "$0")/env.sh"
majors=("$@")
[ ${#majors[@]} -gt 0 ] || read -r -a majors <<< "$ALL_MAJORS"
for m in "${majors[@]}"; do
  inc=$("$(pg_config_for "$m")" --includedir-server)
  cc -std=gnu11 -fsyntax-only -Wall -Werror -Wincompatible-pointer-types -I"$inc" "$REPO/tests/c_decls/decls.c"
  echo "C declarations match PostgreSQL $m's headers"
done
