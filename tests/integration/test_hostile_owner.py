"""A hostile database owner against every documented entry point (docs/security.md, "search_path";
the schema issue's adversarial suite). mallory owns the database `app` and its `public` schema and
is no superuser; the role `carol` may create in schema `staging`, which a victim may put on its
path. Generated from the catalog, not from a hand list (tests/lookalikes.py, `arm_generated`): for
every function, procedure, aggregate, operator and cast that belongs to the extension (pg_depend
deptype 'e'), and for every PostgreSQL built-in the extension's SQL calls, look-alikes with the
same name and the exact argument types, with the row types of the tables the victims read in place
of `anyelement`, `text` in place of `regclass` (what an `unknown` literal prefers), `timestamp` in
place of `timestamptz`, and an extra DEFAULT argument, in `public`, in "postgres" ($user of the
superuser) and in schema mallory; carol plants the same in `staging`. Each records its run in
`ran` and, run by a superuser, makes mallory one.

What "safe" means for the victim (a superuser), as tested here:
  - a search_path of schemas no untrusted role may create in: `pg_catalog, pg_temp` (here also
    just `pg_catalog`). Documented calls are written as the docs write them, unqualified.
  - the default `"$user", public` (both mallory's here) only with every function, operator and
    type of the statement qualified (`pg_catalog.hlculid_read(NULL::public.t, ...)`,
    `OPERATOR(pg_catalog.<@)`, `::pg_catalog.hlculid`): PostgreSQL itself resolves an unqualified
    name through every schema of the path and prefers an exact or more specific argument type
    (mallory's `public.hlculid_read(public.mev, ...)` over `pg_catalog.hlculid_read(anyelement,
    ...)`), whatever the extension does. `test_an_unqualified_call_on_a_writable_path_is_not_safe`
    shows it, so the look-alikes are known to be live for exactly those calls.
What the extension must guarantee, and what is asserted: with such a path, no documented call,
and nothing the extension runs on its own (the horizon publisher), runs anything mallory or carol
planted, mallory stays no superuser, and every documented call returns normally. The helpers that
write a table (partitions, backfill) run the table's own code as its owner, never as the caller."""

import re
import shutil
import time

import psycopg
import pytest

from lookalikes import arm_generated, is_superuser, plant, ran
from pgcluster import write_as_server

KEY = "2b7e151628aed2a6abf7158809cf4f3c"
SAFE_PATHS = ("pg_catalog, pg_temp", "pg_catalog")
TABLES = {  # the victim's own tables (schema su, no one else may create there) and mallory's
    "victim": {"ev": "su.ev", "parts": "su.parts", "legacy": "su.legacy"},
    "mallory": {"ev": "public.mev", "parts": "public.mparts", "legacy": "public.mlegacy"},
}
ROWTYPES = [t["ev"] for t in TABLES.values()]


def render(call, qualified):
    """A call written with markers: `§name` a function or type (qualified: pg_catalog.name),
    `⟪op⟫` an operator (qualified: OPERATOR(pg_catalog.op))."""
    call = call.replace("§", "pg_catalog." if qualified else "")
    return re.sub(r"⟪(.+?)⟫", r"OPERATOR(pg_catalog.\1)" if qualified else r"\1", call)


RANGE = "§tstzrange(§now() ⟪-⟫ '1 day'::§interval, §now() ⟪+⟫ '1 hour'::§interval)"
SAMPLE = {"hlculid": "§hlculid_generate()", "uuid": "§hlculid_generate()::§uuid", "tstzrange": RANGE}

# Every documented entry point that needs no table (docs/reference.md), as the docs call them.
GLOBAL_CALLS = [
    "SELECT §hlculid_generate()",
    "SELECT §hlculid_generate_n(3)",
    "SELECT §hlculid_generate_at(§now())",
    "SELECT §hlculid_generate_at('2024-05-01 12:00:00+00')",
    "SELECT §hlculid_generate_tx(), §hlculid_generate_tx()",
    "SELECT §hlculid_tx(§hlculid_generate_tx()), §hlculid_tx_offset(§hlculid_generate_tx())",
    "SELECT §hlculid_generate_bigint(), §hlculid_generate_bigint_n(3)",
    "SELECT §hlculid_observe(§hlculid_generate())",
    "SELECT §hlculid_ts(i), §hlculid_counter(i), §hlculid_publisher(i), §hlculid_random(i), "
    "§hlculid_to_ulid(i), (§hlculid_decode(i)).* FROM (SELECT §hlculid_generate() AS i) s",
    "SELECT §hlculid_from_parts(§now(), 1, 2, 3), §hlculid_from_parts('2024-05-01', 1, 2, 3)",
    "SELECT §hlculid_min(§now()), §hlculid_max(§now()), §hlculid_min('2024-05-01'), §hlculid_max('2024-05-01')",
    f"SELECT §hlculid_range_min(r), §hlculid_range_max(r), §hlculid_in_range(§hlculid_generate(), r), "
    f"§hlculid_range_contains(r, §hlculid_generate()) FROM (SELECT {RANGE} AS r) s",
    "SELECT §hlculid_range_min('[2024-01-01, 2024-02-01)'), §hlculid_range_max('[2024-01-01, 2024-02-01)')",
    "SELECT §hlculid_to_uuidv7(i), §hlculid_from_uuidv7(§hlculid_to_uuidv7(i)), "
    "§hlculid_to_bigint(§hlculid_from_parts(§now(), 1, 2, 3)), §hlculid_from_bigint(§hlculid_generate_bigint()) "
    "FROM (SELECT §hlculid_generate() AS i) s",
    "SELECT §hlculid_bigint_ts(b), §hlculid_bigint_counter(b), §hlculid_bigint_publisher(b), "
    "(§hlculid_bigint_decode(b)).*, §hlculid_bigint_min(§now()), §hlculid_bigint_max(§now()) "
    "FROM (SELECT §hlculid_generate_bigint() AS b) s",
    # the casts, every one of the extension's
    "SELECT i::§uuid, i::§uuid::§hlculid, i::§bytea::§hlculid, i::§text::§hlculid, "
    "i::§text::§varchar::§hlculid, i::§timestamptz, i::§text FROM (SELECT §hlculid_generate() AS i) s",
    "SELECT '017FC21C5E7A-0000-000A-AAA111111111'::§hlculid, '01FZ11RQKT000002NAM48H248H'::§hlculid, "
    "'017fc21c-5e7a-0000-000a-aaa111111111'::§hlculid",
    "SELECT §hlculid_horizon(), §hlculid_horizon_bigint(), §hlculid_horizon_catch_up()",
    "SELECT §hlculid_publish_horizon()",
    "SELECT §hlculid_advance_horizon(9, §hlculid_generate())",
    "SELECT §hlculid_watermark(), §hlculid_watermark(ARRAY[8, 9]), §hlculid_watermark(NULL), "
    "§hlculid_watermark(ARRAY[]::§int4[])",
    "SELECT * FROM hlculid.hlculid_horizon_holders",
    "SELECT * FROM §hlculid_horizon_holds()",
    "SELECT * FROM §hlculid_horizon_holds_since()",
    "SELECT * FROM hlculid.hlculid_horizons",
    "SELECT * FROM §hlculid_clock()",
    "SELECT * FROM §hlculid_clock_bound()",
    "SELECT §hlculid_clock_recover(NULL), §hlculid_clock_recover(NULL, false)",
    "SELECT * FROM §hlculid_backfill_ids(ARRAY[§now()], 7)",
    "SELECT * FROM §hlculid_backfill_ids(ARRAY[§now()], 7, '{}')",
    "SELECT §hlculid_unmask(§hlculid_mask(i)) ⟪=⟫ i, §hlculid_unmask_bigint(§hlculid_mask_bigint(5)), "
    "(SELECT §count(*) FROM §hlculid_unmask_any(§hlculid_mask(i))), "
    "(SELECT §count(*) FROM §hlculid_unmask_bigint_any(§hlculid_mask_bigint(5))) FROM (SELECT §hlculid_generate() AS i) s",
    "SELECT §hlculid_citus_table('hlculid.hlculid_horizons')",
    "SELECT §hlculid_writing_commits()",
]
# without Citus these answer 55000, as documented (tests/citus runs them on a cluster)
CITUS_ONLY = ["SELECT §hlculid_cluster_pending()", "SELECT §count(*) FROM §hlculid_cluster_pending_here()", "SELECT §hlculid_cluster_horizon('50 ms')",
              "SELECT §hlculid_cluster_horizon()"]
