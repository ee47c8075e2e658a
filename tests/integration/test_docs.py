r"""The docs run as written: README.md and every page under docs/.

Each page's ```sql blocks run in order in one psql session (as a reader pastes them), in a
database of the page's own, on a server with hlculid preloaded, `hlculid.publisher_id = 10` and
`TimeZone = UTC` (what docs/install.md sets up), after CREATE EXTENSION hlculid unless the page
creates it itself. A ```text block right after a sql block (blank lines between allowed) is that
block's output as psql prints it (`psql -X -q`, errors without their `psql:<stdin>:N:` prefix),
and is compared: every line must match, where `…` in the page stands for any text within a line
(what varies from run to run: ids, times). A sql block without an output block must not raise an
error. An HTML comment right above a block marks one that cannot run here:

    <!-- docs-check: skip (why it cannot run on one server) -->

Snippets are plain SQL, so that they paste into any client: psql meta-commands are refused.
Links between pages, and their #anchors, must resolve.
"""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from pgcluster import Cluster, as_server, pg_config, write_as_server

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md"))
MARK = re.compile(r"<!--\s*docs-check:\s*(.*?)\s*-->")
MARK_BODY = re.compile(r"(skip)\s*\((.*\S.*)\)")
RUN_MARK = re.compile(r"run\s*\((.*\S.*)\)")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
CREATES_EXTENSION = re.compile(r"\bCREATE\s+EXTENSION\s+(IF\s+NOT\s+EXISTS\s+)?hlculid\b", re.I)
PSQL_PREFIX = re.compile(r"^psql:<stdin>:\d+: ", re.M)
SEPARATOR = "@@docs-block {}@@"


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    sql: str
    skip: str = ""  # the reason, when marked skip
    expected: str | None = None  # the output block's text
    expected_line: int = 0


@dataclass
class Page:
    name: str
    blocks: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    shell: list = field(default_factory=list)  # (line, text) of the sh blocks marked run


def fences(lines):
    """(start, end, indent, lang) of every fenced block; end is the closing fence's index."""
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            end = i + 1
            while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
                end += 1
            out.append((i, end, m.group(1), m.group(2)))
            i = end + 1
        else:
            i += 1
    return out


def parse(name, text):
    page = Page(name)
    lines = text.split("\n")
    found = fences(lines)
    for k, (start, end, indent, lang) in enumerate(found):
        if end == len(lines):
            page.problems.append(f"{name}:{start + 1}: a code block that never ends")
            continue
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start + 1:end]]
        marks = []
        j = start - 1
        while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("<!--")):
            marks += [(j, m) for m in MARK.finditer(lines[j])]
            j -= 1
        if lang != "sql":
            if lang == "sh" and len(marks) == 1 and RUN_MARK.fullmatch(marks[0][1].group(1)):
                page.shell.append((start + 1, "\n".join(body) + "\n"))
            elif marks:
                page.problems.append(f"{name}:{marks[0][0] + 1}: a docs-check mark on a '{lang or 'plain'}' block")
            continue
        block = Block(start + 1, "\n".join(body) + "\n")
        for n, l in enumerate(body):
            if l.lstrip().startswith("\\"):
                page.problems.append(f"{name}:{start + 2 + n}: a psql meta-command; keep snippets plain SQL")
        for j, m in marks:
            b = MARK_BODY.fullmatch(m.group(1))
            if not b:
                page.problems.append(f"{name}:{j + 1}: '{m.group(0)}' is not 'skip (reason)'")
            elif block.skip:
                page.problems.append(f"{name}:{j + 1}: a second docs-check mark for one block")
            else:
                block.skip = b.group(2).strip()
        if k + 1 < len(found) and found[k + 1][3] == "text" and found[k + 1][1] < len(lines) \
                and all(not l.strip() for l in lines[end + 1:found[k + 1][0]]):
            s, e, ind, _ = found[k + 1]
            out = [l[len(ind):] if l.startswith(ind) else l.lstrip() for l in lines[s + 1:e]]
            block.expected, block.expected_line = "\n".join(out), s + 1
            if block.skip:
                page.problems.append(f"{name}:{s + 1}: an output for a skipped block")
        page.blocks.append(block)
    return page


