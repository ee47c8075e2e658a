"""Waits on a table Citus manages, and what the cluster horizon waits for (0.6.0, docs/citus.md,
"The worker that keeps it").

- A waiter (`hlculid_wait`, `hlculid_consumer_wait`) on the coordinator reads the table only
  after some node committed a transaction that wrote or made ids (each node's
  `hlculid_writing_commits()`, read by the worker every round) or the horizon passed a row it saw
  above it: idle, it sends the nodes no query (Citus' own counter of multi-shard queries, in the
  waiter's session), where commits to another table in the same run make it read again; a row
  committed on a worker still wakes it at once.
- `hlculid_read_below` with no bound, or one not past the position, asks no shard (the waits'
  first check raises hlculid_read's errors through it without reading).
- The cluster horizon waits for the distributed transactions that write a table, not for those
  that only read (a reader's open transaction, a consumer moving its position in hlculid's own
  table): before 0.6.0 any open distributed transaction held it for every reader."""

import threading
import time

from test_cluster_horizon import eventually, make_table


def multi_shard_queries(co):
    return co.one("SELECT query_execution_multi_shard FROM citus_stat_counters WHERE name = current_database()")


def counted_session(co):
    conn = co.connect()
    conn.execute("SET citus.enable_stat_counters = on")
    return conn


def test_an_idle_waiter_sends_no_query_until_a_node_commits_and_then_wakes_at_once(citus):
    co, (w1, _) = citus.coordinator, citus.workers
    make_table(co, "idle_waits")
    make_table(co, "idle_waits_other")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    # rows the position is past, so that the table is not empty
    co.sql("INSERT INTO idle_waits (w, n) SELECT 0, g FROM generate_series(1, 20) g")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM idle_waits)"))
    last = co.one("SELECT max(id)::text FROM idle_waits")
    got = {}

    def waiter():
        with counted_session(co) as c:
            got["ok"] = c.execute("SELECT hlculid_wait(NULL::idle_waits, %s::hlculid, '20 s')", (last,)).fetchone()[0]
            got["at"] = time.perf_counter()

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.5)  # its first checks are done
    before = multi_shard_queries(co)
    time.sleep(1.5)  # idle: the horizon moves every round, nothing commits
    idle = multi_shard_queries(co) - before
    # the control, in the same run: commits to another table (on a worker) make it read again
    before = multi_shard_queries(co)
    with w1.connect() as c:
        for k in range(30):
            c.execute("INSERT INTO idle_waits_other (w, n) VALUES (1, %s)", (k,))
            time.sleep(0.03)
    busy = multi_shard_queries(co) - before
    assert "ok" not in got, got
    # the 250 ms backstop's reads and those after the cluster's own commits (autovacuum,
    # Citus' daemons), against one read a round (hundreds in 1.5 s) before 0.6.0's gate, and
    # one read per commit of the control
    assert idle <= 25 and idle < busy, (idle, busy)
    assert busy >= 15, (idle, busy)
    w1.sql("INSERT INTO idle_waits (w, n) VALUES (2, 0)")
    committed = time.perf_counter()
    t.join(10)
    assert got.get("ok") is True, got
    assert got["at"] - committed < 0.5, got["at"] - committed
    co.sql("DROP TABLE idle_waits, idle_waits_other")


def test_a_consumer_waiting_on_a_citus_table_wakes_on_a_workers_commit_and_on_a_reset(citus):
    co, (w1, _) = citus.coordinator, citus.workers
    make_table(co, "consumer_waits")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    co.sql("SELECT hlculid_consumer_create('cw', 'consumer_waits', hlculid_cluster_horizon())")
    co.sql("INSERT INTO consumer_waits (w, n) VALUES (0, 0)")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM consumer_waits)"))
    co.sql("SELECT count(*) FROM hlculid_consume('cw', NULL::consumer_waits)")  # the position past it

    def wait_for(act):
        got = {}

        def waiter():
            with counted_session(co) as c:
                got["ok"] = c.execute("SELECT hlculid_consumer_wait('cw', '20 s')").fetchone()[0]
                got["at"] = time.perf_counter()

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.5)
        before = multi_shard_queries(co)
        time.sleep(1.0)
        idle = multi_shard_queries(co) - before
        assert "ok" not in got, got
        act()
        acted = time.perf_counter()
        t.join(10)
        assert got.get("ok") is True, got
        return idle, got["at"] - acted

    # a row committed on a worker
    idle, lag = wait_for(lambda: w1.sql("INSERT INTO consumer_waits (w, n) VALUES (1, 1)"))
    assert idle <= 20, idle  # as above: no read a round
    assert lag < 0.5, lag
    co.sql("SELECT count(*) FROM hlculid_consume('cw', NULL::consumer_waits)")
    # a reset by another session back to the start: its rows are there again
    idle, lag = wait_for(lambda: co.sql("SELECT hlculid_consumer_reset('cw', NULL)"))
    assert idle <= 20, idle
    assert lag < 0.5, lag
    co.sql("SELECT hlculid_consumer_drop('cw')")
    co.sql("DROP TABLE consumer_waits")