# the entry points that take a table: on the victim's own tables and on mallory's
TABLE_CALLS = [
    "SELECT n FROM §hlculid_read(NULL::{ev}, NULL, 5)",
    "SELECT n FROM §hlculid_read(NULL::{ev}, NULL)",
    "SELECT n FROM §hlculid_read(NULL::{ev}, NULL, 5, 'id')",
    "SELECT n FROM §hlculid_read(table_row => NULL::{ev}, after => NULL, max_rows => 5)",
    "SELECT n FROM §hlculid_read_below(NULL::{ev}, NULL, §hlculid_horizon(), 5)",
    "SELECT n FROM §hlculid_read_below(NULL::{ev}, NULL, §hlculid_horizon())",
    "SELECT n FROM §hlculid_read_watermark(NULL::{ev}, NULL)",
    "SELECT n FROM §hlculid_read_watermark(NULL::{ev}, NULL, ARRAY[8], 5, 'id')",
    "SELECT §min(id), §max(id), §count(*) FROM {ev}",
    f"SELECT §count(*) FROM {{ev}} WHERE id ⟪<@⟫ {RANGE}",
    f"SELECT §count(*) FROM {{ev}} WHERE {RANGE} ⟪@>⟫ id",
    "SELECT §count(*) FROM {ev} WHERE id ⟪<@⟫ '[2020-01-01, 2100-01-01)'",
    "SELECT §count(*) FROM {ev} WHERE '[2020-01-01, 2100-01-01)' ⟪@>⟫ id",
    "SELECT §count(*) FROM {ev} WHERE id ⟪=⟫ §hlculid_generate()::§uuid",
    "SELECT §count(*) FROM {ev} WHERE id ⟪>=⟫ '017FC21C5E7A-0000-000A-AAA111111111'",
    "SELECT §hlculid_citus_table('{ev}')",
    "SELECT * FROM §hlculid_partition_bounds('{parts}')",
    "SELECT §hlculid_create_partitions('{parts}', §now() ⟪-⟫ '3 days'::§interval, "
    "§now() ⟪+⟫ '1 day'::§interval, '1 day')",
    "SELECT §hlculid_create_partitions('{parts}', '2024-01-01', '2024-03-01')",
    "SELECT §hlculid_drop_partitions('{parts}', §now() ⟪-⟫ '2 days'::§interval, true)",
    "SELECT §hlculid_drop_partitions('{parts}', '2024-02-01')",
    "CALL §hlculid_backfill('{legacy}', 'id', 'ts', 7, 10)",
    "CALL §hlculid_backfill(tbl => '{legacy}', id_column => 'id', ts_column => 'ts', publisher => 7)",
    # subscriptions (0.6.0): a consumer's whole life, dropped first (each path runs them again)
    "SELECT §hlculid_consumer_drop('c {ev}'), §hlculid_consumer_drop('d {ev}')",
    "SELECT §hlculid_consumer_create('c {ev}', '{ev}')",
    "SELECT §hlculid_consumer_create('d {ev}', '{ev}', start_at => §now(), max_attempts => 2)",
    "SELECT §hlculid_consumer_create(consumer => 'e {ev}', tbl => '{ev}', start_after => NULL, "
    "start_at => NULL, max_attempts => 5, id_column => 'id'), §hlculid_consumer_drop('e {ev}')",
    "SELECT n FROM §hlculid_consume('c {ev}', NULL::{ev}, 5)",
    "SELECT n FROM §hlculid_consume('c {ev}', NULL::{ev})",
    "SELECT §hlculid_wait(NULL::{ev}, NULL, '0 s'), §hlculid_wait(NULL::{ev}, NULL), "
    "§hlculid_wait(NULL::{ev}, §hlculid_generate(), '0 s')",
    "SELECT §hlculid_consumer_wait('c {ev}', '0 s')",
    "SELECT §hlculid_consume_retry('c {ev}', (SELECT §min(id) FROM {ev}), '0 s', 'failed'), "
    "§hlculid_consume_retry('c {ev}', (SELECT §max(id) FROM {ev}))",
    "SELECT §hlculid_consumer_wait('c {ev}')",  # the retry due at once: true at once
    "SELECT §hlculid_dead_letter_requeue('c {ev}'), §hlculid_dead_letter_requeue('c {ev}', (SELECT §min(id) FROM {ev}))",
    "SELECT n FROM §hlculid_consume('d {ev}', NULL::{ev})",
    "SELECT §hlculid_consumer_reset('c {ev}'), §hlculid_consumer_reset('c {ev}', start_at => §now()), "
    "§hlculid_consumer_reset('c {ev}', (SELECT §min(id) FROM {ev}))",
    "SELECT * FROM hlculid.hlculid_consumers",
    "SELECT §hlculid_consumer_drop('c {ev}'), §hlculid_consumer_drop('d {ev}')",
]


def write_key(c):
    keys = c.data / "hlculid_mask.keys"
    write_as_server(keys, KEY + "\n", mode=0o600)


def make_tables(c):
    """The victim's tables in schema su (the superuser's), mallory's in public (hers), each an
    event table, a partitioned one with a default partition holding rows, and a legacy table."""
    for owner, t in TABLES.items():
        with c.connect(dbname="app", user="postgres" if owner == "victim" else "mallory") as conn:
            conn.execute("SET search_path = pg_catalog")
            if owner == "victim":
                # others may use it (name its types: mallory's look-alikes take its row types), not create in it
                conn.execute("CREATE SCHEMA su; GRANT USAGE ON SCHEMA su TO PUBLIC")
            conn.execute(f"""
                CREATE TABLE {t['ev']} (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4);
                INSERT INTO {t['ev']} (n) SELECT g FROM pg_catalog.generate_series(1, 20) g;
                CREATE TABLE {t['parts']} (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);
                CREATE TABLE {t['parts']}_default PARTITION OF {t['parts']} DEFAULT;
                INSERT INTO {t['parts']} SELECT pg_catalog.hlculid_generate_at(
                    pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(hours => g)), g
                FROM pg_catalog.generate_series(1, 30) g;
                CREATE TABLE {t['legacy']} (id pg_catalog.hlculid, ts timestamptz, n int4);
                INSERT INTO {t['legacy']} (ts, n)
                    SELECT pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => g), g
                    FROM pg_catalog.generate_series(1, 50) g;
            """)


@pytest.fixture(scope="module")
def hostile():
    """One server for the module: publisher 8, the horizon publisher writing in `app` every
    100 ms, a mask key, prepared transactions. mallory owns `app`; carol may create in schema
    `staging` (the superuser's); both have planted every look-alike."""
    from pgcluster import Cluster
    c = Cluster("hostile-owner", conf=[
        "hlculid.publisher_id = 8", "hlculid.horizon_database = 'app'", "hlculid.horizon_interval = '100ms'",
        "max_prepared_transactions = 4", "hlculid.mask_key_file = 'hlculid_mask.keys'"])
    try:
        write_key(c)
        c.start()
        c.sql("CREATE ROLE mallory LOGIN")
        c.sql("CREATE ROLE carol LOGIN")
        c.sql("CREATE ROLE eve LOGIN")
        c.sql("CREATE DATABASE app OWNER mallory")
        c.sql("CREATE EXTENSION hlculid", dbname="app")
        make_tables(c)
        c.summary = arm_generated(c, "app", rowtypes=ROWTYPES)
        # carol: CREATE on a schema a victim may put on its path, and the same look-alikes there
        c.sql("CREATE SCHEMA staging; GRANT USAGE, CREATE ON SCHEMA staging TO carol", dbname="app")
        c.summary["carol"] = plant_as(c, "carol", "staging")
        c.planted_at = c.one("SELECT clock_timestamp()")
        yield c
    finally:
        c.stop("immediate")
        shutil.rmtree(c.dir, ignore_errors=True)


def plant_as(c, role, schema):
    """The generated look-alikes (and the hand lists') of HOSTILE_SCHEMAS, planted by `role` in
    `schema`: the same plan with the schema's name swapped."""
    import lookalikes
    with c.connect(dbname="app") as conn:
        stmts, summary, _ = lookalikes.generated_plan(conn, ROWTYPES)
    ours = [s.replace("CREATE FUNCTION mallory.", f"CREATE FUNCTION {schema}.")
            .replace("CREATE PROCEDURE mallory.", f"CREATE PROCEDURE {schema}.")
            .replace("mallory.", f"{schema}.") for s in stmts if " mallory." in s]
    with c.connect(dbname="app") as conn:
        conn.execute(f"SET ROLE {role}")
        conn.execute("SET search_path = pg_catalog")
        failed = []
        for s in ours:
            try:
                conn.execute(s)
            except psycopg.Error as e:
                if e.sqlstate != "42723":  # the hand-list signature again
                    failed.append((s.split(" LANGUAGE ")[0], e.sqlstate, str(e)))
    assert failed == [], failed[:5]
    return len(ours)


def breaches(c, conn=None):
    """What the detection reports: every look-alike run (by any user) and whether mallory became
    superuser; from `conn` (inside its transaction) when given."""
    if conn is not None:
        rows = conn.execute("SELECT what, by_user, session FROM public.ran").fetchall()
        sup = conn.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = 'mallory'").fetchone()[0]
        return rows, sup
    return ran(c, "app"), is_superuser(c, "mallory")


def run_calls(conn, calls, tables=None, qualified=False):
    """Runs each call, collecting (call, SQLSTATE, message) of those that raised."""
    broke = []
    for call in calls:
        sql = render(call.format(**tables) if tables else call, qualified)
        try:
            conn.execute(sql).fetchall() if not sql.startswith("CALL") else conn.execute(sql)
        except psycopg.Error as e:
            broke.append((sql, e.sqlstate, str(e).splitlines()[0]))
    return broke


def operator_calls(conn):
    """One call of every operator of the extension, from the catalog."""
    ops = conn.execute("""
        SELECT o.oprname::text, o.oprleft::pg_catalog.regtype::text, o.oprright::pg_catalog.regtype::text
        FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_operator'::pg_catalog.regclass
          AND d.objid = o.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'hlculid'
        ORDER BY 1, 2, 3""").fetchall()
    assert len(ops) >= 20, ops
    return [f"SELECT {SAMPLE[l]} ⟪{op}⟫ {SAMPLE[r]}" for op, l, r in ops]


