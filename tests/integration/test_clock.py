"""The clock against real servers: concurrency, clock steps, a frozen clock, restarts and
crashes with the clock moved back, observe, settings, and a server without the preload."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from pgcluster import read_as_server, signal_server_process


def gen_in_order(conn, n):
    """n ids in generation order (the row order of generate_series)."""
    return [r[0] for r in conn.execute(
        "SELECT hlculid_generate()::text FROM generate_series(1, %s)", (n,)).fetchall()]


def setup_ext(c):
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")


@pytest.mark.full  # a 30 s soak: make test-full
def test_preempted_sessions_report_no_backward_step_that_never_happened(make_cluster):
    """Four generating sessions and two CPU hogs on this 2-core machine for 30 s, the clock never
    moved: a session preempted between reading the clock and ticking holds a reading older than
    one another session recorded meanwhile, and that must not be taken for a backward step."""
    c = make_cluster("preempt", conf=["hlculid.publisher_id = 3"]).start()
    setup_ext(c)
    seconds = 30
    deadline = time.time() + seconds
    # each hog stops by itself after the test's time, and is killed as soon as the test ends
    hog = f"import time\nend = time.time() + {seconds + 10}\nwhile time.time() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(2)]
    errors, counts = [], []

    def worker():
        n = 0
        try:
            with c.connect() as conn:
                while time.time() < deadline:
                    n += conn.execute("SELECT count(hlculid_generate()) FROM generate_series(1, 500)").fetchone()[0]
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        counts.append(n)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert errors == []
    assert sum(counts) > 10_000
    assert c.one("SELECT backward_jumps FROM hlculid_clock()") == 0
    assert "went backwards" not in c.log()


def test_concurrent_sessions_never_duplicate_and_each_increases(make_cluster):
    c = make_cluster("concurrent", conf=["hlculid.publisher_id = 3"]).start()
    setup_ext(c)
    results, errors = {}, []

    def worker(k):
        try:
            with c.connect() as conn:
                out = []
                for _ in range(20):
                    out += gen_in_order(conn, 2000)
                results[k] = out
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    everything = []
    for k, out in results.items():
        assert all(a < b for a, b in zip(out, out[1:])), f"session {k} not strictly increasing"
        everything += out
    assert len(everything) == 4 * 20 * 2000
    assert len(set(everything)) == len(everything), "duplicate ids across sessions"


def test_batches_from_concurrent_sessions_never_overlap_and_each_increases(make_cluster):
    """Four sessions mixing hlculid_generate_n(1000) with single ids: no id twice, every
    session's ids (batch by batch, in order) strictly increasing."""
    c = make_cluster("batches", conf=["hlculid.publisher_id = 3"]).start()
    setup_ext(c)
    results, errors = {}, []

    def worker(k):
        try:
            with c.connect() as conn:
                out = []
                for i in range(40):
                    if (i + k) % 2:
                        out += conn.execute(
                            "SELECT x::text FROM unnest(hlculid_generate_n(1000)) WITH ORDINALITY u(x, i) ORDER BY i"
                        ).fetchall()
                    else:
                        out += conn.execute("SELECT hlculid_generate()::text").fetchall()
                results[k] = [r[0] for r in out]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    everything = []
    for k, out in results.items():
        assert all(a < b for a, b in zip(out, out[1:])), f"session {k} not strictly increasing"
        everything += out
    assert len(everything) == 4 * 20 * 1001
    assert len(set(everything)) == len(everything), "an id issued twice"


def test_batches_after_a_restart_with_the_clock_stepped_back_sort_after_everything(make_cluster):
    c = make_cluster("batch-restart", faketime=True).start()
    setup_ext(c)
    before = c.one("SELECT max(x)::text FROM unnest(hlculid_generate_n(5000)) x")
    c.stop()
    c.set_clock("-10")
    c.start()
    after = c.sql("SELECT x::text FROM unnest(hlculid_generate_n(5000)) WITH ORDINALITY u(x, i) ORDER BY i")
    after = [r[0] for r in after]
    assert after[0] > before
    assert after == sorted(after) and len(set(after)) == 5000


