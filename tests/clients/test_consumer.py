"""The consumers of the clients (0.6.0): Python's hlculid.Consumer here, Node's (node_consumer.js)
and the Rust crate's (core/tests/consumer.rs) through their runners. Each gets every committed row
exactly once, in id order, while writers commit out of order beside it (and a naive cursor loses
rows in the same run); a handler that fails on chosen rows retries them and parks them as dead
letters without stopping; stop() ends an idle wait at once and lets a batch in hand commit; the
lag is a number."""

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from hlculid import Consumer, Hlculid

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def late_writers(dsn, table, seconds, writers=6, seed=0):
    """Writers that commit out of order: a third commit 0-40 ms after their insert, 5 % roll
    back. Returns the committed ids (as text)."""
    committed, lock, stop = set(), threading.Lock(), threading.Event()

    def writer(w):
        rnd = random.Random(seed * 100 + w)
        with psycopg.connect(dsn) as conn:
            while not stop.is_set():
                i = conn.execute(f"INSERT INTO {table} (n) VALUES (%s) RETURNING id::text", (w,)).fetchone()[0]
                if rnd.random() < 1 / 3:
                    time.sleep(rnd.random() * 0.04)
                if rnd.random() < 0.05:
                    conn.rollback()
                else:
                    conn.commit()
                    with lock:
                        committed.add(i)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return committed


