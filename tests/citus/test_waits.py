"""Waits on a table Citus manages, and what the cluster horizon waits for (0.6.0, docs/citus.md,
"The worker that keeps it").

- A waiter (`hlculid_wait`, `hlculid_consumer_wait`) on the coordinator reads the table only
  after some node committed a transaction that wrote anything (each node's
  `hlculid_writing_commits()`, read by the worker every round) or the horizon passed a row it saw
  above it: idle, it sends the nodes no query (Citus' own counter of multi-shard queries, in the
  waiter's session), where commits to another table in the same run make it read again; a row
  committed on a worker still wakes it at once.
- A consumer whose check saw a row above the horizon is ready when the horizon passes it,
  without reading the shards again, unless its position moved meanwhile.
- `hlculid_read_below` with no bound, or one not past the position, asks no shard (the waits'
  first check raises hlculid_read's errors through it without reading).
- hlculid's own reads of a Citus table (`hlculid_read`, `hlculid_consume`, `hlculid_read_key`,
  the waits' checks) open no distributed transaction: a reader's or a consumer's transaction
  left open after them holds no cluster horizon, where a plain multi-shard SELECT in a
  transaction block does (the same run); a wait in a transaction block wakes on a commit.
- The cluster horizon waits for every open distributed transaction, one that only read so far
  too: an id made by a part on another node that was killed early is shown only by it (the
  0.6.0 security review); a role with the id column's privilege only gets 42501 from a wait as
  from the read."""

import threading
import time

import psycopg
import pytest
from conftest import PUBLISHERS
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


def test_a_consumer_woken_by_the_horizon_passing_a_row_it_saw_reads_no_shard_unless_moved(citus):
    """A consumer whose check saw a committed row above the horizon (a transaction that made an
    id earlier holds it) is ready when the horizon passes that row, without reading every shard
    again; but not when its position was moved past the row meanwhile (another session's reset,
    in the holding transaction itself, so that both show in one round): then it reads, finds
    nothing, and times out."""
    co, (w1, _) = citus.coordinator, citus.workers
    make_table(co, "seen_rows")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    co.sql("SELECT hlculid_consumer_create('sr', 'seen_rows', hlculid_cluster_horizon())")

    def hidden_row(holder):
        holder.execute("SELECT hlculid_generate()")  # holds the horizon below what follows
        row = w1.one("INSERT INTO seen_rows (w, n) VALUES (1, 0) RETURNING id::text")
        time.sleep(0.3)
        assert not co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (row,))
        return row

    def waiter(got, timeout):
        with counted_session(co) as c:
            got["ok"] = c.execute("SELECT hlculid_consumer_wait('sr', %s::interval)", (timeout,)).fetchone()[0]
            got["at"] = time.perf_counter()

    # the horizon passes the row it saw: ready, and no multi-shard query since its last read
    holder = co.connect(autocommit=False)
    hidden_row(holder)
    got = {}
    t = threading.Thread(target=waiter, args=(got, "20 s"))
    t.start()
    time.sleep(0.6)
    # just after a backstop read (every 250 ms), so that none falls in what follows
    last = multi_shard_queries(co)
    deadline = time.monotonic() + 2
    while multi_shard_queries(co) == last and time.monotonic() < deadline:
        time.sleep(0.002)
    before = multi_shard_queries(co)
    holder.rollback()
    ended = time.perf_counter()
    t.join(10)
    assert got.get("ok") is True, got
    assert got["at"] - ended < 0.2, got["at"] - ended
    assert multi_shard_queries(co) - before == 0
    assert co.one("SELECT count(*) FROM hlculid_consume('sr', NULL::seen_rows)") == 1
    holder.rollback()

    # the position moved past the row in the transaction that held it: not ready, at the timeout
    row = hidden_row(holder)
    got = {}
    t = threading.Thread(target=waiter, args=(got, "2 s"))
    t.start()
    time.sleep(0.6)
    holder.execute("SELECT hlculid_consumer_reset('sr', %s::hlculid)", (row,))
    holder.commit()
    holder.close()
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (row,)), timeout=5)
    t.join(10)
    assert got.get("ok") is False, got
    co.sql("SELECT hlculid_consumer_drop('sr')")
    co.sql("DROP TABLE seen_rows")


