#!/usr/bin/env bash
# The release steps, written down as a script that does what it can. Cargo.toml's version is the
# one source (scripts/check-versions.sh checks every other place against it).
#
#   scripts/release.sh --check        what releasing the current version checks, changing nothing
#                                     and building nothing (make test runs it)
#   scripts/release.sh VERSION        release VERSION, which must be Cargo.toml's version (the
#                                     version is set when the release line begins, see --bump):
#                                     the checks, plus a clean tree, the install script blessed
#                                     (scripts/schema-check.sh: every supported major generates
#                                     exactly its objects) and the crate packaged and built as
#                                     crates.io gets it (crate-check.sh --verify); then dates
#                                     CHANGELOG's section, marks
#                                     META.json stable, and prints the artifacts and the steps left
#   scripts/release.sh --bump NEXT    begin NEXT once VERSION is released (tagged): freezes
#                                     sql/hlculid--VERSION.sql into sql/released/ (as 0.3.0 was
#                                     when 0.4.0 began: tests/integration/test_upgrade.py installs
#                                     every frozen version and upgrades it, and wants the current
#                                     version not frozen), retires the template of the upgrade
#                                     script to VERSION (removed: the script is frozen, and
#                                     gen-sql.sh refuses a released version's template), opens the template
#                                     sql/src/upgrade/VERSION--NEXT.sql.in (the guard line and the
#                                     skip-support step every upgrade script repeats) and generates
#                                     sql/hlculid--VERSION--NEXT.sql from it (gen-sql.sh), starts sql/hlculid--NEXT.sql as a copy (the
#                                     first change to the SQL surface blesses it again), sets NEXT
#                                     in Cargo.toml, core/Cargo.toml, Cargo.lock, hlculid.control
#                                     (when not '@CARGO_VERSION@'), the Python and Node clients,
#                                     META.json, the artifact names and claims of the version in
#                                     the docs (tools/versions.py), and
#                                     opens CHANGELOG's `## NEXT (unreleased)` section
#   scripts/release.sh --publish-plan [--offline]
#                                     what publishing the clients of the current version takes,
#                                     for whoever holds the registry accounts (tools/publish_plan.py):
#                                     each name asked of crates.io, PyPI and npm with their own
#                                     clients (free, taken, or not checked and why), the metadata
#                                     missing or still placeholders, the exact commands; uploads nothing
# Options: --no-build (VERSION: skip the two builds above; the script's own test uses it),
#          --allow-dirty (VERSION: release from a tree with uncommitted changes; tests only).
# Release steps in full (docs/_incoming/release.md, "Releasing"): scripts/release.sh X.Y.Z;
# review and commit; make package; make dist; the commands of --publish-plan; tag vX.Y.Z;
# upload the zip to PGXN; then scripts/release.sh --bump X.Y.(Z+1) and commit.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
root=$PWD

mode= target= build=1 dirty=0 offline=
while [ $# -gt 0 ]; do
  case "$1" in
    --check) mode=check ;;
    --bump) mode=bump target=${2:?--bump NEXT}; shift ;;
    --publish-plan) mode=publish ;;
    --offline) offline=--offline ;;
    --no-build) build=0 ;;
    --allow-dirty) dirty=1 ;;
    -*) echo "release: unknown option $1" >&2; exit 2 ;;
    *) mode=release target=$1 ;;
  esac
  shift
done
[ -n "$mode" ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
semver_re='^[0-9]+\.[0-9]+\.[0-9]+$'
[ -z "$target" ] || [[ $target =~ $semver_re ]] || { echo "release: '$target' is not X.Y.Z" >&2; exit 2; }

current=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
fail=0
problem() { echo "release: $*" >&2; fail=1; }
newest_released() { # the newest version frozen in sql/released/
  ls sql/released/ | sed -nE 's/^hlculid--([0-9]+\.[0-9]+\.[0-9]+)(\.pg[0-9]+)?\.sql$/\1/p' | sort -uV | tail -1
}
changelog_heading() { sed -n 's/^## //p' CHANGELOG.md | head -1; }

checks() { # checks VERSION: what must hold for VERSION to be released from this tree
  local v=$1 prev up
  "$root/scripts/check-versions.sh" "$root" || problem "the versions disagree (above)"
  "$root/scripts/check-meta.sh" "$root/META.json" >/dev/null || { "$root/scripts/check-meta.sh" "$root/META.json" >&2 || true; problem "META.json is not valid"; }
  [ "$v" = "$current" ] || problem "Cargo.toml says $current, not $v (begin a version with --bump)"
  prev=$(newest_released)
  [ -n "$prev" ] || problem "sql/released/ holds no released version"
  [ "$(printf '%s\n%s\n' "$prev" "$v" | sort -V | tail -1)" = "$v" ] && [ "$prev" != "$v" ] \
    || problem "$v is not newer than the newest released version $prev"
  up=sql/hlculid--$prev--$v.sql
  if [ ! -f "$up" ]; then
    problem "$up is missing: every release has an upgrade script, even an empty one"
  elif ! grep -qF "\\echo Use \"ALTER EXTENSION hlculid UPDATE TO '$v'\" to load this file. \\quit" "$up"; then
    problem "$up lacks the guard line \\echo Use \"ALTER EXTENSION hlculid UPDATE TO '$v'\" ..."
  fi
  [ -f "sql/hlculid--$v.sql" ] || problem "sql/hlculid--$v.sql (the install script) is missing: scripts/schema-check.sh --bless"
  [ ! -e "sql/released/hlculid--$v.sql" ] || problem "sql/released/hlculid--$v.sql exists: $v was released already"
  case "$(changelog_heading)" in
    "$v (unreleased)" | "$v ("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*) ;;
    *) problem "CHANGELOG.md's newest section is '$(changelog_heading)', not '$v (unreleased)'" ;;
  esac
}

