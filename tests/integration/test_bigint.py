"""bigint ids against real servers, through the same clock as 128-bit ids: concurrent sessions
mixing both widths, a backward step of the wall clock, restarts and a crash with the clock
stepped back, the run-ahead bound, and a server whose publisher id does not fit."""

import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest



def setup(c):
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")


def logical_of_big(b):
    return (b >> 21) << 16 | ((b >> 10) & 2047)


def logical_of_wide(text):
    return int(text[:12], 16) << 16 | int(text[13:17], 16)


def test_concurrent_sessions_mixing_both_widths_share_one_order(make_cluster):
    c = make_cluster("bigmix", conf=["hlculid.publisher_id = 77"]).start()
    setup(c)
    seqs = [[] for _ in range(4)]

    def worker(k):
        with c.connect() as conn:
            for _ in range(150):
                if k % 2:
                    rows = conn.execute("SELECT unnest(hlculid_generate_bigint_n(50))").fetchall()
                    seqs[k] += [logical_of_big(r[0]) for r in rows]
                else:
                    rows = conn.execute(
                        "SELECT hlculid_generate_bigint(), hlculid_generate()::text FROM generate_series(1, 20)").fetchall()
                    for b, w in rows:
                        seqs[k] += [logical_of_big(b), logical_of_wide(w)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [v for s in seqs for v in s]
    # every clock value was issued once, whatever the width, and each session saw them increase
    assert len(set(everything)) == len(everything)
    for s in seqs:
        assert s == sorted(s)
    assert all(v & 0xFFFF < 2048 for k in (1, 3) for v in seqs[k])


def test_bigint_ids_after_a_backward_step_and_restarts_sort_after_everything(make_cluster):
    c = make_cluster("bigrestart", faketime=True, conf=["hlculid.publisher_id = 5"]).start()
    setup(c)
    with c.connect() as conn:
        before = [r[0] for r in conn.execute(
            "SELECT hlculid_generate_bigint() FROM generate_series(1, 2000)").fetchall()]
        c.set_clock("-5")
        during = [r[0] for r in conn.execute(
            "SELECT hlculid_generate_bigint() FROM generate_series(1, 2000)").fetchall()]
        assert conn.execute("SELECT waits FROM hlculid_clock_bound()").fetchone()[0] == 0
    assert before + during == sorted(before + during)
    assert len(set(before + during)) == 4000
    assert "went backwards" in c.log()
    # a restart with the clock still 5 s behind
    c.stop()
    c.start()
    after = c.one("SELECT hlculid_generate_bigint()")
    assert after > max(during)
    # a crash of the whole server, the clock 10 s behind
    c.set_clock("-10")
    with c.connect() as conn:
        last = conn.execute("SELECT max(x) FROM unnest(hlculid_generate_bigint_n(10000)) x").fetchone()[0]
    c.kill9_all()
    c.start()
    assert c.one("SELECT hlculid_generate_bigint()") > last
    # and a 128-bit id made now sorts after the bigint ids, as from_bigint shows
    assert c.one("SELECT hlculid_generate() > hlculid_from_bigint(%s)", (last,))


def test_bigint_generation_waits_at_the_bound(make_cluster):
    c = make_cluster("bigbound", faketime=True, conf=["hlculid.publisher_id = 5", "hlculid.max_clock_skew = 50"]).start()
    setup(c)
    frozen = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
    c.set_clock(frozen.strftime("%Y-%m-%d %H:%M:%S"))
    got = []
    with c.connect() as conn:
        conn.execute("SET statement_timeout = '1s'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            while True:
                got.append(conn.execute("SELECT max(x) FROM unnest(hlculid_generate_bigint_n(2048)) x").fetchone()[0])
    frozen_ms = int(frozen.timestamp() * 1000)
    # one millisecond's 2048 ids a batch: 51 batches up to the bound, then a wait
    assert len(got) == 51
    assert max(got) >> 21 == frozen_ms + 50
    assert c.one("SELECT waits FROM hlculid_clock_bound()") >= 1


def test_a_publisher_over_1023_cannot_make_bigint_ids(make_cluster):
    c = make_cluster("bigwide", conf=["hlculid.publisher_id = 1024"]).start()
    setup(c)
    for call in ["hlculid_generate_bigint()", "hlculid_generate_bigint_n(3)"]:
        with c.connect() as conn:
            before = conn.execute("SELECT logical_time, counter FROM hlculid_clock()").fetchone()
            with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
                conn.execute(f"SELECT {call}")
            assert e.value.diag.message_primary == "publisher id 1024 does not fit a bigint id"
            assert "0 to 1023" in e.value.diag.message_hint
            # nothing was taken from the clock
            assert conn.execute("SELECT logical_time, counter FROM hlculid_clock()").fetchone() == before
    # 128-bit ids are unaffected
    assert c.one("SELECT hlculid_publisher(hlculid_generate())") == 1024