def test_a_consumer_gets_a_due_retry_while_the_cluster_horizon_is_held(citus):
    """A retry falls due while the worker publishes no horizon a reader may use (an idle
    distributed transaction holds it past the 10 s `max_wait`): hlculid_consume returns retries
    without a horizon, so the wait returns true when it falls due (it used to spin until its
    timeout: the 0.6.0 review), also when no horizon was published when the wait began (the
    fourth review)."""
    co, (w1, _) = citus.coordinator, citus.workers
    make_table(co, "retry_waits")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    co.sql("SELECT hlculid_consumer_create('rw', 'retry_waits', hlculid_cluster_horizon())")
    row = w1.one("INSERT INTO retry_waits (w, n) VALUES (1, 0) RETURNING id::text")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (row,)))
    with co.connect(autocommit=False) as c:
        assert [r[0] for r in c.execute("SELECT id::text FROM hlculid_consume('rw', NULL::retry_waits)")] == [row]
        c.execute("SELECT hlculid_consume_retry('rw', %s::hlculid, '12 s')", (row,))
        c.commit()
    due = time.monotonic() + 12
    holder = co.connect(autocommit=False)
    got = {}

    def waiter():
        with co.connect() as c:
            got["ok"] = c.execute("SELECT hlculid_consumer_wait('rw', '17 s')").fetchone()[0]
            got["at"] = time.monotonic()

    try:
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.5)  # its first check read the table with the horizon fresh
        holder.execute("SELECT count(*) FROM retry_waits")  # a distributed transaction, left open
        t.join(20)
        assert got.get("ok") is True, got
        assert got["at"] - due < 1.5, got["at"] - due
        assert co.one("SELECT hlculid_cluster_horizon() IS NULL")  # none a reader may use
        # a wait that begins with no horizon published, and a retry due in a second
        with co.connect(autocommit=False) as c:
            assert [r[0] for r in c.execute("SELECT id::text FROM hlculid_consume('rw', NULL::retry_waits)")] == [row]
            c.execute("SELECT hlculid_consume_retry('rw', %s::hlculid, '1 s')", (row,))
            c.commit()
        due = time.monotonic() + 1
        got.clear()
        t = threading.Thread(target=waiter)
        t.start()
        t.join(20)
        assert got.get("ok") is True, got
        assert got["at"] - due < 1.0, got["at"] - due
    finally:
        holder.rollback()
        holder.close()
    co.sql("SELECT hlculid_consumer_drop('rw')")
    co.sql("DROP TABLE retry_waits")


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


def shard_port(co, table, key):
    return co.one("SELECT p.nodeport FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid) "
                  "WHERE s.logicalrelid = %s::regclass AND s.shardid = get_shard_id_for_distribution_column(%s, %s)",
                  (table, table, key))


def test_ids_of_a_part_that_ended_early_hold_the_horizon_while_its_transaction_runs(citus):
    """A distributed transaction's part on worker 1 makes an id and is killed while the
    transaction goes on (idle in transaction: a timeout a database owner may set, an OOM kill):
    its node no longer holds the id, and only the initiator's open transaction, which only read
    so far, shows that a row may still come. The horizon stays below the id until that
    transaction commits the row on worker 2 (the security review of 0.6.0 found a rule that
    listed only writing transactions passing it)."""
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE early_src (k int, v int)")
    co.sql("SELECT create_distributed_table('early_src', 'k', shard_count => 4)")
    co.sql("CREATE TABLE early_dst (k int, id hlculid, PRIMARY KEY (k, id))")
    co.sql("SELECT create_distributed_table('early_dst', 'k', shard_count => 4)")
    co.sql("INSERT INTO early_src SELECT g, g FROM generate_series(1, 20) g")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() IS NOT NULL"))
    ka = next(k for k in range(1, 21) if shard_port(co, "early_src", k) == w1.port)
    kb = next(k for k in range(1, 21) if shard_port(co, "early_dst", k) == w2.port)
    t = co.connect(autocommit=False)
    try:
        x, publisher = t.execute("SELECT g::text, hlculid_publisher(g) FROM "
                                 "(SELECT hlculid_generate() g FROM early_src WHERE k = %s) s", (ka,)).fetchone()
        assert publisher == PUBLISHERS["worker1"]  # made on worker 1, in the transaction's part there
        parts = [r[0] for r in w1.sql("SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' "
                                      "AND query LIKE '%%hlculid_generate%%'")]
        assert parts
        for pid in parts:
            w1.sql("SELECT pg_terminate_backend(%s::int4)", (pid,))
        time.sleep(0.5)
        assert not co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (x,))
        t.execute("INSERT INTO early_dst (k, id) VALUES (%s, %s::hlculid)", (kb, x))
        t.commit()
    finally:
        t.close()
    assert co.one("SELECT count(*) FROM early_dst WHERE id = %s::hlculid", (x,)) == 1
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (x,)), timeout=5)
    co.sql("DROP TABLE early_src, early_dst")


