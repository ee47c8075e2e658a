"""The Citus functions (sql/src/cluster.sql) and the commands they send to every node resolve no
name through a schema another role can write (docs/security.md, "search_path"). On every node
mallory may create in the database and in its `public` schema (what owning the database gives on
PostgreSQL 15+) and plants tests/lookalikes.py's look-alikes in `public`, in schema "postgres"
($user of the superuser) and in schema mallory. The superuser, with its default search_path,
calls the cluster functions on the coordinator; the commands they send run on every node with the
path that node's new session gets. Besides the hand lists, every node has the look-alikes
tests/lookalikes.py generates from its catalog (`arm_generated`: every function, procedure,
aggregate, operator and cast of the extension, with the distributed table's row type for
`anyelement`, and every built-in the extension's SQL calls), and the entry points run twice: on
the default path with every name qualified, and unqualified on `pg_catalog, pg_temp`."""

import time

import pytest
from lookalikes import arm_generated, is_superuser, ran

LOCAL = "SET citus.enable_ddl_propagation = off"  # each node's objects are its own


@pytest.fixture
def sp_events(citus):
    """A distributed table, made before the look-alikes are planted."""
    co = citus.coordinator
    co.sql("CREATE TABLE sp_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int4)")
    co.sql("SELECT create_distributed_table('sp_events', 'id', shard_count => 4)")
    yield "sp_events"
    co.sql("DROP TABLE sp_events")


@pytest.fixture
def hostile(citus, sp_events):
    nodes = [citus.coordinator, *citus.workers]
    try:
        for n in nodes:
            n.sql(LOCAL + "; CREATE ROLE mallory LOGIN; GRANT CREATE ON DATABASE postgres TO mallory; "
                  "GRANT CREATE ON SCHEMA public TO mallory")
            n.summary = arm_generated(n, setup=[LOCAL], rowtypes=[f"public.{sp_events}"])
        yield nodes
    finally:
        for n in nodes:
            with n.connect() as conn:
                conn.execute(LOCAL)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'mallory'").fetchone():
                    conn.execute("DROP OWNED BY mallory CASCADE")
                    conn.execute("DROP ROLE mallory")


CITUS_CALLS = [  # § marks a name the default path needs qualified (pg_catalog.)
    "SELECT §hlculid_citus_table('{t}'), §hlculid_citus_table('hlculid.hlculid_horizons')",
    "SELECT §hlculid_cluster_pending()",
    "SELECT §count(*) FROM §hlculid_cluster_pending_here()",
    "SELECT §hlculid_writing_commits() IS NOT NULL",
    "SELECT §hlculid_wait(NULL::{t}, NULL, '10 ms')",
    "SELECT §hlculid_cluster_horizon('5 s') IS NOT NULL",
    "SELECT §hlculid_cluster_horizon() IS NOT NULL",
    "SELECT §count(*) FROM §hlculid_read(NULL::{t}, NULL, 5)",
    "SELECT §count(*) FROM §hlculid_read(NULL::{t}, NULL)",
    "SELECT §count(*) FROM §hlculid_read(NULL::{t}, NULL, 5, 'id')",
    "SELECT §count(*) FROM §hlculid_read_below(NULL::{t}, NULL, §hlculid_cluster_horizon(), 5)",
    "SELECT §min(id), §max(id) FROM {t}",
    "SELECT §count(*) FROM {t} WHERE id OPERATOR(pg_catalog.<@) §tstzrange(NULL, NULL)",
]


@pytest.mark.parametrize("path", ['"$user", public', "pg_catalog, pg_temp"])
def test_the_citus_entry_points_run_nothing_planted(citus, hostile, sp_events, path):
    """The Citus entry points (and the readers on a distributed table) on the coordinator, with
    the generated look-alikes on every node: on the default path qualified, on pg_catalog's
    unqualified."""
    co = citus.coordinator
    assert all(n.summary["extension routines"] >= 100 for n in hostile)
    q = "pg_catalog." if path.startswith('"') else ""
    broke = []
    with co.connect() as su:
        su.execute(f"SET search_path = {path}")
        su.execute(f"INSERT INTO public.{sp_events} (n) SELECT g FROM pg_catalog.generate_series(1, 20) g")
        for call in CITUS_CALLS:
            sql = call.format(t=f"public.{sp_events}").replace("§", q)
            try:
                su.execute(sql).fetchall()
            except Exception as e:  # noqa: BLE001 - collected, asserted below
                broke.append((sql, getattr(e, "sqlstate", None), str(e).splitlines()[0]))
        assert su.execute(f"SELECT {q}hlculid_citus_table('public.{sp_events}')").fetchone()[0] is True
        assert su.execute(f"SELECT {q}count(*) FROM {q}hlculid_read(NULL::public.{sp_events}, NULL, 100)"
                          ).fetchone()[0] == 20
    assert broke == [], broke
    for n in hostile:
        assert ran(n) == [], (n.port, ran(n))
    assert not any(is_superuser(n, "mallory") for n in hostile)


def test_the_cluster_functions_run_nothing_a_database_owner_planted(citus, hostile, sp_events):
    co = citus.coordinator
    with co.connect() as su:
        assert su.execute("SHOW search_path").fetchone()[0] == '"$user", public'
        assert su.execute(f"SELECT pg_catalog.hlculid_citus_table('{sp_events}')").fetchone()[0] is True
        with co.connect(autocommit=False) as other:  # a distributed transaction both wait for
            other.execute(f"INSERT INTO {sp_events} (n) SELECT g FROM generate_series(1, 20) g")
            pending = su.execute("SELECT pg_catalog.hlculid_cluster_pending()").fetchone()[0]
            assert any(p.startswith("transaction ") for p in pending), pending
            time.sleep(0.1)  # the value the worker keeps stopped: older than 50 ms now
            assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon('50 ms')").fetchone()[0] is None
            other.commit()
        assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon() IS NOT NULL").fetchone()[0] is True
        assert su.execute("SELECT count(*) FROM hlculid.hlculid_cluster_nodes WHERE error IS NOT NULL").fetchone()[0] == 0
        # a prepared transaction named as Citus names its own on a worker, so the command that
        # lists them evaluates its expressions on a row (group 99: no node's, so Citus' own
        # recovery leaves it alone)
        w1 = citus.workers[0]
        node = co.one("SELECT nodeid FROM pg_dist_node WHERE nodeport = %s", (w1.port,))
        with w1.connect(autocommit=False) as p:
            p.execute("SELECT 1")
            p.execute("PREPARE TRANSACTION 'citus_99_1_1_1'")
        try:
            pending = su.execute("SELECT pg_catalog.hlculid_cluster_pending()").fetchone()[0]
            assert f"prepared {node}:citus_99_1_1_1" in pending, pending
            time.sleep(0.1)  # the value the worker keeps stopped: older than 50 ms now
            assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon('50 ms')").fetchone()[0] is None
        finally:
            w1.sql("ROLLBACK PREPARED 'citus_99_1_1_1'")
    for n in hostile:
        assert ran(n) == [], n.port
    assert not any(is_superuser(n, "mallory") for n in hostile)
