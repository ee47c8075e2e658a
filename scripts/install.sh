#!/usr/bin/env bash
# make install: builds (release) and installs hlculid into each PostgreSQL given, by major or by
# pg_config (default: $PG_CONFIG if set, else every supported major). Installs the way a package
# manager does (packaging/install.sh: new file, then rename), so a running server is never
# disturbed; it loads the new build at its next restart.
# Usage: scripts/install.sh [MAJOR | --pg-config PATH]...
set -euo pipefail
. "$(dirname "$0")/env.sh"
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  if [ -n "${PG_CONFIG:-}" ]; then args=(--pg-config "$PG_CONFIG"); else read -ra args <<<"$ALL_MAJORS"; fi
fi
mkdir -p "$RUN_ROOT"
"$REPO/scripts/package.sh" --stage-only "${args[@]}" >"$RUN_ROOT/install-stages"
mapfile -t stages <"$RUN_ROOT/install-stages"
i=0
for a in "${args[@]}"; do
  case "$a" in --pg-config) continue ;; esac
  cfg=$a
  [[ $a =~ ^[0-9]+$ ]] && cfg=$(pg_config_for "$a")
  "${stages[$i]}/install.sh" "$cfg"
  i=$((i + 1))
done
