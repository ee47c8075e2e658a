r"""Every SQL snippet of README.md runs as written.

The ```sql blocks are grouped by section (a `#`, `##` or `###` heading; `####` subsections belong
to theirs) and each section's blocks run in order, in one psql session of the major under test,
against a fresh database of a server with hlculid preloaded and hlculid.publisher_id set (as
the README's set-up says), after CREATE EXTENSION hlculid unless the section creates it itself.
psql is what a user pastes into, so statements run one by one, as they would there. Output is
not compared. An HTML comment on the lines right before a block marks it:

    <!-- readme-check: skip (why it cannot run on one fresh server) -->
    <!-- readme-check: varies (what in its output depends on the time or on random values) -->

A skipped block is not run; a `varies` block runs like any other. Both need their reason.
Snippets are plain SQL, so that they paste into any client: a psql meta-command (`\set`,
`\gset`, ...) is refused, and so psql variables (`:name`) are syntax errors.
"""

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from pgcluster import Cluster, as_postgres

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = re.compile(r"<!--\s*readme-check:\s*(.*?)\s*-->")
MARK_BODY = re.compile(r"(skip|varies)\s*\((.*\S.*)\)")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
HEADING = re.compile(r"^(#{1,3})\s+(.*\S)\s*$")
CREATES_EXTENSION = re.compile(r"\bCREATE\s+EXTENSION\s+(IF\s+NOT\s+EXISTS\s+)?hlculid\b", re.I)


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    sql: str
    mark: str = ""  # "", "skip" or "varies"
    reason: str = ""


@dataclass
class Section:
    title: str
    line: int
    blocks: list = field(default_factory=list)


def parse(text):
    """The sections holding ```sql blocks, and the problems found in the markers."""
    sections, problems = [], []
    current = Section("(top)", 1)
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            indent, lang = fence.group(1), fence.group(2)
            end = i + 1
            while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
                end += 1
            if end == len(lines):
                problems.append(f"line {i + 1}: a code block that never ends")
            if lang == "sql":
                body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:end]]
                block = Block(i + 1, "\n".join(body) + "\n")
                for k, l in enumerate(body):
                    if l.lstrip().startswith("\\"):
                        problems.append(f"line {i + 2 + k}: a psql meta-command; keep snippets plain SQL")
                # the HTML comments right above the fence (blank lines between allowed)
                j = i - 1
                while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("<!--")):
                    for m in MARK.finditer(lines[j]):
                        body_m = MARK_BODY.fullmatch(m.group(1))
                        if not body_m:
                            problems.append(f"line {j + 1}: '{m.group(0)}' is not 'skip (reason)' or "
                                            "'varies (reason)'")
                        elif block.mark:
                            problems.append(f"line {j + 1}: a second readme-check mark for one block")
                        else:
                            block.mark, block.reason = body_m.group(1), body_m.group(2).strip()
                    j -= 1
                current.blocks.append(block)
            else:
                # a mark on anything but a sql block would silently check nothing
                k = i - 1
                while k >= 0 and (not lines[k].strip() or lines[k].strip().startswith("<!--")):
                    if MARK.search(lines[k]):
                        problems.append(f"line {k + 1}: a readme-check mark on a '{lang or 'plain'}' block")
                    k -= 1
            i = end + 1
            continue
        heading = HEADING.match(line)
        if heading:
            if current.blocks:
                sections.append(current)
            current = Section(heading.group(2), i + 1)
        i += 1
    if current.blocks:
        sections.append(current)
    return sections, problems


SECTIONS, PROBLEMS = parse(README.read_text())


def test_every_mark_is_well_formed_and_the_readme_has_snippets():
    assert not PROBLEMS, "\n".join(PROBLEMS)
    titles = [s.title for s in SECTIONS]
    assert "Quick start" in titles, titles
    assert sum(len(s.blocks) for s in SECTIONS) >= 10


