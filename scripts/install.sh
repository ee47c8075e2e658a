#!/usr/bin/env bash
# Builds (release) and installs hlculid into PostgreSQL 15 and 18, or the majors given.
set -euo pipefail
. "$(dirname "$0")/cluster.sh"
mkdir -p "$RUN_ROOT"
majors=("$@")
[ $# -eq 0 ] && majors=(15 18)
for major in "${majors[@]}"; do
  echo "installing into PostgreSQL $major ($(pg_config_for "$major"))"
  install_extension "$major"
done