@pytest.mark.parametrize("path", [*SAFE_PATHS, '"$user", public, staging'])
def test_every_documented_entry_point_runs_nothing_planted(hostile, path):
    """A superuser with a safe path calls every documented entry point, on its own tables and on
    mallory's, and holds the horizon with a prepared transaction meanwhile."""
    c = hostile
    qualified = path not in SAFE_PATHS  # a path mallory and carol write: every name qualified
    with c.connect(dbname="app") as su:
        su.execute(f"SET search_path = {path}")
        broke = run_calls(su, GLOBAL_CALLS + operator_calls(su), qualified=qualified)
        for tables in TABLES.values():
            broke += run_calls(su, TABLE_CALLS, tables, qualified)
        citus = run_calls(su, CITUS_ONLY, qualified=qualified)
        assert [s for _, s, _ in citus] == ["55000"] * len(CITUS_ONLY), citus
        # a prepared transaction holds the horizon; the holders view shows it
        su.execute("BEGIN")
        su.execute(render("INSERT INTO su.ev (n) VALUES (100)", qualified))
        su.execute("PREPARE TRANSACTION 'p1'")
        try:
            assert su.execute("SELECT gid FROM hlculid.hlculid_horizon_holders").fetchall() == [("p1",)]
        finally:
            su.execute("COMMIT PREPARED 'p1'")
    assert broke == [], "documented calls broke with mallory's look-alikes planted:\n" + "\n".join(map(str, broke))
    for tables in TABLES.values():
        assert c.sql(f"SELECT count(*) FROM {tables['legacy']} WHERE id IS NULL", dbname="app") == [(0,)]
    found, sup = breaches(c)
    assert found == [], f"look-alikes ran for a victim with search_path {path}: {found}"
    assert not sup


def test_the_horizon_publisher_runs_nothing_planted(hostile):
    """The background worker (hlculid.horizon_database = 'app', as the bootstrap superuser)
    publishes again and again after every look-alike was planted."""
    c = hostile
    seen = set()
    deadline = time.time() + 20
    while time.time() < deadline and len(seen) < 5:
        row = c.sql("SELECT updated_at FROM hlculid.hlculid_horizons WHERE publisher = 8", dbname="app")
        if row and row[0][0] > c.planted_at:
            seen.add(row[0][0])
        time.sleep(0.1)
    assert len(seen) >= 5, f"the worker published {len(seen)} times in 20 s (log: {c.log()[-4000:]})"
    found, sup = breaches(c)
    assert found == [], f"the horizon publisher ran look-alikes: {found}"
    assert not sup


def test_the_lookalikes_cover_the_catalog_and_are_live(hostile):
    """Every routine of the extension PL/pgSQL can stand in for has look-alikes (asserted while
    planting); here, that a path which prefers mallory's schema finds them: mallory's own calls."""
    c = hostile
    try:
        lookalikes_are_live(c)
    finally:
        c.sql("TRUNCATE public.ran", dbname="app")


def lookalikes_are_live(c):
    s = c.summary
    assert s["extension routines"] >= 100 and s["operators"] >= 20 and s["casts"] >= 7, s
    assert set(s["not plantable (support functions)"]) <= {
        "hlculid_in(cstring)", "hlculid_in_range_sel(internal, oid, internal, integer)",
        "hlculid_in_range_support(internal)", "hlculid_out(hlculid)", "hlculid_recv(internal)",
        "hlculid_skipsupport(internal)", "hlculid_sortsupport(internal)", "hlculid_consumer_guard()"}, s
    with c.connect(user="mallory", dbname="app") as m:
        # schema mallory: no extra-DEFAULT look-alikes there (public has them), so no two of its
        # look-alikes match one call
        m.execute("SET search_path = mallory, pg_catalog")
        m.execute("SELECT hlculid_horizon(), hlculid_generate_n(3), hlculid_to_ulid(hlculid_generate())")
        m.execute("SELECT min(id) FROM public.mev")
        m.execute("SELECT pg_catalog.count(*) FROM public.mev WHERE id <@ '[2020-01-01, 2100-01-01)'")
        m.execute("SELECT * FROM hlculid_read(NULL::public.mev, NULL)")
        m.execute("SELECT hlculid_create_partitions('public.mparts', '2024-01-01', '2024-02-01')")
        m.execute("CALL hlculid_backfill('public.mlegacy', 'id', 'ts', 7)")
        m.execute("SELECT hlculid('x'::text)")
        m.execute("SELECT * FROM hlculid_horizons")
        m.execute("SELECT pg_typeof(NULL::public.mev), quote_ident('x'::pg_catalog.name)")
        got = {r[0] for r in m.execute("SELECT what FROM public.ran").fetchall()}
    assert {"mallory.hlculid_horizon()", "mallory.hlculid_generate_n(integer)",
            "mallory.hlculid_to_ulid(hlculid)", "mallory.min(hlculid) (aggregate)",
            "mallory.<@(hlculid, text)", "mallory.hlculid_read(public.mev, hlculid, integer, name)",
            "mallory.hlculid_create_partitions(text, timestamp with time zone, timestamp with time zone, interval)",
            "mallory.hlculid_backfill(text, text, text, integer, integer)",
            "mallory.hlculid(text) (cast)", "mallory.hlculid_horizons (relation)",
            "mallory.pg_typeof(public.mev)", "mallory.quote_ident(name)"} <= got, got


def test_an_unqualified_call_on_a_writable_path_is_not_safe(hostile):
    """Why "safe" above needs a path without mallory's schemas, or qualified names: on the
    default path PostgreSQL resolves the superuser's own unqualified call to mallory's
    look-alike of the exact row type. PostgreSQL's rules, not the extension's code; rolled back."""
    c = hostile
    with c.connect(dbname="app", autocommit=False) as su:
        su.execute("SELECT * FROM hlculid_read(NULL::public.mev, NULL)")
        found, sup = breaches(c, su)
        su.rollback()
    assert ("postgres.hlculid_read(public.mev, hlculid, integer, name)", "postgres", "postgres") in found, found
    assert sup
    assert breaches(c) == ([], False)


def test_a_default_argument_overload_breaks_no_documented_call(hostile):
    """public.hlculid_horizon(x int DEFAULT 0) and the like (every routine has one, planted as
    `hostile_extra`): a documented call with a safe path still finds the extension's only."""
    c = hostile
    assert c.sql("SELECT count(*) FROM pg_proc WHERE proname = 'hlculid_horizon' "
                 "AND pronamespace = 'public'::regnamespace AND pronargdefaults = 1", dbname="app") == [(1,)]
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        broke = run_calls(su, ["SELECT hlculid_horizon()", "SELECT hlculid_generate()",
                               "SELECT * FROM hlculid_clock()", "SELECT hlculid_watermark()",
                               "SELECT n FROM hlculid_read(NULL::public.mev, NULL)"])
    assert broke == []
    assert breaches(c) == ([], False)


@pytest.mark.parametrize("stmt", [
    "ALTER SCHEMA pg_catalog RENAME TO x", "ALTER SCHEMA hlculid RENAME TO x",
    "CREATE FUNCTION pg_catalog.f() RETURNS int4 LANGUAGE sql AS 'SELECT 1'",
    "CREATE TABLE hlculid.t ()", "DROP SCHEMA hlculid", "DROP SCHEMA hlculid CASCADE",
    "ALTER TABLE hlculid.hlculid_horizons RENAME TO x", "DROP EXTENSION hlculid",
    "ALTER EXTENSION hlculid UPDATE", "ALTER SCHEMA hlculid OWNER TO mallory",
    "CREATE OR REPLACE FUNCTION pg_catalog.hlculid_horizon() RETURNS pg_catalog.hlculid "
    "LANGUAGE sql AS 'SELECT NULL::pg_catalog.hlculid'",
])
def test_the_owner_cannot_move_or_fill_the_extensions_schemas(hostile, stmt):
    with hostile.connect(user="mallory", dbname="app") as m:
        with pytest.raises(psycopg.Error) as e:
            m.execute(stmt)
    assert e.value.sqlstate in ("42501", "2BP01"), (stmt, e.value.sqlstate, str(e.value))
    assert hostile.sql("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'hlculid'",
                       dbname="app") == [("postgres",)]


def test_an_install_refuses_a_schema_named_hlculid_made_first(hostile):
    """mallory owns a database and makes schema hlculid (with a look-alike of the horizons table
    in it) before the superuser installs: the install fails rather than use her schema."""
    c = hostile
    c.sql("CREATE DATABASE pre OWNER mallory")
    try:
        c.sql("CREATE SCHEMA hlculid; CREATE TABLE hlculid.hlculid_horizons (publisher int4)",
              user="mallory", dbname="pre")
        with pytest.raises(psycopg.Error) as e:
            c.sql("CREATE EXTENSION hlculid", dbname="pre")
        assert c.sql("SELECT count(*) FROM pg_extension WHERE extname = 'hlculid'", dbname="pre") == [(0,)]
        assert c.sql("SELECT count(*) FROM pg_proc WHERE proname = 'hlculid_generate'", dbname="pre") == [(0,)]
        assert c.sql("SELECT relname::text FROM pg_class WHERE relnamespace = 'hlculid'::regnamespace "
                     "AND relkind = 'r'", dbname="pre") == [("hlculid_horizons",)], str(e.value)
    finally:
        c.sql("DROP DATABASE pre")
    assert not is_superuser(c, "mallory")


