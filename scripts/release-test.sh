#!/usr/bin/env bash
# The test of scripts/release.sh and scripts/check-versions.sh, in a scratch clone of this tree
# (its tracked and new files, as they are now): nothing here changes the checkout, nothing is
# built, nothing is released. It
#   - breaks one place at a time (core/Cargo.toml, Cargo.lock, a Python or Node version, the
#     CHANGELOG, META.json, an artifact or directory name in docs/, a version never released)
#     and expects check-versions.sh to name it, while prose about released versions,
#     upgrade-script names and sql/released/ paths pass;
#   - releases the current version (--no-build: the schema check and the crate are make test's
#     own steps) and checks the dated CHANGELOG section, META.json and the artifact names it prints
#     (in a tree already released, between the release and the bump, it skips this);
#   - begins a fake next version with --bump and checks every place it sets, the frozen install
#     script, the opened upgrade script, Cargo.lock (cargo metadata --locked), and that the
#     checks pass for it, the generated SQL (gen-sql.sh --check: the opened template, the released
#     upgrade script never rewritten) and the schema check on the SQL this run's builds generated
#     (when make test has built); and that the refusals refuse (an unreleased bump, a wrong version,
#     a missing upgrade script).
# Prints "All N tests passed" (counted by scripts/test.sh).
set -uo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
main_run_root=$RUN_ROOT # where this checkout's builds left the SQL they generated
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
clone=$scratch/hlculid
mkdir -p "$clone"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -C "$clone" -xf -
cd "$clone"
v=$(crate_version)
IFS=. read -r ma mi pa <<<"$v"
next=$ma.$((mi + 1)).0
git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm scratch
commit() { git add -A && { git diff --cached --quiet || git -c user.name=t -c user.email=t@t commit -qm "$1"; }; }

passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }
expect_ok() { # expect_ok NAME COMMAND...
  local name=$1; shift
  if out=$("$@" 2>&1); then ok "$name"; else bad "$name"; echo "$out" | sed 's/^/  | /'; fi
}
expect_fail() { # expect_fail NAME PATTERN COMMAND...: fails, and says PATTERN
  local name=$1 pat=$2; shift 2
  if out=$("$@" 2>&1); then bad "$name (passed)"; echo "$out" | sed 's/^/  | /'
  elif ! grep -qF -- "$pat" <<<"$out"; then bad "$name (no '$pat')"; echo "$out" | sed 's/^/  | /'
  else ok "$name"; fi
}
in_scratch_copy() { # in_scratch_copy COMMAND...: run on a throwaway copy of the clone
  local copy=$scratch/copy
  rm -rf "$copy"; cp -a "$clone" "$copy"
  (cd "$copy" && "$@")
}

# The checked-in README may lag (the docs are the docs engineer's); the clone is made consistent
# first, so this test is about the scripts. scripts/check-versions.sh on the checkout is make
# test's own step and reports the README.
python3 tools/release_steps.py docs-name "$v"
commit "docs name $v"

# -- --publish-plan (offline: no registry is asked here)
publish_plan_names_the_files() {
  out=$(scripts/release.sh --publish-plan --offline) && grep -qF "twine upload target/package/hlculid-$v-py3-none-any.whl" <<<"$out" \
    && grep -qF "npm publish target/package/hlculid-$v.tgz --access public" <<<"$out" && grep -qF "cargo publish -p hlculid-core" <<<"$out"
}
expect_ok "--publish-plan prints the upload commands with make package's files" publish_plan_names_the_files