def matches(expected, actual):
    """The first line that differs (1-based, with both texts), or None. `…` matches any text."""
    def norm(t):
        ls = [l.rstrip() for l in t.split("\n")]
        while ls and not ls[0]:
            ls.pop(0)
        while ls and not ls[-1]:
            ls.pop()
        return ls
    e, a = norm(expected), norm(actual)
    for n in range(max(len(e), len(a))):
        el = e[n] if n < len(e) else None
        al = a[n] if n < len(a) else None
        if el is None or al is None:
            return n + 1, el, al
        pattern = ".*?".join(re.escape(part) for part in el.split("…"))
        if not re.fullmatch(pattern, al):
            return n + 1, el, al
    return None


def page_id(path):
    return str(path.relative_to(ROOT))


PARSED = [parse(page_id(p), p.read_text()) for p in PAGES]


def test_every_page_parses_and_the_docs_have_snippets_with_outputs():
    problems = [p for page in PARSED for p in page.problems]
    assert not problems, "\n".join(problems)
    assert len(PAGES) >= 20, [page_id(p) for p in PAGES]
    assert sum(len(p.blocks) for p in PARSED) >= 50
    assert sum(b.expected is not None for p in PARSED for b in p.blocks) >= 30


def test_the_parser_reads_marks_and_outputs():
    page = parse("t.md", "# t\n```sql\nSELECT 1;\n```\n\n```text\n ?column?\n```\n"
                 "<!-- docs-check: skip (needs two servers) -->\n\n```sql\nSELECT 2;\n```\n"
                 "  ```sql\n  SELECT 3;\n  ```\nprose\n```text\nnot an output\n```\n"
                 "<!-- docs-check: skip -->\n```sql\nSELECT 4;\n```\n"
                 "<!-- docs-check: skip (x) -->\n```js\nx\n```\n```sql\n\\set x 1\n```\n"
                 "<!-- docs-check: run (here) -->\n```sh\necho hi\n```\n")
    assert [(b.sql, b.skip, b.expected) for b in page.blocks] == [
        ("SELECT 1;\n", "", " ?column?"), ("SELECT 2;\n", "needs two servers", None),
        ("SELECT 3;\n", "", None), ("SELECT 4;\n", "", None), ("\\set x 1\n", "", None)]
    assert len(page.problems) == 3, page.problems
    assert "is not 'skip (reason)'" in page.problems[0] and "'js' block" in page.problems[1]
    assert page.problems[2] == "t.md:30: a psql meta-command; keep snippets plain SQL"
    assert page.shell == [(33, "echo hi\n")]


def test_the_output_comparison_marks_what_varies():
    assert matches(" a\n---\n 1\n(1 row)\n", " a\n---\n 1\n(1 row)\n\n") is None
    assert matches(" id\n…\n", " id\n 017FC21C5E7A-0000-000A-AAA111111111\n") is None
    assert matches(" n\n---\n 1\n", " n\n---\n 2\n") == (3, " 1", " 2")
    assert matches(" n\n", " n\n 2\n") == (2, None, " 2")


# Links: [text](target) outside code, to a page of the repository, with an optional #anchor.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    lines = path.read_text().split("\n")
    inside, seen, out = set(), {}, set()
    for s, e, _, _ in fences(lines):
        inside.update(range(s, e + 1))
    for n, l in enumerate(lines):
        if n in inside:
            continue
        m = re.match(r"^#{1,6}\s+(.*\S)\s*$", l)
        if m:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{base}-{k}")
        out.update(re.findall(r'<a id="([^"]+)">', l))
    return out


def test_every_link_between_pages_resolves():
    broken = []
    for path in PAGES + [ROOT / "CHANGELOG.md", ROOT / "core" / "README.md"]:
        lines = path.read_text().split("\n")
        inside = set()
        for s, e, _, _ in fences(lines):
            inside.update(range(s, e + 1))
        for n, l in enumerate(lines):
            if n in inside:
                continue
            for target in LINK.findall(re.sub(r"`[^`]*`", "", l)):
                if re.match(r"^[a-z]+:", target):
                    continue
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                where = f"{page_id(path)}:{n + 1}: {target}"
                if not dest.exists():
                    broken.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{where}: no heading '#{anchor}' in {page_id(dest)}")
    assert not broken, "\n".join(broken)


