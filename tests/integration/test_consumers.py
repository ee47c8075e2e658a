"""Subscriptions (0.6.0, issue 39): hlculid_wait and named consumers against a real server.
Writers that commit out of order and roll back beside consumers (and a naive cursor that loses
rows in the same run); rollback redelivers; the work of the consuming transaction happens once;
two sessions of one consumer take turns; a handler that fails on chosen rows retries and parks
them as dead letters without stopping; waits that wake on commit, time out, end on a cancel, and
sleep without CPU; the edges' SQLSTATEs; consumer names are per role, and another role (a
superuser included) cannot touch a consumer."""

import random
import shutil
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pgcluster import by_tier

CONF = ("hlculid.publisher_id = 3", "max_prepared_transactions = 10")
ZERO = "000000000000-0000-0000-000000000000"


class Db:
    """One database of the module's server: what a test needs of a cluster, in that database."""

    def __init__(self, cluster, dbname):
        self.cluster, self.dbname = cluster, dbname

    def connect(self, user="postgres", autocommit=True):
        return self.cluster.connect(user=user, autocommit=autocommit, dbname=self.dbname)

    def sql(self, query, params=None, user="postgres"):
        return self.cluster.sql(query, params, user=user, dbname=self.dbname)

    def one(self, query, params=None):
        return self.sql(query, params)[0][0]


@pytest.fixture(scope="module")
def server():
    """One server for the module (its start is most of a test's time); a database per test."""
    from pgcluster import Cluster
    c = Cluster("consumers", conf=CONF)
    try:
        c.start()
        yield c
    finally:
        c.stop("immediate")
        shutil.rmtree(c.dir, ignore_errors=True)


@pytest.fixture
def c(server, request):
    dbname = "t_" + request.node.name[5:40].lower()
    server.sql(f"DROP DATABASE IF EXISTS {dbname}")
    server.sql(f"CREATE DATABASE {dbname}")
    c = Db(server, dbname)
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), w int, n int)")
    c.sql("CREATE TABLE done (id hlculid, consumer text, session int)")
    return c


def sqlstate(conn, query, params=None):
    try:
        conn.execute(query, params)
    except psycopg.Error as e:
        return e.sqlstate
    return None


def writer(c, w, stop, errors_, rnd_commit=0.03):
    """One row a transaction, committed 0-30 ms later; one in ten rolled back."""
    rnd = random.Random(w)
    try:
        with c.connect(autocommit=False) as conn:
            n = 0
            while not stop.is_set():
                n += 1
                conn.execute("INSERT INTO ev (w, n) VALUES (%s, %s)", (w, n))
                time.sleep(rnd.random() * rnd_commit)
                if rnd.random() < 0.1:
                    conn.rollback()
                else:
                    conn.commit()
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors_.append(e)


def consumer_loop(c, name, session, stop, errors_, rollback_every=0):
    """wait, consume, record the ids in `done` in the same transaction, commit; every
    `rollback_every`-th batch rolls back instead (its rows come again)."""
    try:
        with c.connect(autocommit=False) as conn:
            batch = 0
            while True:
                stopping = stop.is_set()
                conn.execute("SELECT hlculid_consumer_wait(%s, '50 ms')", (name,))
                conn.commit()
                rows = conn.execute("SELECT id::text FROM hlculid_consume(%s, NULL::ev, 50)", (name,)).fetchall()
                for (i,) in rows:
                    conn.execute("INSERT INTO done VALUES (%s::hlculid, %s, %s)", (i, name, session))
                batch += 1
                if rows and rollback_every and batch % rollback_every == 0:
                    conn.rollback()
                    continue
                conn.commit()
                if stopping and not rows:
                    return
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors_.append(e)


def naive_loop(c, stop, seen):
    with c.connect() as conn:
        last = ZERO
        while True:
            stopping = stop.is_set()
            rows = conn.execute("SELECT id::text FROM ev WHERE id > %s::hlculid ORDER BY id", (last,)).fetchall()
            seen += [r[0] for r in rows]
            if rows:
                last = rows[-1][0]
            if stopping and not rows:
                return
            time.sleep(0.005)


def test_consumers_lose_and_duplicate_nothing_beside_late_commits_where_a_naive_cursor_loses_rows(c):
    c.sql("SELECT hlculid_consumer_create('a', 'ev'); SELECT hlculid_consumer_create('b', 'ev')")
    stop_writers, stop_readers = threading.Event(), threading.Event()
    errs, naive = [], []
    writers = [threading.Thread(target=writer, args=(c, w, stop_writers, errs)) for w in range(6)]
    # consumer "a": two sessions taking turns, one of them rolling back every 5th batch;
    # consumer "b": one session
    readers = [threading.Thread(target=consumer_loop, args=(c, "a", 1, stop_readers, errs, 5)),
               threading.Thread(target=consumer_loop, args=(c, "a", 2, stop_readers, errs)),
               threading.Thread(target=consumer_loop, args=(c, "b", 1, stop_readers, errs)),
               threading.Thread(target=naive_loop, args=(c, stop_readers, naive))]
    for t in readers + writers:
        t.start()
    time.sleep(by_tier(2, 10))
    stop_writers.set()
    for t in writers:
        t.join(60)
    stop_readers.set()
    for t in readers:
        t.join(60)
    assert not errs, errs
    committed = {r[0] for r in c.sql("SELECT id::text FROM ev")}
    assert len(committed) > 100
    for name in ("a", "b"):
        got = [r[0] for r in c.sql("SELECT id::text FROM done WHERE consumer = %s", (name,))]
        assert len(got) == len(set(got)), f"{name}: {len(got) - len(set(got))} duplicated"
        assert set(got) == committed, f"{name}: {len(committed - set(got))} lost"
    # both sessions of "a" got rows (they took turns), never the same ones
    assert c.one("SELECT count(DISTINCT session) FROM done WHERE consumer = 'a'") == 2
    lost = committed - set(naive)
    assert lost, "the naive cursor lost nothing: the writers did not commit out of order"
    # the position is the last id, and nothing is pending
    assert c.one("SELECT position::text FROM hlculid.hlculid_consumer_positions WHERE consumer = 'a'") == max(committed)


