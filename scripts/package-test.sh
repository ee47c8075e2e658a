#!/usr/bin/env bash
# Installs hlculid from the artifacts scripts/package.sh made, the way a user does, into a private
# copy of PostgreSQL MAJOR's install (under $RUN_ROOT/package-test/, made as scripts/pgrx-test.sh
# makes its copy), never into the install that `make install`, `make demo` and running servers
# use: removing the library a running server loads makes its next call fail with
# `could not access file "$libdir/hlculid"`.
#   1. the copy, without any hlculid file (the state of a machine that never had one);
#   2. install: the Debian package where there is one (dpkg, with a private database seeded from
#      the machine's, so the package's dependencies are checked against what is installed), else
#      the tarball's install.sh; every file the extension needs arrived, the licence too (the
#      tarball's LICENSE, Debian's copyright file); a server started from the copy runs
#      CREATE EXTENSION hlculid and generates an id;
#   3. remove (dpkg -r / install.sh --uninstall): nothing of hlculid is left;
#   4. install again, and the same checks as 2.
# Usage: scripts/package-test.sh MAJOR   (after scripts/package.sh MAJOR)
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
major=$1
cfg=$(pg_config_for "$major")
version=$(crate_version)
arch=$(uname -m)
libdir=$("$cfg" --pkglibdir)
extdir=$("$cfg" --sharedir)/extension
pkg=postgresql-$major-hlculid
deb=$(ls "$PACKAGE_DIR/${pkg}_$version"-1_*.deb 2>/dev/null | head -1 || true)
tarball=$PACKAGE_DIR/hlculid-$version-pg$major-linux-$arch.tar.gz
[ -f "$tarball" ] || { echo "no $tarball: run scripts/package.sh $major first" >&2; exit 1; }

base=$RUN_ROOT/package-test
root=$base/pg$major # the copy: the install's directories at their own paths under it
mkdir -p "$base"
exec 9>"$base/pg$major.lock"
flock 9 # one run per major and checkout at a time: the next one replaces the copy
copy_pg_install "$cfg" "$root"
chmod a+rX "$base"
copy_cfg=$root$cfg

# What a complete install holds, from the repository (not from the package under test); paths as
# the package names them, found under $root.
expected=("$libdir/hlculid.so" "$extdir/hlculid.control" "$extdir/hlculid--$version.sql")
for f in sql/hlculid--*--*.sql; do expected+=("$extdir/$(basename "$f")"); done

# dpkg on the copy: --root puts files under it and keeps its database in $root/var/lib/dpkg,
# seeded with the machine's (the package list and who owns which file): the packages hlculid
# depends on are installed, and a file of another package would be a conflict, as on the machine.
priv_dpkg() { DEBIAN_FRONTEND=noninteractive dpkg --root="$root" --force-bad-path "$@"; }
if [ -n "$deb" ]; then
  admin=$root/var/lib/dpkg
  mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
  cp /var/lib/dpkg/status "$admin/status"
  cp /var/lib/dpkg/info/*.list "$admin/info/"
  touch "$admin/available"
fi

check_installed() {
  local f missing=0
  for f in "${expected[@]}"; do
    [ -f "$root$f" ] || { echo "missing after install: $root$f" >&2; missing=1; }
  done
  [ $missing = 0 ] || exit 1
  cmp "$root$extdir/hlculid--$version.sql" "sql/hlculid--$version.sql" \
    || { echo "the installed install script is not sql/hlculid--$version.sql" >&2; exit 1; }
  grep -q "default_version = '$version'" "$root$extdir/hlculid.control" \
    || { echo "hlculid.control does not name version $version" >&2; exit 1; }
  if [ -n "$deb" ]; then # every file the package owns is one we expect, and the reverse
    local owned; owned=$(priv_dpkg -L "$pkg" | grep -E '\.(so|control|sql)$' | sort)
    diff <(printf '%s\n' "${expected[@]}" | sort) <(echo "$owned") \
      || { echo "files owned by $pkg differ from the expected set" >&2; exit 1; }
  fi
  echo "installed: ${#expected[@]} files in $root$libdir and $root$extdir"
  check_licence
  check_server
}
check_licence() {
  tar -xzOf "$tarball" "hlculid-$version-pg$major-linux-$arch/LICENSE" | cmp -s - LICENSE \
    || { echo "$tarball does not hold LICENSE" >&2; exit 1; }
  if [ -n "$deb" ]; then # Debian's copyright file, read back into the text of LICENSE
    local copyright=$root/usr/share/doc/$pkg/copyright
    [ -f "$copyright" ] || { echo "missing after install: $copyright" >&2; exit 1; }
    grep -qx "Copyright: $(sed -n 's/^Copyright (c) //p' LICENSE)" "$copyright" \
      && grep -qx "License: PostgreSQL" "$copyright" \
      && cmp -s <(sed -n '/^License: PostgreSQL$/,$p' "$copyright" | tail -n +2 | sed 's/^ //; s/^\.$//') \
                <(sed -n '/^Copyright (c) /,$p' LICENSE | tail -n +3) \
      || { echo "$copyright is not the licence in LICENSE" >&2; exit 1; }
  fi
  echo "licence: in the tarball${deb:+ and in /usr/share/doc/$pkg/copyright}"
}
check_server() { # a server of the copy, hlculid preloaded, makes the extension and an id
  local dir=$base/server-pg$major port id
  chmod -R a+rX "$root"
  port=$(pgcluster create "$dir" "$copy_cfg" --conf "shared_preload_libraries = 'hlculid'")
  id=$("$root$("$cfg" --bindir)/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres \
    -c "CREATE EXTENSION hlculid" -c "SELECT hlculid_generate()::text" 2>&1) \
    || { pgcluster stop "$dir"; echo "a server of the copy could not use the installed package: $id" >&2; exit 1; }
  pgcluster stop "$dir"
  rm -rf "$dir"
  [[ $id =~ ^[0-9A-F]{12}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$ ]] \
    || { echo "the server of the copy generated '$id'" >&2; exit 1; }
  echo "server of the copy: CREATE EXTENSION hlculid, generated $id"
}
check_removed() {
  local f left=0
  for f in "${expected[@]}"; do [ ! -e "$root$f" ] || { echo "left after removal: $root$f" >&2; left=1; }; done
  [ $left = 0 ] || exit 1
  echo "removed: none of the ${#expected[@]} files is left"
}
remove() {
  if [ -n "$deb" ]; then
    priv_dpkg -r "$pkg" >/dev/null
  else
    local tmp; tmp=$(mktemp -d); tar -xzf "$tarball" -C "$tmp"
    "$tmp"/hlculid-*/install.sh --uninstall "$copy_cfg"; rm -rf "$tmp"
  fi
}
install_pkg() {
  if [ -n "$deb" ]; then
    priv_dpkg -i "$deb" >/dev/null
    echo "installed $(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version}' "$pkg") with dpkg"
  else
    local tmp; tmp=$(mktemp -d); tar -xzf "$tarball" -C "$tmp"
    "$tmp"/hlculid-*/install.sh "$copy_cfg"; rm -rf "$tmp"
  fi
}

# The copy holds the build the real install has: drop it, so only the package's files are there.
rm -f "$root$libdir"/hlculid.so "$root$extdir"/hlculid.control "$root$extdir"/hlculid--*.sql
install_pkg
check_installed
remove
check_removed
install_pkg
check_installed
rm -rf "$root" # a few hundred MB