@pytest.fixture(scope="module")
def server():
    c = Cluster("docs", conf=["hlculid.publisher_id = 10", "wal_level = logical", "timezone = 'UTC'",
                              "hlculid.mask_key_file = 'docs_mask.keys'"])
    # the key of docs/masks.md's examples (the SipHash paper's test key)
    keys = c.data / "docs_mask.keys"
    write_as_server(keys, "000102030405060708090a0b0c0d0e0f\n", mode=0o600)
    c.start()
    yield c
    c.stop("immediate")
    shutil.rmtree(c.dir, ignore_errors=True)


def run_page(c, page, db):
    """Runs the page's blocks in a new database; returns the list of failures."""
    c.sql(f'CREATE DATABASE "{db}"')
    runnable = [b for b in page.blocks if not b.skip]
    if not any(CREATES_EXTENSION.search(b.sql) for b in runnable):
        in_db(c, db, "CREATE EXTENSION hlculid")
    script = "".join(f"\\echo {SEPARATOR.format(n)}\n{b.sql}" for n, b in enumerate(runnable))
    script += f"\\echo {SEPARATOR.format(len(runnable))}\n"
    work = c.dir / "docs"
    as_server("mkdir", "-p", "--", str(work))
    f = work / f"{db}.sql"
    write_as_server(f, script)
    r = as_server("sh", "-c", f'"{c.bin}/psql" -X -q -h "{c.dir}" -p {c.port} -U postgres -d "{db}" '
                  f'< "{f}" 2>&1', check=False, timeout=600,
                  env={"PGOPTIONS": "-c statement_timeout=60s", "PGTZ": "UTC"})
    out = PSQL_PREFIX.sub("", r.stdout)
    failures = []
    for n, b in enumerate(runnable):
        start, end = SEPARATOR.format(n), SEPARATOR.format(n + 1)
        if start not in out or end not in out:
            failures.append(f"{page.name}:{b.line}: psql stopped: {out[-2000:]}")
            break
        got = out.split(start + "\n", 1)[1].split(end, 1)[0]
        if b.expected is None:
            errors = [l for l in got.split("\n") if l.startswith("ERROR:")]
            if errors:
                failures.append(f"{page.name}:{b.line}: {errors[0]}\n{got}")
        else:
            diff = matches(b.expected, got)
            if diff:
                failures.append(f"{page.name}:{b.line}: output line {diff[0]} differs from the page's "
                                f"(line {b.expected_line}):\n  page: {diff[1]!r}\n  psql: {diff[2]!r}\n"
                                f"whole output:\n{got}")
    return failures


def in_db(c, db, query):
    with psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname=db, autocommit=True) as conn:
        conn.execute(query)


def cleanup(c, db, roles_before):
    """What a page leaves outside its database: roles and ALTER SYSTEM settings."""
    for (role,) in c.sql("SELECT rolname FROM pg_roles WHERE NOT rolname = ANY(%s)", (roles_before,)):
        for (d,) in c.sql("SELECT datname FROM pg_database WHERE datallowconn"):
            in_db(c, d, f'DROP OWNED BY "{role}"')
        c.sql(f'DROP ROLE "{role}"')
    c.sql("ALTER SYSTEM RESET ALL")
    c.sql("SELECT pg_reload_conf()")


RUNNABLE = [p for p in PARSED if any(not b.skip for b in p.blocks)]


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_page_runs_as_written(server, page):
    db = "docs_" + re.sub(r"[^a-z0-9]+", "_", page.name.lower().removesuffix(".md")).strip("_")
    roles = [r for (r,) in server.sql("SELECT rolname FROM pg_roles")]
    try:
        failures = run_page(server, page, db)
    finally:
        cleanup(server, db, roles)
    skipped = [f"{page.name}:{b.line}: skipped: {b.skip}" for b in page.blocks if b.skip]
    print("\n".join(skipped))
    assert not failures, "\n\n".join(failures)


def test_a_wrong_output_and_a_failing_block_fail_the_page(server):
    """The checker itself can fail: a wrong output, and an error where the page shows none."""
    page = parse("broken.md", "# b\n```sql\nSELECT 1 AS n;\n```\n```text\n n\n---\n 2\n(1 row)\n```\n"
                 "```sql\nSELECT 1/0;\n```\n```sql\nSELECT 'ok' AS s;\n```\n```text\n s\n----\n ok\n(1 row)\n```\n")
    failures = run_page(server, page, "docs_selftest")
    assert len(failures) == 2, failures
    assert failures[0].startswith("broken.md:2: output line 3 differs") and "' 2'" in failures[0]
    assert failures[1].startswith("broken.md:11: ERROR:  division by zero")


