#!/usr/bin/env bash
# One version everywhere: Cargo.toml's [package] version is the one source; everything else that
# names the current version must name the same one (core/Cargo.toml, Cargo.lock, hlculid.control,
# the Python and Node clients, CHANGELOG.md's newest section, META.json, core/README.md's
# dependency line, and the artifact names in README.md and docs/). Fails, listing every difference.
# The places and their patterns are tools/versions.py's (its docstring lists them;
# tools/tests/test_versions.py).
# Usage: scripts/check-versions.sh [REPO_DIR]   (default: this checkout). Fast: no build.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 "$(cd "$(dirname "$0")/.." && pwd)/tools/versions.py" "$root"
