#!/usr/bin/env bash
# META.json against the PGXN Meta Spec 1.0.0 and this tree's own rules (every path it names exists,
# the extension is hlculid with its control file, resources agree with core/Cargo.toml's): the
# rules are tools/check_meta.py's (its docstring lists them; tools/tests/test_check_meta.py).
# Usage: scripts/check-meta.sh [META.json]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/tools/check_meta.py" "${1:-$root/META.json}"