def test_rollback_redelivers_and_the_consuming_transaction_acknowledges(c):
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 5) g")
    with c.connect(autocommit=False) as conn:
        first = conn.execute("SELECT n FROM hlculid_consume('x', NULL::ev, 3)").fetchall()
        assert [r[0] for r in first] == [1, 2, 3]
        conn.execute("INSERT INTO done SELECT id, 'x', 1 FROM ev WHERE n <= 3")
        conn.rollback()
        again = conn.execute("SELECT n FROM hlculid_consume('x', NULL::ev, 3)").fetchall()
        assert again == first
        conn.execute("INSERT INTO done SELECT id, 'x', 1 FROM ev WHERE n <= 3")
        conn.commit()
        rest = conn.execute("SELECT n FROM hlculid_consume('x', NULL::ev)").fetchall()
        assert [r[0] for r in rest] == [4, 5]
        conn.commit()
        assert conn.execute("SELECT count(*) FROM hlculid_consume('x', NULL::ev)").fetchone()[0] == 0
    assert c.one("SELECT count(*) FROM done") == 3  # the rolled-back work is gone, once


def test_two_sessions_of_one_consumer_take_turns(c):
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 6) g")
    c.sql("SELECT hlculid_consumer_create('t', 'ev')")
    a, b = c.connect(autocommit=False), c.connect(autocommit=False)
    try:
        got_a = [r[0] for r in a.execute("SELECT n FROM hlculid_consume('t', NULL::ev, 3)").fetchall()]
        b.execute("SET lock_timeout = '300ms'")
        # b waits for a's transaction (the consumer's row is locked), never taking a's rows
        assert sqlstate(b, "SELECT n FROM hlculid_consume('t', NULL::ev, 3)") == "55P03"
        b.rollback()
        result = []
        t = threading.Thread(target=lambda: result.extend(
            r[0] for r in b.execute("SELECT n FROM hlculid_consume('t', NULL::ev, 3)").fetchall()))
        t.start()
        time.sleep(0.3)
        assert t.is_alive()  # still waiting for a
        a.commit()
        t.join(10)
        b.commit()
        assert got_a == [1, 2, 3] and result == [4, 5, 6]
    finally:
        a.close()
        b.close()


def test_a_failing_handler_retries_with_delay_then_parks_dead_letters_and_the_consumer_goes_on(c):
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 40) g")
    c.sql("SELECT hlculid_consumer_create('f', 'ev', max_attempts => 3)")
    always = {5, 17, 33}        # fail every time: parked after 3 attempts
    twice = {8, 21}             # fail on their first two attempts, succeed on the third
    attempts, handled, retried_at = {}, [], {}
    deadline = time.time() + 30
    with c.connect(autocommit=False) as conn:
        while time.time() < deadline:
            if not conn.execute("SELECT hlculid_consumer_wait('f', '2 s')").fetchone()[0]:
                break
            conn.commit()
            for i, n in conn.execute("SELECT id::text, n FROM hlculid_consume('f', NULL::ev, 7)").fetchall():
                attempts[n] = attempts.get(n, 0) + 1
                if n in always or (n in twice and attempts[n] <= 2):
                    if n in retried_at:  # came back no earlier than its delay
                        assert time.time() - retried_at[n] >= 0.19
                    retried_at[n] = time.time()
                    conn.execute("SELECT hlculid_consume_retry('f', %s::hlculid, '200 ms', %s)", (i, f"failed {n}"))
                else:
                    handled.append(n)
            conn.commit()
    assert sorted(handled) == sorted(set(range(1, 41)) - always)
    assert len(handled) == len(set(handled))
    assert {n: attempts[n] for n in always | twice} == {5: 3, 17: 3, 33: 3, 8: 3, 21: 3}
    parked = c.sql("SELECT e.n, d.attempts, d.last_error, d.relation::text FROM hlculid.hlculid_dead_letters d "
                   "JOIN ev e ON e.id = d.id WHERE d.consumer = 'f' ORDER BY e.n")
    assert parked == [(5, 3, "failed 5", "ev"), (17, 3, "failed 17", "ev"), (33, 3, "failed 33", "ev")]
    assert c.one("SELECT count(*) FROM hlculid.hlculid_consumer_retries WHERE delivered_in IS NULL") == 0
    view = c.sql("SELECT pending_retries, dead_letters, position = (SELECT max(id) FROM ev) FROM hlculid.hlculid_consumers")
    assert view == [(0, 3, True)]
    # requeued with a fresh count: given again, handled now
    assert c.one("SELECT hlculid_dead_letter_requeue('f', (SELECT id FROM ev WHERE n = 5))") == 1
    assert c.one("SELECT hlculid_dead_letter_requeue('f')") == 2
    assert c.one("SELECT hlculid_consumer_wait('f', '1 s')") is True
    with c.connect(autocommit=False) as conn:
        again = [r[0] for r in conn.execute("SELECT n FROM hlculid_consume('f', NULL::ev)").fetchall()]
        conn.commit()
        assert sorted(again) == [5, 17, 33]
        assert conn.execute("SELECT count(*) FROM hlculid_consume('f', NULL::ev)").fetchone()[0] == 0
        conn.commit()
    assert c.one("SELECT count(*) FROM hlculid.hlculid_consumer_retries") == 0
    assert c.one("SELECT count(*) FROM hlculid.hlculid_dead_letters") == 0