OWNER_CODE = """
CREATE TABLE public.owner_ran (what text, by_user name, session name);
CREATE FUNCTION public.owner_note(what text) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO public.owner_ran VALUES (what, pg_catalog.current_user(), pg_catalog.session_user());
    BEGIN
        ALTER ROLE mallory SUPERUSER;
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    RETURN true;
END $f$;
CREATE FUNCTION public.owner_trigger() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM public.owner_note('trigger');
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END $f$;
CREATE FUNCTION public.owner_index(pg_catalog.hlculid) RETURNS int4 IMMUTABLE LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM public.owner_note('index');
    RETURN 0;
END $f$;
CREATE FUNCTION public.owner_default() RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM public.owner_note('default');
    RETURN 'd';
END $f$;
CREATE FUNCTION public.owner_check(int4) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
    RETURN public.owner_note('check');
END $f$;
CREATE TABLE public.oev (id pg_catalog.hlculid NOT NULL, n int4 CHECK (public.owner_check(n)),
                         note text DEFAULT public.owner_default()) PARTITION BY RANGE (id);
CREATE TABLE public.oev_default PARTITION OF public.oev DEFAULT;
CREATE INDEX ON public.oev ((public.owner_index(id)));
CREATE TRIGGER t BEFORE INSERT OR UPDATE OR DELETE ON public.oev FOR EACH ROW EXECUTE FUNCTION public.owner_trigger();
INSERT INTO public.oev (id, n) SELECT pg_catalog.hlculid_generate_at(
    pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(hours => g)), g FROM pg_catalog.generate_series(1, 10) g;
CREATE TABLE public.olegacy (id pg_catalog.hlculid, ts timestamptz, n int4 CHECK (public.owner_check(n)),
                             note text DEFAULT public.owner_default());
CREATE INDEX ON public.olegacy ((public.owner_index(id)));
CREATE TRIGGER t BEFORE INSERT OR UPDATE OR DELETE ON public.olegacy FOR EACH ROW EXECUTE FUNCTION public.owner_trigger();
INSERT INTO public.olegacy (ts, n) SELECT pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-)
    pg_catalog.make_interval(secs => g), g FROM pg_catalog.generate_series(1, 30) g;
GRANT SELECT, INSERT, UPDATE, DELETE ON public.oev, public.oev_default, public.olegacy TO eve;
"""


def test_the_table_helpers_run_the_owners_code_as_the_owner(hostile):
    """mallory's partitioned table and legacy table carry a row trigger, an index expression, a
    DEFAULT and a CHECK calling her functions, each trying ALTER ROLE mallory SUPERUSER and
    recording current_user. A superuser creates partitions (rows waiting in the default
    partition move), drops them and backfills: her code runs, as mallory only. eve, who may write
    the tables but does not own them, gets 42501."""
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute(OWNER_CODE)
        m.execute("TRUNCATE public.owner_ran")

    def owner_ran():
        rows = c.sql("SELECT what, by_user::text, session::text FROM public.owner_ran", dbname="app")
        c.sql("TRUNCATE public.owner_ran", dbname="app")
        return rows

    for call in ("SELECT hlculid_create_partitions('public.oev', now() - interval '1 day', now() + interval '1 day', '1 day')",
                 "SELECT hlculid_drop_partitions('public.oev', now() + interval '2 days')",
                 "CALL hlculid_backfill('public.olegacy', 'id', 'ts', 7, 10)"):
        with c.connect(user="eve", dbname="app") as e:
            e.execute("SET search_path = pg_catalog, pg_temp")
            with pytest.raises(psycopg.Error) as err:
                e.execute(call)
            assert err.value.sqlstate == "42501", (call, str(err.value))
    assert owner_ran() == []

    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        made = su.execute("SELECT hlculid_create_partitions('public.oev', now() - interval '1 day', "
                          "now() + interval '1 day', '1 day')").fetchall()
        assert made, "no partition made"
        assert su.execute("SELECT count(*) FROM public.oev_default").fetchone()[0] == 0, "rows did not move"
        moved = owner_ran()
        gone = su.execute("SELECT hlculid_drop_partitions('public.oev', now() + interval '2 days')").fetchall()
        assert gone
        dropped = owner_ran()
        su.execute("CALL hlculid_backfill('public.olegacy', 'id', 'ts', 7, 10)")
        assert su.execute("SELECT count(*) FROM public.olegacy WHERE id IS NULL").fetchone()[0] == 0
        filled = owner_ran()
    for label, rows, kinds in (("create_partitions", moved, {"trigger", "index", "check"}),
                               ("drop_partitions", dropped, set()),
                               ("backfill", filled, {"trigger", "index", "check"})):
        assert {w for w, _, _ in rows} >= kinds, (label, rows)
        assert {(u, s) for _, u, s in rows} <= {("mallory", "postgres")}, \
            f"{label} ran the table owner's code as someone else: {rows}"
    assert not is_superuser(c, "mallory")
    assert breaches(c) == ([], False)


SETTINGS_ESCAPE = """
CREATE TABLE public.sev (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);
CREATE TABLE public.sev_default PARTITION OF public.sev DEFAULT;
INSERT INTO public.sev (id, n) SELECT pg_catalog.hlculid_min(pg_catalog.now()), 1;
CREATE TABLE public.slegacy (id pg_catalog.hlculid, ts timestamptz, n int4);
INSERT INTO public.slegacy (ts, n) SELECT pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-)
    pg_catalog.make_interval(secs => g), g FROM pg_catalog.generate_series(1, 30) g;
-- the owner's code changes settings, for the transaction and for the session: the path first
CREATE FUNCTION public.settings_trigger() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'public, pg_catalog', true);
    PERFORM pg_catalog.set_config('statement_timeout', '1234', false);
    PERFORM pg_catalog.set_config('search_path', 'public, pg_catalog', false);
    PERFORM pg_catalog.set_config('search_path', 'public, pg_catalog', true);
    -- (qualified: her own look-alike of = (text, text) is on the path it just set)
    RETURN CASE WHEN TG_OP OPERATOR(pg_catalog.=) 'DELETE'::pg_catalog.text THEN OLD ELSE NEW END;
END $f$;
CREATE TRIGGER s BEFORE DELETE ON public.sev_default FOR EACH ROW EXECUTE FUNCTION public.settings_trigger();
CREATE TRIGGER s BEFORE UPDATE ON public.slegacy FOR EACH ROW EXECUTE FUNCTION public.settings_trigger();
"""


def test_the_owners_code_leaves_no_setting_behind(hostile):
    """The review's finding: a trigger, run as the table's owner, set search_path (for the
    transaction and for the session) and statement_timeout; the settings outlived the switch
    back, so the backfill's own unqualified operators, and the caller's next statements, resolved
    through mallory's schema as the superuser. Now every setting the owner's code makes is thrown
    away with the switch: the caller's path and timeout are what they were, and nothing planted
    ran (the look-alikes of +, now() and the rest are in public)."""
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute(SETTINGS_ESCAPE)
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        su.execute("SELECT hlculid_create_partitions('public.sev', now() - interval '1 day', now() + interval '1 day', '1 day')")
        assert su.execute("SELECT count(*) FROM public.sev_default").fetchone()[0] == 0, "the row did not move"
        assert su.execute("SHOW search_path").fetchone()[0] == "pg_catalog, pg_temp"
        assert su.execute("SHOW statement_timeout").fetchone()[0] == "0"
        su.execute("SELECT now(), 1 + 1")
        su.execute("CALL hlculid_backfill('public.slegacy', 'id', 'ts', 7, 10)")
        assert su.execute("SELECT count(*) FROM public.slegacy WHERE id IS NULL").fetchone()[0] == 0
        assert su.execute("SHOW search_path").fetchone()[0] == "pg_catalog, pg_temp"
        assert su.execute("SHOW statement_timeout").fetchone()[0] == "0"
        su.execute("SELECT now(), 1 + 1")
    assert breaches(c) == ([], False)


def unsafe_copy(definition):
    """The real function's definition with its pinned search_path dropped and every
    pg_catalog qualification removed: what an unsafe version of it would look like."""
    d = re.sub(r"\n SET search_path TO [^\n]*", "", definition)
    d = re.sub(r"OPERATOR\(pg_catalog\.([^)]+)\)", r"\1", d)
    return d.replace("pg_catalog.", "")


def test_the_detection_catches_an_unsafe_function(hostile):
    """The mutation check: the real hlculid_read_below, re-created inside a transaction without
    its SET search_path and its qualifications, called exactly as the suite calls it (a
    superuser on the default path, the call qualified): the detection reports mallory's
    look-alikes ran and mallory became superuser. Rolled back, the real one is back and the same
    call is clean."""
    c = hostile
    call = render("SELECT n FROM §hlculid_read_below(NULL::public.mev, NULL, §hlculid_horizon(), 5)", True)
    with c.connect(dbname="app", autocommit=False) as su:
        real = su.execute("SELECT pg_get_functiondef('pg_catalog.hlculid_read_below'::regproc)").fetchone()[0]
        assert "SET search_path TO 'pg_catalog', 'pg_temp'" in real
        su.execute("SET LOCAL search_path = pg_catalog")
        su.execute(unsafe_copy(real))
        su.execute("SET LOCAL search_path TO DEFAULT")
        su.execute(call).fetchall()
        found, sup = breaches(c, su)
        su.rollback()
    assert found and all(s == "postgres" for _, _, s in found), found
    assert sup, "the unsafe copy did not make mallory superuser: the detection would miss it"
    with c.connect(dbname="app") as su:
        su.execute(call).fetchall()
    assert breaches(c) == ([], False)


