#!/usr/bin/env bash
# A previous release of hlculid, built and installed into a private copy of one major's
# PostgreSQL install, for benchmarks that compare it with this checkout in the same run (the
# horizon workload: generation against 0.3.0's fast path). Nothing is installed where other
# servers load from. Prints the copy's pg_config.
# Usage: scripts/bench-baseline.sh MAJOR [REV]   (REV default: the last commit of 0.3.0)
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
major=$1
rev=${2:-$(git log --format=%H -1 -S'version = "0.4.0"' -- Cargo.toml)^}
cfg=$(pg_config_for "$major")
base=$RUN_ROOT/baseline
src=$base/src
root=$base/pg$major
mkdir -p "$base"
rm -rf "$src" "$root"
mkdir -p "$src"
git archive "$rev" | tar -x -C "$src"
# the install's directories at their own paths under the copy (installs are relocatable)
for d in "$("$cfg" --bindir)" "$("$cfg" --pkglibdir)" "$("$cfg" --sharedir)" "$("$cfg" --includedir-server)"; do
  mkdir -p "$root$(dirname "$d")"
  cp -a "$d" "$root$d"
done
copy_cfg=$root$cfg
out=$base/package-$major
rm -rf "$out"
(cd "$src" && CARGO_TARGET_DIR=$REPO/target/baseline cargo pgrx package --pg-config "$cfg" --out-dir "$out") \
  >"$base/build-$major.log" 2>&1 || { tail -30 "$base/build-$major.log" >&2; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -1)
cp "$out$("$cfg" --pkglibdir)/hlculid.so" "$root$("$cfg" --pkglibdir)/hlculid.so"
ext=$("$cfg" --sharedir)/extension
rm -f "$root$ext"/hlculid*
cp "$out$ext"/hlculid.control "$root$ext/"
# that release's own committed install script, as its packages ship it
cp "$src/sql/hlculid--$version.sql" "$root$ext/"
chmod -R a+rX "$base"
echo "$copy_cfg"
