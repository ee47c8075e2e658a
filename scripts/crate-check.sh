#!/usr/bin/env bash
# The hlculid-core crate as crates.io would get it, without publishing: `cargo package` (the
# manifest's metadata complete, no warning; the file list has LICENSE and README.md and nothing
# outside the crate), and its documentation built with warnings as errors (default features, and every feature
# as docs.rs builds it: [package.metadata.docs.rs] all-features).
# Usage: scripts/crate-check.sh [--verify]   --verify: also build the packaged crate (cargo's
#   default; slower), which the release does before `cargo publish`.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
verify=--no-verify
[ "${1:-}" = --verify ] && verify=
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# --allow-dirty: make test runs on work in progress; a release runs from a clean tree anyway.
cargo package -p hlculid-core --allow-dirty $verify >"$log" 2>&1 || { cat "$log"; exit 1; }
if grep -E '^(warning|error)' "$log"; then
  echo "crate-check: cargo package warned (above)"; status=1
fi
list=$(cargo package -p hlculid-core --allow-dirty --list 2>/dev/null)
for f in LICENSE README.md Cargo.toml src/lib.rs; do
  grep -qx "$f" <<<"$list" || { echo "crate-check: the package lacks $f"; status=1; }
done
crate=${CARGO_TARGET_DIR:-target}/package/hlculid-core-$(crate_version).crate
[ -f "$crate" ] || { echo "crate-check: no $crate"; status=1; }
# Default features (links to feature-gated items must not break) and every feature (docs.rs).
for features in "" --all-features; do
  RUSTDOCFLAGS="-D warnings" cargo doc -p hlculid-core --no-deps $features >"$log" 2>&1 \
    || { cat "$log"; echo "crate-check: cargo doc -p hlculid-core $features warned"; status=1; }
done
[ $status = 0 ] && echo "crate-check: hlculid-core $(crate_version) packages ($(wc -l <<<"$list") files) and documents cleanly"
exit $status