def naive_reader(dsn, table, stop, got):
    """The cursor every event store starts with: WHERE id > $last ORDER BY id."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        last = "000000000000-0000-0000-000000000000"
        while not stop.is_set():
            rows = conn.execute(f"SELECT id::text FROM {table} WHERE id > %s::hlculid ORDER BY id LIMIT 1000",
                                (last,)).fetchall()
            got.extend(r[0] for r in rows)
            if rows:
                last = rows[-1][0]
            time.sleep(0.005)


def until(cond, timeout=20.0):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            return False
        time.sleep(0.02)
    return True


def fresh(dsn, *tables):
    with psycopg.connect(dsn, autocommit=True) as conn:
        for t in tables:
            conn.execute(f"DROP TABLE IF EXISTS {t}")
        conn.execute(f"CREATE TABLE {tables[0]} (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
        for t in tables[1:]:
            conn.execute(f"CREATE TABLE {t} (id hlculid, handled_at timestamptz DEFAULT clock_timestamp())")


def test_python_consumer_gets_every_row_once_in_id_order_under_late_commits(dsn):
    fresh(dsn, "pc_ev", "pc_done")
    order = []

    def handle(rows, conn):
        order.extend(str(r["id"]) for r in rows)
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO pc_done (id) VALUES (%s)", [(r["id"],) for r in rows])

    consumer = Consumer(dsn, "pc_ev", "pc_main", wait_timeout=5)
    runner = threading.Thread(target=consumer.run, args=(handle,))
    runner.start()
    naive, stop_naive = [], threading.Event()
    nt = threading.Thread(target=naive_reader, args=(dsn, "pc_ev", stop_naive, naive))
    nt.start()
    committed = late_writers(dsn, "pc_ev", 2.0, seed=1)
    with psycopg.connect(dsn, autocommit=True) as conn:
        done = lambda: conn.execute("SELECT count(*) FROM pc_done").fetchone()[0] >= len(committed)  # noqa: E731
        assert until(done), "the consumer did not catch up"
        time.sleep(0.3)  # a duplicate would show now
        stop_naive.set()
        nt.join()
        consumer.stop()
        runner.join(10)
        assert not runner.is_alive()
        handled = [r[0] for r in conn.execute("SELECT id::text FROM pc_done").fetchall()]
    assert len(committed) > 200
    assert len(handled) == len(set(handled)), "a row was handled twice"
    assert set(handled) == committed
    assert order == sorted(order), "rows came out of id order"
    assert consumer.consumed == len(committed)
    lost_by_naive = committed - set(naive)
    assert lost_by_naive, "the naive cursor lost nothing: the writers did not commit out of order"
    print(f"{len(committed)} rows: the consumer got all; the naive cursor lost {len(lost_by_naive)}")


def test_python_consumer_retries_failing_rows_then_parks_them_without_stopping(dsn):
    fresh(dsn, "pr_ev", "pr_done")
    with psycopg.connect(dsn, autocommit=True) as conn:
        ids = [r[0] for r in conn.execute("INSERT INTO pr_ev (n) SELECT g FROM generate_series(1, 60) g "
                                          "RETURNING id::text").fetchall()]
    failing = {ids[6], ids[22], ids[40]}
    errors = []
    broken = [True]

    def handle(rows, conn):
        for r in rows:
            if broken[0] and str(r["id"]) in failing:
                raise RuntimeError(f"cannot handle {r['id']}")
            conn.execute("INSERT INTO pr_done (id) VALUES (%s)", (r["id"],))

    consumer = Consumer(dsn, "pr_ev", "pr_main", batch_size=25, max_attempts=2, retry_delay=0.0, wait_timeout=5,
                        on_error=lambda row, e, scheduled: errors.append((str(row["id"]), str(e), scheduled)))
    runner = threading.Thread(target=consumer.run, args=(handle,))
    runner.start()
    assert until(lambda: consumer.dead_lettered == 3), (consumer.retried, consumer.dead_lettered)
    consumer.stop()
    runner.join(10)
    with psycopg.connect(dsn, autocommit=True) as conn:
        handled = [r[0] for r in conn.execute("SELECT id::text FROM pr_done").fetchall()]
        dead = conn.execute("SELECT id::text, attempts, last_error FROM hlculid.hlculid_dead_letters "
                            "WHERE consumer = 'pr_main' ORDER BY id").fetchall()
    # every other row once (the failed batches rolled back), the failing ones parked after 2 attempts
    assert sorted(handled) == sorted(set(ids) - failing)
    assert [d[0] for d in dead] == sorted(failing)
    assert all(d[1] == 2 and "cannot handle" in d[2] for d in dead), dead
    assert consumer.retried == 3 and consumer.dead_lettered == 3
    assert sorted(e[0] for e in errors if e[2]) == sorted(failing)       # first failure: a retry
    assert sorted(e[0] for e in errors if not e[2]) == sorted(failing)   # second: a dead letter
    # fixed: requeued, they are handled once
    broken[0] = False
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT hlculid_dead_letter_requeue('pr_main')").fetchone()[0] == 3
    with Consumer(dsn, "pr_ev", "pr_main") as again:
        assert again.run_once(handle) == 3
        assert again.run_once(handle) == 0
    with psycopg.connect(dsn, autocommit=True) as conn:
        handled = [r[0] for r in conn.execute("SELECT id::text FROM pr_done").fetchall()]
    assert sorted(handled) == sorted(ids)


def test_python_consumer_stops_an_idle_wait_at_once_and_lets_a_batch_finish(dsn):
    fresh(dsn, "ps_ev", "ps_done")
    idle = Consumer(dsn, "ps_ev", "ps_idle", wait_timeout=30)
    runner = threading.Thread(target=idle.run, args=(lambda rows, conn: None,))
    runner.start()
    time.sleep(0.5)  # in hlculid_consumer_wait by now
    t0 = time.time()
    idle.stop()
    runner.join(10)
    assert not runner.is_alive() and time.time() - t0 < 2, "stop() waited for the wait's timeout"
    # a stop during a batch: the batch commits, then run() returns
    in_batch = threading.Event()

    def slow(rows, conn):
        in_batch.set()
        time.sleep(0.5)
        conn.cursor().executemany("INSERT INTO ps_done (id) VALUES (%s)", [(r["id"],) for r in rows])

    busy = Consumer(dsn, "ps_ev", "ps_busy", wait_timeout=30)
    runner = threading.Thread(target=busy.run, args=(slow,))
    runner.start()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO ps_ev (n) SELECT g FROM generate_series(1, 10) g")
        assert in_batch.wait(10)
        busy.stop()
        runner.join(10)
        assert not runner.is_alive()
        assert conn.execute("SELECT count(*) FROM ps_done").fetchone()[0] == 10
        pos, top = conn.execute("SELECT position::text, (SELECT max(id)::text FROM ps_ev) FROM hlculid.hlculid_consumers "
                                "WHERE consumer = 'ps_busy'").fetchone()
        assert pos == top, "the stopped batch did not commit"


def test_python_consumer_lag_is_the_age_of_the_rows_it_is_behind_on(dsn):
    fresh(dsn, "pl_ev")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO pl_ev (id, n) SELECT hlculid_generate_at(now() - interval '1 hour'), g "
                     "FROM generate_series(1, 100) g")
    with Consumer(dsn, "pl_ev", "pl_main", batch_size=10) as c:
        assert c.lag is None
        assert c.run_once(lambda rows, conn: None) == 10
        assert 3590 < c.lag < 3610, c.lag  # a full batch of hour-old rows: an hour behind
        while c.run_once(lambda rows, conn: None) == 10:
            pass
        assert c.lag == 0.0  # caught up
        assert c.wait(0.05) is False and c.lag == 0.0


def test_python_consumer_starts_where_it_is_told(dsn):
    fresh(dsn, "pw_ev")
    with psycopg.connect(dsn, autocommit=True) as conn:
        ids = [r[0] for r in conn.execute("INSERT INTO pw_ev (n) SELECT g FROM generate_series(1, 5) g "
                                          "RETURNING id::text").fetchall()]
    got = []
    with Consumer(dsn, "pw_ev", "pw_after", start_after=Hlculid(ids[2])) as c:
        c.run_once(lambda rows, conn: got.extend(str(r["id"]) for r in rows))
    assert got == ids[3:]


@pytest.mark.parametrize("lang", ["node"])
def test_node_consumer(server, lang):
    r = subprocess.run(["node", str(HERE / "node_consumer.js")],
                       env={**os.environ, "HLCULID_TEST_HOST": str(server.dir), "HLCULID_TEST_PORT": str(server.port)},
                       capture_output=True, text=True, timeout=120)
    print(r.stdout, r.stderr)
    assert r.returncode == 0 and "node consumer: ok" in r.stdout


@pytest.mark.parametrize("lang", ["python", "node"])
def test_consumer_stops_on_sigterm_after_its_batch(server, dsn, lang):
    """run(handler, handle_signals / signals: true): SIGTERM during a batch lets it commit, then
    the process ends by itself; SIGTERM during a wait ends it at once."""
    table = f"sig_{lang}"
    fresh(dsn, table, f"{table}_done")
    if lang == "python":
        code = (f"import sys, time; sys.path.insert(0, {str(ROOT / 'clients/python/src')!r}); from hlculid import Consumer\n"
                f"def h(rows, conn):\n    print('batch', flush=True); time.sleep(0.5)\n"
                f"    conn.execute('INSERT INTO {table}_done SELECT id FROM {table}')\n"
                f"c = Consumer({dsn!r}, {table!r}, {table!r}, wait_timeout=30)\nprint('running', flush=True)\n"
                f"c.run(h, handle_signals=True)\nprint('stopped', flush=True)\n")
        cmd = [sys.executable, "-c", code]
    else:
        node = ROOT / "clients" / "node"
        code = (f"const pg = require({str(node / 'node_modules' / 'pg')!r}); const {{ Consumer }} = require({str(node / 'hlculid.js')!r});\n"
                f"const c = new Consumer({{ host: {str(server.dir)!r}, port: {server.port}, user: 'postgres', database: 'postgres' }}, "
                f"{table!r}, {table!r}, {{ Client: pg.Client, waitTimeout: 30 }});\nconsole.log('running');\n"
                f"c.run(async (rows, client) => {{ console.log('batch'); await new Promise((r) => setTimeout(r, 500)); "
                f"await client.query('INSERT INTO {table}_done SELECT id FROM {table}'); }}, {{ signals: true }})"
                ".then(() => console.log('stopped'));\n")
        cmd = ["node", "-e", code]
    for during in ("wait", "batch"):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "running"
        time.sleep(0.7)  # in its wait by now
        if during == "batch":
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"INSERT INTO {table} (n) SELECT g FROM generate_series(1, 5) g")
            assert p.stdout.readline().strip() == "batch"
        t0 = time.time()
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=15)
        assert p.returncode == 0 and "stopped" in out, (during, p.returncode, out)
        assert time.time() - t0 < 2, f"SIGTERM during the {during} took {time.time() - t0:.1f} s"
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}_done").fetchone()[0] == 5  # the batch committed