# The Errors page's tables of the SQL functions, against the ERRCODEs their code raises.
FUNCTION_HEAD = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+(?:[\w\"]+\.)?\"?(\w+)\"?\s*\(", re.I)
ERRCODE = re.compile(r"ERRCODE\s*=\s*'(\w+)'")


def sqlstates():
    """PostgreSQL's condition names and their SQLSTATEs (errcodes.txt of any installed major)."""
    for f in [Path("/usr/share/postgresql/15/errcodes.txt"), *Path("/opt/hlculid").glob("*/share/errcodes.txt")]:
        if f.exists():
            codes = {}
            for m in re.finditer(r"^(\w{5})\s+\w\s+\w+\s+(\w+)$", f.read_text(), re.M):
                codes.setdefault(m.group(2), m.group(1))  # a name listed twice means its first code
            return codes
    pytest.fail("no errcodes.txt found")


def raised_by_sql(text, per_function=True):
    codes, found = sqlstates(), set()
    heads = list(FUNCTION_HEAD.finditer(text))
    for i, h in enumerate(heads):
        body = text[h.start():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        # a body run as the table's owner (NAME_as_owner) raises for its entry point NAME
        name = h.group(1).removesuffix("_as_owner")
        found |= {(name if per_function else "(the file)", codes[m.group(1)]) for m in ERRCODE.finditer(body)}
    if not per_function:
        found |= {("(the file)", codes[m.group(1)]) for m in ERRCODE.finditer(text)}
    return found


def own_rows(section):
    rows = set()
    for line in section.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2] == "own":
            for fn in re.findall(r"`(\w+)`|(\(the file\))", cells[0]):
                for code in re.findall(r"`(\w{5})`", cells[1]):
                    rows.add((fn[0] or fn[1], code))
    return rows


def test_the_errors_page_lists_every_sqlstate_the_sql_functions_raise():
    page = (ROOT / "docs" / "errors.md").read_text()
    section = page.split("## Raised by the SQL functions", 1)[1]
    extension, companion = section.split("The plain-SQL companion", 1)
    version = re.search(r'^version = "(.*)"', (ROOT / "Cargo.toml").read_text(), re.M).group(1)
    script = (ROOT / "sql" / f"hlculid--{version}.sql").read_text()
    assert own_rows(extension) == raised_by_sql(script)
    companion_sql = (ROOT / "sql" / "hlculid_uuid.sql").read_text()
    by_file = {("(the file)", code) for _, code in raised_by_sql(companion_sql, per_function=False)}
    page_companion = {("(the file)", code) for _, code in own_rows(companion)}
    assert page_companion == by_file


SHELL = {p.name: p for p in PARSED if p.shell}


def run_shell(text, cwd, env, subs=()):
    for a, b in subs:
        assert a in text, f"the block no longer says {a!r}"
        text = text.replace(a, b)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=300)


def test_the_companion_installs_with_the_managed_pages_commands(server):
    """docs/managed.md's shell block as written, against the docs server: the database and role
    it creates, the companion in its schema, a query of that role through the search path."""
    page = SHELL["docs/managed.md"]
    assert len(page.shell) == 1
    env = {"PGHOST": str(server.dir), "PGPORT": str(server.port), "PGUSER": "postgres", "PGDATABASE": "postgres",
           "PATH": f"{server.bin}:{os.environ['PATH']}"}
    roles = [r for (r,) in server.sql("SELECT rolname FROM pg_roles")]
    try:
        r = run_shell(page.shell[0][1], ROOT, env)
        assert r.returncode == 0, r.stderr
        with psycopg.connect(host=str(server.dir), port=server.port, user="app_reader", dbname="app") as conn:
            got = conn.execute("SELECT hlculid_ts('017FC21C5E7A-0000-000A-AAA111111111'::uuid)::text").fetchone()
        assert got == ("2022-03-25 17:25:13.466+00",)
    finally:
        server.sql("DROP DATABASE IF EXISTS app")
        cleanup(server, "postgres", roles)


