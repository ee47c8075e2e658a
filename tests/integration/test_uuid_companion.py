"""The plain-SQL companion sql/hlculid_uuid.sql (0.3.0), for managed servers that cannot load the
extension: hlculid's extractors, time bounds and text forms over ids stored in `uuid` columns.

One server of the major under test, two databases: `comp` without the extension, where a role
that is no superuser installs the companion with the command of docs/managed.md, and `ext` with the
extension, whose native functions are the reference. Ids move from one to the other as uuid.
"""

import re
import shutil
import uuid

import psycopg
import pytest

from pgcluster import Cluster, as_server
from test_docs import ROOT, parse

COMPANION = ROOT / "sql" / "hlculid_uuid.sql"
PAGE = ROOT / "docs" / "managed.md"
# The functions an application calls (the error helper is the file's own)
CALLED = ["hlculid_ts(uuid)", "hlculid_counter(uuid)", "hlculid_publisher(uuid)", "hlculid_random(uuid)",
          "hlculid_decode(uuid)", "hlculid_min(timestamp with time zone)",
          "hlculid_max(timestamp with time zone)", "hlculid_text(uuid)", "hlculid_to_ulid(uuid)"]
# Version 4 with the RFC 9562 variant: what the extension's uuid -> hlculid cast refuses (0.3.0)
V4 = "get_byte(uuid_send({0}), 6) >> 4 = 4 AND get_byte(uuid_send({0}), 8) >> 6 = 2"


def psql(c, db, user, *args, stdin=None):
    return as_server(f"{c.bin}/psql", "-X", "-q", "-h", str(c.dir), "-p", str(c.port), "-U", user, "-d", db,
                       *args, input=stdin, check=False)


def install(c, db, user, *more):
    """The command of docs/managed.md, the file given on standard input (the checkout may be private)."""
    return psql(c, db, user, *more, "-v", "ON_ERROR_STOP=1", "--single-transaction", "-c",
                "CREATE SCHEMA IF NOT EXISTS hlc", "-c", "SET search_path = hlc", "-f", "-",
                stdin=COMPANION.read_text())


def connect(c, db, user="postgres"):
    conn = psycopg.connect(host=str(c.dir), port=c.port, user=user, dbname=db, autocommit=True)
    conn.execute("SET search_path = public, hlc")
    conn.execute("SET TimeZone = 'UTC'")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    return conn


