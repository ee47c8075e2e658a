"""hlculid_backfill against real servers: a million-row bigserial table converted while another
session inserts with the DEFAULT, rows changed by another session during a pass, and two runs at
once. Inputs and semantics one session can show are in tests/pg_regress/sql/backfill.sql."""

import threading
import time

import psycopg

from pgcluster import FULL, PG, by_tier

PUBLISHER = 42  # the server's own, for live ids
BACKFILL = 65000  # the backfill's
# ids unique without their random bits: every (time, counter, publisher) once
FIELDS_DISTINCT = "SELECT count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) FROM orders"


def setup(c, rows, batch_rows="1"):
    """An orders table keyed by bigserial, with duplicate and out-of-order times (each row within
    2 s of its place, microseconds apart, several per millisecond), an hlculid column with the
    DEFAULT for new rows and a unique index on it, as README's conversion steps make it."""
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")
    c.sql("CREATE TABLE orders (old_id bigserial PRIMARY KEY, created_at timestamptz NOT NULL, note text)")
    c.sql(f"""INSERT INTO orders (created_at, note)
              SELECT timestamptz '2024-01-01 00:00:00+00' + (i / 3) * interval '1 ms'
                     + ((i * 7919) % 2000) * interval '1 ms' + ((i * 31) % 1000) * interval '1 us', 'x'
              FROM generate_series(1::int8, {rows}) i""")
    c.sql("ALTER TABLE orders ADD COLUMN id hlculid")
    c.sql("ALTER TABLE orders ALTER COLUMN id SET DEFAULT hlculid_generate()")
    c.sql("CREATE UNIQUE INDEX CONCURRENTLY orders_id_key ON orders (id)")


def notices_of(conn):
    seen = []
    conn.add_notice_handler(lambda d: seen.append(d.message_primary))
    return seen


# make test-full: a million rows on the oldest and the newest major; 200,000 (the same
# four-batch-plus code paths) on the two between, where the size adds only time. make test: 60,000
# rows in batches of 10,000, the same code paths again.
ROWS = by_tier(60_000, 1_000_000 if PG in ("15", "18") else 200_000)
BATCH = 50_000 if FULL else 10_000


def test_a_million_rows_converted_while_another_session_inserts(make_cluster):
    c = make_cluster("backfill-1m", conf=[f"hlculid.publisher_id = {PUBLISHER}"]).start()
    setup(c, ROWS)
    assert c.one("SELECT count(DISTINCT created_at) < count(*) FROM orders")  # duplicate times
    assert c.one(f"""SELECT count(*) > {ROWS // 10} FROM (SELECT created_at < lag(created_at) OVER (ORDER BY old_id) AS back
                    FROM orders) s WHERE back""")  # out of order

    stop = threading.Event()
    started = threading.Event()
    inserted, latencies, lock_modes, errors = [], [], set(), []
    conn = c.connect()
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]

    def insert_live():
        try:
            with c.connect() as ins:
                while not stop.is_set():
                    t0 = time.monotonic()
                    row = ins.execute("INSERT INTO orders (created_at, note) VALUES (now(), 'live')"
                                      " RETURNING old_id, id::text").fetchone()
                    if started.is_set():
                        latencies.append(time.monotonic() - t0)
                        inserted.append(row)
                    time.sleep(0.01)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    def watch_locks():
        try:
            with c.connect() as w:
                while not stop.is_set():
                    for (mode,) in w.execute("SELECT mode FROM pg_locks WHERE pid = %s AND locktype = 'relation'"
                                             " AND relation = 'orders'::regclass",
                                             (pid,)).fetchall():
                        lock_modes.add(mode)
                    time.sleep(0.05)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=insert_live), threading.Thread(target=watch_locks)]
    for t in threads:
        t.start()
    notices = notices_of(conn)
    started.set()
    t0 = time.monotonic()
    conn.execute("CALL hlculid_backfill('orders', 'id', 'created_at', %s, %s)", (BACKFILL, BATCH))
    elapsed = time.monotonic() - t0
    started.clear()
    stop.set()
    for t in threads:
        t.join()
    conn.close()
    assert not errors
    assert notices == [f'hlculid_backfill filled {ROWS} rows of table "public.orders" in {ROWS // BATCH} batches']

    # every row has an id, all distinct
    total, with_id, distinct = c.sql("SELECT count(*), count(id), count(DISTINCT id) FROM orders")[0]
    assert total == with_id == distinct
    assert c.one(FIELDS_DISTINCT) == total
    # the backfilled rows: the backfill's publisher, their own millisecond, and ORDER BY id is
    # ORDER BY created_at, old_id
    n, right_ms = c.sql(f"""SELECT count(*), count(*) FILTER (WHERE hlculid_ts(id) = date_trunc('milliseconds', created_at))
                            FROM orders WHERE hlculid_publisher(id) = {BACKFILL}""")[0]
    assert n == right_ms == ROWS
    assert c.one(f"""SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY created_at, old_id) AS prev
                     FROM orders WHERE hlculid_publisher(id) = {BACKFILL}) s WHERE prev >= id""") == 0
    # the rows inserted meanwhile kept their live ids
    assert inserted, "the other session never inserted during the backfill"
    stored = dict(c.sql(f"SELECT old_id, id::text FROM orders WHERE hlculid_publisher(id) = {PUBLISHER}"))
    assert all(stored[k] == v for k, v in inserted)
    # no lock on the whole table held across batches: the backfill only ever held the locks of
    # reading, of row updates, and (0.5.0) SHARE UPDATE EXCLUSIVE, which serialises backfills of one
    # table and conflicts with no writer's ROW EXCLUSIVE; and no insert waited for the whole run (a property
    # of the locks, not of the machine's speed: on a loaded 2-core machine one insert may wait a
    # batch's time for the CPU, so no bound tighter than the run is asserted)
    assert max(latencies) < elapsed, (max(latencies), elapsed)
    assert "RowExclusiveLock" in lock_modes and lock_modes <= {"AccessShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock"}, lock_modes