def test_the_tarball_installs_with_the_install_pages_commands(tmp_path):
    """docs/install.md's tarball block as written, for the major under test: into a private copy
    of its PostgreSQL install (the placeholders: the major, the copy's pg_config, no sudo as root)."""
    page = SHELL["docs/install.md"]
    assert len(page.shell) == 1
    version = re.search(r'^version = "(.*)"', (ROOT / "Cargo.toml").read_text(), re.M).group(1)
    major = subprocess.run([pg_config(), "--version"], capture_output=True, text=True, check=True).stdout.split()[1].split(".")[0]
    name = f"hlculid-{version}-pg{major}-linux-x86_64.tar.gz"
    dirs = [Path(os.environ["HLCULID_PACKAGE_DIR"])] if os.environ.get("HLCULID_PACKAGE_DIR") else []
    found = [d / name for d in dirs + [ROOT / "target" / "test-package", ROOT / "target" / "package"] if (d / name).exists()]
    if not found:
        pytest.skip(f"no {name} built (make test builds it before the integration tests)")
    shutil.copy(found[0], tmp_path / name)
    cfg = pg_config()
    copy = tmp_path / "pg"
    for flag in ["--bindir", "--pkglibdir", "--sharedir"]:
        d = subprocess.run([cfg, flag], capture_output=True, text=True, check=True).stdout.strip()
        shutil.copytree(d, str(copy) + d, symlinks=True)
    copy_cfg = str(copy) + cfg
    lib = subprocess.run([copy_cfg, "--pkglibdir"], capture_output=True, text=True, check=True).stdout.strip()
    share = subprocess.run([copy_cfg, "--sharedir"], capture_output=True, text=True, check=True).stdout.strip()
    assert lib.startswith(str(copy)), "the copy's pg_config does not resolve its own paths"
    r = run_shell(page.shell[0][1], tmp_path, {}, subs=[("pg17", f"pg{major}"), ("/path/to/pg_config", copy_cfg),
                                                         ("sudo ", "")])
    assert r.returncode == 0, r.stderr
    assert (Path(lib) / "hlculid.so").exists()
    assert (Path(share) / "extension" / f"hlculid--{version}.sql").exists()


# -- the reference against the catalog -------------------------------------------------------
# docs/reference.md's tables against the catalog of a database with the extension, both ways:
# every function a user calls (argument names and types, result, volatility, strictness, parallel
# safety), operator (name, left and right types, result), operator class, aggregate and cast
# (source, target, context, method and function) of the extension is in the reference as the
# catalog has it, and every row of the reference exists.
TYPE_ALIASES = {"int": "integer", "int4": "integer", "int8": "bigint", "bool": "boolean",
                "timestamptz": "timestamp with time zone", "int4[]": "integer[]", "int[]": "integer[]",
                "timestamptz[]": "timestamp with time zone[]", "varchar": "character varying"}
SIGNATURE = re.compile(r"`(hlculid_\w+)\(([^`]*)\)`")
ATTRIBUTES = re.compile(r"(immutable|stable|volatile)(, strict)?, parallel (safe|restricted|unsafe)")
VOLATILITY = {"immutable": "i", "stable": "s", "volatile": "v"}
PARALLEL = {"safe": "s", "restricted": "r", "unsafe": "u"}
CONTEXT = {"explicit": "e", "assignment": "a", "implicit": "i"}
CODE = re.compile(r"`([^`]+)`")


def type_name(t):
    t = t.strip().strip("`")
    return TYPE_ALIASES.get(t, t)


def reference_table(text, section, first_header):
    """The rows of the table of `## section` whose header's first cell is first_header, each a dict
    by header (and "line": its line number)."""
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    lines = text[start:end if end > 0 else len(text)].splitlines()
    line_no = text[:start].count("\n") + 2
    for k, line in enumerate(lines):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if cells and cells[0] == first_header:
            rows = []
            for n, row in enumerate(lines[k + 2:], start=k + 2):
                if not row.startswith("|"):
                    break
                values = [c.strip() for c in row.split("|")[1:-1]]
                rows.append({**dict(zip(cells, values)), "line": line_no + n})
            return rows
    raise AssertionError(f"docs/reference.md: no table with a '{first_header}' column under '## {section}'")