def test_ids_from_different_sessions_increase_in_call_order(make_cluster):
    c = make_cluster("interleaved").start()
    setup_ext(c)
    a, b = c.connect(), c.connect()
    seq = []
    for i in range(2000):
        conn = a if i % 2 else b
        seq.append(conn.execute("SELECT hlculid_generate()::text").fetchone()[0])
    assert seq == sorted(seq) and len(set(seq)) == len(seq)


def test_parallel_workers_share_the_clock(make_cluster):
    c = make_cluster("parallel", conf=["max_worker_processes = 8", "max_parallel_workers = 4"]).start()
    setup_ext(c)
    with c.connect() as conn:
        conn.execute("CREATE TABLE src AS SELECT g FROM generate_series(1, 200000) g")
        conn.execute("ANALYZE src")
        for s in ["SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
                  "SET min_parallel_table_scan_size = 0", "SET max_parallel_workers_per_gather = 2"]:
            conn.execute(s)
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT count(DISTINCT x) FROM (SELECT hlculid_generate() x FROM src) s").fetchall())
        assert "Gather" in plan and "Workers Planned: 2" in plan, plan
        n, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT x) FROM (SELECT hlculid_generate() x FROM src) s").fetchone()
        assert n == distinct == 200000


def test_backward_step_is_warned_once_and_ids_keep_increasing(make_cluster):
    c = make_cluster("stepback", faketime=True).start()
    setup_ext(c)
    with c.connect() as conn:
        notices = []
        conn.add_notice_handler(lambda d: notices.append((d.severity, d.message_primary or "")))
        before = gen_in_order(conn, 1000)
        c.set_clock("-5")
        after = gen_in_order(conn, 5000)
        seq = before + after
        assert seq == sorted(seq) and len(set(seq)) == len(seq)
        warnings = [n for n in notices if "went backwards" in n[1]]
        assert len(warnings) == 1, notices
        m = re.search(r"went backwards by (\d+) ms", warnings[0][1])
        assert 4900 <= int(m.group(1)) <= 5100
        assert warnings[0][0] == "WARNING"
        jumps, drift = conn.execute("SELECT backward_jumps, drift_ms FROM hlculid_clock()").fetchone()
        assert jumps == 1
        assert 4000 <= drift <= 5100  # logical time carries on from before the step
        # the ids carry the last time seen, not the stepped-back time
        last_before = conn.execute("SELECT hlculid_ts(%s::hlculid)", (before[-1],)).fetchone()[0]
        first_after = conn.execute("SELECT hlculid_ts(%s::hlculid)", (after[0],)).fetchone()[0]
        assert first_after >= last_before
    assert "went backwards" in c.log()


def test_frozen_clock_issues_more_than_65536_ids_in_one_millisecond(make_cluster):
    c = make_cluster("frozen", faketime=True).start()
    setup_ext(c)
    frozen = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
    c.set_clock(frozen.strftime("%Y-%m-%d %H:%M:%S"))
    with c.connect() as conn:
        assert conn.execute("SELECT clock_timestamp() = clock_timestamp()").fetchone()[0] is True
        seq = gen_in_order(conn, 200_000)
        assert len(set(seq)) == 200_000
        assert seq == sorted(seq)
        counters = conn.execute(
            "SELECT count(DISTINCT hlculid_ts(x)), max(hlculid_counter(x)) FROM unnest(%s::hlculid[]) x",
            (seq,)).fetchone()
        assert counters[0] >= 3  # carried past the frozen millisecond
        assert counters[1] == 65535
        overflows = conn.execute("SELECT overflows FROM hlculid_clock()").fetchone()[0]
        assert overflows >= 3