def test_rows_changed_during_a_pass_are_filled_by_the_next(make_cluster):
    c = make_cluster("backfill-moved").start()
    setup(c, 30_000)
    conn = c.connect()
    notices = notices_of(conn)
    done = threading.Event()

    def backfill():
        conn.execute("CALL hlculid_backfill('orders', 'id', 'created_at', %s, 500)", (BACKFILL,))
        done.set()

    t = threading.Thread(target=backfill)
    t.start()
    # once the first batch is in (the rows' order is taken by then), another session moves the
    # 100 rows that come last, which the backfill reaches only in its last batch
    while c.one("SELECT count(id) FROM orders") == 0:
        assert not done.is_set()
        time.sleep(0.01)
    moved = c.sql("""UPDATE orders SET note = 'moved' WHERE old_id IN (
                         SELECT old_id FROM orders ORDER BY created_at DESC, old_id DESC LIMIT 100)
                     AND id IS NULL RETURNING old_id""")
    t.join()
    conn.close()
    assert len(moved) == 100, "the backfill reached the last rows before they were moved"
    assert notices == ['hlculid_backfill filled 30000 rows of table "public.orders" in 61 batches']
    total, with_id, distinct, right_ms = c.sql(
        """SELECT count(*), count(id), count(DISTINCT id),
                  count(*) FILTER (WHERE hlculid_ts(id) = date_trunc('milliseconds', created_at))
           FROM orders""")[0]
    assert total == with_id == distinct == right_ms == 30_000
    assert c.one(FIELDS_DISTINCT) == 30_000


def test_two_runs_at_once_never_give_one_id_twice(make_cluster):
    """Two runs at once, interleaved on purpose (not left to the scheduler): both have read their
    rows and wait for the lock that serialises batches; the second also has rows the first never
    saw, in the very milliseconds the first fills. The first fills its rows; the second, after it,
    finds the first's rows taken and fills its own rows above the first's ids of each millisecond
    (it read the largest ids under the lock): every id once."""
    c = make_cluster("backfill-twice").start()
    rows = 20_000
    setup(c, rows)
    notices, errors = [], []

    def waiting():  # runs waiting for the table's SHARE UPDATE EXCLUSIVE lock (0.5.0; 0.4.0: advisory)
        return c.one("""SELECT count(*) FROM pg_locks WHERE locktype = 'relation'
                        AND relation = 'orders'::regclass AND mode = 'ShareUpdateExclusiveLock' AND NOT granted""")

    def wait_for(n):
        deadline = time.monotonic() + 60
        while waiting() < n:
            assert time.monotonic() < deadline and not errors, errors
            time.sleep(0.02)

    def backfill():
        try:
            with c.connect() as conn:
                conn.add_notice_handler(lambda d: notices.append(d.message_primary))
                # one batch each: every row of its pass read before it waits for the lock
                conn.execute("CALL hlculid_backfill('orders', 'id', 'created_at', %s, 100000)", (BACKFILL,))
        except Exception as e:
            errors.append(e)

    with c.connect() as holder:
        with holder.transaction():
            holder.execute("LOCK TABLE orders IN SHARE UPDATE EXCLUSIVE MODE")
            first = threading.Thread(target=backfill)
            first.start()
            wait_for(1)
            # rows the first run's pass never saw, with the times (so the milliseconds) of its rows
            c.sql("INSERT INTO orders (created_at, note, id) SELECT created_at, 'second', NULL FROM orders")
            second = threading.Thread(target=backfill)
            second.start()
            wait_for(2)
        # (the commit releases the lock) the lock's queue is first come, first served: the first
        # run's batch, then the second's
    for t in (first, second):
        t.join()
    assert not errors
    assert notices == [f'hlculid_backfill filled {rows} rows of table "public.orders" in 1 batches'] * 2, notices
    total, with_id, distinct = c.sql("SELECT count(*), count(id), count(DISTINCT id) FROM orders")[0]
    assert total == with_id == distinct == 2 * rows
    assert c.one(FIELDS_DISTINCT) == 2 * rows
    assert c.one(f"SELECT bool_and(hlculid_publisher(id) = {BACKFILL}) FROM orders")
    # each of the second run's ids sorts after every id the first run gave in its millisecond
    shared, above = c.sql("""SELECT count(*), count(*) FILTER (WHERE s.id > f.mx)
                             FROM orders s JOIN (SELECT hlculid_ts(id) AS ms, max(id) AS mx FROM orders
                                                 WHERE note <> 'second' GROUP BY 1) f ON f.ms = hlculid_ts(s.id)
                             WHERE s.note = 'second'""")[0]
    assert shared == above == rows, (shared, above)