def timed(c, query, params=None):
    """Runs `query` in a thread; returns (thread, result dict with value/error/elapsed/pid)."""
    out = {}
    ready = threading.Event()

    def run():
        with c.connect() as conn:
            out["pid"] = conn.info.backend_pid
            ready.set()
            t0 = time.monotonic()
            try:
                out["value"] = conn.execute(query, params).fetchone()[0]
            except psycopg.Error as e:
                out["error"] = e.sqlstate
            out["elapsed"] = time.monotonic() - t0
            out["end"] = time.monotonic()

    t = threading.Thread(target=run)
    t.start()
    ready.wait(10)
    return t, out


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def test_hlculid_wait_wakes_on_commit_well_before_its_timeout_and_sleeps_without_cpu(c):
    c.sql("INSERT INTO ev (n) VALUES (0)")
    last = c.one("SELECT max(id)::text FROM ev")
    # idle: false at the timeout, no CPU spent meanwhile
    t, out = timed(c, "SELECT hlculid_wait(NULL::ev, %s::hlculid, '1 s')", (last,))
    time.sleep(0.2)
    cpu0 = cpu_seconds(out["pid"])
    time.sleep(0.7)
    cpu1 = cpu_seconds(out["pid"])
    t.join(10)
    assert out["value"] is False and 0.95 < out["elapsed"] < 2.5, out
    assert cpu1 - cpu0 < 0.05, f"{cpu1 - cpu0:.2f} s of CPU while waiting"
    # a commit wakes it at once
    latencies = []
    for _ in range(5):
        t, out = timed(c, "SELECT hlculid_wait(NULL::ev, %s::hlculid, '10 s')", (last,))
        time.sleep(0.2)
        with c.connect() as w:
            w.execute("INSERT INTO ev (n) VALUES (1)")
            committed = time.monotonic()
        t.join(10)
        assert out["value"] is True, out
        latencies.append(out["end"] - committed)
        last = c.one("SELECT max(id)::text FROM ev")
    assert max(latencies) < 0.5, latencies
    # a row held back by an older transaction: no wake-up by the younger commit, then one at
    # the older's commit
    old = c.connect(autocommit=False)
    old.execute("INSERT INTO ev (n) VALUES (2)")
    t, out = timed(c, "SELECT hlculid_wait(NULL::ev, %s::hlculid, '10 s')", (last,))
    c.sql("INSERT INTO ev (n) VALUES (3)")
    time.sleep(0.5)
    assert t.is_alive(), out  # the younger row is above the horizon: nothing readable yet
    old.commit()
    old.close()
    t.join(10)
    assert out["value"] is True and out["elapsed"] < 2.0, out
    # a prepared transaction's end wakes it too
    last = c.one("SELECT max(id)::text FROM ev")
    with c.connect(autocommit=False) as p:
        p.execute("INSERT INTO ev (n) VALUES (4)")
        p.execute("PREPARE TRANSACTION 'p1'")
    t, out = timed(c, "SELECT hlculid_wait(NULL::ev, %s::hlculid, '10 s')", (last,))
    time.sleep(0.4)
    assert t.is_alive()
    c.sql("COMMIT PREPARED 'p1'")
    ended = time.monotonic()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out
    # NULL after: from the start
    assert c.one("SELECT hlculid_wait(NULL::ev, NULL, '0 s')") is True


