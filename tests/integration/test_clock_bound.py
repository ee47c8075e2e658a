"""The run-ahead bound, against a real server: generation never pushes the clock more than
hlculid.max_clock_skew ahead of the wall clock (it waits, and a cancel ends the wait); a backward
step of the wall clock does not make it wait; and while the high-water mark cannot be written,
refused calls do not move the clock, however often they are retried."""

import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from pgcluster import as_server

BATCH = 65536


def logical(conn):
    """The clock's logical value, from hlculid_clock()."""
    ms, counter = conn.execute(
        "SELECT (extract(epoch FROM logical_time) * 1000)::int8, counter FROM hlculid_clock()").fetchone()
    return ms << 16 | counter


def id_logical(text):
    return int(text[:12], 16) << 16 | int(text[13:17], 16)


def test_a_frozen_wall_clock_stops_generation_at_the_bound(make_cluster):
    c = make_cluster("bound", faketime=True, conf=["hlculid.max_clock_skew = 300"]).start()
    c.sql("CREATE EXTENSION hlculid")
    frozen = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
    c.set_clock(frozen.strftime("%Y-%m-%d %H:%M:%S"))
    batches, errors, stop = [], [], threading.Event()
    drifts = []

    def loop():
        with c.connect() as conn:
            conn.execute("SET statement_timeout = '1s'")
            while True:
                try:
                    first, last = conn.execute(
                        "SELECT a[1]::text, a[65536]::text FROM (SELECT hlculid_generate_n(65536) a) s").fetchone()
                except psycopg.errors.QueryCanceled as e:
                    errors.append(e)  # waiting at the bound, ended by the statement timeout
                    return
                batches.append((first, last))

    def watch():
        with c.connect() as conn:
            while not stop.is_set():
                drifts.append(conn.execute("SELECT drift_ms FROM hlculid_clock()").fetchone()[0])
                time.sleep(0.005)

    threads = [threading.Thread(target=loop) for _ in range(2)]
    watcher = threading.Thread(target=watch)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a session waiting at the bound was not ended by its statement timeout"
    stop.set()
    watcher.join()
    assert len(errors) == 2
    # 300 ms past the frozen millisecond, one batch a millisecond: about 301 batches, then a wait
    assert 290 <= len(batches) <= 302, len(batches)
    assert max(drifts) <= 300, max(drifts)
    frozen_ms = int(frozen.timestamp() * 1000)
    assert max(int(last[:12], 16) for _, last in batches) == frozen_ms + 300
    # the batches of both sessions are disjoint runs of consecutive values
    runs = sorted((id_logical(f), id_logical(l)) for f, l in batches)
    assert all(l - f == BATCH - 1 for f, l in runs)
    assert all(a[1] < b[0] for a, b in zip(runs, runs[1:]))
    with c.connect() as conn:
        max_ahead, run_ahead, waits = conn.execute(
            "SELECT max_run_ahead_ms, run_ahead_ms, waits FROM hlculid_clock_bound()").fetchone()
        assert (max_ahead, run_ahead) == (300, 300)
        assert waits >= 2
        assert logical(conn) == max(l for _, l in runs), "a refused call moved the clock"
    # once the wall clock moves on, generation resumes above everything
    c.set_clock("+0")
    nxt = c.one("SELECT hlculid_generate()::text")
    assert id_logical(nxt) > runs[-1][1]


def test_a_backward_step_under_load_does_not_wait(make_cluster):
    c = make_cluster("boundstep", faketime=True).start()
    c.sql("CREATE EXTENSION hlculid")
    seqs, slowest, stop = [[], []], [0.0, 0.0], threading.Event()

    def loop(k):
        with c.connect() as conn:
            while not stop.is_set():
                t0 = time.monotonic()
                seqs[k].append(conn.execute(
                    "SELECT max(hlculid_generate())::text FROM generate_series(1, 2000)").fetchone()[0])
                slowest[k] = max(slowest[k], time.monotonic() - t0)

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    time.sleep(1)
    c.set_clock("-5")
    time.sleep(3)
    stop.set()
    for t in threads:
        t.join()
    with c.connect() as conn:
        jumps = conn.execute("SELECT backward_jumps FROM hlculid_clock()").fetchone()[0]
        waits = conn.execute("SELECT waits FROM hlculid_clock_bound()").fetchone()[0]
    assert jumps == 1
    # The property: no call waits out the step. A call held at the run-ahead bound after a 5 s
    # step would wait about 4.5 s (5 s less the 500 ms bound). `waits` is not the measure: it
    # also counts a call that met the mark writer behind on a loaded machine (CI saw one), which
    # lasts milliseconds. (A bound on the machine's speed, such as 1 s per 2,000 ids, fails on a
    # loaded 2-core machine.)
    assert max(slowest) < 4.0, (slowest, waits)
    for s in seqs:
        assert len(s) >= 2 and s == sorted(s) and len(set(s)) == len(s)


@pytest.mark.full  # a fault run with retrying callers: make test-full
def test_an_unwritable_mark_does_not_walk_the_clock_while_callers_retry(make_cluster):
    c = make_cluster("boundmark").start()
    c.sql("CREATE EXTENSION hlculid")
    with c.connect() as conn:
        conn.execute("SELECT hlculid_generate()")
        # a directory where the mark's temporary file goes: every write of the mark fails
        as_server("mkdir", "--", str(c.data / "hlculid.hwm.tmp"))  # as its owner: root follows no link there
        start = logical(conn)
        mark_ms = int(conn.execute(
            "SELECT extract(epoch FROM high_water_mark) * 1000 FROM hlculid_clock()").fetchone()[0])
    returned, refused, last_ids = [0, 0], [0, 0], [[], []]
    deadline = time.monotonic() + 10

    def loop(k):
        with c.connect() as conn:
            while time.monotonic() < deadline:
                try:
                    last_ids[k].append(conn.execute(
                        "SELECT (hlculid_generate_n(1000))[1000]::text").fetchone()[0])
                    returned[k] += 1000
                except psycopg.errors.IoError:
                    refused[k] += 1

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(refused) > 1000, refused  # the callers really retried, many times
    with c.connect() as conn:
        end = logical(conn)
        # Nothing was taken past the mark durable when the outage began (plus at most one
        # batch per session racing it); the ids returned came from below it.
        assert end < (mark_ms + 1) << 16, (end - start, sum(returned))
        as_server("rmdir", "--", str(c.data / "hlculid.hwm.tmp"))
        deadline = time.time() + 10
        while True:
            try:
                nxt = conn.execute("SELECT hlculid_generate()::text").fetchone()[0]
                break
            except psycopg.errors.IoError:
                assert time.time() < deadline, "generation did not resume"
                time.sleep(0.05)
    issued = last_ids[0] + last_ids[1]
    assert all(nxt > x for x in issued)
