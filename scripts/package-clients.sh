#!/usr/bin/env bash
# The client packages, for make package (scripts/package.sh calls it) and the client tests
# (tests/clients/test_packages.py): the Python wheel of clients/python (package `hlculid`, built by
# pip with setuptools from PyPI in an isolated build environment) and the npm tarball of
# clients/node (package `hlculid`), written to OUT (default: $PACKAGE_DIR). Each is built from a
# staged copy with the repository's LICENSE, so the source tree gets no build output. Both carry
# the extension's version (Cargo.toml); a client whose version differs stops the build.
# Usage: scripts/package-clients.sh [OUT]   Prints the two files, one a line.
set -euo pipefail
. "$(dirname "$0")/env.sh"
out=$(mkdir -p "${1:-$PACKAGE_DIR}" && cd "${1:-$PACKAGE_DIR}" && pwd)
version=$(crate_version)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

py_version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/clients/python/pyproject.toml")
node_version=$(node -p "require('$REPO/clients/node/package.json').version")
for v in "python $py_version" "node $node_version"; do
  [ "${v#* }" = "$version" ] || { echo "package-clients: the ${v% *} client is version ${v#* }, the extension $version" >&2; exit 1; }
done

cp -rL "$REPO/clients/python" "$stage/python"
rm -rf "$stage/python/build" "$stage/python/dist" "$stage/python/src/"*.egg-info
# pip builds the wheel: the checkout's venv (make setup's) when there is one, else a throwaway
# venv, so that make package works on a fresh checkout (README, "Install")
py=$VENV/bin/python
if [ ! -x "$py" ]; then
  python3 -m venv "$stage/venv" >&2 \
    || { echo "package-clients: python3 -m venv failed: apt-get install python3-venv (or run make setup)" >&2; exit 1; }
  py=$stage/venv/bin/python
fi
"$py" -m pip wheel -q --no-deps --disable-pip-version-check -w "$stage/wheel" "$stage/python" >&2
wheel="$out/hlculid-$version-py3-none-any.whl"
mv "$stage/wheel/hlculid-$version-py3-none-any.whl" "$wheel"

mkdir "$stage/node"
for f in $(node -p "require('$REPO/clients/node/package.json').files.join(' ')") package.json; do
  if [ "$f" = LICENSE ]; then cp "$REPO/LICENSE" "$stage/node/"; else cp "$REPO/clients/node/$f" "$stage/node/"; fi
done
(cd "$stage/node" && npm pack --silent --pack-destination "$stage" >/dev/null)
tarball="$out/hlculid-$version.tgz"
mv "$stage/hlculid-$version.tgz" "$tarball"
echo "$wheel"
echo "$tarball"