def test_a_waiter_sleeps_through_other_tables_commits_and_wakes_for_its_own(c):
    """Writers of other tables do not wake a waiter whose table has nothing after its
    position (a waiter on a partitioned table, which wakes at every commit that made ids, spends
    CPU in the same run); a commit to its table wakes it even without new ids; a row the horizon
    hides wakes it when the transaction holding the horizon ends, whatever table that wrote."""
    c.sql("CREATE TABLE other (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    c.sql("CREATE TABLE pev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int) PARTITION BY RANGE (id)")
    c.sql("CREATE TABLE pev_all PARTITION OF pev DEFAULT")
    c.sql("SELECT hlculid_consumer_create('plain', 'ev')")
    c.sql("SELECT hlculid_consumer_create('parted', 'pev')")

    def cpu_over_commits(pid):
        with c.connect() as w:
            for _ in range(20):  # past the first (full) checks
                w.execute("INSERT INTO other (n) VALUES (0)")
            time.sleep(0.3)
            before = cpu_seconds(pid)
            for _ in range(1500):
                w.execute("INSERT INTO other (n) VALUES (1)")
            time.sleep(0.2)
            return cpu_seconds(pid) - before

    # the plain table's waiter alone first (a waiter without a table slot, such as the
    # partitioned table's, has every writing commit broadcast, which sets every sleeper's latch)
    plain_t, plain = timed(c, "SELECT hlculid_consumer_wait('plain', '60 s')")
    spent = cpu_over_commits(plain["pid"])
    assert spent <= 0.03, f"the plain table's waiter spent {spent:.2f} s of CPU on other tables' commits"
    parted_t, parted = timed(c, "SELECT hlculid_consumer_wait('parted', '60 s')")
    spent = cpu_over_commits(parted["pid"])
    assert spent >= 0.05, f"the control (partitioned) waiter spent only {spent:.2f} s: the run shows nothing"
    assert plain_t.is_alive() and parted_t.is_alive(), (plain, parted)
    # a row inserted with an id made earlier (no new id, the horizon does not move) wakes it
    early = c.one("SELECT hlculid_generate()::text")
    sent = time.monotonic()
    c.sql("INSERT INTO ev (id, n) VALUES (%s::hlculid, 2)", (early,))
    plain_t.join(10)
    assert plain["value"] is True and plain["end"] - sent < 0.5, plain
    c.sql("INSERT INTO pev (n) VALUES (2)")
    parted_t.join(10)
    assert parted["value"] is True, parted
    with c.connect(autocommit=False) as conn:
        conn.execute("SELECT * FROM hlculid_consume('plain', NULL::ev)").fetchall()
        conn.commit()
    # an older transaction holds the horizon writing another table; a younger row in ev is
    # hidden until the older one ends, and that end wakes the waiter though it wrote only `other`
    old = c.connect(autocommit=False)
    old.execute("INSERT INTO other (n) VALUES (3)")
    t, out = timed(c, "SELECT hlculid_consumer_wait('plain', '10 s')")
    time.sleep(0.3)
    c.sql("INSERT INTO ev (n) VALUES (4)")
    time.sleep(0.5)
    assert t.is_alive(), out  # hidden by the older transaction's id
    old.commit()
    ended = time.monotonic()
    old.close()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out
    # the same with hlculid_wait, the waiter idle first, then a hidden row
    last = c.one("SELECT max(id)::text FROM ev")
    t, out = timed(c, "SELECT hlculid_wait(NULL::ev, %s::hlculid, '10 s')", (last,))
    for _ in range(20):
        c.sql("INSERT INTO other (n) VALUES (5)")
    old = c.connect(autocommit=False)
    old.execute("INSERT INTO other (n) VALUES (6)")
    c.sql("INSERT INTO ev (n) VALUES (7)")
    time.sleep(0.5)
    assert t.is_alive(), out
    old.commit()
    ended = time.monotonic()
    old.close()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out


