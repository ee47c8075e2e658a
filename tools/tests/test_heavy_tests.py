import textwrap

import heavy_tests


def test_the_repositorys_heavy_tests_table_names_every_test_that_differs_by_tier():
    # make test fails here when a test is marked full or reads the tier without a row in
    # tests/TIERS.md, or a row names a test that is gone
    assert heavy_tests.problems() == []


def tree(tmp_path, rows, files):
    (tmp_path / "tests").mkdir()
    for s in heavy_tests.SUITES:
        (tmp_path / s).mkdir(parents=True, exist_ok=True)
    (tmp_path / "tests/TIERS.md").write_text(
        f"# tiers\n\n{heavy_tests.HEADING}\n\n| test | quick | full |\n|---|---|---|\n"
        + "".join(f"| {r} | a | b |\n" for r in rows) + "\n## Next\n\n| `test_not_a_row.py` | x | y |\n")
    for name, src in files.items():
        (tmp_path / "tests/integration" / name).write_text(textwrap.dedent(src))
    return tmp_path


FILES = {
    "test_a.py": """
        import pytest
        from pgcluster import by_tier

        @pytest.mark.full
        def test_marked():
            pass

        @pytest.mark.parametrize("x", ["quick", pytest.param("slow", marks=pytest.mark.full)])
        def test_param(x):
            pass

        def test_sized():
            n = by_tier(1, 2)

        def test_plain():
            pass
    """,
    "test_b.py": """
        import pytest
        pytestmark = [pytest.mark.full, pytest.mark.skipif(False, reason="")]

        def test_one():
            pass
    """,
    "test_c.py": """
        from pgcluster import FULL
        N = 10 if FULL else 1

        def test_uses_n():
            pass
    """,
    "test_d.py": """
        class Helper:
            pass

        def test_quick_only():
            pass
    """,
}

ROWS = ["`test_a.py::test_marked`", "`test_a.py::test_param` `[slow]`", "`test_a.py::test_sized` (sizes)",
        "`test_b.py`", "`test_c.py`", "`tests/citus/`"]


def test_a_table_naming_every_tiered_test_passes(tmp_path):
    assert heavy_tests.problems(tree(tmp_path, ROWS, FILES)) == []


def test_each_kind_of_tiered_test_without_a_row_is_named(tmp_path):
    repo = tree(tmp_path, ["`tests/citus/`"], FILES)
    got = "\n".join(heavy_tests.problems(repo))
    for missing in ("test_a.py::test_marked", "test_a.py::test_param", "test_a.py::test_sized",
                    "tests/integration/test_b.py differs", "tests/integration/test_c.py differs"):
        assert missing in got
    assert "test_plain" not in got and "test_d.py" not in got


def test_a_row_naming_a_test_or_file_that_is_gone_is_named(tmp_path):
    repo = tree(tmp_path, ROWS + ["`test_a.py::test_renamed`", "`test_gone.py`", "`tests/nowhere/`"], FILES)
    assert heavy_tests.problems(repo) == [
        "TIERS.md names test_a.py::test_renamed, which is no test of test_a.py",
        "TIERS.md names test_gone.py, which is no test file",
        "TIERS.md names tests/nowhere/, which does not exist",
    ]
