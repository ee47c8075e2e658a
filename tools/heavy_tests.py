#!/usr/bin/env python3
"""The pytest tests that differ between the tiers, against tests/TIERS.md's "Heavy tests" table.

A test differs by tier when it (or a parameter of it) is marked `pytest.mark.full`, or it reads
the tier (`by_tier(...)`, `FULL`); a file does when its `pytestmark` has `full` or it reads the
tier outside a test. Each must have a row in the table whose first cell names it
(`` `test_x.py::test_name` `` for a test, `` `test_x.py` `` for a file; a file's row also covers
its tests), and every row must name a file and test that exist. So the table cannot drift from
the markers: tools/tests/test_heavy_tests.py runs this on the repository (make test).

Usage: tools/heavy_tests.py [--check]   prints what differs by tier, or the problems (exit 1)
"""
import ast
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
SUITES = ("tests/integration", "tests/citus", "tests/clients")
HEADING = "## Heavy tests: where each went"
TIER_NAMES = {"by_tier", "FULL"}


def _is_full_mark(node):
    """`pytest.mark.full` (or `mark.full`) anywhere in the expression."""
    return any(isinstance(n, ast.Attribute) and n.attr == "full"
               and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
               for n in ast.walk(node))


def _reads_tier(node):
    return any(isinstance(n, ast.Name) and n.id in TIER_NAMES for n in ast.walk(node))


def tiered(path):
    """(file_differs, {test names that differ}, {every test name}) of one test file."""
    tree = ast.parse(path.read_text(), str(path))
    file_differs = False
    tests, every = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("test_"):
                every.add(node.name)
                if any(_is_full_mark(d) for d in node.decorator_list) or _reads_tier(node):
                    tests.add(node.name)
            elif _reads_tier(node):
                # a helper reading the tier: the tests that call it differ, and the file says so
                file_differs = True
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                  for t in node.targets):
            file_differs |= _is_full_mark(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            raise SystemExit(f"heavy_tests: {path}: test classes are not read here ({node.name})")
        elif _reads_tier(node):
            file_differs = True
    return file_differs, tests, every


def table_rows(text):
    """The backticked names in the first cell of each row of the Heavy tests table."""
    i = text.find(HEADING)
    if i < 0:
        raise SystemExit(f"heavy_tests: tests/TIERS.md has no {HEADING!r}")
    rows = []
    for line in text[i:].split("\n")[1:]:
        if line.startswith("## "):
            break
        if line.startswith("| ") and not line.startswith("| test |"):
            rows += re.findall(r"`([^`]+)`", line.split(" | ")[0])
    return rows


def problems(repo=REPO):
    text = (repo / "tests/TIERS.md").read_text()
    named = table_rows(text)
    paths = [p for s in SUITES for p in sorted((repo / s).glob("test_*.py"))]
    tests_of = {}  # file name -> every test of the files of that name (the suites may share one)
    for p in paths:
        tests_of.setdefault(p.name, set()).update(tiered(p)[2])
    out = []
    for name in named:
        if "/" in name:  # a suite directory or a file, e.g. tests/citus/
            if not (repo / name).exists():
                out.append(f"TIERS.md names {name}, which does not exist")
            continue
        if not name.startswith("test_") or not name.split("::")[0].endswith(".py"):
            continue  # prose in backticks, e.g. [fast]
        f, _, test = name.partition("::")
        if f not in tests_of:
            out.append(f"TIERS.md names {f}, which is no test file")
        elif test and test not in tests_of[f]:
            out.append(f"TIERS.md names {name}, which is no test of {f}")
    for path in paths:
        f = path.name
        file_differs, tests, _ = tiered(path)
        if file_differs and f not in named and not any(n.startswith(f + "::") for n in named):
            out.append(f"{path.relative_to(repo)} differs by tier (pytestmark full, or reads the tier), "
                       f"and the Heavy tests table of tests/TIERS.md has no row for it")
        for t in sorted(tests):
            if f"{f}::{t}" not in named and f not in named:
                out.append(f"{path.relative_to(repo)}::{t} differs by tier (marked full, or reads the tier), "
                           f"and the Heavy tests table of tests/TIERS.md has no row for it")
    return out


def main(argv):
    if argv and argv != ["--check"]:
        print(__doc__, file=sys.stderr)
        return 2
    if argv == ["--check"]:
        p = problems()
        for line in p:
            print(line)
        return 1 if p else 0
    for s in SUITES:
        for path in sorted((REPO / s).glob("test_*.py")):
            file_differs, tests, _ = tiered(path)
            if file_differs:
                print(path.relative_to(REPO))
            for t in sorted(tests):
                print(f"{path.relative_to(REPO)}::{t}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