def test_what_no_write_to_the_table_shows_still_wakes_a_waiter(c):
    """A waiter asleep on a quiet table wakes when: a prepared transaction that wrote it (with
    an id made before, so no hold) is committed by another session; another session of the role
    resets the consumer to where rows are; rows with ids made earlier go into a partitioned
    table. A wait inside another wait's check (a policy that waits) is 0A000, and leaves the
    session able to wait again."""
    c.sql("SELECT hlculid_consumer_create('q', 'ev')")
    early = c.one("SELECT hlculid_generate()::text")
    # COMMIT PREPARED in another session: it holds none of the prepared transaction's locks
    t, out = timed(c, "SELECT hlculid_consumer_wait('q', '10 s')")
    time.sleep(0.3)
    with c.connect(autocommit=False) as p:
        p.execute("INSERT INTO ev (id, n) VALUES (%s::hlculid, 1)", (early,))
        p.execute("PREPARE TRANSACTION 'q1'")
    time.sleep(0.4)
    assert t.is_alive(), out
    c.sql(";COMMIT PREPARED 'q1'")  # the statement's text, an empty statement first
    ended = time.monotonic()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out
    with c.connect(autocommit=False) as conn:
        assert len(conn.execute("SELECT * FROM hlculid_consume('q', NULL::ev)").fetchall()) == 1
        conn.commit()
    # a reset by another session, back to the start
    t, out = timed(c, "SELECT hlculid_consumer_wait('q', '10 s')")
    time.sleep(0.4)
    assert t.is_alive(), out
    c.sql("SELECT hlculid_consumer_reset('q')")
    ended = time.monotonic()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out
    # a partitioned table's waiter, rows with an id made before (no new id, a commit that wrote)
    c.sql("CREATE TABLE pq (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int) PARTITION BY RANGE (id)")
    c.sql("CREATE TABLE pq_all PARTITION OF pq DEFAULT")
    early = c.one("SELECT hlculid_generate()::text")
    t, out = timed(c, "SELECT hlculid_wait(NULL::pq, NULL, '10 s')")
    time.sleep(0.4)
    assert t.is_alive(), out
    c.sql("INSERT INTO pq_all (id, n) VALUES (%s::hlculid, 1)", (early,))
    ended = time.monotonic()
    t.join(10)
    assert out["value"] is True and out["end"] - ended < 0.5, out
    # a policy that waits: the inner wait is refused, the outer raises it, nothing leaks
    c.sql("CREATE TABLE trap (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    c.sql("INSERT INTO trap (n) VALUES (1)")  # a policy runs on rows
    c.sql("CREATE ROLE trapper LOGIN")
    c.sql("GRANT SELECT ON trap, ev TO trapper")
    c.sql("ALTER TABLE trap ENABLE ROW LEVEL SECURITY")
    c.sql("CREATE POLICY p ON trap USING (hlculid_wait(NULL::ev, NULL, '0 s') IS NOT NULL)")
    with c.connect(user="trapper") as conn:
        assert sqlstate(conn, "SELECT hlculid_wait(NULL::trap, NULL, '0 s')") == "0A000"
        assert conn.execute("SELECT hlculid_wait(NULL::ev, NULL, '0 s')").fetchone()[0] is True
        # waking a table's waiters takes SELECT on it
        assert sqlstate(conn, "SELECT hlculid_wake_waiters_at_commit('pq'::regclass)") == "42501"
        assert sqlstate(conn, "SELECT hlculid_wake_waiters_at_commit('ev'::regclass)") is None


def test_a_cancel_or_terminate_ends_a_wait_at_once(c):
    t, out = timed(c, "SELECT hlculid_wait(NULL::ev, NULL, '30 s')")
    time.sleep(0.5)
    sent = time.monotonic()
    c.sql("SELECT pg_cancel_backend(%s)", (out["pid"],))
    t.join(10)
    assert out.get("error") == "57014" and out["end"] - sent < 1.0, out
    t, out = timed(c, "SELECT hlculid_consumer_wait('nobody-yet', '30 s')")
    t.join(10)
    assert out.get("error") == "42704"
    c.sql("SELECT hlculid_consumer_create('w', 'ev')")
    t, out = timed(c, "SELECT hlculid_consumer_wait('w', '30 s')")
    time.sleep(0.5)
    sent = time.monotonic()
    c.sql("SELECT pg_terminate_backend(%s)", (out["pid"],))
    t.join(10)
    assert out.get("error") is not None and out["end"] - sent < 1.0, out
    # the waiters' count came back to zero: a later wait still wakes at a commit
    t, out = timed(c, "SELECT hlculid_consumer_wait('w', '10 s')")
    time.sleep(0.2)
    c.sql("INSERT INTO ev (n) VALUES (1)")
    t.join(10)
    assert out["value"] is True and out["elapsed"] < 1.0, out


def test_hlculid_consumer_wait_wakes_when_a_retry_is_due_and_times_out(c):
    c.sql("INSERT INTO ev (n) VALUES (1)")
    with c.connect(autocommit=False) as conn:
        (i,) = conn.execute("SELECT id::text FROM hlculid_consume('r', NULL::ev)").fetchone()
        assert conn.execute("SELECT hlculid_consume_retry('r', %s::hlculid, '700 ms')", (i,)).fetchone()[0] is True
        conn.commit()
    t0 = time.monotonic()
    assert c.one("SELECT hlculid_consumer_wait('r', '5 s')") is True
    assert 0.5 < time.monotonic() - t0 < 2.0
    with c.connect(autocommit=False) as conn:
        assert [r[0] for r in conn.execute("SELECT id::text FROM hlculid_consume('r', NULL::ev)")] == [i]
        conn.commit()
    t0 = time.monotonic()
    assert c.one("SELECT hlculid_consumer_wait('r', '300 ms')") is False
    assert 0.25 < time.monotonic() - t0 < 2.0


def test_a_consumer_dropped_and_created_again_under_its_name_ends_the_wait(c):
    """A wait checks the consumer it began on: one dropped and created again under the same name
    (another table, another start) is not it, and the wait raises 42704 as for a drop (it went on
    reading the first table with the new consumer's position, and returned true for rows
    hlculid_consume would not give: the 0.6.0 review)."""
    c.sql("CREATE TABLE other_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 5) g")
    c.sql("SELECT hlculid_consumer_create('again', 'ev', hlculid_horizon())")
    out = {}

    def waiter():
        with c.connect() as conn:
            out["error"] = sqlstate(conn, "SELECT hlculid_consumer_wait('again', '5 s')")

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.5)
    with c.connect(autocommit=False) as conn:  # at the start of an empty table
        conn.execute("SELECT hlculid_consumer_drop('again')")
        conn.execute("SELECT hlculid_consumer_create('again', 'other_ev')")
        conn.commit()
    t.join(10)
    assert out.get("error") == "42704", out
    with c.connect(autocommit=False) as conn:
        assert conn.execute("SELECT count(*) FROM hlculid_consume('again', NULL::other_ev)").fetchone()[0] == 0


def test_starts_resets_drops_and_the_view(c):
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 3) g")
    ids = [r[0] for r in c.sql("SELECT id::text FROM ev ORDER BY id")]
    c.sql("SELECT hlculid_consumer_create('after', 'ev', start_after => %s::hlculid)", (ids[0],))
    c.sql("SELECT hlculid_consumer_create('now', 'ev', start_at => now())")
    c.sql("SELECT hlculid_consumer_create('past', 'ev', start_at => now() - interval '1 hour')")
    # a transaction running since before "now": its row becomes readable from now on, so it counts
    late = c.connect(autocommit=False)
    late.execute("INSERT INTO ev (n) VALUES (4)")
    c.sql("SELECT hlculid_consumer_create('now2', 'ev', start_at => now())")
    late.commit()
    late.close()
    c.sql("INSERT INTO ev (n) VALUES (5)")

    def consume(name):
        return [r[0] for r in c.sql("SELECT n FROM hlculid_consume(%s, NULL::ev)", (name,))]

    assert consume("after") == [2, 3, 4, 5]
    assert consume("now") == [4, 5]
    assert consume("now2") == [4, 5]
    assert consume("past") == [1, 2, 3, 4, 5]
    c.sql("SELECT hlculid_consumer_reset('after')")
    assert consume("after") == [1, 2, 3, 4, 5]
    c.sql("SELECT hlculid_consumer_reset('after', start_after => %s::hlculid)", (ids[1],))
    assert consume("after") == [3, 4, 5]
    row = c.sql("SELECT consumer, relation::text, id_column::text, owner::text, position_ts IS NOT NULL, "
                "horizon IS NOT NULL, lag >= '0', pending_retries, dead_letters, updated_at IS NOT NULL "
                "FROM hlculid.hlculid_consumers WHERE consumer = 'after'")
    assert row == [("after", "ev", "id", "postgres", True, True, True, 0, 0, True)]
    # held_by: a transaction that made ids and stays open
    holder = c.connect(autocommit=False)
    holder.execute("INSERT INTO ev (n) VALUES (6)")
    time.sleep(0.2)
    held = c.sql("SELECT held_by_pid, held_for > '0.1 s' FROM hlculid.hlculid_consumers WHERE consumer = 'after'")
    assert held == [(holder.info.backend_pid, True)]
    holder.rollback()
    holder.close()
    assert c.sql("SELECT held_by_pid FROM hlculid.hlculid_consumers WHERE consumer = 'after'") == [(None,)]
    assert c.one("SELECT hlculid_consumer_drop('after')") is True
    assert c.one("SELECT hlculid_consumer_drop('after')") is False