def _max_issued_until_killed(c, seconds=1.5):
    """Generates ids in a tight loop from two sessions until the whole server is killed -9;
    returns the largest id any session received."""
    seen, stop, killing = [], threading.Event(), threading.Event()

    def loop():
        try:
            with c.connect() as conn:
                while not stop.is_set():
                    seen.append(conn.execute(
                        "SELECT max(hlculid_generate())::text FROM generate_series(1, 500)").fetchone()[0])
        except psycopg.OperationalError:
            if not killing.is_set():  # only the kill may end a session; anything else fails the test
                raise

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    killing.set()
    c.kill9_all()
    stop.set()
    for t in threads:
        t.join()
    assert seen
    return max(seen)


def test_restart_with_clock_stepped_back(make_cluster):
    c = make_cluster("restart", faketime=True).start()
    setup_ext(c)
    last = max(gen_in_order(c.connect(), 10000))
    c.stop()
    c.set_clock("-5")
    c.start()
    first = c.one("SELECT hlculid_generate()::text")
    assert first > last
    wall, logical = c.sql("SELECT wall_time, logical_time FROM hlculid_clock()")[0]
    assert logical > wall  # it resumed above the old ids, ahead of the stepped-back clock


def test_crash_of_the_whole_server_with_clock_stepped_back(make_cluster):
    c = make_cluster("crash", faketime=True).start()
    setup_ext(c)
    last = _max_issued_until_killed(c)
    c.set_clock("-5")
    c.start()
    first = c.one("SELECT hlculid_generate()::text")
    assert first > last, (first, last)


def test_backend_crash_restart_keeps_order(make_cluster):
    c = make_cluster("backendcrash", faketime=True,
                     conf=["restart_after_crash = on"]).start()
    setup_ext(c)
    victim = c.connect()
    victim_pid = victim.execute("SELECT pg_backend_pid()").fetchone()[0]
    last = max(gen_in_order(c.connect(), 5000))
    c.set_clock("-3")
    signal_server_process(victim_pid, signal.SIGKILL)  # the postmaster resets shared memory
    time.sleep(0.5)
    c.wait_ready()
    first = c.one("SELECT hlculid_generate()::text")
    assert first > last
    assert "terminated by signal 9" in c.log()


def test_high_water_mark_is_persisted_ahead_of_use(make_cluster):
    c = make_cluster("hwm").start()
    setup_ext(c)
    with c.connect() as conn:
        gen_in_order(conn, 1000)
        time.sleep(0.3)
        logical, mark = conn.execute(
            "SELECT logical_time, high_water_mark FROM hlculid_clock()").fetchone()
        assert mark >= logical
    text = read_as_server(c.data / "hlculid.hwm")
    assert text.startswith("hlculid-hwm 1 ")
    persisted_ms = int(text.split()[2]) >> 16
    assert persisted_ms >= int(mark.timestamp() * 1000) - 1


def test_observe_against_a_server_whose_clock_is_behind(make_cluster):
    # Our server runs 400 ms behind; a remote id from "real" time is 400 ms ahead of it.
    c = make_cluster("observe", faketime=True, conf=["hlculid.max_clock_skew = 500"]).start()
    setup_ext(c)
    c.set_clock("-0.4")
    with c.connect() as conn:
        remote = conn.execute(
            "SELECT hlculid_from_parts(now() + interval '300 milliseconds', 5, 99, 0)::text").fetchone()[0]
        conn.execute("SELECT hlculid_observe(%s)", (remote,))
        nxt = conn.execute("SELECT hlculid_generate()::text").fetchone()[0]
        assert nxt > remote
        assert conn.execute("SELECT observes FROM hlculid_clock()").fetchone()[0] == 1
        before = conn.execute("SELECT logical_time FROM hlculid_clock()").fetchone()[0]
        far = conn.execute(
            "SELECT hlculid_from_parts(clock_timestamp() + interval '1 hour', 0, 99, 0)::text").fetchone()[0]
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            conn.execute("SELECT hlculid_observe(%s)", (far,))
        assert "ms ahead of the local clock" in str(e.value)
        after = conn.execute("SELECT logical_time, observes FROM hlculid_clock()").fetchone()
        assert after[0] - before < timedelta(seconds=5) and after[1] == 1
        assert conn.execute("SELECT hlculid_generate() < %s::hlculid", (far,)).fetchone()[0]


