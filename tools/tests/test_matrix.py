import subprocess
import sys

import pytest
from conftest import REPO, TOOLS

import matrix

ALL = ["15", "16", "17", "18"]
CITUS = ["16", "17", "18"]


def names(tier, majors, **kw):
    return [name for _, _, name, _ in matrix.plan(tier, majors, citus=CITUS, **kw)]


def test_the_table_is_well_formed():
    assert matrix.validate() == []


def test_tiers_md_is_what_the_table_generates():
    # make test fails here when tests/TIERS.md's step table was edited by hand or the table changed
    # without `tools/matrix.py --write-tiers-md`
    assert matrix.check_tiers_md() == ""


def test_env_sh_is_where_the_majors_come_from():
    assert matrix.env_sh_list("ALL_MAJORS") == ALL
    assert matrix.env_sh_list("CITUS_MAJORS") == CITUS


def test_quick_tier_on_every_major():
    n = names("quick", ALL)
    assert [x for x in n if x.startswith("clippy pg")] == ["clippy pg18"]
    assert [x for x in n if x.startswith("pg_test")] == ["pg_test pg15", "pg_test pg18"]
    assert [x for x in n if x.startswith("package pg")] == ["package pg15", "package pg18"]
    assert [x for x in n if x.startswith("citus")] == ["citus pg17"]
    assert [x for x in n if x.startswith("clients")] == [
        "clients smoke pg15", "clients smoke pg16", "clients smoke pg17", "clients pg18"]
    for m in ALL:
        for s in ("build pg{}", "build pg{} warning-free", "install pg{}", "pg_regress pg{}", "integration pg{}"):
            assert s.format(m) in n
    assert "bench --quick" not in n and "crate bench --quick" not in n
    assert "tools and the test matrix" in n


def test_full_tier_on_every_major():
    n = names("full", ALL)
    for m in ALL:
        for s in ("clippy pg{}", "pg_test pg{}", "package pg{}", "clients pg{}"):
            assert s.format(m) in n
    assert not [x for x in n if "smoke" in x]
    assert [x for x in n if x.startswith("citus")] == ["citus pg16", "citus pg17", "citus pg18"]
    assert n[-2:] == ["bench --quick", "crate bench --quick"]


@pytest.mark.parametrize("tier, majors, citus", [
    ("quick", ["16", "18"], ["citus pg18"]),
    ("quick", ["15"], []),
    ("quick", ["17", "18"], ["citus pg17"]),
    ("full", ["15", "18"], ["citus pg18"]),
])
def test_citus_runs_where_citus_is(tier, majors, citus):
    assert [x for x in names(tier, majors) if x.startswith("citus")] == citus


@pytest.mark.parametrize("majors, packages", [
    (["15"], ["package pg15"]), (["16", "17"], ["package pg17"]), (["15", "16", "17"], ["package pg15", "package pg17"]),
])
def test_one_package_test_per_install_layout_in_the_quick_tier(majors, packages):
    assert [x for x in names("quick", majors) if x.startswith("package")] == packages


def test_one_major_is_oldest_and_newest():
    n = names("quick", ["16"])
    assert [x for x in n if x.startswith(("pg_test", "clients"))] == ["clients pg16", "pg_test pg16"]


def test_order_phases_then_builds_and_suites_major_by_major():
    steps = matrix.plan("full", ALL, citus=CITUS)
    phases = [w for w, _, _, _ in steps]
    assert phases == sorted(phases, key=list(matrix.PHASES).index)
    builds = [n for w, _, n, _ in steps if w == "build"]
    assert builds[:3] == ["build pg15", "build pg15 warning-free", "install pg15"]
    suites = [n for w, _, n, _ in steps if w == "suite"]
    assert suites[:4] == ["package pg15", "pg_regress pg15", "integration pg15", "clients pg15"]
    assert [n for w, _, n, _ in steps if w == "first"][0] == "versions"


def test_commands_are_filled_in(monkeypatch):
    cmds = {n: c for _, _, n, c in matrix.plan("full", ["15", "18"], citus=CITUS)}
    assert cmds["bench --quick"] == "scripts/bench.sh --quick --no-install --pg 15 18"
    assert cmds["C declarations against each major's headers"] == "scripts/check-c-decls.sh 15 18"
    assert cmds["clients pg15"] == "scripts/clients.sh 15"
    assert "HLCULID_FUZZ_CASES=1000000 " in cmds["core unit, property and fuzz tests"]
    quick = {n: c for _, _, n, c in matrix.plan("quick", ["15"], citus=CITUS, fuzz_cases="7")}
    assert "HLCULID_FUZZ_CASES=7 " in quick["core unit, property and fuzz tests"]
    assert not any("{" in c for c in cmds.values())


def test_steps_filter():
    assert names("quick", ALL, steps_re="pg_regress|^fmt$") == ["fmt"] + [f"pg_regress pg{m}" for m in ALL]


def test_a_wrong_table_is_refused(monkeypatch):
    bad = matrix.Step("x pg{major}", "sometime", "true", "everywhere", None, "x")
    monkeypatch.setattr(matrix, "STEPS", matrix.STEPS + [bad, matrix.STEPS[0]])
    problems = matrix.validate(matrix.STEPS)
    assert any("'sometime'" in p for p in problems)
    assert any("'everywhere'" in p for p in problems)
    assert any("named twice" in p for p in problems)


def test_tiers_md_check_sees_a_hand_edit(tmp_path):
    f = tmp_path / "TIERS.md"
    f.write_text("intro\n" + matrix.tiers_md() + "after\n")
    assert matrix.check_tiers_md(f) == ""
    f.write_text(f.read_text().replace("| fmt |", "| format |"))
    assert "+| fmt |" in matrix.check_tiers_md(f)
    matrix.write_tiers_md(f)
    assert matrix.check_tiers_md(f) == "" and f.read_text().startswith("intro\n") and f.read_text().endswith("after\n")
    f.write_text("no markers\n")
    assert "no generated table" in matrix.check_tiers_md(f)


def run(*args, env=None):
    return subprocess.run([sys.executable, str(TOOLS / "matrix.py"), *args], capture_output=True, text=True,
                          env=env, cwd=REPO)


def test_plan_output_is_what_test_sh_reads():
    r = run("--plan", "--tier", "quick", "--majors", "15 18", env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "runners\t4"
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(row) == 4 for row in rows)
    assert ["build", "15", "build pg15", "scripts/package.sh 15"] in rows
    assert ["first", "-", "fmt", "cargo fmt --all --check"] in rows
    assert run("--plan", "--tier", "full", "--majors", "15", env={"PATH": "/usr/bin:/bin"}).stdout.startswith("runners\t2\n")


def test_wrong_input_is_an_error():
    assert "not 'medium'" in run("--plan", "--tier", "medium", "--majors", "15").stderr
    assert "unsupported major(s) 14" in run("--plan", "--tier", "quick", "--majors", "14 15").stderr
    assert "not a regular expression" in run("--plan", "--tier", "quick", "--majors", "15", "--steps", "(").stderr


def test_a_reader_that_stops_early_gets_no_traceback():
    # `scripts/test.sh --list | head`: the pipe closes before the list is written
    p = subprocess.Popen([sys.executable, str(TOOLS / "matrix.py"), "--list", "--tier", "full"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 0 and "Traceback" not in err and "BrokenPipe" not in err, err