def test_edges_raise_the_right_sqlstates(c):
    c.sql("CREATE TABLE other (id hlculid PRIMARY KEY)")
    c.sql("CREATE TABLE nokey (id hlculid)")
    c.sql("SELECT hlculid_consumer_create('e', 'ev')")
    cases = [
        ("SELECT hlculid_wait(NULL::ev, NULL, NULL)", "22004"),
        ("SELECT hlculid_wait(NULL::ev, NULL, '-1 s')", "22023"),
        ("SELECT hlculid_wait(1, NULL, '0 s')", "42809"),
        ("SELECT hlculid_wait(NULL::nokey, NULL, '0 s')", "42P10"),
        ("SELECT hlculid_consumer_wait(NULL)", "22004"),
        ("SELECT hlculid_consumer_wait('e', NULL)", "22004"),
        ("SELECT hlculid_consumer_wait('e', '-1 s')", "22023"),
        ("SELECT hlculid_consumer_wait('nope', '0 s')", "42704"),
        ("SELECT hlculid_consumer_create(NULL, 'ev')", "22004"),
        ("SELECT hlculid_consumer_create('x', NULL)", "22004"),
        ("SELECT hlculid_consumer_create('x', 'ev', id_column => NULL)", "22004"),
        ("SELECT hlculid_consumer_create('x', 'ev', max_attempts => 0)", "22023"),
        ("SELECT hlculid_consumer_create('x', 'ev', max_attempts => NULL)", "22023"),
        ("SELECT hlculid_consumer_create('x', 'ev', hlculid_min(now()), now())", "22023"),
        ("SELECT hlculid_consumer_create('e', 'ev')", "42710"),
        ("SELECT hlculid_consumer_create('x', 'nokey')", "42P10"),
        ("SELECT hlculid_consumer_create('x', 'ev', id_column => 'w')", "42804"),
        ("SELECT hlculid_consumer_create('x', 'ev', id_column => 'nope')", "42703"),
        ("SELECT * FROM hlculid_consume(NULL, NULL::ev)", "22004"),
        ("SELECT * FROM hlculid_consume('e', NULL::ev, 0)", "22023"),
        ("SELECT * FROM hlculid_consume('e', NULL::ev, NULL)", "22023"),
        ("SELECT * FROM hlculid_consume('e', NULL::other)", "22023"),
        ("SELECT * FROM hlculid_consume('e', 1)", "42809"),
        ("SELECT * FROM hlculid_consume('e', NULL::nokey)", "22023"),
        ("SELECT * FROM hlculid_consume('new', NULL::nokey)", "42P10"),
        ("SELECT hlculid_consume_retry('e', NULL)", "22004"),
        ("SELECT hlculid_consume_retry(NULL, hlculid_min(now()))", "22004"),
        ("SELECT hlculid_consume_retry('e', hlculid_min(now()), NULL)", "22023"),
        ("SELECT hlculid_consume_retry('e', hlculid_min(now()), '-1 s')", "22023"),
        ("SELECT hlculid_consume_retry('nope', hlculid_min(now()))", "42704"),
        ("SELECT hlculid_consumer_reset(NULL)", "22004"),
        ("SELECT hlculid_consumer_reset('nope')", "42704"),
        ("SELECT hlculid_consumer_reset('e', hlculid_min(now()), now())", "22023"),
        ("SELECT hlculid_consumer_drop(NULL)", "22004"),
        ("SELECT hlculid_dead_letter_requeue(NULL)", "22004"),
        ("SELECT hlculid_dead_letter_requeue('nope')", "42704"),
    ]
    with c.connect() as conn:
        got = [(q, sqlstate(conn, q)) for q, _ in cases]
    assert got == [(q, s) for q, s in cases]
    assert c.one("SELECT hlculid_consumer_drop('nope')") is False
    assert c.one("SELECT hlculid_dead_letter_requeue('e')") == 0
    # REPEATABLE READ: the horizon's own error
    with c.connect(autocommit=False) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert sqlstate(conn, "SELECT * FROM hlculid_consume('e', NULL::ev)") == "0A000"
        conn.rollback()
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert sqlstate(conn, "SELECT hlculid_wait(NULL::ev, NULL, '0 s')") == "0A000"