artifacts() { # artifacts VERSION: what make package, make dist and the clients' builds produce
  local v=$1 arch deb_arch m
  arch=$(uname -m) deb_arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
  echo "make package (target/package/):"
  for m in $ALL_MAJORS; do echo "  hlculid-$v-pg$m-linux-$arch.tar.gz"; done
  echo "  postgresql-15-hlculid_$v-1_$deb_arch.deb"
  echo "make dist (target/dist/): hlculid-$v.zip (PGXN)"
  echo "cargo package -p hlculid-core (target/package/): hlculid-core-$v.crate"
  python3 tools/release_steps.py client-artifacts "$v"
}

case $mode in
check)
  checks "$current"
  [ $fail = 0 ] || exit 1
  echo "release --check: $current can be released (released before it: $(newest_released)); scripts/release.sh $current would produce:"
  artifacts "$current"
  ;;

release)
  checks "$target"
  # the section being released: one line per change, each with its docs link (tools/changelog.py)
  python3 tools/changelog.py --release "$root" >&2 || problem "CHANGELOG.md's $target section is not ready (above)"
  if [ $dirty = 0 ] && [ -n "$(git status --porcelain)" ]; then problem "the tree has uncommitted changes"; fi
  if [ $fail = 0 ] && [ $build = 1 ]; then
    scripts/schema-check.sh || problem "sql/hlculid--$target.sql is not what the code generates (above)"
    scripts/crate-check.sh --verify || problem "hlculid-core does not package cleanly (above)"
  fi
  [ $fail = 0 ] || { echo "release: $target NOT released; nothing changed" >&2; exit 1; }
  day=${HLCULID_RELEASE_DATE:-$(date -u +%F)}
  python3 tools/release_steps.py date "$target" "$day"
  echo "release: $target: CHANGELOG.md section dated $day, META.json release_status stable. Artifacts:"
  artifacts "$target"
  cat <<STEPS
Left to do, in order:
  git commit -am "Release $target"
  make package && make dist
  scripts/release.sh --publish-plan          # the registries: names, metadata, the exact upload commands
  git tag v$target && git push --tags        # the tag freezes sql/hlculid--$target.sql for ever
  upload target/dist/hlculid-$target.zip to PGXN (https://manager.pgxn.org/)
  scripts/release.sh --bump <next>  &&  git commit -am "<next> begins"
STEPS
  ;;

publish)
  python3 tools/publish_plan.py --root "$root" $offline "$current"
  ;;

bump)
  next=$target
  [ "$(printf '%s\n%s\n' "$current" "$next" | sort -V | tail -1)" = "$next" ] && [ "$next" != "$current" ] \
    || { echo "release: $next is not newer than $current" >&2; exit 1; }
  case "$(changelog_heading)" in
    "$current ("[0-9][0-9][0-9][0-9]-*) ;;
    *) echo "release: $current is not released (CHANGELOG: '$(changelog_heading)'); release it first: scripts/release.sh $current" >&2; exit 1 ;;
  esac
  [ -f "sql/hlculid--$current.sql" ] || { echo "release: sql/hlculid--$current.sql is missing" >&2; exit 1; }
  prev=$(newest_released)
  # Freeze the released install script; the next version starts from the same objects.
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git mv "sql/hlculid--$current.sql" sql/released/
  else
    mv "sql/hlculid--$current.sql" sql/released/
  fi
  cp "sql/released/hlculid--$current.sql" "sql/hlculid--$next.sql"
  # The released upgrade script's template retires with it (git history keeps it).
  for tpl in sql/src/upgrade/*--"$current".sql.in; do
    [ -e "$tpl" ] || continue
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git rm -q "$tpl"; else rm "$tpl"; fi
  done
  # the upgrade template, NEXT in every place that names the version, the CHANGELOG section
  python3 tools/release_steps.py bump "$prev" "$current" "$next"
  scripts/gen-sql.sh >/dev/null || { echo "release: scripts/gen-sql.sh failed (above)" >&2; exit 1; }
  git add -A sql 2>/dev/null || true
  released=$current current=$next
  checks "$next"
  [ $fail = 0 ] || { echo "release: $next begun, but the checks above fail" >&2; exit 1; }
  echo "release: $next begun: sql/released/hlculid--$released.sql frozen, sql/hlculid--$released--$next.sql opened, versions set; review and commit"
  ;;
esac
