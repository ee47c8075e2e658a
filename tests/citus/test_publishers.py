"""Publishers on a Citus cluster: each node makes ids with its own publisher id and its own clock,
and hlculid_horizon() covers the transactions of its own node only, which is why readers of a
distributed table use the cluster horizon (docs/citus.md, "Reading on Citus";
test_cluster_horizon.py)."""

from conftest import PUBLISHERS


def test_the_coordinators_horizon_does_not_cover_a_transaction_open_on_a_worker(citus):
    co, (w1, _) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE h_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_distributed_table('h_events', 'id', shard_count => 4)")
    with w1.connect(autocommit=False) as c:
        made = c.execute("INSERT INTO h_events (n) VALUES (1) RETURNING id::text").fetchone()[0]
        assert made.split("-")[2] == f"{PUBLISHERS['worker1']:04X}"
        # worker 1's horizon is held at or below its open transaction's id...
        assert w1.one("SELECT hlculid_horizon() <= %s::hlculid", (made,))
        # ...the coordinator's, once its clock has passed that time, is not
        co.sql("SELECT hlculid_generate()")
        horizon = co.one("SELECT hlculid_horizon()::text")
        assert co.one("SELECT %s::hlculid > %s::hlculid", (horizon, made))
        assert co.one("SELECT count(*) FROM h_events WHERE id < %s::hlculid", (horizon,)) == 0
        c.commit()
    # a reader on the coordinator that read below its horizon before the commit missed the row
    assert co.one("SELECT count(*) FROM h_events WHERE id < %s::hlculid", (horizon,)) == 1
