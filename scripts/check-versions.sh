#!/usr/bin/env bash
# One version everywhere: Cargo.toml's [package] version is the one source; everything else that
# names the current version must name the same one (core/Cargo.toml, Cargo.lock, hlculid.control,
# the Python and Node clients, CHANGELOG.md's newest section, META.json), and every version in
# README.md, docs/, clients/*/README.md and core/README.md is either this tree's (artifact and
# directory names, "hlculid X.Y.Z", hlculid-core's dependency line: always) or a released one named
# as history ("since 0.4.0"); another product's version carries its name. Fails, listing every
# difference.
# The places and their patterns are tools/versions.py's (its docstring lists them;
# tools/tests/test_versions.py).
# Usage: scripts/check-versions.sh [REPO_DIR]   (default: this checkout). Fast: no build.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 "$(cd "$(dirname "$0")/.." && pwd)/tools/versions.py" "$root"