@pytest.fixture(scope="module")
def server():
    c = Cluster("companion", conf=["hlculid.publisher_id = 10"])
    c.start()
    c.sql("CREATE ROLE app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
    c.sql("CREATE DATABASE comp")
    c.sql("GRANT CREATE ON DATABASE comp TO app")
    c.sql("CREATE DATABASE ext")
    with psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname="ext", autocommit=True) as conn:
        conn.execute("CREATE EXTENSION hlculid")
    r = install(c, "comp", "app")
    assert r.returncode == 0, r.stderr
    yield c
    c.stop("immediate")
    shutil.rmtree(c.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def ids(server):
    """100,000 ids in both databases, row i the same id: in ext as hlculid (ids) and uuid (uids),
    in comp as uuid (uids). Random 128-bit values over the whole range (1 in 64 of them shaped
    like a random uuid), the corners, and ids the server made."""
    with connect(server, "ext") as e, connect(server, "comp") as k:
        e.execute("""
            CREATE TABLE ids AS
            SELECT row_number() OVER () AS i, id FROM (
                SELECT decode(md5(g::text || random()::text), 'hex')::hlculid AS id FROM generate_series(1, 98983) g
                UNION ALL SELECT unnest(hlculid_generate_n(1000))
                UNION ALL SELECT unnest(ARRAY['000000000000-0000-0000-000000000000', 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF',
                    'FFFFFFFFFFFF-0000-0000-000000000000', '000000000000-FFFF-FFFF-FFFFFFFFFFFF',
                    '000000000001-0001-0001-000000000001', '800000000000-8000-8000-800000000000',
                    '7FFFFFFFFFFF-7FFF-7FFF-7FFFFFFFFFFF', '017FC21C5E7A-0001-000A-AAA333333333']::hlculid[])
                UNION ALL SELECT hlculid_from_parts(ts, 0, 0, 0) FROM unnest(ARRAY[
                    '1970-01-01 00:00:00+00', '1970-01-01 00:00:00.001+00',
                    '2000-02-29 23:59:59.999+00', '4253-06-01 12:00:00.001+00', '9999-12-31 23:59:59.999+00',
                    '10000-01-01 00:00:00+00', '10889-08-02 05:31:50.655+00']::timestamptz[]) ts
                UNION ALL SELECT hlculid_from_parts(now(), 65535, 65535, 281474976710655)
                UNION ALL SELECT hlculid_from_parts(now(), 16384, 32768, 0)) s""")
        assert e.execute("SELECT count(*) FROM ids").fetchone()[0] == 100_000
        e.execute("CREATE TABLE uids AS SELECT i, id::uuid AS u FROM ids")
        k.execute("CREATE TABLE uids (i bigint, u uuid)")
        with e.cursor().copy("COPY uids TO STDOUT (FORMAT binary)") as out, \
                k.cursor().copy("COPY uids FROM STDIN (FORMAT binary)") as into:
            for data in out:
                into.write(data)
        v4 = e.execute(f"SELECT count(*) FROM uids WHERE {V4.format('u')}").fetchone()[0]
        assert 1000 < v4 < 2200, v4  # about 1 in 64: the refused shape is well represented
    return server


# One query text for the extension and the companion: the fields, the decoded row, the ULID and
# the bounds of a time inside the id's millisecond (i % 1000 microseconds in; a column of the
# subquery, so that the companion's bounds are inlined: a computed argument used more than once
# in a body is not).
FIELDS = """
    SELECT i, {text}, hlculid_ts({u})::text, hlculid_counter({u}), hlculid_publisher({u}), hlculid_random({u}),
           hlculid_to_ulid({u}), hlculid_decode({u})::text, hlculid_min(t)::uuid, hlculid_max(t)::uuid
    FROM (SELECT i, {u}, hlculid_ts({u}) + (i % 1000) * interval '1 microsecond' AS t FROM {table} {where} OFFSET 0) s
    ORDER BY i"""


def test_every_answer_equals_the_extensions(ids):
    with connect(ids, "ext") as e, connect(ids, "comp") as k:
        native = e.execute(FIELDS.format(text="id::text", u="id", table="ids", where="")).fetchall()
        companion = k.execute(FIELDS.format(text="hlculid_text(u)", u="u", table="uids", where="")).fetchall()
        # with the extension, the uuid column cast to hlculid reaches the native functions, for
        # every uuid the cast does not refuse (0.4.0: the cast is no longer implicit)
        cast = e.execute(FIELDS.format(text="u::hlculid::text", u="u::hlculid", table="uids",
                                       where=f"WHERE NOT ({V4.format('u')})").replace(
                                           "SELECT i, u::hlculid,", "SELECT i, u,")).fetchall()
        refused = e.execute(f"SELECT u FROM uids WHERE {V4.format('u')} LIMIT 1").fetchone()[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="cannot cast a random uuid"):
            e.execute("SELECT hlculid_ts(%s::uuid::hlculid)", (refused,))
        with pytest.raises(psycopg.errors.UndefinedFunction):
            e.execute("SELECT hlculid_ts(%s::uuid)", (refused,))
        # the companion reads any uuid's bytes, the refused shape included
        assert k.execute("SELECT hlculid_ts(%s::uuid)::text", (refused,)).fetchone()[0] == \
            e.execute("SELECT hlculid_ts(uuid_send(%s::uuid)::hlculid)::text", (refused,)).fetchone()[0]
    assert len(native) == len(companion) == 100_000
    first = next((a, b) for a, b in zip(native, companion) if a != b) if native != companion else None
    assert first is None, f"native {first[0]}\ncompanion {first[1]}"
    by_i = {r[0]: r for r in native}
    assert 97_500 < len(cast) < 99_000
    assert all(r == by_i[r[0]] for r in cast)
    # NULL in, NULL out (hlculid_decode: a row of NULLs, see the file)
    with connect(ids, "comp") as k:
        assert k.execute("SELECT hlculid_ts(NULL), hlculid_counter(NULL), hlculid_publisher(NULL), "
                         "hlculid_random(NULL), hlculid_text(NULL), hlculid_to_ulid(NULL), hlculid_min(NULL), "
                         "hlculid_max(NULL), (hlculid_decode(NULL)).ts, hlculid_decode(NULL) IS NULL"
                         ).fetchone() == (None,) * 9 + (True,)


@pytest.mark.parametrize("ts", ["infinity", "-infinity", "1969-12-31 23:59:59.999999+00",
                                "10889-08-02 05:31:50.656+00", "0001-01-01 BC"])
@pytest.mark.parametrize("fn", ["hlculid_min", "hlculid_max"])
def test_a_time_an_id_cannot_hold_is_the_extensions_error(server, fn, ts):
    def error(db):
        with connect(server, db) as conn:
            conn.execute("SET TimeZone = 'America/New_York'")
            with pytest.raises(psycopg.errors.DatetimeFieldOverflow) as e:
                conn.execute(f"SELECT {fn}(%s::timestamptz)::uuid", (ts,))
            return e.value.diag.sqlstate, e.value.diag.message_primary, e.value.diag.message_detail
    native, companion = error("ext"), error("comp")
    assert native == companion and native[0] == "22008", (native, companion)


def test_calls_are_inlined_and_marked_immutable_parallel_safe(server):
    with connect(server, "comp") as k:
        rows = k.execute("""
            SELECT p.oid::regprocedure::text, p.provolatile, p.proparallel, l.lanname, p.proconfig,
                   p.prosqlbody IS NOT NULL, p.proowner::regrole::text
            FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE p.pronamespace = 'hlc'::regnamespace ORDER BY 1""").fetchall()
        assert sorted(r[0] for r in rows) == sorted(CALLED + ["hlculid_uuid_time_out_of_range(timestamp with time zone)"])
        for name, volatile, parallel, lang, config, standard_body, owner in rows:
            assert (volatile, parallel, config, owner) == ("i", "s", None, "app"), name
            assert (lang, standard_body) == (("plpgsql", False) if "out_of_range" in name else ("sql", True)), name
        k.execute("CREATE TEMP TABLE t (u uuid, ts timestamptz)")
        plan = "\n".join(r[0] for r in k.execute(
            "EXPLAIN VERBOSE SELECT hlculid_ts(u), hlculid_counter(u), hlculid_publisher(u), hlculid_random(u), "
            "hlculid_text(u), hlculid_to_ulid(u), hlculid_decode(u), (hlculid_decode(u)).*, hlculid_min(ts), "
            "hlculid_max(ts) FROM t"))
        # inlined: the plan holds the bodies' expressions, no call of the companion's functions
        assert "uuid_send(u)" in plan and "ROW(" in plan, plan
        assert not re.search(r"hlculid_(ts|counter|publisher|random|text|to_ulid|decode|min|max)\(", plan), plan
        # constant arguments fold at plan time: a range scan's bounds are constants
        plan = "\n".join(r[0] for r in k.execute(
            "EXPLAIN VERBOSE SELECT * FROM t WHERE u >= hlculid_min('2026-01-15 12:00+00') "
            "AND u <= hlculid_max('2026-01-15 12:59:59.999+00')"))
        assert "'019bc186-de00-0000-0000-000000000000'::uuid" in plan, plan
        assert "'019bc1bd-cc7f-ffff-ffff-ffffffffffff'::uuid" in plan, plan


WINDOW = ("SELECT count(*) FROM ev WHERE id >= hlculid_min('2026-01-15 12:00:17+00'){cast} "
          "AND id < hlculid_min('2026-01-15 13:00:17+00'){cast}")
# n ids over 30 days from 2026-01-01 in a uuid primary key
EVENTS = """CREATE TABLE ev AS
    SELECT (lpad(to_hex(1767225600000 + i * {step}), 12, '0') || lpad(to_hex(i % 7), 4, '0') || '000a'
            || lpad(to_hex(i * 7919), 12, '0'))::uuid AS id, i AS n
    FROM generate_series(1::int8, {n}) i;
    ALTER TABLE ev ADD PRIMARY KEY (id);
    ANALYZE ev"""


def window_plan(conn, cast):
    """The scan node of the window's plan (the index scan of a bitmap scan)."""
    plan = conn.execute("EXPLAIN (FORMAT JSON) " + WINDOW.format(cast=cast)).fetchone()[0][0]["Plan"]
    while plan["Node Type"] in ("Aggregate", "Bitmap Heap Scan"):
        plan = plan["Plans"][0]
    return plan


@pytest.mark.full  # a million rows: make test-full
def test_a_one_hour_window_is_an_index_range_scan_on_the_uuid_key(ids):
    """Ids over 30 days in a uuid primary key, 1M on the companion (a 1,389-row hour) and 200k
    with the extension: the portable form (`::uuid` on the bounds) is a range scan of the key's
    index in both."""
    for db, n, hour in (("comp", 1_000_000, 1389), ("ext", 200_000, 278)):
        with connect(ids, db) as conn:
            conn.execute(EVENTS.format(n=n, step=30 * 86_400_000 // n))
            actual = conn.execute(WINDOW.format(cast="::uuid")).fetchone()[0]
            assert actual == hour
            forms = ["::uuid", ""] if db == "comp" else ["::uuid"]
            for cast in forms:
                plan = window_plan(conn, cast)
                assert plan["Node Type"] in ("Index Only Scan", "Index Scan", "Bitmap Index Scan"), (db, cast, plan)
                assert plan["Index Name"] == "ev_pkey" and "id >= " in plan["Index Cond"] \
                    and "id < " in plan["Index Cond"], (db, plan)
            if db == "ext":
                # without the ::uuid the extension compares as hlculid, casting every row: no
                # use of the uuid index (the README says to write the cast)
                plan = window_plan(conn, "")
                assert plan["Node Type"] in ("Seq Scan", "Parallel Seq Scan") and "::hlculid" in plan["Filter"], plan
            # PostgreSQL cannot interpolate inside a histogram bucket of uuids: at the default
            # statistics target the hour (1/720 of the span) is estimated as 1 row, or as a
            # whole bucket (1% of the rows) where it crosses a bucket's edge; a target of 10000
            # estimates it (the README's advice)
            est = window_plan(conn, "::uuid")["Plan Rows"]
            assert est < actual / 5 or est > 5 * actual, (db, est, actual)
            conn.execute("ALTER TABLE ev ALTER COLUMN id SET STATISTICS 10000")
            conn.execute("ANALYZE ev")
            est = window_plan(conn, "::uuid")["Plan Rows"]
            assert 0.5 * actual <= est <= 2 * actual, (db, est, actual)
            assert conn.execute(WINDOW.format(cast="::uuid")).fetchone()[0] == actual
            conn.execute("DROP TABLE ev")


def test_refused_where_the_extension_is(server):
    r = install(server, "ext", "postgres", "-v", "VERBOSITY=verbose")
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "ERROR:  42710: the hlculid extension is installed in this database" in r.stderr, r.stderr
    assert "HINT:  Query with the extension's functions" in r.stderr, r.stderr
    with connect(server, "ext") as e:
        # one transaction: not even the schema stays
        assert e.execute("SELECT to_regnamespace('hlc'), to_regtype('hlculid_decoded')").fetchone() == (None, None)
        assert e.execute("SELECT count(*) FROM pg_proc WHERE proname = 'hlculid_text'").fetchone()[0] == 0


def test_installing_again_replaces_in_place(server):
    def catalog(k):
        return k.execute("SELECT oid::regprocedure::text, oid, md5(coalesce(prosqlbody::text, prosrc)) FROM pg_proc "
                         "WHERE pronamespace = 'hlc'::regnamespace UNION ALL "
                         "SELECT typname, oid, '' FROM pg_type WHERE typnamespace = 'hlc'::regnamespace "
                         "ORDER BY 1").fetchall()
    with connect(server, "comp", "app") as k:
        k.execute("CREATE TABLE hlc.seen (id uuid)")
        k.execute("INSERT INTO hlc.seen VALUES ('017FC21C5E7A-0001-000A-AAA333333333')")
        k.execute("CREATE VIEW hlc.seen_at AS SELECT hlculid_ts(id) AS ts, (hlculid_decode(id)).publisher "
                  "FROM hlc.seen")
        before = catalog(k)
    r = install(server, "comp", "app")
    assert r.returncode == 0, r.stderr
    with connect(server, "comp", "app") as k:
        assert catalog(k) == before
        assert k.execute("SELECT ts::text, publisher FROM hlc.seen_at").fetchone() == ("2022-03-25 17:25:13.466+00", 10)
        k.execute("DROP VIEW hlc.seen_at")
        k.execute("DROP TABLE hlc.seen")


def test_the_managed_pages_queries_run_on_the_companion(server):
    """tests/integration/test_docs.py runs docs/managed.md with the extension; here its blocks
    marked as the companion's own ("skip (companion only ...)") run on the companion."""
    blocks = [b for b in parse("docs/managed.md", PAGE.read_text()).blocks if b.skip.startswith("companion only")]
    assert len(blocks) >= 2
    server.sql("CREATE DATABASE docs_comp")
    server.sql("GRANT CREATE ON DATABASE docs_comp TO app")
    assert install(server, "docs_comp", "app").returncode == 0
    assert psql(server, "docs_comp", "postgres", "-c", "GRANT CREATE ON SCHEMA public TO app").returncode == 0
    r = psql(server, "docs_comp", "app", "-v", "ON_ERROR_STOP=1", "-c", "SET search_path = public, hlc", "-f", "-",
             stdin="".join(b.sql for b in blocks))
    assert r.returncode == 0, r.stderr