def test_the_parser_groups_marks_and_reasons():
    sections, problems = parse(
        "# t\n```sql\nSELECT 1;\n```\n## A\nx\n<!-- readme-check: skip (needs two servers) -->\n\n"
        "```sql\nSELECT 2;\n```\n#### sub\n  ```sql\n  SELECT 3;\n  ```\n```sh\n# not a heading\n```\n"
        "### B\n<!-- readme-check: skip -->\n```sql\nSELECT 4;\n```\n"
        "<!-- readme-check: varies (random bits) -->\n```js\nx\n```\n```sql\n\\set x 1\n```\n")
    assert [(s.title, [(b.sql, b.mark, b.reason) for b in s.blocks]) for s in sections] == [
        ("t", [("SELECT 1;\n", "", "")]),
        ("A", [("SELECT 2;\n", "skip", "needs two servers"), ("SELECT 3;\n", "", "")]),
            ("B", [("SELECT 4;\n", "", ""), ("\\set x 1\n", "", "")]),
    ]
    assert len(problems) == 3, problems
    assert "not 'skip (reason)'" in problems[0] and "'js' block" in problems[1]
    assert problems[2] == "line 29: a psql meta-command; keep snippets plain SQL"


@pytest.fixture(scope="module")
def server():
    c = Cluster("readme", conf=["hlculid.publisher_id = 10", "wal_level = logical"])
    c.start()
    yield c
    c.stop("immediate")
    shutil.rmtree(c.dir, ignore_errors=True)


def run_section(c, section, db):
    """Runs the section's blocks in a new database; returns (None, log) or (failure, log)."""
    c.sql(f'CREATE DATABASE "{db}"')
    files, log = [], []
    work = c.dir / "readme" / db
    work.mkdir(parents=True)
    for n, b in enumerate(section.blocks, 1):
        where = f"block {n} (README.md line {b.line})"
        if b.mark == "skip":
            log.append(f"{where}: skipped: {b.reason}")
            continue
        f = work / f"block{n}.sql"
        f.write_text(b.sql)
        files.append((f, where))
        log.append(f"{where}: run" + (f" (output varies: {b.reason})" if b.mark == "varies" else ""))
    shutil.chown(work.parent, "postgres")
    shutil.chown(work, "postgres")
    for f, _ in files:
        shutil.chown(f, "postgres")
    if not any(CREATES_EXTENSION.search(b.sql) for b in section.blocks if b.mark != "skip"):
        in_db(c, db, "CREATE EXTENSION hlculid")
    args = [f"{c.bin}/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(c.dir), "-p", str(c.port),
            "-U", "postgres", "-d", db]
    for f, _ in files:
        args += ["-f", str(f)]
    r = as_postgres(*args, check=False, env={"PGOPTIONS": "-c statement_timeout=60s"}, timeout=300)
    if r.returncode == 0:
        return None, log
    failed = next((where for f, where in files if f"{f}:" in r.stderr), "?")
    return f"{failed}: {r.stderr.strip()}", log


def in_db(c, db, query):
    with psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname=db, autocommit=True) as conn:
        conn.execute(query)


def cleanup(c, db, roles_before):
    """What a section leaves outside its database: roles and ALTER SYSTEM settings."""
    for (role,) in c.sql("SELECT rolname FROM pg_roles WHERE NOT rolname = ANY(%s)", (roles_before,)):
        in_db(c, db, f'DROP OWNED BY "{role}"')
        c.sql(f'DROP ROLE "{role}"')
    c.sql("ALTER SYSTEM RESET ALL")
    c.sql("SELECT pg_reload_conf()")


@pytest.mark.parametrize("section", SECTIONS, ids=[s.title for s in SECTIONS])
def test_readme_section_runs(server, section):
    db = "readme_" + re.sub(r"[^a-z0-9]+", "_", section.title.lower()).strip("_")[:40]
    roles = [r for (r,) in server.sql("SELECT rolname FROM pg_roles")]
    try:
        failure, log = run_section(server, section, db)
    finally:
        cleanup(server, db, roles)
    print(f"README section '{section.title}' (line {section.line}):\n  " + "\n  ".join(log))
    assert failure is None, f"README section '{section.title}' (line {section.line}), {failure}"


def test_a_broken_snippet_fails_with_its_section_and_block(server):
    """The checker itself can fail: a section whose second block errors is reported as such."""
    sections, _ = parse("## Broken\n```sql\nCREATE TABLE t (a int);\n```\n"
                        "```sql\nSELECT a FROM t;\nSELECT :cause_id;\n```\n")
    failure, _ = run_section(server, sections[0], "readme_selftest")
    assert failure is not None
    assert failure.startswith("block 2 (README.md line 5): ") and "syntax error" in failure
