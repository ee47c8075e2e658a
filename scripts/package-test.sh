#!/usr/bin/env bash
# Installs hlculid from the artifacts scripts/package.sh made, the way a user does, and checks
# every file the extension needs arrived (and, for reinstall, that removal takes every one away),
# and that both the tarball and the Debian package carry the licence (LICENSE).
#   install MAJOR    drop whatever hlculid files are there (e.g. cargo pgrx test's build), then
#                    install the Debian package (apt) where there is one, else the tarball
#   reinstall MAJOR  remove the package (apt remove / install.sh --uninstall), check nothing of
#                    hlculid is left, and install it again
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
mode=$1 major=$2
cfg=$(pg_config_for "$major")
version=$(crate_version)
arch=$(uname -m)
libdir=$("$cfg" --pkglibdir)
extdir=$("$cfg" --sharedir)/extension
pkg=postgresql-$major-hlculid
deb=$(ls target/package/"${pkg}_$version"-1_*.deb 2>/dev/null | head -1 || true)
tarball=target/package/hlculid-$version-pg$major-linux-$arch.tar.gz
[ -f "$tarball" ] || { echo "no $tarball: run scripts/package.sh $major first" >&2; exit 1; }

# What a complete install holds, from the repository (not from the package under test).
expected=("$libdir/hlculid.so" "$extdir/hlculid.control" "$extdir/hlculid--$version.sql")
for f in sql/hlculid--*--*.sql; do expected+=("$extdir/$(basename "$f")"); done

check_installed() {
  local f missing=0
  for f in "${expected[@]}"; do
    [ -f "$f" ] || { echo "missing after install: $f" >&2; missing=1; }
  done
  [ $missing = 0 ] || exit 1
  cmp "$extdir/hlculid--$version.sql" "sql/hlculid--$version.sql" \
    || { echo "the installed install script is not sql/hlculid--$version.sql" >&2; exit 1; }
  grep -q "default_version = '$version'" "$extdir/hlculid.control" \
    || { echo "hlculid.control does not name version $version" >&2; exit 1; }
  if [ -n "$deb" ]; then # every file the package owns is one we expect, and the reverse
    local owned; owned=$(dpkg -L "$pkg" | grep -E '\.(so|control|sql)$' | sort)
    diff <(printf '%s\n' "${expected[@]}" | sort) <(echo "$owned") \
      || { echo "files owned by $pkg differ from the expected set" >&2; exit 1; }
  fi
  echo "installed: ${#expected[@]} files in $libdir and $extdir"
  check_licence
}
check_licence() {
  tar -xzOf "$tarball" "hlculid-$version-pg$major-linux-$arch/LICENSE" | cmp -s - LICENSE \
    || { echo "$tarball does not hold LICENSE" >&2; exit 1; }
  if [ -n "$deb" ]; then # Debian's copyright file, read back into the text of LICENSE
    local copyright=/usr/share/doc/$pkg/copyright
    [ -f "$copyright" ] || { echo "missing after install: $copyright" >&2; exit 1; }
    grep -qx "Copyright: $(sed -n 's/^Copyright (c) //p' LICENSE)" "$copyright" \
      && grep -qx "License: PostgreSQL" "$copyright" \
      && cmp -s <(sed -n '/^License: PostgreSQL$/,$p' "$copyright" | tail -n +2 | sed 's/^ //; s/^\.$//') \
                <(sed -n '/^Copyright (c) /,$p' LICENSE | tail -n +3) \
      || { echo "$copyright is not the licence in LICENSE" >&2; exit 1; }
  fi
  echo "licence: in the tarball${deb:+ and in /usr/share/doc/$pkg/copyright}"
}
check_removed() {
  local f left=0
  for f in "${expected[@]}"; do [ ! -e "$f" ] || { echo "left after removal: $f" >&2; left=1; }; done
  [ $left = 0 ] || exit 1
  echo "removed: none of the ${#expected[@]} files is left"
}
remove() {
  if [ -n "$deb" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$pkg" >/dev/null
  else
    local tmp; tmp=$(mktemp -d); tar -xzf "$tarball" -C "$tmp"
    "$tmp"/hlculid-*/install.sh --uninstall "$cfg"; rm -rf "$tmp"
  fi
}
install_pkg() {
  if [ -n "$deb" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "./$deb" >/dev/null
    echo "installed $(dpkg-query -W -f='${Package} ${Version}' "$pkg") with apt"
  else
    local tmp; tmp=$(mktemp -d); tar -xzf "$tarball" -C "$tmp"
    "$tmp"/hlculid-*/install.sh "$cfg"; rm -rf "$tmp"
  fi
}

case "$mode" in
install)
  # A machine state without the cargo-installed files: nothing of hlculid but the package.
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$pkg" >/dev/null
  fi
  rm -f "$libdir"/hlculid.so "$extdir"/hlculid.control "$extdir"/hlculid--*.sql
  install_pkg
  check_installed ;;
reinstall)
  remove
  check_removed
  install_pkg
  check_installed ;;
*) echo "usage: $0 install|reinstall MAJOR" >&2; exit 2 ;;
esac
