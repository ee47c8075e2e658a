"""No SQL that hlculid runs on another role's behalf resolves a name through a schema that role
can write (docs/security.md, "search_path"): the horizon publisher (a background worker that
connects as the bootstrap superuser), the prepared-transaction lookup whose result every session
shares, and the SQL helpers a superuser calls.

The attacker, mallory, owns the database (so, on PostgreSQL 15+, its `public` schema) and plants
look-alikes of the function and operator names hlculid's SQL uses: in `public`, in a schema named
after the superuser (first on a superuser's default search_path, "$user"), and in a schema first on
its own search_path. Each look-alike records who ran it and, run by a superuser, makes mallory one
(what 0.4.0's worker did within a second: issue 31, items 1 and 3)."""

import time

from lookalikes import arm, is_superuser, ran


def hostile_database(c):
    """Database `victim` owned by mallory, hlculid installed in its public schema by the superuser,
    mallory's look-alikes in public, in schema "postgres" ($user of the superuser) and in
    schema mallory."""
    c.sql("CREATE ROLE mallory LOGIN")
    c.sql("CREATE DATABASE victim OWNER mallory")
    c.sql("CREATE EXTENSION hlculid", dbname="victim")
    arm(c, "victim")


def test_the_horizon_publisher_runs_nothing_a_database_owner_planted(make_cluster):
    c = make_cluster("search-path-worker", conf=[
        "hlculid.publisher_id = 8", "hlculid.horizon_database = 'victim'",
        "hlculid.horizon_interval = '100ms'"]).start()
    hostile_database(c)
    c.sql("SELECT pg_reload_conf()")
    # the worker publishes, again and again, after the look-alikes were planted
    planted = c.one("SELECT clock_timestamp()")
    seen = set()
    deadline = time.time() + 20
    while time.time() < deadline and len(seen) < 5:
        row = c.sql("SELECT updated_at FROM hlculid.hlculid_horizons WHERE publisher = 8", dbname="victim")
        if row and row[0][0] > planted:
            seen.add(row[0][0])
        time.sleep(0.1)
    assert len(seen) >= 5, f"the worker published {len(seen)} times in 20 s (log: {c.log()[-6000:]})"
    assert ran(c, "victim") == []
    assert not is_superuser(c, "mallory")