def test_a_read_below_a_bound_not_past_the_position_asks_no_shard(citus):
    """hlculid_read_below with no bound, or one at or below the position, returns nothing without
    a query to the shards (the waits' first check uses it to raise hlculid_read's errors only);
    with a bound past the position it reads them, in the same session."""
    co = citus.coordinator
    make_table(co, "below_reads")
    co.sql("INSERT INTO below_reads (w, n) SELECT 0, g FROM generate_series(1, 10) g")
    last = co.one("SELECT max(id)::text FROM below_reads")
    with counted_session(co) as c:
        def reads(q, *args):
            before = multi_shard_queries(co)
            n = c.execute(q, args).fetchone()[0]
            return n, multi_shard_queries(co) - before
        assert reads("SELECT count(*) FROM hlculid_read_below(NULL::below_reads, NULL, NULL, 5)") == (0, 0)
        assert reads("SELECT count(*) FROM hlculid_read_below(NULL::below_reads, %s::hlculid, %s::hlculid, 5)",
                     last, last) == (0, 0)
        assert reads("SELECT count(*) FROM hlculid_read_below(NULL::below_reads, NULL, hlculid_max(now()), 5)") == (5, 1)
    co.sql("DROP TABLE below_reads")


def test_the_cluster_horizon_waits_for_writing_distributed_transactions_only(citus):
    co = citus.coordinator
    make_table(co, "pending_reads")
    co.sql("INSERT INTO pending_reads (w, n) SELECT 0, g FROM generate_series(1, 50) g")
    co.sql("SELECT hlculid_consumer_create('pr', 'pending_reads', NULL)")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM pending_reads)"))
    reader, consumer, writer = co.connect(autocommit=False), co.connect(autocommit=False), co.connect(autocommit=False)
    try:
        # a reader's open transaction (a multi-shard read: a distributed transaction) and a
        # consumer's (its position moved in hlculid's own table), both left open
        reader.execute("SELECT count(*) FROM pending_reads").fetchone()
        read_number = reader.execute("SELECT transaction_number FROM get_current_transaction_id()").fetchone()[0]
        assert consumer.execute("SELECT count(*) FROM hlculid_consume('pr', NULL::pending_reads)").fetchone()[0] == 50
        consume_number = consumer.execute("SELECT transaction_number FROM get_current_transaction_id()").fetchone()[0]
        assert read_number != 0 and consume_number != 0
        pending = co.one("SELECT hlculid_cluster_pending()")
        assert f"transaction {read_number}" not in pending and f"transaction {consume_number}" not in pending, pending
        # the horizon passes a row committed after both began
        co.sql("INSERT INTO pending_reads (w, n) VALUES (1, 1)")
        late = co.one("SELECT max(id)::text FROM pending_reads")
        eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (late,)), timeout=5)
        # a writing distributed transaction (a multi-row insert over the shards) is listed, and
        # the horizon stops below its rows until it commits
        writer.execute("INSERT INTO pending_reads (w, n) SELECT 2, g FROM generate_series(1, 20) g")
        write_number = writer.execute("SELECT transaction_number FROM get_current_transaction_id()").fetchone()[0]
        assert f"transaction {write_number}" in co.one("SELECT hlculid_cluster_pending()")
        first = writer.execute("SELECT min(id)::text FROM pending_reads WHERE w = 2").fetchone()[0]
        time.sleep(0.3)
        h = co.one("SELECT hlculid_cluster_horizon('10 s')::text")
        assert h <= first, (h, first)
        writer.commit()
        eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (first,)), timeout=5)
    finally:
        for c in (reader, consumer, writer):
            c.rollback()
            c.close()
    co.sql("SELECT hlculid_consumer_drop('pr')")
    co.sql("DROP TABLE pending_reads")
