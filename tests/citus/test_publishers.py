"""Publishers on a Citus cluster: each node makes ids with its own publisher id and its own clock,
and hlculid_horizon() covers the transactions of its own node only, which is why readers of a
distributed table use the cluster horizon (docs/citus.md, "Reading on Citus";
test_cluster_horizon.py)."""

import time
from pathlib import Path

import psycopg
from conftest import PUBLISHERS
from pgcluster import read_as_server


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


def eventually(check, timeout=10, what="not within the time given"):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def refused(node, query):
    """The 55000 a query raises on a node, or None if it ran."""
    try:
        node.sql(query)
    except psycopg.errors.ObjectNotInPrerequisiteState as e:
        return e
    return None


def test_a_shared_publisher_id_is_found_named_and_the_later_node_makes_no_ids(citus):
    """Two nodes given one publisher id (docs/citus.md, "Publisher ids across the cluster"): the
    cluster horizon's worker on every node sees every node's id; within seconds the pair is in
    the log and in hlculid.hlculid_cluster_nodes on every node, the cluster horizon refuses (as in
    0.5.0), and the node that started later refuses to make ids, naming the other, until fixed.
    Before 0.6.0 both made ids without a word."""
    co, (w1, w2) = citus.coordinator, citus.workers
    n1, n2 = (co.one("SELECT nodeid FROM pg_dist_node WHERE nodeport = %s", (w.port,)) for w in (w1, w2))
    co.sql("CREATE TABLE dup_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_distributed_table('dup_events', 'id', shard_count => 4)")
    w2.sql("ALTER SYSTEM SET hlculid.publisher_id = %s" % PUBLISHERS["worker1"])
    w2.stop()
    w2.start()
    t0 = time.monotonic()
    try:
        e = eventually(lambda: refused(w2, "SELECT hlculid_generate()"), what="worker 2 kept making ids")
        found_in = time.monotonic() - t0
        assert found_in < 5, found_in
        assert f"publisher id {PUBLISHERS['worker1']} " in e.diag.message_primary
        assert f"Node {n1} (localhost:{w1.port})" in e.diag.message_hint, e.diag.message_hint
        # every way of making ids on that node, a statement of a distributed table included
        for q in ("SELECT hlculid_generate_n(3)", "SELECT hlculid_generate_tx()",
                  "INSERT INTO dup_events (n) VALUES (1)"):
            assert refused(w2, q), q
        # the node that started first goes on, and so does the coordinator
        w1.sql("INSERT INTO dup_events (n) VALUES (2)")
        co.sql("INSERT INTO dup_events (n) SELECT g FROM generate_series(1, 10) g")
        # both nodes named, on every node; the later one says it makes no ids
        for node in (co, w1, w2):
            rows = eventually(lambda: node.sql(
                "SELECT nodeid, publisher_id, shares_publisher_with FROM hlculid.hlculid_cluster_nodes "
                "WHERE shares_publisher_with IS NOT NULL ORDER BY nodeid"))
            assert rows == [(n1, PUBLISHERS["worker1"], n2), (n2, PUBLISHERS["worker1"], n1)], rows
        assert w2.sql("SELECT makes_ids FROM hlculid.hlculid_cluster_nodes WHERE nodeid = %s", (n2,)) == [(False,)]
        assert w1.sql("SELECT makes_ids FROM hlculid.hlculid_cluster_nodes WHERE nodeid = %s", (n1,)) == [(True,)]
        e = eventually(lambda: refused(co, "SELECT hlculid_cluster_horizon()"))
        assert f"publisher id {PUBLISHERS['worker1']} " in e.diag.message_primary
        assert "hlculid.publisher_id" in e.diag.message_hint
        log = read_as_server(Path(co.dir) / "server.log")
        assert (f"nodes {n1} and {n2} of the Citus cluster have the same publisher id {PUBLISHERS['worker1']}"
                in log)
    finally:
        w2.sql("ALTER SYSTEM RESET hlculid.publisher_id")
        w2.stop()
        w2.start()
    # fixed: ids again, the horizon again, no pair
    eventually(lambda: refused(w2, "SELECT hlculid_generate()") is None)
    eventually(lambda: co.sql("SELECT count(*) FROM hlculid.hlculid_cluster_nodes WHERE shares_publisher_with IS NOT NULL") == [(0,)])
    eventually(lambda: refused(co, "SELECT hlculid_cluster_horizon()") is None
               and co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    co.sql("DROP TABLE dup_events")


def test_a_database_setting_does_not_change_the_start_times_the_worker_reads(citus):
    """Which of two nodes sharing a publisher id started later is told by their start times,
    which the worker read as float text: a database owner's `ALTER DATABASE ... SET
    extra_float_digits = -15` rounded them to two digits on the worker's connections (the 0.6.0
    review), so the node that started first could be the one refused. They are read as integer
    microseconds now: exact under any setting."""
    co, (_, w2) = citus.coordinator, citus.workers
    n2 = co.one("SELECT nodeid FROM pg_dist_node WHERE nodeport = %s", (w2.port,))
    db = co.one("SELECT current_database()")
    co.sql(f'ALTER DATABASE "{db}" SET extra_float_digits = -15')  # Citus propagates it
    try:
        assert w2.sql(f'SELECT 1 FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase '
                      f"WHERE d.datname = '{db}' AND 'extra_float_digits=-15' = ANY (s.setconfig)") == [(1,)]
        w2.stop()  # every worker connects to it again, with the setting
        w2.start()
        started = w2.one("SELECT pg_postmaster_start_time()")
        for node in (co, w2):
            eventually(lambda: node.sql("SELECT started FROM hlculid.hlculid_cluster_nodes WHERE nodeid = %s",
                                        (n2,)) == [(started,)],
                       what=f"node {n2}'s start time as read from {node.port}")
    finally:
        co.sql(f'ALTER DATABASE "{db}" RESET extra_float_digits')


def test_a_node_added_with_a_lagging_clock_makes_no_id_below_the_published_horizon(citus):
    """A node added to the cluster whose clock is behind the others' (here 2 s, by libfaketime;
    its hlculid.max_clock_skew 10 s) would make ids below the horizon readers already passed,
    and a row it inserts later would be missed (the third review of 0.6.0). The worker has every
    node observe the published horizon each round: once the new node is in its rounds (it lists
    the nodes every second), the node's ids are above what was published. A plain node of the
    same lag, not added, is the contrast: its ids are below."""
    from pgcluster import Cluster, citus_node_conf
    from test_cluster_horizon import eventually
    co = citus.coordinator
    nodes = []
    try:
        for name in ("lagging", "alone"):
            n = Cluster(f"citus-{name}", preload=False, faketime=True, fsync=False, major=co.major,
                        conf=citus_node_conf(44 if name == "lagging" else 45) + ["hlculid.max_clock_skew = '10s'"])
            n.set_clock("-2")
            nodes.append(n.start())
            n.sql("CREATE EXTENSION citus")
        lagging, alone = nodes
        eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
        co.sql("SELECT citus_add_node('localhost', %s)", (lagging.port,))
        # the worker lists it (within a second) and a round has it observe the horizon
        eventually(lambda: co.one("SELECT count(*) FROM hlculid_cluster_nodes() WHERE nodeport = %s AND error IS NULL "
                                       "AND answered IS NOT NULL", (lagging.port,)) == 1, timeout=10)
        published = co.one("SELECT hlculid_cluster_horizon()::text")
        for _ in range(10):  # rounds after it was published (a reader's call makes them fast)
            co.one("SELECT hlculid_cluster_horizon()")
            time.sleep(0.01)
        made = lagging.one("SELECT hlculid_generate()::text")
        assert made > published, (made, published)
        alone.sql("CREATE EXTENSION hlculid")
        assert alone.one("SELECT hlculid_generate()::text") < published  # the same clock, not observed
    finally:
        if nodes:
            co.sql("SELECT citus_remove_node('localhost', %s) FROM pg_dist_node WHERE nodeport = %s",
                   (nodes[0].port, nodes[0].port))
        for n in nodes:
            n.stop("immediate")