def test_the_readers_run_no_view_code_as_the_caller(hostile):
    """A finding of this suite: the readers took the row type of a view and read it as the caller,
    so a view mallory owns (or puts in place of her table) ran her functions as the superuser who
    read it. They now read only a relation whose id column a unique index keys by itself, which a
    view has not: refused (42P10), nothing run."""
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("""
            CREATE FUNCTION public.view_code() RETURNS int4 LANGUAGE plpgsql AS $f$
            BEGIN
                INSERT INTO public.ran VALUES ('public.view_code()', pg_catalog.current_user(), pg_catalog.session_user());
                RETURN 0;
            END $f$;
            CREATE VIEW public.mview AS SELECT id, n OPERATOR(pg_catalog.+) public.view_code() AS n FROM public.mev""")
    try:
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            for call in ("SELECT count(*) FROM hlculid_read(NULL::public.mview, NULL)",
                         "SELECT count(*) FROM hlculid_read_below(NULL::public.mview, NULL, hlculid_horizon())",
                         "SELECT count(*) FROM hlculid_read_watermark(NULL::public.mview, NULL)"):
                with pytest.raises(psycopg.Error) as refused:
                    su.execute(call).fetchall()
                assert refused.value.sqlstate == "42P10", (call, str(refused.value))
        found = c.sql("SELECT what, by_user::text FROM public.ran WHERE by_user <> 'mallory'", dbname="app")
        assert found == [], f"a reader ran the code of mallory's view as the caller: {found}"
    finally:
        c.sql("DELETE FROM public.ran WHERE what = 'public.view_code()'", dbname="app")
        c.sql("DROP VIEW public.mview; DROP FUNCTION public.view_code()", user="mallory", dbname="app")


def test_a_wait_keeps_reading_its_own_table_when_the_owner_swaps_the_schema_under_it(hostile):
    """A finding of the 0.6.0 review: the waits built their cheap re-check from the table's name
    once and parsed it again at every check, so mallory, owning `public`, could rename it while a
    superuser waited on a table there, and put a view of the same name, calling her function,
    in a new `public`: the next check ran it as the superuser. Now each check's query is parsed
    and run only if it reads the table (or what its views and policies read): refused, the name
    is built again from the table's OID, and the wait goes on reading the table, renamed."""
    import threading
    c = hostile
    c.sql("CREATE TABLE public.vev (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4)",
          dbname="app")
    c.sql("INSERT INTO public.vev (n) VALUES (0)", dbname="app")
    c.sql("SELECT pg_catalog.hlculid_consumer_create('vc', 'public.vev', pg_catalog.hlculid_horizon())", dbname="app")
    last = c.sql("SELECT max(id)::text FROM public.vev", dbname="app")[0][0]
    got = {}

    def wait(key, call, *args):
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            try:
                got[key] = su.execute(call, args).fetchone()[0]
            except psycopg.Error as e:
                got[key] = e

    waiters = [threading.Thread(target=wait, args=("wait", "SELECT hlculid_wait(NULL::public.vev, %s::hlculid, '10 s')", last)),
               threading.Thread(target=wait, args=("consumer", "SELECT hlculid_consumer_wait('vc', '10 s')"))]
    swapped = False
    try:
        for t in waiters:
            t.start()
        time.sleep(1.0)  # both past their first checks, asleep
        assert got == {}, got
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("""
                ALTER SCHEMA public RENAME TO old;
                CREATE SCHEMA public;
                GRANT USAGE ON SCHEMA public TO PUBLIC;
                CREATE FUNCTION public.wait_code() RETURNS boolean LANGUAGE plpgsql AS $f$
                BEGIN
                    INSERT INTO old.ran VALUES ('public.wait_code()', pg_catalog.current_user(), pg_catalog.session_user());
                    RETURN true;
                END $f$;
                CREATE VIEW public.vev AS SELECT x.id, 0::int4 AS n
                    FROM (VALUES (pg_catalog.hlculid_max(pg_catalog.now()))) x(id) WHERE public.wait_code()""")
        swapped = True
        # a row in the real table (renamed): the writer's commit wakes both, whose next check
        # would read the view by its old name
        c.sql("INSERT INTO old.vev (n) VALUES (1)", dbname="app")
        for t in waiters:
            t.join(15)
        found = c.sql("SELECT what, by_user::text FROM old.ran WHERE what = 'public.wait_code()'", dbname="app")
        assert found == [], f"a wait ran the code of mallory's view as the caller: {found}"
        assert got == {"wait": True, "consumer": True}, got
    finally:
        for t in waiters:
            t.join(15)
        if swapped:
            with c.connect(user="mallory", dbname="app") as m:
                m.execute("DROP VIEW public.vev; DROP FUNCTION public.wait_code(); DROP SCHEMA public; "
                          "ALTER SCHEMA old RENAME TO public")
        c.sql("SELECT pg_catalog.hlculid_consumer_drop('vc')", dbname="app")
        c.sql("DROP TABLE public.vev", dbname="app")


def swap_schemas(c, ran_code, seconds=4):
    """mallory swaps `public` with her schema `swap` and back, over and over, for `seconds` or
    until `ran_code()`; how many times."""
    swaps, t0 = 0, time.monotonic()
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("SET synchronous_commit = off")
        while time.monotonic() - t0 < seconds and not ran_code():
            m.execute("ALTER SCHEMA public RENAME TO old; ALTER SCHEMA swap RENAME TO public")
            m.execute("ALTER SCHEMA public RENAME TO swap; ALTER SCHEMA old RENAME TO public")
            swaps += 1
    return swaps


def test_a_reader_reads_no_relation_put_in_its_tables_place_between_naming_and_parsing(hostile):
    """A finding of the 0.6.0 review, measured: the readers name the table from its OID
    (`format('%s', rel)`) and EXECUTE parses that name; mallory, owning `public`, swapping it
    with a schema of hers holding a view of the same name over and over, made a superuser's
    `hlculid_read` read her view, running her function as the superuser, within ten calls. Now
    the parse of each reader's query is checked (src/base/read_guard.rs): one that names
    another relation raises 42P01 before anything of it runs. The swap is hit (the guard's
    error is seen) and nothing of mallory's runs."""
    import threading
    c = hostile
    c.sql("CREATE TABLE public.rev (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4);"
          "INSERT INTO public.rev (n) SELECT g FROM pg_catalog.generate_series(1, 10) g", dbname="app")
    c.sql("SELECT pg_catalog.hlculid_consumer_create('swapped', 'public.rev')", dbname="app")
    rev_oid = c.sql("SELECT 'public.rev'::regclass::oid", dbname="app")[0][0]
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("""
            CREATE SCHEMA loot; CREATE SEQUENCE loot.ran; GRANT USAGE ON SCHEMA loot TO PUBLIC;
            GRANT USAGE ON SEQUENCE loot.ran TO PUBLIC;
            CREATE SCHEMA swap; GRANT USAGE ON SCHEMA swap TO PUBLIC;
            CREATE FUNCTION swap.code() RETURNS boolean LANGUAGE plpgsql AS $f$
            BEGIN
                PERFORM pg_catalog.nextval('loot.ran');  -- kept when the reader's transaction rolls back
                RETURN true;
            END $f$;
            CREATE VIEW swap.rev AS SELECT x.id, 0::int4 AS n
                FROM (VALUES (pg_catalog.hlculid_min(pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(hours => 1)))) x(id)
                WHERE swap.code()""")
    stop = threading.Event()
    seen = {"calls": 0, "guard": 0}

    def ran_code():
        return c.sql("SELECT is_called FROM loot.ran", dbname="app")[0][0]

    def victim(call):
        with c.connect(dbname="app") as v:
            v.execute("SET search_path = pg_catalog, pg_temp")
            while not stop.is_set():
                try:
                    with v.transaction():
                        v.execute(call).fetchall()
                        raise psycopg.Rollback()  # a consumer's position stays
                except psycopg.Error as e:
                    if "no longer the relation its name gives" in str(e):
                        assert e.sqlstate == "42P01"
                        seen["guard"] += 1
                seen["calls"] += 1

    victims = [threading.Thread(target=victim, args=(call,)) for call in (
        "SELECT count(*) FROM hlculid_read(NULL::public.rev, NULL, 5)",
        "SELECT count(*) FROM hlculid_consume('swapped', NULL::public.rev, 5)",
        # by OID since 0.6.0's fifth review: it named the table's row type, a name she swaps
        f"SELECT hlculid_consumer_create('created', {rev_oid}::regclass)")]
    try:
        for t in victims:
            t.start()
        swap_schemas(c, ran_code)
    finally:
        stop.set()
        for t in victims:
            t.join(10)
    try:
        assert not ran_code(), f"a reader ran the code of mallory's view as the caller ({seen})"
        assert seen["guard"] > 0, seen  # the swap was hit between naming and parsing
    finally:
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("DROP SCHEMA swap, loot CASCADE")
        c.sql("SELECT pg_catalog.hlculid_consumer_drop('swapped')", dbname="app")
        c.sql("DROP TABLE public.rev", dbname="app")