def test_another_role_cannot_touch_a_consumer(c):
    """Names are per role: bob's 'alices' is bob's own; alice's rows are invisible to him (row-level
    security), a superuser's calls never find them, and a member must SET ROLE to use them."""
    c.sql("CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN; CREATE ROLE alice_team LOGIN IN ROLE alice")
    c.sql("GRANT SELECT ON ev TO alice, bob, alice_team")
    c.sql("INSERT INTO ev (n) VALUES (1)")
    with c.connect(user="alice") as a:
        a.execute("SELECT hlculid_consumer_create('alices', 'ev')")
        (i,) = a.execute("SELECT id::text FROM hlculid_consume('alices', NULL::ev)").fetchone()
        a.execute("BEGIN")
        a.execute("SELECT hlculid_consume_retry('alices', %s::hlculid, '1 h', 'card declined')", (i,))
        a.execute("COMMIT")
    ident = f"'{i}'::hlculid"
    with c.connect(user="bob") as b:
        for q, state in [("SELECT hlculid_consumer_wait('alices', '0 s')", "42704"),
                         (f"SELECT hlculid_consume_retry('alices', {ident})", "42704"),
                         ("SELECT hlculid_consumer_reset('alices')", "42704"),
                         ("SELECT hlculid_dead_letter_requeue('alices')", "42704"),
                         # the tables directly: row-level security's WITH CHECK, privileges
                         (f"INSERT INTO hlculid.hlculid_dead_letters VALUES ('alices', 'alice', 'ev', {ident}, 1, NULL, now())",
                          "42501"),
                         (f"INSERT INTO hlculid.hlculid_consumer_retries VALUES ('alices', 'alice', {ident}, 0, '-infinity')",
                          "42501"),
                         ("INSERT INTO hlculid.hlculid_consumer_positions VALUES "
                          "('bobs', 'ev', 'id', 'alice', NULL, 5, now(), now())", "42501"),
                         ("TRUNCATE hlculid.hlculid_consumer_positions CASCADE", "42501"),
                         ("SELECT * FROM hlculid.hlculid_consumers", "42501")]:
            assert sqlstate(b, q) == state, q
        assert b.execute("SELECT hlculid_consumer_drop('alices')").fetchone()[0] is False
        # alice's rows: not read, not locked, not changed
        for t in ["positions", "retries"]:
            assert b.execute(f"SELECT count(*) FROM hlculid.hlculid_consumer_{t}").fetchone()[0] == 0
            assert b.execute(f"SELECT count(*) FROM (SELECT FROM hlculid.hlculid_consumer_{t} FOR UPDATE) x").fetchone()[0] == 0
        assert b.execute("UPDATE hlculid.hlculid_consumer_positions SET position = NULL").rowcount == 0
        assert b.execute("DELETE FROM hlculid.hlculid_consumer_retries").rowcount == 0
        # bob's own 'alices', from the start of the table, beside alice's
        assert b.execute("SELECT count(*) FROM hlculid_consume('alices', NULL::ev)").fetchone()[0] == 1
        # and bob cannot give his consumer to alice, nor move it to another table
        assert sqlstate(b, "UPDATE hlculid.hlculid_consumer_positions SET owner = 'alice'") == "42501"
        assert sqlstate(b, "UPDATE hlculid.hlculid_consumer_positions SET relation = 'done'") == "55000"
    assert c.sql("SELECT owner::text, position = %s::hlculid FROM hlculid.hlculid_consumer_positions "
                 "WHERE consumer = 'alices' ORDER BY 1", (i,)) == [("alice", True), ("bob", True)]
    assert c.sql("SELECT owner::text, last_error FROM hlculid.hlculid_consumer_retries") == [("alice", "card declined")]
    # a superuser bypasses row-level security; the guard trigger still keeps owner and table
    assert sqlstate(c.connect(), "UPDATE hlculid.hlculid_consumer_positions SET owner = 'bob' "
                                 "WHERE owner = 'alice'::regrole") == "42501"
    assert sqlstate(c.connect(), "UPDATE hlculid.hlculid_consumer_positions SET relation = 'done' "
                                 "WHERE owner = 'alice'::regrole") == "55000"
    # a member of alice's role uses her consumer as alice, not under its own name
    with c.connect(user="alice_team") as m:
        assert sqlstate(m, "SELECT hlculid_consumer_wait('alices', '0 s')") == "42704"
        m.execute("SET ROLE alice")
        assert m.execute("SELECT hlculid_consumer_wait('alices', '0 s')").fetchone()[0] is False
    # pg_monitor reads the view: every role's consumers, with their owners
    c.sql("GRANT pg_monitor TO bob")
    with c.connect(user="bob") as b:
        assert b.execute("SELECT consumer, owner::text FROM hlculid.hlculid_consumers ORDER BY 2").fetchall() == \
            [("alices", "alice"), ("alices", "bob")]
    # the superuser has no 'alices': dropping its own finds none, alice's stays
    assert c.one("SELECT hlculid_consumer_drop('alices')") is False
    assert c.one("SELECT count(*) FROM hlculid.hlculid_consumer_positions") == 2


