#!/usr/bin/env bash
# The new-function checklist of docs/development.md ("Adding a SQL function"), tried: in a scratch
# clone of HEAD, a toy Rust function hlculid_toy_answer(x integer) goes in by the documented steps
# (the function, its COMMENT ON, the blessed install script, the upgrade template and gen-sql.sh,
# the reference row, a pg_regress file and its .out, the CHANGELOG line); the checks pass; then each
# step is left out in turn and the check the page names for it must fail, saying why. One build of
# one major (the newest under test), installed into a private copy of its PostgreSQL install under
# the scratch directory: the toy never reaches the shared install. A step of make test-full.
# Usage: scripts/checklist-test.sh [MAJOR]
set -uo pipefail
. "$(dirname "$0")/env.sh"
major=${1:-$(test_majors | awk '{print $NF}')}
version=$(crate_version)
scratch=$RUN_ROOT/checklist
rm -rf "$scratch"
mkdir -p "$scratch"
clone=$scratch/clone
git clone -q "$REPO" "$clone" || exit 1
cd "$clone" || exit 1
ln -s "$VENV" .venv
cfg=$(pg_config_for "$major")
copy_pg_install "$cfg" "$scratch/pg" || exit 1
export "HLCULID_PG_CONFIG_$major=$scratch/pg$cfg" HLCULID_TEST_PG=$major HLCULID_SCRATCH=$scratch/run
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE_ROOT/cargo-target}
export HLCULID_PROFILE=test-build HLCULID_PACKAGE_DIR=$clone/target/test-package
cfg=$scratch/pg$cfg
extdir=$("$cfg" --sharedir)/extension
mkdir -p "$HLCULID_SCRATCH"

passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }
expect_ok() { # expect_ok NAME COMMAND...
  local name=$1 out; shift
  if out=$("$@" 2>&1); then ok "$name"; else bad "$name"; echo "$out" | tail -30 | sed 's/^/  | /'; fi
}
expect_fail() { # expect_fail NAME PATTERN COMMAND...: fails, and says PATTERN
  local name=$1 pat=$2 out; shift 2
  if out=$("$@" 2>&1); then bad "$name (passed)"
  elif ! grep -qF -- "$pat" <<<"$out"; then bad "$name (no '$pat')"; echo "$out" | tail -30 | sed 's/^/  | /'
  else ok "$name"; fi
}
without() { # without FILE COMMAND...: COMMAND with FILE as committed in the clone's last step, then FILE back
  local f=$1 rc; shift
  cp "$f" "$scratch/kept"
  "$@"; rc=$?
  cp "$scratch/kept" "$f"
  return $rc
}
build_and_install() { # the package of this major, into the private copy
  local stage
  stage=$(scripts/package.sh --stage-only "$major") && "$stage/install.sh" "$cfg" >/dev/null
}
install_sql() { cp sql/hlculid--*.sql "$extdir/"; } # the SQL scripts only, as a package would
regress_toy() { scripts/regress.sh "$major" toy; }
docs_tests() { scripts/integration.sh "$major" test_docs.py -k "reference_matches or has_a_comment"; }
upgrade_test() { scripts/integration.sh "$major" "test_upgrade.py::test_update_from_a_release_matches_a_fresh_install"; }
toy_comment="COMMENT ON FUNCTION hlculid_toy_answer(integer) IS 'the checklist''s toy: x + 42';"

# 1. The function, in Rust (appended to src/lib.rs: a toy has no subsystem).
cat >>src/lib.rs <<'RUST'

