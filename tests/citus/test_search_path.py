"""The Citus functions (sql/src/cluster.sql) and the commands they send to every node resolve no
name through a schema another role can write (docs/security.md, "search_path"). On every node
mallory may create in the database and in its `public` schema (what owning the database gives on
PostgreSQL 15+) and plants tests/lookalikes.py's look-alikes in `public`, in schema "postgres"
($user of the superuser) and in schema mallory. The superuser, with its default search_path,
calls the cluster functions on the coordinator; the commands they send run on every node with the
path that node's new session gets."""

import pytest
from lookalikes import arm, is_superuser, ran

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
            arm(n, setup=[LOCAL])
        yield nodes
    finally:
        for n in nodes:
            with n.connect() as conn:
                conn.execute(LOCAL)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'mallory'").fetchone():
                    conn.execute("DROP OWNED BY mallory CASCADE")
                    conn.execute("DROP ROLE mallory")


def test_the_cluster_functions_run_nothing_a_database_owner_planted(citus, hostile, sp_events):
    co = citus.coordinator
    with co.connect() as su:
        assert su.execute("SHOW search_path").fetchone()[0] == '"$user", public'
        assert su.execute(f"SELECT pg_catalog.hlculid_citus_table('{sp_events}')").fetchone()[0] is True
        with co.connect(autocommit=False) as other:  # a distributed transaction both wait for
            other.execute(f"INSERT INTO {sp_events} (n) SELECT g FROM generate_series(1, 20) g")
            pending = su.execute("SELECT pg_catalog.hlculid_cluster_pending()").fetchone()[0]
            assert any(p.startswith("transaction ") for p in pending), pending
            assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon('50 ms')").fetchone()[0] is None
            other.commit()
        assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon() IS NOT NULL").fetchone()[0] is True
        # a prepared transaction named like Citus' on a worker, so the command that lists them
        # evaluates its expressions on a row (a name Citus' own recovery does not parse)
        w1 = citus.workers[0]
        node = co.one("SELECT nodeid FROM pg_dist_node WHERE nodeport = %s", (w1.port,))
        with w1.connect(autocommit=False) as p:
            p.execute("SELECT 1")
            p.execute("PREPARE TRANSACTION 'citus_hlculid_sp'")
        try:
            pending = su.execute("SELECT pg_catalog.hlculid_cluster_pending()").fetchone()[0]
            assert f"prepared {node}:citus_hlculid_sp" in pending, pending
            assert su.execute("SELECT pg_catalog.hlculid_cluster_horizon('50 ms')").fetchone()[0] is None
        finally:
            w1.sql("ROLLBACK PREPARED 'citus_hlculid_sp'")
    for n in hostile:
        assert ran(n) == [], n.port
    assert not any(is_superuser(n, "mallory") for n in hostile)