def test_a_superusers_consume_never_finds_another_roles_consumer(c):
    """A superuser's calls resolve a name among its own consumers: carol's 'shared' (moved past
    every row) is neither read, moved, reset nor dropped by the superuser's 'shared'."""
    c.sql("CREATE ROLE carol LOGIN")
    c.sql("GRANT SELECT ON ev TO carol")
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 3) g")
    with c.connect(user="carol") as a:
        assert a.execute("SELECT count(*) FROM hlculid_consume('shared', NULL::ev)").fetchone()[0] == 3
        a.execute("SELECT hlculid_consume_retry('shared', (SELECT min(id) FROM ev), '0 s')")
    carols = c.sql("SELECT position::text FROM hlculid.hlculid_consumer_positions")
    assert sqlstate(c.connect(), "SELECT hlculid_consumer_wait('shared', '0 s')") == "42704"
    assert sqlstate(c.connect(), "SELECT hlculid_consumer_reset('shared')") == "42704"
    # the superuser's first call creates its own, at the start: every row, no retry of carol's
    assert c.one("SELECT count(*) FROM hlculid_consume('shared', NULL::ev)") == 3
    assert c.one("SELECT hlculid_consumer_drop('shared')") is True
    assert c.sql("SELECT position::text FROM hlculid.hlculid_consumer_positions") == carols
    with c.connect(user="carol") as a:
        assert a.execute("SELECT count(*) FROM hlculid_consume('shared', NULL::ev)").fetchone()[0] == 1  # its retry


def test_a_second_call_in_the_consuming_transaction_keeps_a_retrys_count(c):
    c.sql("INSERT INTO ev (n) VALUES (1), (2)")
    c.sql("SELECT hlculid_consumer_create('k', 'ev', max_attempts => 2)")
    one = c.one("SELECT id::text FROM ev WHERE n = 1")
    with c.connect(autocommit=False) as conn:
        assert [r[0] for r in conn.execute("SELECT n FROM hlculid_consume('k', NULL::ev, 1)")] == [1]
        assert conn.execute("SELECT hlculid_consume_retry('k', %s::hlculid, '0 s')", (one,)).fetchone()[0] is True
        conn.commit()
        # the retry, then the next row in a second call of the same transaction: the retry given
        # out by this transaction is not acknowledged yet, so its second failure is its last
        assert [r[0] for r in conn.execute("SELECT n FROM hlculid_consume('k', NULL::ev, 1)")] == [1]
        assert [r[0] for r in conn.execute("SELECT n FROM hlculid_consume('k', NULL::ev)")] == [2]
        assert conn.execute("SELECT hlculid_consume_retry('k', %s::hlculid, '0 s')", (one,)).fetchone()[0] is False
        conn.commit()
    assert c.sql("SELECT id::text, attempts FROM hlculid.hlculid_dead_letters") == [(one, 2)]


def test_a_role_dumps_and_restores_its_own_consumers_with_row_security_on(c, server, tmp_path):
    """pg_dump by a role that is not a superuser: refused without --enable-row-security (the
    consumers' tables have row-level security); with it (and --inserts: COPY FROM does not apply
    policies), the role's own consumers only, restored by the role with pg_restore
    --enable-row-security. (hlculid.hlculid_horizons, the server's, is a superuser's to dump.)"""
    import os
    import subprocess
    c.sql("CREATE ROLE dana LOGIN; CREATE ROLE erin LOGIN")
    c.sql(f"ALTER DATABASE {c.dbname} OWNER TO dana")
    c.sql("GRANT ALL ON ev, done TO dana; GRANT SELECT ON ev TO erin")
    c.sql("INSERT INTO ev (n) VALUES (1), (2)")
    with c.connect(user="erin") as e:
        e.execute("SELECT hlculid_consumer_create('erins', 'ev')")
    with c.connect(user="dana") as d:
        assert d.execute("SELECT count(*) FROM hlculid_consume('danas', NULL::ev, 1)").fetchone()[0] == 1
        d.execute("SELECT hlculid_consume_retry('danas', (SELECT min(id) FROM ev), '1 h', 'oops')")
    env = dict(os.environ, PGHOST=str(server.dir), PGPORT=str(server.port), PGUSER="dana")
    dump = tmp_path / "dana.custom"
    plain = subprocess.run([f"{server.bin}/pg_dump", "-Fc", "-d", c.dbname, "-f", str(dump)],
                           env=env, capture_output=True, text=True)
    assert plain.returncode != 0 and "row-level security" in plain.stderr, plain.stderr
    subprocess.run([f"{server.bin}/pg_dump", "-Fc", "--enable-row-security", "--inserts", "-d", c.dbname,
                    # the horizons' table is the server's, readable by superusers only
                    "--exclude-table-data", "hlculid.hlculid_horizons",
                    "-f", str(dump)], env=env, check=True, capture_output=True, text=True)
    server.sql("DROP DATABASE IF EXISTS dana_restored")
    server.sql("CREATE DATABASE dana_restored OWNER dana")
    server.sql("CREATE EXTENSION hlculid", dbname="dana_restored")
    r = subprocess.run([f"{server.bin}/pg_restore", "--enable-row-security", "--no-owner", "--no-privileges", "-d", "dana_restored",
                        str(dump)], env=env, capture_output=True, text=True)
    # the one error: the extension's comment, which only its owner (a superuser) may set again
    assert "errors ignored on restore: 1" in r.stderr and "COMMENT ON EXTENSION hlculid" in r.stderr, r.stderr
    assert server.sql("SELECT consumer, owner::text, relation::text FROM hlculid.hlculid_consumer_positions",
                      dbname="dana_restored") == [("danas", "dana", "ev")]
    assert server.sql("SELECT last_error FROM hlculid.hlculid_consumer_retries", dbname="dana_restored") == [("oops",)]
    with server.connect(user="dana", dbname="dana_restored") as d:
        assert d.execute("SELECT n FROM hlculid_consume('danas', NULL::ev)").fetchall() == [(2,)]