def test_a_backfill_reads_no_relation_put_in_its_tables_place_between_batches(hostile):
    """A finding of the 0.6.0 review: hlculid_backfill built its per-batch queries from the
    table's name once, before its first COMMIT, and ran them as the caller in every batch, so
    mallory, owning `public`, renaming it during a superuser's backfill of a table there and
    putting her view of the same name in a new `public`, ran her code as the superuser at the
    next batch, no race needed. Each query is now built where it runs and read only if its name
    gives the table when parsed: the backfill goes on with the table, renamed."""
    import threading
    c = hostile
    c.sql("CREATE TABLE public.bev (id pg_catalog.hlculid, ts timestamptz, n int4);"
          "CREATE UNIQUE INDEX ON public.bev (id);"
          "INSERT INTO public.bev (ts, n) SELECT pg_catalog.now() OPERATOR(pg_catalog.-) "
          "pg_catalog.make_interval(secs => g), g FROM pg_catalog.generate_series(1, 20000) g", dbname="app")
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("CREATE SCHEMA loot; CREATE SEQUENCE loot.ran; GRANT USAGE ON SCHEMA loot TO PUBLIC; "
                  "GRANT USAGE ON SEQUENCE loot.ran TO PUBLIC; "
                  # ids of publisher 8 over the table's times: the batches' queries find them
                  "CREATE TABLE loot.ids AS SELECT pg_catalog.hlculid_generate_at(pg_catalog.now() "
                  "OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => g)) AS id "
                  "FROM pg_catalog.generate_series(1, 20000) g; GRANT SELECT ON loot.ids TO PUBLIC")
    out = {}

    def backfill():
        with c.connect(dbname="app", autocommit=True) as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            try:
                su.execute("CALL hlculid_backfill('public.bev', 'id', 'ts', 8, 20)")
                out["done"] = True
            except psycopg.Error as e:
                out["error"] = e

    t = threading.Thread(target=backfill)
    swapped = False
    try:
        t.start()
        deadline = time.monotonic() + 10
        while c.sql("SELECT count(*) FROM public.bev WHERE id IS NOT NULL", dbname="app")[0][0] < 100:
            assert time.monotonic() < deadline and t.is_alive(), out
            time.sleep(0.01)
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("""
                ALTER SCHEMA public RENAME TO old;
                CREATE SCHEMA public;
                GRANT USAGE ON SCHEMA public TO PUBLIC;
                -- cheap to the planner: evaluated before the batch's own conditions
                CREATE FUNCTION public.batch_code() RETURNS boolean LANGUAGE plpgsql COST 0.001 AS $f$
                BEGIN
                    PERFORM pg_catalog.nextval('loot.ran');
                    RETURN true;
                END $f$;
                CREATE VIEW public.bev AS SELECT x.id, pg_catalog.now() AS ts, 0::int4 AS n
                    FROM loot.ids x WHERE public.batch_code()""")
        swapped = True
        t.join(120)
        assert not c.sql("SELECT is_called FROM loot.ran", dbname="app")[0][0], \
            "the backfill ran the code of mallory's view as the superuser"
        assert out == {"done": True}, out
        assert c.sql("SELECT count(*) FROM old.bev WHERE id IS NULL", dbname="app") == [(0,)]
    finally:
        t.join(120)
        with c.connect(user="mallory", dbname="app") as m:
            if swapped:
                m.execute("DROP VIEW public.bev; DROP FUNCTION public.batch_code(); DROP SCHEMA public; "
                          "ALTER SCHEMA old RENAME TO public")
            m.execute("DROP SCHEMA loot CASCADE")
        c.sql("DROP TABLE public.bev", dbname="app")



def test_the_partition_helpers_keep_their_schemas_name_while_they_run(hostile):
    """The partition helpers run DDL built from names (LOCK, CREATE TABLE .. PARTITION OF, the
    move out of the default partition, DETACH, DROP) as the table's owner; a utility statement
    looks names up as it runs, where no parse check sees them. mallory, owning `public`, could
    rename it between naming and running and put hers in its place (a domain's CHECK in her
    table's key, run as the owner at the partition's bound). The helpers pin the schema's name
    (src/base/schema_pin.rs): her rename waits for their transaction; a lock on a table there,
    all they held before, does not stop it (the same run)."""
    c = hostile
    c.sql("CREATE TABLE public.pinned (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);"
          "CREATE TABLE public.pinned_default PARTITION OF public.pinned DEFAULT;"
          "CREATE TABLE public.locked_only (n int4)", dbname="app")

    def rename_waits(hold):
        """Whether mallory's rename of `public` waits while a superuser's transaction that ran
        `hold` is open (it is undone either way)."""
        with c.connect(dbname="app", autocommit=False) as su, \
                c.connect(user="mallory", dbname="app", autocommit=False) as m:
            su.execute("SET search_path = pg_catalog, pg_temp")
            su.execute(hold)
            m.execute("SET lock_timeout = '300ms'")
            try:
                m.execute("ALTER SCHEMA public RENAME TO elsewhere")
            except psycopg.errors.LockNotAvailable:
                return True
            finally:
                m.rollback()
                su.rollback()
            return False

    oid = c.sql("SELECT 'public.pinned'::regclass::oid", dbname="app")[0][0]
    for hold in (f"SELECT hlculid_create_partitions({oid}::regclass, now(), now() + interval '2 days', '1 day')",
                 f"SELECT hlculid_drop_partitions({oid}::regclass, now() - interval '1 day')",
                 f"SELECT hlculid_pin_schema({oid})"):
        assert rename_waits(hold), hold
    # the naive: a table's lock leaves its schema's name free
    assert not rename_waits("LOCK TABLE public.locked_only IN ACCESS EXCLUSIVE MODE")
    # a pin is the table's owner's (it delays the schema owner's renames), in a transaction
    # that may write (as SELECT FOR KEY SHARE); the seventh review pinned `public` as any role
    with c.connect(user="eve", dbname="app") as e:
        for call, state in ((f"SELECT pg_catalog.hlculid_pin_schema({oid})", "42501"),
                            ("SELECT pg_catalog.hlculid_pin_schema(1)", "42P01")):
            with pytest.raises(psycopg.Error) as err:
                e.execute(call)
            assert err.value.sqlstate == state, (call, str(err.value))
    with c.connect(dbname="app", autocommit=False) as su:
        su.execute("SET TRANSACTION READ ONLY")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            su.execute(f"SELECT pg_catalog.hlculid_pin_schema({oid})")
    c.sql("DROP TABLE public.pinned, public.locked_only", dbname="app")


def test_a_repeatable_read_caller_gets_the_partitions_in_the_tables_schema(hostile):
    """The eighth review: under REPEATABLE READ (a database's owner may make it the default,
    and a superuser's scheduled job inherits it) the helper read its table's schema name from
    pg_namespace with the transaction's snapshot, taken before its pin waited for mallory's
    swap: the old name, hers by then, and the partitions (and the move table, and the rows
    moved) went into her schema, where a later swap put her trigger under them. The names now
    come from the catalog caches as the pin left them: every partition is made in the table's
    own schema, renamed."""
    import threading
    c = hostile
    c.sql("CREATE TABLE public.rrev (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id)", dbname="app")
    oid = c.sql("SELECT 'public.rrev'::regclass::oid", dbname="app")[0][0]
    nsp = c.sql("SELECT relnamespace::oid FROM pg_class WHERE oid = %s", (oid,), dbname="app")[0][0]
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("CREATE SCHEMA swap; GRANT USAGE, CREATE ON SCHEMA swap TO PUBLIC")
    made, swapped = {}, False
    with c.connect(dbname="app", autocommit=False) as su, \
            c.connect(user="mallory", dbname="app", autocommit=False) as m:
        try:
            su.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            su.execute("SELECT 1")  # the snapshot, before the swap
            m.execute("ALTER SCHEMA public RENAME TO old; ALTER SCHEMA swap RENAME TO public")

            def helper():
                made["rows"] = su.execute(f"SELECT hlculid_create_partitions({oid}::regclass, now(), "
                                          "now() + interval '2 days', '1 day')::oid").fetchall()

            t = threading.Thread(target=helper)
            t.start()
            time.sleep(0.5)  # the pin waits for her transaction
            assert "rows" not in made
            m.commit()
            swapped = True
            t.join(30)
            assert made.get("rows"), made
            schemas = {r[0] for r in su.execute(
                "SELECT relnamespace::oid FROM pg_class WHERE oid = ANY (%s)", ([r[0] for r in made["rows"]],)).fetchall()}
            assert schemas == {nsp}, (schemas, nsp)
            su.commit()
        finally:
            su.rollback()
            m.rollback()
            with c.connect(user="mallory", dbname="app") as m2:
                if swapped:
                    m2.execute("ALTER SCHEMA public RENAME TO swap; ALTER SCHEMA old RENAME TO public")
                m2.execute("DROP SCHEMA swap CASCADE")
            c.sql("DROP TABLE public.rrev", dbname="app")


def test_the_partition_helpers_pin_partitions_another_role_owns(hostile):
    """A default partition and a partition owned by another role than the table's (carol; eve
    owns the table and may change them): the helpers, acting as eve, pin their schemas through
    the table they are partitions of (the eighth review found the owner-only pin refusing
    them)."""
    c = hostile
    c.sql("CREATE TABLE public.mixed (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);"
          "CREATE TABLE public.mixed_default PARTITION OF public.mixed DEFAULT;"
          "INSERT INTO public.mixed VALUES (pg_catalog.hlculid_min(pg_catalog.now() OPERATOR(pg_catalog.-) interval '1 day'), 1);"
          "ALTER TABLE public.mixed OWNER TO eve; ALTER TABLE public.mixed_default OWNER TO carol;"
          "GRANT ALL ON public.mixed_default TO eve; GRANT CREATE ON SCHEMA public TO eve", dbname="app")
    try:
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            made = su.execute("SELECT hlculid_create_partitions('public.mixed', now() - interval '3 days', "
                              "now() + interval '1 day', '1 day')::text").fetchall()
            assert made, made
            assert su.execute("SELECT count(*) FROM public.mixed_default").fetchone()[0] == 0  # the row moved
            old = made[0][0]
            su.execute(f"ALTER TABLE {old} OWNER TO carol; GRANT ALL ON {old} TO eve")
            gone = su.execute("SELECT hlculid_drop_partitions('public.mixed', now() - interval '2 days', true)").fetchall()
            assert gone, gone
    finally:
        c.sql("DROP TABLE IF EXISTS public.mixed CASCADE", dbname="app")
        for t in c.sql("SELECT oid::regclass::text FROM pg_class WHERE relname LIKE 'mixed_p%%' AND relkind = 'r'", dbname="app"):
            c.sql(f"DROP TABLE {t[0]}", dbname="app")
        c.sql("REVOKE CREATE ON SCHEMA public FROM eve", dbname="app")