def reference_functions(text):
    """(name, [(arg name, type or None)], returns cell, attributes cell) of every function row."""
    rows = []
    for row in reference_table(text, "Functions", "function"):
        if "(view)" in row["function"]:
            continue
        for name, args in SIGNATURE.findall(row["function"]):
            parsed = []
            for a in filter(None, (a.strip() for a in args.split(","))):
                a = re.sub(r"\s+DEFAULT\s+.*$", "", a)
                parts = a.split(None, 1)
                parsed.append((parts[0], TYPE_ALIASES.get(parts[1], parts[1]) if len(parts) > 1 else None))
            rows.append((name, parsed, row["returns"], row["attributes"]))
    return rows


def function_problems(text, everything):
    """everything: the catalog's rows (name, arg names, arg types, retset, result type, kind,
    volatility, strict, parallel, whether a user calls it by name)."""
    catalog = [r[:9] for r in everything]
    required = [r[:9] for r in everything if r[9]]
    problems = []
    documented = set()
    for name, args, returns, attributes in reference_functions(text):
        matches = [r for r in catalog if r[0] == name and len(r[1]) == len(args)]
        if not matches:
            problems.append(f"{name}({', '.join(a for a, _ in args)}): no such function with {len(args)} arguments")
            continue
        _, names, types, retset, rettype, kind, volatile, strict, parallel = matches[0]
        documented.add((name, len(args)))
        for (aname, atype), cname, ctype in zip(args, names, types):
            if aname != cname:
                problems.append(f"{name}: argument '{aname}' is '{cname}' in the catalog")
            if atype is not None and atype != ctype:
                problems.append(f"{name}: argument {aname} is {ctype}, not {atype}")
        if kind == "p":
            if attributes != "—":
                problems.append(f"{name}: a procedure's attributes are '—', not {attributes!r}")
        else:
            m = ATTRIBUTES.fullmatch(attributes)
            got = (VOLATILITY[m[1]], bool(m[2]), PARALLEL[m[3]]) if m else None
            want = (volatile, strict, parallel)
            if got != want:
                shown = ", ".join([{v: k for k, v in VOLATILITY.items()}[volatile]] + (["strict"] if strict else [])
                                  + ["parallel " + {v: k for k, v in PARALLEL.items()}[parallel]])
                problems.append(f"{name}: the catalog says '{shown}', the reference {attributes!r}")
        shown = returns.strip("`").replace("`", "")
        want = ("procedure" if kind == "p" else "table" if retset and rettype == "record"
                else "record" if rettype == "record" else ("SETOF " if retset else "") + rettype)
        if shown.startswith("SETOF") and "rows" in shown:
            continue  # hlculid_read: the table's rows
        if TYPE_ALIASES.get(shown, shown) != want and shown.replace("SETOF ", "SETOF ") != want:
            if not (shown.startswith("SETOF ") and TYPE_ALIASES.get(shown[6:], shown[6:]) == want[6:]):
                problems.append(f"{name}: returns {want}, the reference says {shown!r}")
    for name, names, *_ in required:
        if (name, len(names)) not in documented:
            problems.append(f"{name} ({len(names)} arguments) is not in docs/reference.md")
    return problems


def both_ways(what, reference, catalog):
    """Problems for the rows of one side missing from the other (sets of tuples)."""
    return ([f"{what} {r} is in docs/reference.md but not in the catalog" for r in sorted(reference - catalog)]
            + [f"{what} {r} of the extension is not in docs/reference.md" for r in sorted(catalog - reference)])


def operator_problems(text, operators, opclasses, aggregates):
    """operators: (name, left, right, result) of the extension's operators; opclasses: (access
    method, name); aggregates: (name, argument type)."""
    documented = set()
    for row in reference_table(text, "Operators and index support", "operator"):
        for op in CODE.findall(row["operator"]):
            documented.add((op, type_name(row["left"]), type_name(row["right"]), type_name(row["result"])))
    problems = both_ways("operator", documented, set(operators))
    classes, aggs = set(), set()
    for row in reference_table(text, "Operators and index support", "operator class or aggregate"):
        cell = row["operator class or aggregate"]
        m = re.fullmatch(r"(\w+) `(\w+)`", cell)
        if m:
            classes.add((m[1], m[2]))
        elif re.fullmatch(r"`\w+\([\w ]+\)`(, `\w+\([\w ]+\)`)*", cell):
            aggs |= {(n, type_name(t)) for n, t in re.findall(r"`(\w+)\(([\w ]+)\)`", cell)}
        else:
            problems.append(f"docs/reference.md:{row['line']}: neither 'AM `opclass`' nor '`aggregate(type)`': {cell!r}")
    return problems + both_ways("operator class", classes, set(opclasses)) + both_ways("aggregate", aggs, set(aggregates))


