"""tools/changelog.py: CHANGELOG.md one line per change with a docs link, every new function named."""
import changelog
from conftest import REPO

GOOD = """# Changelog

## 1.1.0 (unreleased)

- Added `hlculid_new(x)` ([Reference](docs/reference.md))

## 1.0.0 (2020-01-02)

- Fixed: a thing a user sees ([Guarantees](docs/guarantees.md#clock-steps))
"""
REFERENCE = """## Functions

| function | returns | attributes | description | added |
|---|---|---|---|---|
| `hlculid_new(x int)` | `int` | immutable, strict, parallel safe | new | 1.1.0 |
| `hlculid_old()` | `int` | immutable, strict, parallel safe | old | 1.0.0 |

## Casts
"""


def test_this_repositorys_changelog_passes():
    assert changelog.problems(REPO) == []


def test_a_good_changelog_passes():
    assert changelog.shape_problems(GOOD) == []
    assert changelog.missing_functions(GOOD, REFERENCE, "1.1.0") == []


def test_a_paragraph_a_long_entry_and_a_missing_link_are_reported():
    para = GOOD.replace("- Fixed: a thing", "An explanation in prose.\n\n- Fixed: a thing")
    assert any("not an entry" in p for p in changelog.shape_problems(para))
    long = GOOD.replace("a thing a user sees", "x" * 500)
    assert any("characters" in p for p in changelog.shape_problems(long))
    unlinked = GOOD.replace(" ([Guarantees](docs/guarantees.md#clock-steps))", "")
    assert any("no link" in p for p in changelog.shape_problems(unlinked))
    # the unreleased section: one line each, links required only when it is released
    assert changelog.shape_problems(GOOD.replace(" ([Reference](docs/reference.md))", "")) == []
    assert any("no link" in p for p in changelog.shape_problems(
        GOOD.replace(" ([Reference](docs/reference.md))", ""), release=True))
    assert any("not an entry" in p for p in changelog.shape_problems(GOOD.replace(
        "- Added `hlculid_new(x)`", "- Added\n  `hlculid_new(x)`")))


def test_a_new_function_without_its_line_is_reported():
    without = GOOD.replace("- Added `hlculid_new(x)` ([Reference](docs/reference.md))\n", "")
    assert changelog.missing_functions(without, REFERENCE, "1.1.0") == ["hlculid_new"]
    assert changelog.functions_added(REFERENCE, "1.0.0") == {"hlculid_old"}