def test_a_wait_raises_what_the_read_raises_for_a_role_with_column_privileges_only(citus):
    """A role that may read the id column but not the whole row: hlculid_read raises 42501
    (it reads every column), and so do hlculid_wait and hlculid_read_below with no bound, which
    read nothing."""
    co = citus.coordinator
    make_table(co, "column_grants")
    co.sql("CREATE ROLE column_reader LOGIN")
    try:
        co.sql("GRANT SELECT (id) ON column_grants TO column_reader")
        co.sql("INSERT INTO column_grants (w, n) VALUES (0, 0)")
        eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM column_grants)"))
        for q in ("SELECT count(*) FROM hlculid_read(NULL::column_grants, NULL)",
                  "SELECT hlculid_wait(NULL::column_grants, NULL, '1 s')",
                  "SELECT count(*) FROM hlculid_read_below(NULL::column_grants, NULL, NULL)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                co.sql(q, user="column_reader")
    finally:
        co.sql("DROP TABLE column_grants")
        co.sql("DROP ROLE column_reader")


def test_a_readers_open_transaction_holds_no_cluster_horizon_where_a_plain_select_does(citus):
    """hlculid's reads send their shard queries outside transaction blocks (READ_OUTSIDE_BLOCKS,
    src/horizon/cluster.rs): a transaction that read through them and stays open (a consumer
    handling its batch) is no distributed transaction, so the cluster horizon passes a row
    committed meanwhile. A plain multi-shard SELECT in a transaction block (Citus' default sends
    BEGIN to the workers) holds it until it ends: the contrast, in the same run."""
    co = citus.coordinator
    make_table(co, "open_readers")
    co.sql("CREATE TABLE open_tenants (tenant_id int, id hlculid DEFAULT hlculid_generate(), "
           "PRIMARY KEY (tenant_id, id))")
    co.sql("SELECT create_distributed_table('open_tenants', 'tenant_id', shard_count => 4)")
    co.sql("INSERT INTO open_readers (w, n) VALUES (0, 0)")
    co.sql("INSERT INTO open_tenants (tenant_id) VALUES (3)")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM open_readers)"))
    co.sql("SELECT hlculid_consumer_create('open_c', 'open_readers')")

    def passes_while_open(statement):
        """Whether the cluster horizon passes a row committed while a transaction that ran
        `statement` stays open."""
        t = co.connect(autocommit=False)
        try:
            t.execute(statement).fetchall()
            x = co.one("INSERT INTO open_readers (w, n) VALUES (1, 1) RETURNING id::text")
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                if co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (x,)):
                    return True
                time.sleep(0.02)
            return False
        finally:
            t.rollback()
            t.close()

    for statement in ("SELECT * FROM hlculid_read(NULL::open_readers, NULL)",
                      "SELECT * FROM hlculid_consume('open_c', NULL::open_readers)",
                      "SELECT * FROM hlculid_read_key(NULL::open_tenants, 'tenant_id', 3, NULL)",
                      "SELECT hlculid_wait(NULL::open_readers, NULL, '0 s')",
                      "SELECT hlculid_consumer_wait('open_c', '0 s')",
                      "SELECT hlculid_consumer_create('open_c2', 'open_readers')"):
        assert passes_while_open(statement), statement
    # the naive read holds it (and the horizon moves again once it ended)
    assert not passes_while_open("SELECT count(*) FROM open_readers")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM open_readers)"))
    co.sql("SELECT hlculid_consumer_drop('open_c')")
    co.sql("DROP TABLE open_readers, open_tenants")


def test_a_wait_in_a_transaction_block_wakes_on_a_commit(citus):
    """A wait called after BEGIN: its checks read the shards without making its transaction a
    distributed one, which the horizon would wait for, and so the waiter for itself."""
    co, (w1, _) = citus.coordinator, citus.workers
    make_table(co, "block_waits")
    co.sql("INSERT INTO block_waits (w, n) VALUES (0, 0)")
    co.sql("SELECT hlculid_consumer_create('block_c', 'block_waits')")
    for wait in ("SELECT hlculid_wait(NULL::block_waits, %s::hlculid, '8 s')",
                 "SELECT hlculid_consumer_wait('block_c', '8 s')"):
        # every row read, the consumer past them all
        eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM block_waits)"))
        last = co.one("SELECT max(id)::text FROM block_waits")
        co.sql("SELECT hlculid_consumer_reset('block_c', %s::hlculid)", (last,))
        wait = wait.replace("%s", f"'{last}'")
        got = {}

        def waiter():
            with co.connect(autocommit=False) as c:
                got["ok"] = c.execute(wait).fetchone()[0]
                got["at"] = time.perf_counter()
                c.rollback()

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.5)  # its first check is done
        assert "ok" not in got, got
        w1.sql("INSERT INTO block_waits (w, n) VALUES (1, 1)")
        committed = time.perf_counter()
        t.join(15)
        assert got.get("ok") is True, (wait, got)
        assert got["at"] - committed < 1, (wait, got["at"] - committed)
    co.sql("SELECT hlculid_consumer_drop('block_c')")
    co.sql("DROP TABLE block_waits")
