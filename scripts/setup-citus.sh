#!/usr/bin/env bash
# Citus, for the Citus tests (tests/citus/, scripts/citus.sh): built from the vendored source
# tarball into each PostgreSQL install of $CITUS_MAJORS (env.sh) the project tests with. Run as
# root by scripts/setup-dev.sh (make setup). Idempotent and quick once done: a stamp per
# (tarball sha256, pg_config path) under $CACHE_ROOT/citus says a build is in place.
#
# No registry offers Citus, so the source comes from outside the repository and is never copied
# into it: $HLCULID_CITUS_TARBALL, else ../shared/vendor/citus-$CITUS_VERSION.tar.gz beside the
# checkout, else /work/shared/vendor/ (checked against CITUS_SHA256). Without it, set-up says so in
# one line and goes on; the Citus tests then skip, saying why.
#
# Installed the way a package manager installs: `make install DESTDIR=<stage>`, then each file
# copied beside its destination under a temporary name and renamed over it, so a server that has
# loaded citus.so keeps the file it mapped and loads the new one at its next restart.
set -euo pipefail
. "$(dirname "$0")/env.sh"

tarball=$(citus_tarball) || {
  echo "setup-citus: no Citus source ($(citus_tarball_candidates | paste -sd' ' -)): Citus tests will skip"
  exit 0
}
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$sum" != "$CITUS_SHA256" ]; then
  echo "setup-citus: $tarball has sha256 $sum, not $CITUS_SHA256: not building Citus (its tests will skip)" >&2
  exit 0
fi

state=$CACHE_ROOT/citus
mkdir -p "$state"
exec 9>"$state/.lock"
flock 9 # two checkouts setting up at once build each major once

stamp_of() { # stamp_of PG_CONFIG: the file that says this tarball is built into that install
  echo "$state/installed-$sum-$(printf '%s' "$1" | sha256sum | cut -c1-16)"
}
installed() { # installed PG_CONFIG: the stamp, and the files still there (setup-dev may redo an install)
  [ -f "$(stamp_of "$1")" ] && [ -f "$("$1" --pkglibdir)/citus.so" ] \
    && [ -f "$("$1" --sharedir)/extension/citus.control" ]
}

built=()
for major in $CITUS_MAJORS; do
  in_all=0; for m in $ALL_MAJORS; do [ "$m" = "$major" ] && in_all=1; done
  [ $in_all = 1 ] || continue
  cfg=$(pg_config_for "$major")
  [ -x "$cfg" ] || { echo "setup-citus: no $cfg (run scripts/setup-dev.sh first)" >&2; exit 1; }
  installed "$cfg" && continue
  echo "setup-citus: building Citus $CITUS_VERSION for PostgreSQL $major ($cfg), about a minute on 2 cores"
  work=$(mktemp -d "$state/build-$major.XXXXXX")
  (
    set -e
    tar -xzf "$tarball" -C "$work"
    src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
    cd "$src"
    ./configure PG_CONFIG="$cfg" >"$work/configure.log" 2>&1 \
      || { tail -30 "$work/configure.log"; exit 1; }
    make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log"; exit 1; }
    make install DESTDIR="$work/stage" >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; exit 1; }
  ) || { echo "setup-citus: building Citus for PostgreSQL $major failed (logs in $work)" >&2; exit 1; }
  # Citus links libpq, and PGXS gives its libraries the install's library directory as their run
  # path. Where the modules live in that directory too (the PyPI builds), the run path becomes
  # $ORIGIN, as setup-dev.sh does for the install's own modules, so a copy of the install
  # (copy_pg_install) loads its own libpq.
  libdir=$("$cfg" --libdir) pkglibdir=$("$cfg" --pkglibdir)
  if [ "$libdir" = "$pkglibdir" ]; then
    while IFS= read -r -d '' so; do
      if readelf -d "$so" 2>/dev/null | grep -qE "R(UN)?PATH.*\[($libdir|/opt/postgresql/lib)\]"; then
        patchelf --set-rpath '$ORIGIN' "$so"
      fi
    done < <(find "$work/stage$pkglibdir" -name '*.so' -print0)
  fi
  # Every staged file into place by rename (a temporary name in the destination's own directory,
  # so the rename never crosses a filesystem).
  (cd "$work/stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
    dest=${f#.}
    mkdir -p "$(dirname "$dest")"
    tmp="$(dirname "$dest")/.citus-$$-$(basename "$dest")"
    cp "$work/stage$dest" "$tmp"
    chmod a+rX "$tmp"
    mv -f "$tmp" "$dest"
  done
  "$cfg" --version >"$(stamp_of "$cfg")"
  echo "$cfg" >>"$(stamp_of "$cfg")"
  rm -rf "$work"
  built+=("$major")
done
if [ ${#built[@]} -gt 0 ]; then
  echo "setup-citus: Citus $CITUS_VERSION installed for PostgreSQL ${built[*]}"
else
  echo "setup-citus: Citus $CITUS_VERSION in place (PostgreSQL $CITUS_MAJORS)"
fi
