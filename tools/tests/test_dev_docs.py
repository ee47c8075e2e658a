"""docs/development.md against the tree: it names every SQL source, and opens with the inner loop."""
import re

from conftest import REPO

DEV = REPO / "docs/development.md"


def unnamed_sources(text, sources):
    """The sql/src/*.sql files the page never names (as `NAME.sql`)."""
    return sorted(s for s in sources if f"`{s}`" not in text)


def test_every_sql_source_is_named():
    sources = [p.name for p in (REPO / "sql/src").glob("*.sql")]
    assert sources
    assert unnamed_sources(DEV.read_text(), sources) == []
    # the check has teeth
    assert unnamed_sources("`a.sql` and b.sql", ["a.sql", "b.sql"]) == ["b.sql"]


def test_the_inner_loop_comes_first():
    first = re.search(r"^## (.+)$", DEV.read_text(), re.M)[1]
    assert first == "The inner loop"
    assert "make check PG=" in DEV.read_text().split("\n## ")[1]
