#!/usr/bin/env bash
# Step 1 of 2: the Debian packages hlculid builds and tests with. Run as root (or it uses sudo).
# Idempotent: installs only what is missing.
set -euo pipefail

pkgs=(
  postgresql-15 postgresql-server-dev-15                         # PG15 server (with contrib), headers, pg_regress
  postgresql-15-wal2json postgresql-15-decoderbufs               # logical decoding plugins: the CDC test (test_cdc.py)
  postgresql-15-pgq3 pgqd                                         # PgQ and its ticker: the subscriptions benchmark's peer
  libclang-dev clang pkg-config build-essential                   # bindgen for pgrx
  sudo                                                            # cargo pgrx test --runas
  faketime                                                        # clock-step tests
  patchelf                                                        # fixes the library path of the PyPI PostgreSQL builds
  python3 python3-venv python3-pip                                # PostgreSQL 16-18 wheels, tests
  nodejs                                                          # the Node.js client recipe
  libpq-dev                                                       # diesel's PostgreSQL backend links libpq (crate feature diesel)
  openjdk-17-jdk-headless libpostgresql-jdbc-java                 # the JDBC recipe: javac and pgjdbc, no build tool
  ca-certificates curl git make
  libzstd-dev liblz4-dev libcurl4-openssl-dev libkrb5-dev       # building Citus from source for the Citus tests
  libxml2-dev libxslt1-dev libselinux1-dev libpam0g-dev          #   (scripts/setup-citus.sh, tests/citus/)
  libssl-dev libicu-dev
)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-os: installing ${missing[*]}"
  # Debian's postgresql-common would create and start a 'main' cluster on 5432; we never use it.
  as_root mkdir -p /etc/postgresql-common
  if [ ! -f /etc/postgresql-common/createcluster.conf ] || ! grep -q '^create_main_cluster = false' /etc/postgresql-common/createcluster.conf; then
    echo 'create_main_cluster = false' | as_root tee -a /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup-os: all Debian packages present"
fi
# Debian ships npm apart from nodejs (NodeSource's nodejs includes it).
if ! command -v npm >/dev/null; then
  echo "setup-os: installing npm"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm
fi
