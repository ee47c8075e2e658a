#!/usr/bin/env bash
# make package: builds hlculid (release) for each PostgreSQL major given (default: every supported
# one) and writes installable artifacts to target/package/ (the test tiers: HLCULID_PROFILE=test-build
# into HLCULID_PACKAGE_DIR=target/test-package, see scripts/env.sh):
#   hlculid-VERSION-pgMAJOR-linux-ARCH.tar.gz   every major: lib/ and extension/ as pg_config names
#                                               them, plus install.sh (atomic, see packaging/) and
#                                               LICENSE
#   postgresql-MAJOR-hlculid_VERSION-1_ARCH.deb a Debian-packaged PostgreSQL (here: 15), the licence
#                                               in /usr/share/doc/PACKAGE/copyright (Debian's format)
# The install script put in is the committed sql/hlculid--VERSION.sql, the same text on every
# major (scripts/schema-check.sh proves pgrx generates the same objects for each; the SQL pgrx
# generated for this build is kept as $RUN_ROOT/schema-MAJOR.sql, which `schema-check.sh --built`
# reads instead of building again).
# Usage: scripts/package.sh [--stage-only] [MAJOR | --pg-config PATH]...
#   --stage-only: only the unpacked tarball directory (what scripts/install.sh installs from)
# Prints the staged directory of each major, one a line.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
stage_only=0 configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stage-only) stage_only=1 ;;
    --pg-config) configs+=("$2"); shift ;;
    *) configs+=("$(pg_config_for "$1")") ;;
  esac
  shift
done
[ ${#configs[@]} -eq 0 ] && for m in $ALL_MAJORS; do configs+=("$(pg_config_for "$m")"); done

version=$(crate_version)
arch=$(uname -m)

# LICENSE in Debian's machine-readable copyright format: the holder from its "Copyright (c)"
# line, the text after it as the License paragraph (blank lines as " .").
debian_copyright() {
  local holder; holder=$(sed -n 's/^Copyright (c) //p' LICENSE)
  [ -n "$holder" ] || { echo "package: LICENSE has no 'Copyright (c)' line" >&2; return 1; }
  printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
  printf 'Upstream-Name: hlculid\n\nFiles: *\nCopyright: %s\nLicense: PostgreSQL\n' "$holder"
  sed -n '/^Copyright (c) /,$p' LICENSE | tail -n +3 | sed 's/^$/./; s/^/ /'
}
install_sql=sql/hlculid--$version.sql
[ -f "$install_sql" ] || { echo "package: $install_sql is missing (scripts/schema-check.sh --bless writes it)" >&2; exit 1; }
out=$PACKAGE_DIR
mkdir -p "$out" "$RUN_ROOT"

for cfg in "${configs[@]}"; do
  major=$("$cfg" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
  libdir=$("$cfg" --pkglibdir)
  extdir=$("$cfg" --sharedir)/extension
  name=hlculid-$version-pg$major-linux-$arch
  build=$RUN_ROOT/pgrx-package-$major
  rm -rf "$build"
  with_build_lock cargo pgrx package --profile "$BUILD_PROFILE" --pg-config "$cfg" --out-dir "$build" >"$RUN_ROOT/package-$major.log" 2>&1 \
    || { tail -40 "$RUN_ROOT/package-$major.log" >&2; exit 1; }
  cp "$build$extdir/hlculid--$version.sql" "$RUN_ROOT/schema-$major.sql.tmp" && mv "$RUN_ROOT/schema-$major.sql.tmp" "$RUN_ROOT/schema-$major.sql"
  stage=$out/$name
  rm -rf "$stage"
  mkdir -p "$stage/lib" "$stage/extension"
  cp "$build$libdir/hlculid.so" "$stage/lib/"
  cp "$build$extdir"/hlculid.control "$build$extdir"/hlculid--*--*.sql "$stage/extension/"
  cp "$install_sql" "$stage/extension/"
  cp packaging/install.sh "$stage/install.sh"
  cp LICENSE "$stage/LICENSE"
  echo "$major" >"$stage/PG_MAJOR"
  echo "$version" >"$stage/VERSION"
  chmod -R a+rX "$stage"
  echo "$stage"
  [ $stage_only = 1 ] && continue

  tar -C "$out" -czf "$out/$name.tar.gz" "$name"
  # A Debian package for a PostgreSQL laid out the Debian way.
  if [ "$libdir" = "/usr/lib/postgresql/$major/lib" ]; then
    pkg=postgresql-$major-hlculid
    root=$RUN_ROOT/deb-$major
    rm -rf "$root"
    mkdir -p "$root/DEBIAN" "$root$libdir" "$root$extdir" "$root/usr/share/doc/$pkg"
    cp "$stage"/lib/* "$root$libdir/"
    cp "$stage"/extension/* "$root$extdir/"
    debian_copyright >"$root/usr/share/doc/$pkg/copyright"
    cat >"$root/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version-1
Architecture: $(dpkg --print-architecture)
Maintainer: hlculid developers <hlculid@localhost>
Depends: postgresql-$major, libc6
Section: database
Priority: optional
Description: hlculid: 128-bit hybrid-logical-clock ids for PostgreSQL $major
 A native 16-byte id type that sorts in real event order across publishers,
 with btree/hash/BRIN support and a shared-memory clock (hlculid_generate()).
CONTROL
    find "$root" -type d -exec chmod 755 {} +
    find "$root" -type f -exec chmod 644 {} +
    chmod 755 "$root$libdir/hlculid.so"
    dpkg-deb --root-owner-group -Zgzip --build "$root" "$out/${pkg}_$version-1_$(dpkg --print-architecture).deb" >/dev/null
  fi
done