def test_the_sql_helpers_run_nothing_a_database_owner_planted(make_cluster):
    """A superuser with the default search_path ("$user", public: both mallory's here) calls every
    SQL helper of the extension (by its qualified name, as a careful DBA would)."""
    c = make_cluster("search-path-helpers", conf=["hlculid.publisher_id = 8",
                                                  "max_prepared_transactions = 4"]).start()
    hostile_database(c)
    with c.connect(dbname="victim") as su:
        su.execute("SHOW search_path")
        su.execute("""
            CREATE TABLE public.ev (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4);
            INSERT INTO public.ev (n) SELECT g FROM pg_catalog.generate_series(1, 20) g;
            CREATE TABLE public.parts (id pg_catalog.hlculid NOT NULL, n int4) PARTITION BY RANGE (id);
            CREATE TABLE public.legacy (id pg_catalog.hlculid, ts timestamptz, n int4);
            INSERT INTO public.legacy (ts, n)
                SELECT pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => g), g
                FROM pg_catalog.generate_series(1, 50) g;
        """)
        calls = [
            "SELECT n FROM pg_catalog.hlculid_read(NULL::public.ev, NULL, 5)",
            "SELECT n FROM pg_catalog.hlculid_read(NULL::public.ev, NULL, 5, 'id')",
            "SELECT n FROM pg_catalog.hlculid_read_watermark(NULL::public.ev, NULL, ARRAY[8], 5, 'id')",
            "SELECT n FROM pg_catalog.hlculid_read_below(NULL::public.ev, NULL, pg_catalog.hlculid_horizon(), 5)",
            "SELECT pg_catalog.hlculid_horizon(), pg_catalog.hlculid_horizon_bigint(), pg_catalog.hlculid_horizon_catch_up()",
            "SELECT pg_catalog.hlculid_publish_horizon()",
            "SELECT pg_catalog.hlculid_advance_horizon(9, pg_catalog.hlculid_generate())",
            "SELECT pg_catalog.hlculid_watermark(), pg_catalog.hlculid_watermark(ARRAY[8, 9]), pg_catalog.hlculid_watermark(ARRAY[]::int4[])",
            "SELECT * FROM hlculid.hlculid_horizon_holders",
            "SELECT * FROM pg_catalog.hlculid_clock()",
            """SELECT pg_catalog.hlculid_create_partitions('public.parts', pg_catalog.now() OPERATOR(pg_catalog.-) '3 days'::pg_catalog.interval,
                                                      pg_catalog.now() OPERATOR(pg_catalog.+) '1 day'::pg_catalog.interval, '1 day')""",
            "SELECT pg_catalog.hlculid_drop_partitions('public.parts', pg_catalog.now() OPERATOR(pg_catalog.-) '2 days'::pg_catalog.interval, true)",
            "SELECT pg_catalog.hlculid_drop_partitions('public.parts', pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::pg_catalog.interval)",
            "CALL pg_catalog.hlculid_backfill('public.legacy', 'id', 'ts', 4000, 10)",
            "SELECT pg_catalog.hlculid_generate_n(3), pg_catalog.hlculid_generate_bigint(), pg_catalog.hlculid_generate_tx()",
        ]
        for call in calls:
            su.execute(call)
        # a prepared transaction and the holders view while it holds
        su.execute("BEGIN")
        su.execute("INSERT INTO public.ev (n) VALUES (100)")
        su.execute("PREPARE TRANSACTION 'p1'")
        assert su.execute("SELECT gid FROM hlculid.hlculid_horizon_holders").fetchall() == [("p1",)]
        su.execute("COMMIT PREPARED 'p1'")
    assert c.sql("SELECT count(*) FROM public.legacy WHERE id IS NULL", dbname="victim") == [(0,)]
    assert ran(c, "victim") == []
    assert not is_superuser(c, "mallory")


def test_a_hostile_search_path_cannot_empty_the_prepared_lookup(make_cluster):
    """After a restart the first horizon call lists the prepared transactions for every session:
    a role whose own search_path puts its look-alikes before pg_catalog makes that call."""
    c = make_cluster("search-path-prepared", conf=["hlculid.publisher_id = 3",
                                                   "max_prepared_transactions = 4"]).start()
    hostile_database(c)
    c.sql("CREATE TABLE public.ev (id pg_catalog.hlculid PRIMARY KEY DEFAULT pg_catalog.hlculid_generate(), n int4)",
          dbname="victim")
    c.sql("GRANT SELECT ON public.ev TO mallory", dbname="victim")
    with c.connect(dbname="victim", autocommit=False) as p:
        a = p.execute("INSERT INTO public.ev (n) VALUES (1) RETURNING id::text").fetchone()[0]
        p.execute("PREPARE TRANSACTION 'p1'")
    c.sql("INSERT INTO public.ev (n) VALUES (2)", dbname="victim")
    c.stop()
    c.start()
    c.wait_ready()
    with c.connect(user="mallory", dbname="victim") as m:
        m.execute("SET search_path = mallory, public, pg_catalog")
        # the look-alikes are live on this path: an exact match before pg_catalog's
        m.execute("SELECT now() + interval '1 s' < now()")
        assert len(ran(c, "victim")) == 4  # now() twice, + and <
        c.sql("TRUNCATE public.ran", dbname="victim")
        m.execute("SELECT pg_catalog.hlculid_horizon()")
    assert ran(c, "victim") == []
    assert c.one("SELECT 1") == 1
    h = c.sql("SELECT pg_catalog.hlculid_horizon()::text", dbname="victim")[0][0]
    assert h <= a, "the prepared transaction does not hold the horizon"
    assert c.sql("SELECT gid FROM hlculid.hlculid_horizon_holders", dbname="victim") == [("p1",)]
    c.sql("COMMIT PREPARED 'p1'", dbname="victim")
    assert not is_superuser(c, "mallory")