def cast_problems(text, casts):
    """casts: (source, target, context, method, function or None) of the extension's casts."""
    documented, problems = set(), []
    for row in reference_table(text, "Casts", "cast"):
        where = f"docs/reference.md:{row['line']}"
        arrow = "↔" if "↔" in row["cast"] else "→"
        left, _, right = row["cast"].partition(arrow)
        sources, targets = [type_name(t) for t in CODE.findall(left)], [type_name(t) for t in CODE.findall(right)]
        context = CONTEXT.get(row["context"].split()[0] if row["context"] else "")
        method = row["method"]
        m = re.match(r"function `(\w+)`", method)
        how = ("f", m[1]) if m else ("b", None) if method.startswith("binary") else (
            ("i", None) if method.startswith("I/O") else None)
        if not (sources and targets and context and how):
            problems.append(f"{where}: unreadable cast row (types, context or method): {row['cast']!r}")
            continue
        pairs = [(s, t) for s in sources for t in targets]
        if arrow == "↔":
            pairs += [(t, s) for s, t in pairs]
        documented |= {(s, t, context, *how) for s, t in pairs}
    return problems + both_ways("cast", documented, set(casts))


@pytest.fixture(scope="module")
def reference_catalog(server):
    """What the reference is checked against: the catalog of a database with the extension."""
    db = "docs_reference"
    server.sql(f'CREATE DATABASE "{db}"')
    in_db(server, db, "CREATE EXTENSION hlculid")
    own = """JOIN pg_depend d ON d.objid = {oid} AND d.classid = '{catalog}'::regclass AND d.deptype = 'e'
             JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'hlculid'"""
    with psycopg.connect(host=str(server.dir), port=server.port, user="postgres", dbname=db) as conn:
        functions = conn.execute(f"""
            SELECT p.proname, coalesce(p.proargnames[1:p.pronargs], '{{}}'),
                   array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t),
                   p.proretset, format_type(p.prorettype, NULL), p.prokind::text,
                   p.provolatile::text, p.proisstrict, p.proparallel::text,
                   -- what a user calls by name (not only PostgreSQL: operators, I/O, opclasses,
                   -- casts, aggregates' steps, estimators, planner support)
                   p.prokind <> 'a'
                   AND NOT EXISTS (SELECT FROM pg_operator o WHERE p.oid IN (o.oprcode, o.oprrest, o.oprjoin))
                   AND NOT EXISTS (SELECT FROM pg_type t WHERE p.oid IN (t.typinput, t.typoutput, t.typreceive, t.typsend))
                   AND NOT EXISTS (SELECT FROM pg_amproc a WHERE a.amproc = p.oid)
                   AND NOT EXISTS (SELECT FROM pg_cast k WHERE k.castfunc = p.oid)
                   AND NOT EXISTS (SELECT FROM pg_aggregate g WHERE p.oid IN (g.aggtransfn, g.aggcombinefn))
                   AND NOT EXISTS (SELECT FROM pg_proc s WHERE s.prosupport = p.oid)
                   AND 'internal'::regtype <> ALL (p.proargtypes) AND p.prorettype <> 'internal'::regtype,
                   obj_description(p.oid, 'pg_proc') IS NOT NULL
            FROM pg_proc p {own.format(oid="p.oid", catalog="pg_proc")}""").fetchall()
        operators = conn.execute(f"""
            SELECT o.oprname, format_type(o.oprleft, NULL), format_type(o.oprright, NULL), format_type(o.oprresult, NULL)
            FROM pg_operator o {own.format(oid="o.oid", catalog="pg_operator")}""").fetchall()
        opclasses = conn.execute(f"""
            SELECT a.amname, c.opcname FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
            {own.format(oid="c.oid", catalog="pg_opclass")}""").fetchall()
        aggregates = conn.execute(f"""
            SELECT p.proname, format_type(p.proargtypes[0], NULL) FROM pg_proc p
            {own.format(oid="p.oid", catalog="pg_proc")} WHERE p.prokind = 'a'""").fetchall()
        casts = conn.execute(f"""
            SELECT format_type(k.castsource, NULL), format_type(k.casttarget, NULL), k.castcontext::text,
                   k.castmethod::text, CASE WHEN k.castmethod = 'f' THEN k.castfunc::regproc::text END
            FROM pg_cast k {own.format(oid="k.oid", catalog="pg_cast")}""").fetchall()
    return {"functions": functions, "operators": operators, "opclasses": opclasses, "aggregates": aggregates,
            "casts": casts}