def test_ordinary_role_cannot_change_clock_settings(make_cluster):
    c = make_cluster("roles", conf=["hlculid.publisher_id = 9"]).start()
    setup_ext(c)
    c.sql("CREATE ROLE app LOGIN")
    with c.connect(user="app") as conn:
        assert conn.execute("SELECT hlculid_publisher(hlculid_generate())").fetchone()[0] == 9
        for stmt in ["SET hlculid.publisher_id = 5", "SET hlculid.max_clock_skew = '1h'",
                     "ALTER SYSTEM SET hlculid.publisher_id = 5",
                     "SELECT set_config('hlculid.publisher_id', '5', false)"]:
            with pytest.raises(psycopg.Error) as e:
                conn.execute(stmt)
            assert e.value.sqlstate in ("55P02", "42501"), (stmt, e.value.sqlstate)
        assert conn.execute("SHOW hlculid.publisher_id").fetchone()[0] == "9"


def test_unset_publisher_is_derived_and_logged(make_cluster):
    c = make_cluster("derived").start()
    setup_ext(c)
    pub, source = c.sql("SELECT publisher, publisher_source FROM hlculid_clock()")[0]
    assert source == "system identifier"
    assert c.one("SELECT hlculid_publisher(hlculid_generate())") == pub
    sysid = int(c.one("SELECT system_identifier FROM pg_control_system()"))
    folded = ((sysid >> 48) ^ (sysid >> 32) ^ (sysid >> 16) ^ sysid) & 0x7FFF  # bit 15 clear (0.3.0)
    assert pub == folded
    deadline = time.time() + 10
    while f"using publisher id {pub}, derived from the system identifier" not in c.log():
        assert time.time() < deadline, c.log()
        time.sleep(0.1)
    assert "Set hlculid.publisher_id" in c.log()


def test_without_preload_only_generation_fails(make_cluster):
    c = make_cluster("nopreload", preload=False).start()
    setup_ext(c)
    assert c.one("SELECT hlculid_ts('017FC21C5E7A-0000-000A-AAA111111111')::text").startswith("2022-03-25")
    c.sql("CREATE TABLE t (id hlculid PRIMARY KEY)")
    c.sql("INSERT INTO t VALUES ('017FC21C5E7A-0000-000A-AAA111111111')")
    assert c.one("SELECT count(*) FROM t WHERE id < hlculid_max(now())") == 1
    for call in ["hlculid_generate()", "hlculid_generate_at(now())",
                 "hlculid_observe('017FC21C5E7A-0000-000A-AAA111111111')", "* FROM hlculid_clock()"]:
        with c.connect() as conn:
            with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
                conn.execute(f"SELECT {call}")
            diag = e.value.diag
            assert "shared_preload_libraries" in diag.message_primary
            assert "Add hlculid to shared_preload_libraries" in diag.message_hint
            assert "panic" not in str(e.value).lower()
    # the server is fine afterwards
    assert c.one("SELECT 1") == 1


def test_backends_draw_from_separate_random_streams(make_cluster):
    # A stream inherited from the postmaster would make two backends repeat each other's bits.
    c = make_cluster("random").start()
    setup_ext(c)
    q = "SELECT hlculid_random(hlculid_generate()) FROM generate_series(1, 5000)"
    streams = []
    for _ in range(3):
        with c.connect() as conn:
            streams.append([r[0] for r in conn.execute(q).fetchall()])
    seen = set()
    for s in streams:
        assert len(set(s)) == len(s)
        assert not seen & set(s), "two backends drew the same random values"
        seen |= set(s)
    # and the bits are spread over all 48
    assert max(seen) >= 1 << 46 and all(0 <= v < 1 << 48 for v in seen)
