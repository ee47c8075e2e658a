#!/usr/bin/env bash
# make dist: the PGXN distribution, hlculid-VERSION.zip, a `git archive` of the tree under one
# top directory hlculid-VERSION/ (as PGXN's "How to release" shows), with META.json at its top.
# Only committed, tracked files go in (no target/, no .venv, nothing .gitignore'd); uncommitted
# changes to tracked files are included with a warning (a release is made from a clean tree:
# scripts/release.sh checks that). Then checks what it wrote: META.json valid (check-meta.sh) and
# naming this version, and the files PGXN's installers and pgrx need are in it, nothing built is.
# Usage: scripts/dist.sh [--out DIR]   (default target/dist/); prints the zip's path.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
out=$REPO/target/dist
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    *) echo "usage: scripts/dist.sh [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
version=$(crate_version)
name=hlculid-$version
mkdir -p "$out"
tree=HEAD
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  tree=$(git stash create) # the working tree's tracked files, as a commit; nothing is stashed
  echo "dist: uncommitted changes to tracked files are included (release from a clean tree)" >&2
fi
git archive --format=zip --prefix="$name/" -o "$out/$name.zip.tmp" "$tree"
mv "$out/$name.zip.tmp" "$out/$name.zip"

# What is in it.
python3 tools/dist_check.py "$out/$name.zip" "$name" "$version"
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$out/$name.zip" "$check"
scripts/check-meta.sh "$check/$name/META.json" >&2
echo "$out/$name.zip"