REFERENCE = ROOT / "docs" / "reference.md"


def test_the_reference_matches_the_catalog(reference_catalog):
    """Every function of the extension a user calls is in docs/reference.md with the catalog's
    argument names and types, result type, volatility, strictness and parallel safety; every
    function there exists (issue 32)."""
    problems = function_problems(REFERENCE.read_text(), reference_catalog["functions"])
    assert not problems, "\n".join(sorted(set(problems)))


def uncommented(functions):
    """The functions a user calls that have no COMMENT ON (\\df+ would explain nothing)."""
    return sorted(f"{r[0]}({', '.join(r[2])})" for r in functions if r[9] and not r[10])


def test_every_function_a_user_calls_has_a_comment(reference_catalog):
    """The new-function checklist's COMMENT ON (docs/development.md): none forgotten."""
    functions = reference_catalog["functions"]
    assert not uncommented(functions), uncommented(functions)
    # the check has teeth: a function without its comment is named
    first = next(r for r in functions if r[9])
    assert uncommented([(*first[:10], False)]) == [f"{first[0]}({', '.join(first[2])})"]


def test_the_reference_lists_every_operator_operator_class_and_aggregate(reference_catalog):
    c = reference_catalog
    problems = operator_problems(REFERENCE.read_text(), c["operators"], c["opclasses"], c["aggregates"])
    assert not problems, "\n".join(sorted(set(problems)))


def test_the_reference_lists_every_cast(reference_catalog):
    problems = cast_problems(REFERENCE.read_text(), reference_catalog["casts"])
    assert not problems, "\n".join(sorted(set(problems)))


def test_the_reference_checks_fail_on_a_wrong_reference(reference_catalog):
    """The checks have teeth: each kind of mistake in the reference is reported."""
    c = reference_catalog
    text = REFERENCE.read_text()

    def changed(old, new):
        assert old in text, old
        return text.replace(old, new, 1)

    wrong = changed("| `hlculid_ts(id)` | `timestamptz` | immutable, strict, parallel safe |",
                    "| `hlculid_ts(id)` | `timestamptz` | stable, parallel safe |")
    assert any("hlculid_ts: the catalog says 'immutable, strict, parallel safe'" in p
               for p in function_problems(wrong, c["functions"]))
    wrong = changed("| `hlculid_generate()` | `hlculid` | volatile, strict, parallel restricted |",
                    "| `hlculid_generate()` | `hlculid` | volatile, strict, parallel safe |")
    assert any("hlculid_generate: the catalog says" in p for p in function_problems(wrong, c["functions"]))
    wrong = changed("| `@>` | `tstzrange` | `hlculid` |", "| `@>` | `tstzrange` | `uuid` |")
    problems = operator_problems(wrong, c["operators"], c["opclasses"], c["aggregates"])
    assert any("('@>', 'tstzrange', 'uuid', 'boolean') is in docs/reference.md but not" in p for p in problems)
    assert any("('@>', 'tstzrange', 'hlculid', 'boolean') of the extension is not" in p for p in problems)
    wrong = changed("| brin `hlculid_minmax_ops` |", "| gist `hlculid_minmax_ops` |")
    assert len(operator_problems(wrong, c["operators"], c["opclasses"], c["aggregates"])) == 2
    wrong = changed("| `hlculid` → `bytea` | explicit | function `hlculid_to_bytea` |",
                    "| `hlculid` → `bytea` | assignment | function `hlculid_to_bytea` |")
    assert len(cast_problems(wrong, c["casts"])) == 2
    wrong = changed("| `hlculid` → `uuid` | assignment | binary |", "| `hlculid` ↔ `uuid` | assignment | binary |")
    assert cast_problems(wrong, c["casts"]) == [
        "cast ('uuid', 'hlculid', 'a', 'b', None) is in docs/reference.md but not in the catalog"]