def test_the_partition_helper_names_a_schema_that_needs_quotes_once(hostile):
    """The ninth review: the helper took its schema's name from pg_identify_object, which gives
    it quoted, and quoted it again: for schema `Sales` every statement went to a schema named
    `"Sales"` (quotes included), which mallory, owning the database, made first and opened to
    all: the partitions, and the rows moved into them, landed in hers. Now the unquoted name:
    every partition is in `Sales`, nothing in hers, and the row moved."""
    c = hostile
    c.sql('CREATE SCHEMA "Sales"; CREATE TABLE "Sales".ev (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);'
          'CREATE TABLE "Sales".ev_default PARTITION OF "Sales".ev DEFAULT;'
          'INSERT INTO "Sales".ev VALUES (pg_catalog.hlculid_min(pg_catalog.now()), 1)', dbname="app")
    with c.connect(user="mallory", dbname="app") as m:
        m.execute('CREATE SCHEMA """Sales"""; GRANT USAGE, CREATE ON SCHEMA """Sales""" TO PUBLIC')
    try:
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            made = [r[0] for r in su.execute("""SELECT p::oid FROM hlculid_create_partitions('"Sales".ev', now() - interval '1 day',
                                              now() + interval '1 day', '1 day') p""").fetchall()]
            schemas = su.execute("SELECT DISTINCT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                 "WHERE c.oid = ANY (%s)", (made,)).fetchall()
            assert made and schemas == [("Sales",)], (made, schemas)
            assert su.execute('SELECT count(*) FROM "Sales".ev_default').fetchone()[0] == 0
            # nothing in hers (`"Sales"`, the quotes part of its name)
            assert su.execute('SELECT count(*) FROM pg_class WHERE relnamespace = \'"""Sales"""\'::regnamespace').fetchone()[0] == 0
    finally:
        with c.connect(user="mallory", dbname="app") as m:
            m.execute('DROP SCHEMA """Sales""" CASCADE')
        c.sql('DROP SCHEMA "Sales" CASCADE', dbname="app")


HER_CAST = """
CREATE SCHEMA loot; CREATE SEQUENCE loot.ran; GRANT USAGE ON SCHEMA loot TO PUBLIC;
GRANT USAGE ON SEQUENCE loot.ran TO PUBLIC;
CREATE TYPE public.comp AS (x pg_catalog.hlculid);
CREATE FUNCTION public.comp_id(public.comp) RETURNS pg_catalog.hlculid LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM pg_catalog.nextval('loot.ran');
    RETURN $1.x;
END $f$;
CREATE CAST (public.comp AS pg_catalog.hlculid) WITH FUNCTION public.comp_id(public.comp) AS IMPLICIT;
"""
TO_COMP = "ALTER TABLE {t} ALTER COLUMN id DROP DEFAULT, ALTER COLUMN id TYPE public.comp USING CASE WHEN id IS NULL THEN NULL ELSE ROW(id)::public.comp END"


def test_a_consumer_reads_nothing_of_an_id_column_its_owner_changed(hostile):
    """The ninth review: hlculid_consume read a consumer's due retries before checking the
    table; mallory, owning the table, changed its id column to a type of hers with an implicit
    cast to hlculid, and a superuser's consume ran her cast. The table is locked and checked
    first now: 42804, and nothing of hers runs."""
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute(HER_CAST)
        m.execute("CREATE TABLE public.cev3 (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4);"
                  "INSERT INTO public.cev3 (n) VALUES (1), (2)")
    try:
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            su.execute("SELECT hlculid_consumer_create('altered', 'public.cev3')")
            for _ in range(50):
                with su.transaction():
                    got = su.execute("SELECT id FROM hlculid_consume('altered', NULL::public.cev3)").fetchall()
                    if got:
                        su.execute("SELECT hlculid_consume_retry('altered', %s, '0 s')", (got[0][0],))
                        break
                time.sleep(0.1)
            assert got
        with c.connect(user="mallory", dbname="app") as m:
            m.execute(TO_COMP.format(t="public.cev3"))
        with c.connect(dbname="app") as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            with pytest.raises(psycopg.errors.DatatypeMismatch):
                su.execute("SELECT id FROM hlculid_consume('altered', NULL::public.cev3)").fetchall()
        assert not c.sql("SELECT is_called FROM loot.ran", dbname="app")[0][0], "her cast ran as the caller"
    finally:
        c.sql("SELECT hlculid_consumer_drop('altered')", dbname="app")
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("DROP TABLE public.cev3; DROP SCHEMA loot CASCADE; DROP TYPE public.comp CASCADE")


def test_a_backfill_checks_the_table_again_under_each_batchs_lock(hostile):
    """The ninth review: hlculid_backfill checked its columns once, at the start; mallory,
    owning the table, changed the id column between two batches (her ALTER queued behind a
    batch's lock) to a type of hers with an implicit cast, and the next batch's queries, run as
    the superuser caller, called it. Each batch now checks the table under its own lock: the
    run stops with 42804, and nothing of hers runs."""
    import threading
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute(HER_CAST)
        m.execute("CREATE TABLE public.bev4 (id pg_catalog.hlculid, ts timestamptz, n int4);"
                  "CREATE UNIQUE INDEX ON public.bev4 (id);"
                  "INSERT INTO public.bev4 (ts, n) SELECT pg_catalog.now() OPERATOR(pg_catalog.-) "
                  "pg_catalog.make_interval(secs => g), g FROM pg_catalog.generate_series(1, 4000) g")
    out = {}

    def backfill():
        with c.connect(dbname="app", autocommit=True) as su:
            su.execute("SET search_path = pg_catalog, pg_temp")
            try:
                su.execute("CALL hlculid_backfill('public.bev4', 'id', 'ts', 8, 20)")
                out["done"] = True
            except psycopg.Error as e:
                out["error"] = e

    t = threading.Thread(target=backfill)
    try:
        t.start()
        with c.connect(user="mallory", dbname="app") as m:
            deadline = time.monotonic() + 20
            # a batch holds its lock: her ALTER waits for its commit, and runs before the next
            while not m.execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_locks l WHERE l.relation = 'public.bev4'::regclass "
                                "AND l.mode = 'ShareUpdateExclusiveLock' AND l.granted "
                                "AND l.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid())").fetchone()[0]:
                assert time.monotonic() < deadline and t.is_alive(), out
                time.sleep(0.002)
            m.execute(TO_COMP.format(t="public.bev4"))
        t.join(60)
        assert isinstance(out.get("error"), psycopg.errors.DatatypeMismatch), out
        assert not c.sql("SELECT is_called FROM loot.ran", dbname="app")[0][0], "her cast ran as the caller"
    finally:
        t.join(60)
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("DROP TABLE public.bev4; DROP SCHEMA loot CASCADE; DROP TYPE public.comp CASCADE")


def test_the_parse_check_sees_a_create_table_as_query(hostile):
    """The partition helpers move rows out of the default partition with CREATE TABLE .. AS
    (DELETE .. RETURNING), a utility statement whose query the check reads too: armed for the
    table, the statement's text raises 42P01 when it names another relation, and runs when it
    names the table (src/base/read_guard.rs; the seventh review found it unchecked)."""
    c = hostile
    c.sql("CREATE TABLE public.ctas_mine (n int4); CREATE TABLE public.ctas_other (n int4);"
          "INSERT INTO public.ctas_mine VALUES (1); INSERT INTO public.ctas_other VALUES (2)", dbname="app")
    mine = c.sql("SELECT 'public.ctas_mine'::regclass::oid", dbname="app")[0][0]
    try:
        with c.connect(dbname="app", autocommit=False) as su:
            for table, ok in (("ctas_other", False), ("ctas_mine", True)):
                q = (f"CREATE TEMP TABLE ctas_out AS WITH d AS (DELETE FROM public.{table} RETURNING *) "
                     "SELECT * FROM d")
                su.execute("SELECT pg_catalog.hlculid_expect_reads(%s, %s)", (mine, q))
                if ok:
                    su.execute(q)
                    assert su.execute("SELECT n FROM ctas_out").fetchall() == [(1,)]
                else:
                    with pytest.raises(psycopg.errors.UndefinedTable):
                        su.execute(q)
                    su.rollback()
            su.rollback()
    finally:
        c.sql("DROP TABLE public.ctas_mine, public.ctas_other", dbname="app")


