#!/usr/bin/env bash
# make check PG=17 TEST=test_masks.py: the inner loop, one major. Builds hlculid for that major (the
# test-build profile and the build cache make test uses, so cargo rebuilds only what changed),
# installs it the way make test does (by rename: a running server keeps what it loaded), then runs
# the major's pg_regress suite (REGRESS="type casts": only those files) and the integration tests
# named (a file test_x.py, test_x.py::test_name, or pytest options such as -k EXPR; none named:
# no integration tests). NO_BUILD=1 skips the build and install (a change to the tests only).
# Usage: scripts/check.sh MAJOR [TEST...]
set -euo pipefail
export HLCULID_PROFILE=test-build HLCULID_PACKAGE_DIR
HLCULID_PACKAGE_DIR=$(cd "$(dirname "$0")/.." && pwd)/target/test-package
. "$(dirname "$0")/env.sh"
major=${1:?usage: scripts/check.sh MAJOR [TEST...] (make check PG=17 TEST=test_masks.py)}
shift
started=$SECONDS
mkdir -p "$RUN_ROOT"
if [ -z "${NO_BUILD:-}" ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE_ROOT/cargo-target}
  mkdir -p "$CARGO_TARGET_DIR"
  echo "check: building and installing hlculid for PostgreSQL $major ($(pg_config_for "$major"))"
  stage=$("$REPO/scripts/package.sh" --stage-only "$major")
  "$stage/install.sh" "$(pg_config_for "$major")" >/dev/null
  echo "check: built and installed in $((SECONDS - started)) s"
fi
read -ra regress <<<"${REGRESS:-}"
t=$SECONDS
"$REPO/scripts/regress.sh" "$major" "${regress[@]}"
echo "check: pg_regress in $((SECONDS - t)) s"
if [ $# -gt 0 ]; then
  t=$SECONDS
  "$REPO/scripts/integration.sh" "$major" "$@"
  echo "check: integration tests in $((SECONDS - t)) s"
fi
echo "check: PostgreSQL $major passed in $((SECONDS - started)) s"
