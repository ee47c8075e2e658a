#!/usr/bin/env bash
# A slice of the suite run by a user who is not root, so that running the tests without root cannot
# rot: the step "non-root pgN" of make test (tools/matrix.py). Against the installed build of MAJOR.
#   As root: makes the user hlculid-dev (HLCULID_NONROOT_USER; a system user, no login, no home)
#   if it is missing, copies the checkout's tracked files (git ls-files -c, with uncommitted changes) where
#   that user can read them (the checkout may be under /root), gives them a venv of the system's
#   python3 (made once), and runs itself from the copy as that user.
#   As any other user: the slice, as that user: pg_regress with a few files, then the integration
#   tests of SLICE; the servers run as this user (tests/pgcluster.py), which
#   test_server_user.py checks.
# Usage: scripts/nonroot-test.sh MAJOR
set -euo pipefail
. "$(dirname "$0")/env.sh"
major=${1:?usage: scripts/nonroot-test.sh MAJOR}
# what the slice runs: pg_regress files, and integration test files (each cheap: seconds)
REGRESS_SLICE=(type casts clock)
SLICE=(test_server_user.py test_wal_rmgr.py
  "test_mark_damage.py::test_damaged_mark_stops_generation_until_recovered[garbage]")

if is_root; then
  user=${HLCULID_NONROOT_USER:-hlculid-dev}
  if ! id "$user" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
    echo "nonroot-test: made the system user $user"
  fi
  # root's scratch ($RUN_ROOT, checked by env.sh) and cache: directories only root writes, made
  # by root or refused, so no link the user planted is followed by the copy and the chmods below
  base=$RUN_ROOT/nonroot
  tree=$base/tree
  root_dir "$base" && root_dir "$CACHE_ROOT"
  rm -rf "$tree"
  mkdir "$tree"
  (cd "$REPO" && git ls-files -c -z | tar --null --ignore-failed-read -T - -cf -) \
    | tar -xf - -C "$tree"
  # A venv any user can run: the system's python3 (the checkout's venv may be of a python under
  # /root), with the slice's two pinned packages from tests/requirements.txt; made once per pin.
  venv=$CACHE_ROOT/nonroot-venv
  pins=$(grep -E '^(psycopg|pytest)\b' "$REPO/tests/requirements.txt")
  if [ "$(cat "$venv/.hlculid-pins" 2>/dev/null || true)" != "$pins" ]; then
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q --disable-pip-version-check $pins
    echo "$pins" >"$venv/.hlculid-pins"
    chmod -R a+rX "$venv"
  fi
  ln -sfn "$venv" "$tree/.venv"
  chmod -R a+rX "$base"
  chmod a+rx "$RUN_ROOT" "$CACHE_ROOT"
  # root's scratch and cache settings are root's: the user gets its own (scripts/env.sh)
  exec runuser -u "$user" -- env -u HLCULID_SCRATCH -u HLCULID_RUN_ROOT -u HLCULID_CACHE -u CARGO_TARGET_DIR \
    "$tree/scripts/nonroot-test.sh" "$major"
fi

echo "nonroot-test: as $(id -un) (uid $(id -u)), PostgreSQL $major, scratch $RUN_ROOT"
mkdir -p "$RUN_ROOT"
"$REPO/scripts/regress.sh" "$major" "${REGRESS_SLICE[@]}"
exec "$REPO/scripts/integration.sh" "$major" "${SLICE[@]}"