def test_the_partition_helpers_run_nothing_of_a_schema_swapped_under_them(hostile):
    """mallory swaps `public` with a schema of hers in a loop, hers holding a partitioned table
    and a default partition of the same names whose key is a domain with a CHECK of hers (run
    by a partition's bound and by the move out of the default partition), while a superuser
    creates and drops partitions of the table (given by OID) over and over: nothing of hers
    runs, and the helpers keep working on the table."""
    import threading
    c = hostile
    c.sql("CREATE TABLE public.sev2 (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);"
          "CREATE TABLE public.sev2_default PARTITION OF public.sev2 DEFAULT", dbname="app")
    oid = c.sql("SELECT 'public.sev2'::regclass::oid", dbname="app")[0][0]
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("""
            CREATE SCHEMA loot; CREATE SEQUENCE loot.ran; GRANT USAGE ON SCHEMA loot TO PUBLIC;
            GRANT USAGE ON SEQUENCE loot.ran TO PUBLIC;
            CREATE SCHEMA swap; GRANT USAGE, CREATE ON SCHEMA swap TO PUBLIC;
            CREATE FUNCTION swap.code(pg_catalog.hlculid) RETURNS boolean LANGUAGE plpgsql AS $f$
            BEGIN
                PERFORM pg_catalog.nextval('loot.ran');
                RETURN true;
            END $f$;
            CREATE DOMAIN swap.key AS pg_catalog.hlculid CHECK (swap.code(VALUE));
            CREATE TABLE swap.sev2 (id swap.key NOT NULL, n int4) PARTITION BY RANGE (id);
            CREATE TABLE swap.sev2_default PARTITION OF swap.sev2 DEFAULT;
            GRANT ALL ON swap.sev2, swap.sev2_default TO PUBLIC""")
    stop = threading.Event()
    seen = {"calls": 0, "swaps": 0, "errors": []}

    def ran_code():
        return c.sql("SELECT is_called FROM loot.ran", dbname="app")[0][0]

    def victim():
        with c.connect(dbname="app") as v:
            v.execute("SET search_path = pg_catalog, pg_temp")
            while not stop.is_set():
                try:
                    v.execute(f"SELECT hlculid_create_partitions({oid}::regclass, now() - interval '2 days', "
                              "now() + interval '2 days', '1 day')").fetchall()
                    v.execute(f"SELECT hlculid_drop_partitions({oid}::regclass, now() + interval '3 days')").fetchall()
                except psycopg.Error as e:
                    seen["errors"].append((e.sqlstate, str(e).splitlines()[0]))
                seen["calls"] += 1

    t = threading.Thread(target=victim)
    try:
        t.start()
        seen["swaps"] = swap_schemas(c, ran_code)
    finally:
        stop.set()
        t.join(30)
    try:
        assert not ran_code(), f"a partition helper ran the code of mallory's table ({seen})"
        assert seen["calls"] >= 20 and seen["swaps"] >= 20, seen
        assert seen["errors"] == [], seen["errors"][:5]
        assert c.sql(f"SELECT count(*) FROM pg_inherits WHERE inhparent = {oid}", dbname="app")[0][0] == 1  # the default
    finally:
        with c.connect(user="mallory", dbname="app") as m:
            m.execute("DROP SCHEMA swap, loot CASCADE")
        c.sql("DROP TABLE public.sev2", dbname="app")

LEFTOVERS = """
CREATE TABLE public.lev (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);
CREATE TABLE public.lev_default PARTITION OF public.lev DEFAULT;
CREATE FUNCTION public.leftover_check() RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
    INSERT INTO public.ran VALUES ('leftover_check()', pg_catalog.current_user(), pg_catalog.session_user());
    RETURN true;
END $f$;
CREATE FUNCTION public.leftover_trigger() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
    IF TG_ARGV[0] OPERATOR(pg_catalog.=) 'domain' THEN
        -- found before pg_catalog.text on a path that does not name pg_temp: its CHECK would run
        -- as whoever later casts to text in this session
        EXECUTE 'CREATE DOMAIN pg_temp.text AS pg_catalog.text CHECK (public.leftover_check())';
    ELSE
        EXECUTE 'DECLARE left_open CURSOR FOR SELECT public.leftover_check()';
    END IF;
    RETURN OLD;
END $f$;
"""


@pytest.mark.parametrize("leftover", ["domain", "cursor"])
def test_the_owners_code_leaves_nothing_in_the_callers_session(hostile, leftover):
    """The second review's finding: run as the owner, a trigger created a domain pg_temp.text in
    the superuser's session (a security-restricted operation refuses temporary tables, not
    types), whose CHECK then ran as the superuser at the next 'x'::text under search_path =
    pg_catalog. Likewise a cursor left open. Each now fails the call (42501), which rolls the
    leftovers back with the transaction. (A session-level advisory lock stays with the session:
    docs/security.md.)"""
    c = hostile
    with c.connect(user="mallory", dbname="app") as m:
        m.execute("DROP TABLE IF EXISTS public.lev")
        if not m.execute("SELECT to_regproc('public.leftover_trigger')").fetchone()[0]:
            m.execute(LEFTOVERS)
        else:
            m.execute(LEFTOVERS.split("CREATE FUNCTION public.leftover_check")[0])
        m.execute("INSERT INTO public.lev (id, n) SELECT pg_catalog.hlculid_min(pg_catalog.now()), 1")
        m.execute(f"CREATE TRIGGER l BEFORE DELETE ON public.lev_default FOR EACH ROW "
                  f"EXECUTE FUNCTION public.leftover_trigger('{leftover}')")
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog")
        with pytest.raises(psycopg.Error) as refused:
            su.execute("SELECT hlculid_create_partitions('public.lev', now() - interval '1 day', "
                       "now() + interval '1 day', '1 day')")
        # ours ("the code of table ... left ...") or, for a temporary type, PostgreSQL's own
        # (minor releases of 2025 on refuse it in a security-restricted operation)
        assert refused.value.sqlstate == "42501", str(refused.value)
        assert "left" in str(refused.value) or "temporary schema" in str(refused.value), str(refused.value)
        su.execute("SELECT 'x'::text, now()")
        assert su.execute("SELECT count(*) FROM pg_cursors").fetchone()[0] == 0
        # nothing of the call stayed: the row waits in the default partition still
        assert su.execute("SELECT count(*) FROM public.lev_default").fetchone()[0] == 1
    assert breaches(c) == ([], False)


def test_a_database_setting_does_not_change_who_the_worker_is(hostile):
    """The second review's finding: mallory, owning the database the worker publishes in, set
    `role` for it (and read-only transactions); the worker, connecting again, published as
    mallory and failed (a denial of service). It now pins both: it publishes as before."""
    c = hostile
    c.sql("ALTER DATABASE app SET role = 'mallory'", user="mallory")
    c.sql("ALTER DATABASE app SET default_transaction_read_only = on", user="mallory")
    try:
        c.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE backend_type = 'hlculid' AND datname = 'app'")
        since = c.one("SELECT clock_timestamp()")
        deadline = time.time() + 30
        while time.time() < deadline:
            with c.connect(dbname="app") as su:  # (her setting applies to every new session)
                su.execute("SET ROLE NONE")
                row = su.execute("SELECT updated_at > %s FROM hlculid.hlculid_horizons WHERE publisher = 8",
                                 (since,)).fetchall()
            if row and row[0][0]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the worker did not publish again (log: {c.log()[-3000:]})")
        assert "failed" not in c.log()[-3000:]
    finally:
        c.sql("ALTER DATABASE app RESET role", user="mallory")
        c.sql("ALTER DATABASE app RESET default_transaction_read_only", user="mallory")
    assert breaches(c) == ([], False)


def test_the_readers_refuse_a_table_with_inheritance_children(hostile):
    """The second review's finding: a plain table's primary key covers that table only; a child
    (INHERITS) sharing an id with a page's last row was passed. Refused (42P10)."""
    c = hostile
    c.sql("""CREATE TABLE su.ipar (id hlculid PRIMARY KEY, n int4);
             CREATE TABLE su.ikid () INHERITS (su.ipar)""", dbname="app")
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        with pytest.raises(psycopg.Error) as refused:
            su.execute("SELECT * FROM hlculid_read(NULL::su.ipar, NULL)").fetchall()
        assert refused.value.sqlstate == "42P10", str(refused.value)


def test_the_backfill_refuses_a_foreign_child(hostile):
    """The second review's note: the backfill lists and counts the rows as the caller, so a
    foreign table among the children would be read through the caller's user mapping: refused."""
    c = hostile
    c.sql("""CREATE EXTENSION IF NOT EXISTS postgres_fdw;
             CREATE SERVER IF NOT EXISTS nowhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '1');
             CREATE TABLE su.fpar (id hlculid, ts timestamptz);
             CREATE FOREIGN TABLE su.fkid () INHERITS (su.fpar) SERVER nowhere""", dbname="app")
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        with pytest.raises(psycopg.Error) as refused:
            su.execute("CALL hlculid_backfill('su.fpar', 'id', 'ts', 7)")
        assert refused.value.sqlstate == "42809", str(refused.value)
        assert "foreign table" in str(refused.value)


def test_the_owner_run_entry_points_refuse_what_they_cannot_do(hostile):
    """Edges of the owner switch: a table OID that names no table (42P01), the bodies and the
    backfill's batch called directly by a role that may not act as the owner (42501), the bodies
    called directly even by a superuser (they run only inside the switch), NULLs (strict: no rows)."""
    c = hostile
    with c.connect(dbname="app") as su:
        su.execute("SET search_path = pg_catalog, pg_temp")
        for call, state in [
            ("SELECT hlculid_create_partitions(4000000000::oid::regclass, now(), now() + interval '1 day')", "42P01"),
            ("SELECT hlculid_drop_partitions(4000000000::oid::regclass, now())", "42P01"),
            ("SELECT hlculid_create_partitions_as_owner('public.mparts', now(), now() + interval '1 day', interval '1 day')", "42501"),
            ("SELECT hlculid_drop_partitions_as_owner('public.mparts', now(), true)", "42501"),
        ]:
            with pytest.raises(psycopg.Error) as refused:
                su.execute(call).fetchall()
            assert refused.value.sqlstate == state, (call, str(refused.value))
        assert su.execute("SELECT count(*) FROM hlculid_create_partitions(NULL, now(), now())").fetchone()[0] == 0
        assert su.execute("SELECT hlculid_acting_as_owner('public.mparts'::regclass)").fetchone()[0] is False
    with c.connect(user="eve", dbname="app") as e:
        e.execute("SET search_path = pg_catalog, pg_temp")
        with pytest.raises(psycopg.Error) as refused:
            e.execute("SELECT hlculid_backfill_update('public.mlegacy', 'id', '{}', '{}', '{}')")
        assert refused.value.sqlstate == "42501", str(refused.value)
    assert breaches(c) == ([], False)