# -- check-versions.sh
expect_ok "check-versions passes on a consistent tree" scripts/check-versions.sh
mkdir -p docs/upgrading
cat >docs/upgrading/notes.md <<EOF
0.3.0 warned and generated; \`CREATE EXTENSION hlculid VERSION '0.3.0'\` then
\`sql/hlculid--0.3.0--$v.sql\`, and \`sql/released/hlculid--0.3.0.sql\` is frozen.
Install \`hlculid-$v-pg17-linux-x86_64.tar.gz\` or \`postgresql-15-hlculid_$v-1_amd64.deb\`.
npm install ./hlculid-$v.tgz; pip install hlculid-$v-py3-none-any.whl
EOF
expect_ok "prose about older versions, upgrade scripts and sql/released/ paths pass" scripts/check-versions.sh
expect_fail "an old tarball name in docs/" "docs/upgrading/notes.md:5: tarball" in_scratch_copy sh -c \
  "echo 'tar xzf hlculid-0.3.9-pg17-linux-x86_64.tar.gz' >>docs/upgrading/notes.md && scripts/check-versions.sh"
expect_fail "the zip's directory of another version in docs/" "docs/upgrading/notes.md:5: artifact or directory name" \
  in_scratch_copy sh -c "echo 'unzip hlculid-$v.zip && cd hlculid-0.3.9' >>docs/upgrading/notes.md && scripts/check-versions.sh"
expect_fail "a version never released, in prose" "names 0.3.9, neither" in_scratch_copy sh -c \
  "echo 'Since 0.3.9 it waits.' >>docs/upgrading/notes.md && scripts/check-versions.sh"
expect_fail "an old .deb name in README.md" "Debian package" in_scratch_copy sh -c \
  "echo 'apt install ./postgresql-15-hlculid_0.1.0-1_amd64.deb' >>README.md && scripts/check-versions.sh"
expect_fail "an old npm package name" "client package" in_scratch_copy sh -c \
  "echo 'npm install ./hlculid-0.3.9.tgz' >>README.md && scripts/check-versions.sh"
expect_fail "an old zip name" "PGXN zip" in_scratch_copy sh -c \
  "echo 'pgxn install hlculid-0.1.0.zip' >>README.md && scripts/check-versions.sh"
expect_fail "an install script path naming another version" "install script" in_scratch_copy sh -c \
  "echo 'see sql/hlculid--0.1.0.sql' >>README.md && scripts/check-versions.sh"
expect_fail "core/Cargo.toml" "core/Cargo.toml version" in_scratch_copy sh -c \
  "sed -i '0,/^version = /s/^version = .*/version = \"9.9.9\"/' core/Cargo.toml && scripts/check-versions.sh"
expect_fail "Cargo.lock" "Cargo.lock hlculid-core" in_scratch_copy sh -c \
  "python3 -c \"import re,pathlib; p=pathlib.Path('Cargo.lock'); p.write_text(re.sub(r'(name = \\\"hlculid-core\\\"\\nversion = )\\\"[^\\\"]+\\\"', r'\\g<1>\\\"9.9.9\\\"', p.read_text()))\" && scripts/check-versions.sh"
expect_fail "the CHANGELOG's newest section" "CHANGELOG.md newest section" in_scratch_copy sh -c \
  "sed -i '0,/^## /s/^## .*/## 9.9.9 (unreleased)/' CHANGELOG.md && scripts/check-versions.sh"
expect_fail "META.json" "META.json version" in_scratch_copy sh -c \
  "sed -i 's/\"version\": \"$v\"/\"version\": \"9.9.9\"/' META.json && scripts/check-versions.sh"
expect_fail "a Python pyproject.toml version" "pyproject.toml [project] version" in_scratch_copy sh -c \
  "printf '[project]\nname = \"hlculid\"\nversion = \"9.9.9\"\n' >clients/python/pyproject.toml && scripts/check-versions.sh"
expect_fail "a Python __version__ behind a dynamic version" "__version__" in_scratch_copy sh -c \
  "mkdir -p clients/python/hlculid && printf '__version__ = \"9.9.9\"\n' >clients/python/hlculid/__init__.py && printf '[project]\nname = \"hlculid\"\ndynamic = [\"version\"]\n' >clients/python/pyproject.toml && scripts/check-versions.sh"
expect_fail "a pyproject.toml without any version" "has no version" in_scratch_copy sh -c \
  "printf '[project]\nname = \"hlculid\"\n' >clients/python/pyproject.toml && scripts/check-versions.sh"
expect_fail "the Node package.json version" "package.json version" in_scratch_copy sh -c \
  "python3 -c \"import json; d=json.load(open('clients/node/package.json')); d['version']='9.9.9'; d.pop('private', None); open('clients/node/package.json','w').write(json.dumps(d, indent=2)+'\\n')\" && scripts/check-versions.sh"
expect_fail "a publishable Node package without a version" "without a version" in_scratch_copy sh -c \
  "python3 -c \"import json; d=json.load(open('clients/node/package.json')); d.pop('version', None); d.pop('private', None); open('clients/node/package.json','w').write(json.dumps(d, indent=2)+'\\n')\" && scripts/check-versions.sh"

# Client packages as the clients engineer makes them (a static pyproject version, a package.json
# version and its lock file), so the bump below is seen to set them.
py_had=$(ls clients/python/pyproject.toml 2>/dev/null)
[ -n "$py_had" ] || printf '[project]\nname = "hlculid"\nversion = "%s"\n' "$v" >clients/python/pyproject.toml
python3 tools/release_steps.py client-versions "$v"
commit "client versions"
expect_ok "check-versions reads the clients' versions" scripts/check-versions.sh

# -- release.sh
expect_ok "release --check" scripts/release.sh --check
expect_fail "release of another version than Cargo.toml's" "Cargo.toml says $v" scripts/release.sh --no-build 9.9.9
expect_fail "release --check without the upgrade script" "every release has an upgrade script" in_scratch_copy sh -c \
  "rm sql/hlculid--*--$v.sql && scripts/release.sh --check"
# A tree released but not yet bumped (its CHANGELOG section dated: make test between steps 1 and
# 6, as scripts/release-rehearsal.sh runs it) has nothing to release: the bump is tested.
released_on=$(sed -n "s/^## ${v//./\\.} (\([0-9-]*\))\$/\1/p" CHANGELOG.md | head -1)
date=${released_on:-2031-02-03}
prev_sql=$(cat "sql/hlculid--$v.sql")
if [ -n "$released_on" ]; then
  echo "skipped: the release of $v (released in this tree on $released_on: the bump is tested)"
else
  expect_fail "a bump before the release" "is not released" in_scratch_copy scripts/release.sh --bump "$next"
  expect_fail "a release from a dirty tree" "uncommitted changes" in_scratch_copy sh -c \
    "echo x >>LICENSE && scripts/release.sh --no-build $v"
  if out=$(HLCULID_RELEASE_DATE=$date scripts/release.sh --no-build "$v" 2>&1); then
    ok "release $v"
    grep -q "^## $v ($date)" CHANGELOG.md && ok "the CHANGELOG section is dated" || bad "the CHANGELOG section is dated"
    grep -q '"release_status": "stable"' META.json && ok "META.json is stable" || bad "META.json is stable"
    for a in "hlculid-$v-pg15-linux-$(uname -m).tar.gz" "hlculid-$v-pg18-linux-$(uname -m).tar.gz" \
             "postgresql-15-hlculid_$v-1_$(dpkg --print-architecture).deb" "hlculid-$v.zip" "hlculid-core-$v.crate"; do
      grep -qF "$a" <<<"$out" && ok "prints $a" || { bad "prints $a"; echo "$out" | sed 's/^/  | /'; }
    done
    [ "$(git status --porcelain | wc -l)" = 2 ] && ok "the release changes two files" \
      || { bad "the release changes two files"; git status --porcelain; }
  else
    bad "release $v"; echo "$out" | sed 's/^/  | /'
  fi
  commit "release $v"
fi
if out=$(scripts/release.sh --bump "$next" 2>&1); then
  ok "bump to $next"
  for f in Cargo.toml core/Cargo.toml; do
    [ "$(sed -n 's/^version = "\(.*\)"/\1/p' $f | head -1)" = "$next" ] && ok "$f is $next" || bad "$f is $next"
  done
  cargo metadata --locked --format-version 1 >/dev/null 2>&1 \
    && ok "Cargo.lock agrees with the manifests (cargo metadata --locked)" || bad "Cargo.lock agrees (cargo metadata --locked)"
  # the Python version, static in pyproject.toml or a __version__ behind a dynamic one
  python3 tools/release_steps.py python-version-is "$next" && ok "the Python package is $next" || bad "the Python package is $next"
  python3 -c "import json,sys; d=json.load(open('clients/node/package-lock.json')); sys.exit(not (json.load(open('clients/node/package.json'))['version'] == d['version'] == d['packages']['']['version'] == '$next'))" \
    && ok "package.json and its lock are $next" || bad "package.json and its lock are $next"
  [ "$(cat "sql/released/hlculid--$v.sql")" = "$prev_sql" ] && ok "sql/released/hlculid--$v.sql is the released script" || bad "frozen script"
  [ ! -e "sql/hlculid--$v.sql" ] && [ -f "sql/hlculid--$next.sql" ] && ok "sql/hlculid--$next.sql replaces sql/hlculid--$v.sql" || bad "install script moved"
  up=sql/hlculid--$v--$next.sql
  grep -qF "\\echo Use \"ALTER EXTENSION hlculid UPDATE TO '$next'\" to load this file. \\quit" "$up" && ok "$up has the guard line" || bad "$up guard"
  grep -q "ADD FUNCTION 6 (hlculid) hlculid_skipsupport" "$up" && ok "$up repeats the skip-support step" || bad "$up skip support"
  [ "$(sed -n 's/^## //p' CHANGELOG.md | head -2 | paste -sd'|')" = "$next (unreleased)|$v ($date)" ] \
    && ok "CHANGELOG: $next (unreleased) above $v ($date)" || bad "CHANGELOG sections"
  grep -q "hlculid-$next-pg" README.md && ! grep -q "hlculid-$v-pg" README.md && ok "README.md names $next artifacts" || bad "README artifacts"
  grep -qF "sql/hlculid--0.3.0--$v.sql" docs/upgrading/notes.md && grep -qF "hlculid-$next-pg17" docs/upgrading/notes.md \
    && grep -qF "hlculid-$next.tgz" docs/upgrading/notes.md && grep -qF "hlculid-$next-py3" docs/upgrading/notes.md \
    && ok "docs/: artifact names moved, upgrade-script prose kept" || bad "docs/ rewrite"
  grep -q '"release_status": "unstable"' META.json && grep -q "\"file\": \"sql/hlculid--$next.sql\"" META.json \
    && ok "META.json: unstable, the new install script" || bad "META.json after the bump"
  ! ls sql/src/upgrade/*--"$v".sql.in >/dev/null 2>&1 && ok "the bump retires the template of the released $v" \
    || bad "the bump retires the template of the released $v"
  expect_fail "a template of a released version" "retire it" in_scratch_copy sh -c \
    "cp sql/src/upgrade/$v--$next.sql.in sql/src/upgrade/0.0.1--$v.sql.in && scripts/gen-sql.sh --check"
  [ -f "sql/src/upgrade/$v--$next.sql.in" ] && ok "the bump opens the template sql/src/upgrade/$v--$next.sql.in" \
    || bad "the bump opens the template sql/src/upgrade/$v--$next.sql.in"
  grep -q "^--@include skipsupport.sql" "sql/src/upgrade/$v--$next.sql.in" 2>/dev/null \
    && ok "the template includes the skip-support step" || bad "the template includes the skip-support step"
  expect_ok "generated SQL after the release and the bump (gen-sql.sh --check)" scripts/gen-sql.sh --check
  # a later edit of a source goes into the open upgrade script, never into a released one
  released_up=$(ls sql/hlculid--*--"$v".sql)
  before=$(cat $released_up)
  echo "-- a later change" >>sql/src/skipsupport.sql
  expect_fail "an edited source asks for the open upgrade script only" "sql/hlculid--$v--$next.sql is not what" scripts/gen-sql.sh --check
  expect_ok "gen-sql.sh writes the open upgrade script" scripts/gen-sql.sh
  [ "$(cat $released_up)" = "$before" ] && ok "the released $released_up is left as it is" || bad "the released $released_up was rewritten"
  grep -q "^-- a later change" "sql/hlculid--$v--$next.sql" && ok "the open upgrade script takes the edited source" \
    || bad "the open upgrade script takes the edited source"
  git checkout -q -- sql/src/skipsupport.sql && scripts/gen-sql.sh >/dev/null
  # the install script of the next version is the released one until the SQL surface changes:
  # the SQL this run's builds generated (make test builds before this step) must match it
  if ls "$main_run_root"/schema-*.sql >/dev/null 2>&1; then
    ln -sfn "$REPO/.venv" .venv
    expect_ok "schema check after the bump (the builds' SQL)" env HLCULID_SCRATCH="$main_run_root" \
      HLCULID_TEST_PG="$(ls "$main_run_root"/schema-*.sql | sed 's/.*schema-\([0-9]*\)\.sql/\1/' | xargs)" \
      scripts/schema-check.sh --built
    rm -f .venv
  else
    echo "skipped: schema check after the bump (no build of this run in $main_run_root)"
  fi
  expect_ok "check-versions after the bump" scripts/check-versions.sh
  expect_ok "release --check after the bump" scripts/release.sh --check
  expect_ok "PGXN META.json after the bump" scripts/check-meta.sh
else
  bad "bump to $next"; echo "$out" | sed 's/^/  | /'
fi
if [ "$failed" -gt 0 ]; then echo "$failed failed, $passed passed"; exit 1; fi
echo "All $passed tests passed"