/// The new-function checklist's toy (scripts/checklist-test.sh, a scratch clone only).
#[pgrx::pg_extern(immutable, parallel_safe, strict)]
fn hlculid_toy_answer(x: i32) -> i32 {
    x.wrapping_add(42)
}
RUST
# 2. Its comment, in src/comments.rs' extension_sql! block.
comments=$(grep -rl 'name = "hlculid_comments"' src)
sed -i "/^\"#,\$/i $toy_comment" "$comments"
grep -qF "$toy_comment" "$comments" || { echo "checklist: could not add the comment to $comments" >&2; exit 1; }
# 3. Bless the install script: a build, then --bless --built takes the SQL it generated.
expect_ok "build pg$major with the toy" scripts/package.sh --stage-only "$major"
expect_ok "bless the install script" scripts/schema-check.sh --built --bless
# 4. The upgrade: --@function and the comment, qualified; then gen-sql.sh.
template=$(ls sql/src/upgrade/*--"$version".sql.in)
printf '\n-- == toy ==\n--@function hlculid_toy_answer\n%s\n' \
  "COMMENT ON FUNCTION pg_catalog.hlculid_toy_answer(pg_catalog.int4) IS 'the checklist''s toy: x + 42';" >>"$template"
expect_ok "gen-sql.sh" scripts/gen-sql.sh
# 6. The reference row, first of the Functions table.
python3 - "$version" <<'PY'
import pathlib, re, sys
p = pathlib.Path("docs/reference.md"); s = p.read_text()
row = f"| `hlculid_toy_answer(x integer)` | `integer` | immutable, strict, parallel safe | the checklist's toy | {sys.argv[1]} |\n"
s = re.sub(r"(\n## Functions\n(?:.*\n)*?\| function \|.*\n\|[-|]+\|\n)", lambda m: m[1] + row, s, count=1)
p.write_text(s)
PY
grep -q "hlculid_toy_answer" docs/reference.md || { echo "checklist: no reference row added" >&2; exit 1; }
# 7. A pg_regress file; its first run fails and leaves the output to read and copy.
printf 'SELECT hlculid_toy_answer(0) AS zero, hlculid_toy_answer(-42) AS back, hlculid_toy_answer(NULL) IS NULL AS strict;\n' \
  >tests/pg_regress/sql/toy.sql
expect_ok "install the toy's build" build_and_install
expect_fail "pg_regress without expected/toy.out" "FAILED" regress_toy
results=$HLCULID_SCRATCH/regress-$major.out/results/toy.out
if grep -q " 42 |    0 | t" "$results" 2>/dev/null; then ok "the first run's output, read: 42, 0, t"; else bad "the first run's output ($results)"; fi
cp "$results" tests/pg_regress/expected/toy.out
# 8. The CHANGELOG line.
python3 - "$version" <<'PY'
import pathlib, sys
p = pathlib.Path("CHANGELOG.md"); head = f"## {sys.argv[1]} (unreleased)\n\n"
s = p.read_text()
p.write_text(s.replace(head, head + "- Added `hlculid_toy_answer(x)`, the checklist's toy ([Reference](docs/reference.md))\n", 1))
PY
grep -q "hlculid_toy_answer" CHANGELOG.md || { echo "checklist: no CHANGELOG line added" >&2; exit 1; }
git add -A && git commit -qm "the checklist's toy" || exit 1

# 9. Every check passes with every step done.
expect_ok "generated SQL (gen-sql.sh --check)" scripts/gen-sql.sh --check
expect_ok "schema check (--built)" scripts/schema-check.sh --built
expect_ok "pg_regress toy" regress_toy
expect_ok "the reference and the comments (test_docs.py)" docs_tests
expect_ok "the update matches a fresh install (test_upgrade.py)" upgrade_test
expect_ok "the CHANGELOG (tools/changelog.py)" python3 tools/changelog.py .

# Each step left out: its check fails.
no_row() { sed -i '/hlculid_toy_answer/d' docs/reference.md && docs_tests; }
expect_fail "without the reference row" "hlculid_toy_answer (1 arguments) is not in docs/reference.md" \
  without docs/reference.md no_row
no_comment() { # as a bless without the comment would write the install script
  sed -i "/hlculid_toy_answer(integer) IS/d" sql/hlculid--"$version".sql && install_sql && docs_tests
}
expect_fail "without the COMMENT ON" "hlculid_toy_answer(integer)" without sql/hlculid--"$version".sql no_comment
install_sql
no_line() { # the template without the toy, the upgrade script generated from it
  sed -i '/^-- == toy ==$/,$d' "$template" && scripts/gen-sql.sh >/dev/null && install_sql && upgrade_test
}
expect_fail "without the upgrade template's lines" "hlculid_toy_answer" \
  without "sql/hlculid--$(basename "$template" .sql.in).sql" without "$template" no_line
install_sql
not_generated() { sed -i '/^-- == toy ==$/,$d' "$template" && scripts/gen-sql.sh --check; }
expect_fail "a template changed without gen-sql.sh" "is not what" without "$template" not_generated
not_blessed() { git show HEAD~1:sql/hlculid--"$version".sql >sql/hlculid--"$version".sql && install_sql && regress_toy; }
expect_fail "an install script not blessed (pg_regress)" "FAILED" without sql/hlculid--"$version".sql not_blessed
not_blessed_schema() { git show HEAD~1:sql/hlculid--"$version".sql >sql/hlculid--"$version".sql && scripts/schema-check.sh --built; }
expect_fail "an install script not blessed (schema check)" "differs from" without sql/hlculid--"$version".sql not_blessed_schema
install_sql
no_out() { rm tests/pg_regress/expected/toy.out && regress_toy; }
expect_fail "without expected/toy.out" "FAILED" without tests/pg_regress/expected/toy.out no_out
no_changelog() { sed -i '/hlculid_toy_answer/d' CHANGELOG.md && python3 tools/changelog.py .; }
expect_fail "without the CHANGELOG line" "hlculid_toy_answer is added in $version" without CHANGELOG.md no_changelog

if [ "$failed" -gt 0 ]; then echo "$failed failed, $passed passed"; exit 1; fi
echo "All $passed tests passed"
