"""A shard of a table keyed on hlculid moved between workers (block_writes) while a session
inserts: every committed row is there afterwards, once."""

import threading
import time

from conftest import shard_tables


def test_shard_move_under_concurrent_inserts_keeps_every_row(citus):
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE m_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), writer int, n int)")
    co.sql("SELECT create_distributed_table('m_events', 'id', shard_count => 4)")
    co.sql("INSERT INTO m_events (writer, n) SELECT 0, g FROM generate_series(1, 2000) g")

    committed = [0, 0]
    errors = []
    stop = threading.Event()

    def writer(k):
        try:
            with co.connect() as c:
                n = 0
                while not stop.is_set():
                    # single rows and small batches, each its own transaction
                    c.execute("INSERT INTO m_events (writer, n) SELECT %s, %s + g FROM generate_series(0, 9) g",
                              (k + 1, n))
                    n += 10
                    committed[k] = n
        except Exception as e:  # noqa: BLE001 (any failure fails the test below)
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,), name=f"writer-{k + 1}") for k in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        shard = co.sql("SELECT shardid FROM citus_shards WHERE table_name = 'm_events'::regclass"
                               " AND nodeport = %s ORDER BY shardid LIMIT 1", (w1.port,))[0][0]
        at_start = sum(committed)
        co.sql("SELECT citus_move_shard_placement(%s, 'localhost', %s, 'localhost', %s,"
               " shard_transfer_mode => 'block_writes')", (shard, w1.port, w2.port))
        # the writers went on through the move
        deadline = time.time() + 30
        while sum(committed) <= at_start + 100 and time.time() < deadline and not errors:
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert not errors, errors
    assert sum(committed) > at_start + 100
    assert co.one("SELECT nodeport FROM citus_shards WHERE shardid = %s", (shard,)) == w2.port
    # the old placement is dropped later (deferred cleanup), or now on request
    co.sql("CALL citus_cleanup_orphaned_resources()")
    assert shard_tables(w1, f"m_events_{shard}") == []
    assert shard_tables(w2, f"m_events_{shard}") == [f"m_events_{shard}"]
    got = dict(co.sql("SELECT writer, count(*) FROM m_events GROUP BY writer"))
    assert got == {0: 2000, 1: committed[0], 2: committed[1]}
    assert co.one("SELECT count(DISTINCT id) FROM m_events") == 2000 + sum(committed)
    # each writer's rows in its order: n increases with id
    for k in (1, 2):
        assert co.one("SELECT bool_and(n > prev) FROM (SELECT n, lag(n) OVER (ORDER BY id) AS prev"
                      " FROM m_events WHERE writer = %s) s WHERE prev IS NOT NULL", (k,))
    # the moved shard answers router queries at its new place
    some = co.one("SELECT id::text FROM m_events WHERE get_shard_id_for_distribution_column('m_events', id) = %s"
                  " LIMIT 1", (shard,))
    assert co.one("SELECT count(*) FROM m_events WHERE id = %s::hlculid", (some,)) == 1


def test_the_rebalancer_under_concurrent_inserts_keeps_every_row_and_a_reader_loses_none(citus):
    """Every shard moved to worker 1, then rebalance_table_shards (block_writes) while two
    sessions insert and a reader reads by the cluster horizon (hlculid_read)."""
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE rb_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), writer int, n int)")
    co.sql("SELECT create_distributed_table('rb_events', 'id', shard_count => 8)")
    for (shard,) in co.sql("SELECT shardid FROM citus_shards WHERE table_name = 'rb_events'::regclass AND nodeport = %s",
                           (w2.port,)):
        co.sql("SELECT citus_move_shard_placement(%s, 'localhost', %s, 'localhost', %s,"
               " shard_transfer_mode => 'block_writes')", (shard, w2.port, w1.port))
    co.sql("CALL citus_cleanup_orphaned_resources()")
    assert co.one("SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'rb_events'::regclass") == 1
    committed, errors, seen = [0, 0], [], []
    stop, stop_reader = threading.Event(), threading.Event()

    def writer(k):
        try:
            with co.connect() as c:
                while not stop.is_set():
                    c.execute("INSERT INTO rb_events (writer, n) SELECT %s, g FROM generate_series(1, 5) g", (k + 1,))
                    committed[k] += 5
        except Exception as e:  # noqa: BLE001 (any failure fails the test below)
            errors.append(e)

    def reader():
        last = None
        try:
            with co.connect() as c:
                while True:
                    stopping = stop_reader.is_set()
                    rows = [r[0] for r in c.execute("SELECT id::text FROM hlculid_read(NULL::rb_events, %s::hlculid, 5000)",
                                                    (last,)).fetchall()]
                    seen.extend(rows)
                    if rows:
                        last = rows[-1]
                    elif stopping:
                        return
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        co.sql("SELECT rebalance_table_shards('rb_events', shard_transfer_mode => 'block_writes')")
        time.sleep(1.0)
    finally:
        stop.set()
        for t in threads[:2]:
            t.join(60)
        # the reader stops at its first empty poll once the cluster horizon, which its worker
        # publishes a few milliseconds after the fact, has passed the last commit
        last_id = co.one("SELECT max(id)::text FROM rb_events")
        deadline = time.monotonic() + 30
        while not co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (last_id,)):
            assert time.monotonic() < deadline, "the cluster horizon did not pass the last commit"
            time.sleep(0.02)
        stop_reader.set()
        threads[2].join(120)
    assert not errors, errors
    ports = dict(co.sql("SELECT nodeport, count(*) FROM citus_shards WHERE table_name = 'rb_events'::regclass GROUP BY 1"))
    assert ports == {w1.port: 4, w2.port: 4}, ports
    got = dict(co.sql("SELECT writer, count(*) FROM rb_events GROUP BY writer"))
    assert got == {1: committed[0], 2: committed[1]}
    ids = {r[0] for r in co.sql("SELECT id::text FROM rb_events")}
    assert len(ids) == sum(committed)
    assert len(seen) == len(set(seen)) and set(seen) == ids
