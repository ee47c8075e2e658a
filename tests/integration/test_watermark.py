"""Watermarks across publishers (0.4.0): the background worker publishing a server's horizon,
and two publishers replicating their events and hlculid.hlculid_horizons rows to an aggregator, whose
reader below hlculid_watermark() gets every event exactly once, in id order, while a publisher
holds a transaction open, and stops while a publisher stops publishing."""

import random
import threading
import time

import pytest

from pgcluster import by_tier, write_as_server

LOGICAL = ("wal_level = logical", "max_wal_senders = 10", "max_replication_slots = 10")


def publishing(publisher, interval_ms=100):
    return (f"hlculid.publisher_id = {publisher}", "hlculid.horizon_database = 'postgres'",
            f"hlculid.horizon_interval = {interval_ms}")


def wait_for(check, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while not check():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_the_worker_publishes_the_horizon_of_an_idle_server_and_stops_when_told(make_cluster):
    c = make_cluster("horizon-worker", conf=publishing(7)).start()
    c.sql("CREATE EXTENSION hlculid")
    wait_for(lambda: c.one("SELECT count(*) FROM hlculid.hlculid_horizons") == 1, what="the first row")
    assert c.one("SELECT publisher FROM hlculid.hlculid_horizons") == 7
    first = c.one("SELECT horizon::text FROM hlculid.hlculid_horizons")
    time.sleep(0.5)
    # no id was made, yet the horizon follows the wall clock
    second, age = c.sql("SELECT horizon::text, clock_timestamp() - hlculid_ts(horizon) < interval '2 s' "
                        "FROM hlculid.hlculid_horizons")[0]
    assert second > first and age
    # a transaction holding ids holds the published horizon too
    holder = c.connect(autocommit=False)
    held = holder.execute("SELECT hlculid_generate()::text").fetchone()[0]
    time.sleep(0.5)
    assert c.one("SELECT horizon::text FROM hlculid.hlculid_horizons") <= held
    holder.commit()
    wait_for(lambda: c.one("SELECT horizon::text FROM hlculid.hlculid_horizons") > held, what="release")
    # interval 0: no more rows written
    write_as_server(c.data / "postgresql.conf", "hlculid.horizon_interval = 0\n", append=True)
    c.sql("SELECT pg_reload_conf()")
    time.sleep(0.5)
    stopped = c.one("SELECT updated_at FROM hlculid.hlculid_horizons")
    time.sleep(0.5)
    assert c.one("SELECT updated_at FROM hlculid.hlculid_horizons") == stopped


def test_the_worker_waits_for_the_extension_in_its_database(make_cluster):
    c = make_cluster("horizon-worker-noext", conf=publishing(8)).start()
    wait_for(lambda: "is not installed in database" in c.log(), what="the worker's log line")
    c.sql("CREATE EXTENSION hlculid")
    wait_for(lambda: c.one("SELECT count(*) FROM hlculid.hlculid_horizons") == 1, what="the row")


@pytest.fixture
def fleet(make_cluster):
    a = make_cluster("wm-pub-a", conf=LOGICAL + publishing(10)).start()
    b = make_cluster("wm-pub-b", conf=LOGICAL + publishing(11)).start()
    agg = make_cluster("wm-aggregator", conf=LOGICAL + ("hlculid.publisher_id = 99",)).start()
    for c in (a, b, agg):
        c.sql("CREATE EXTENSION hlculid")
        c.sql("CREATE TABLE events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), origin text, seq int)")
    for c in (a, b):
        wait_for(lambda c=c: c.one("SELECT count(*) FROM hlculid.hlculid_horizons") == 1, what="own row")
        c.sql("CREATE PUBLICATION events_pub FOR TABLE events, hlculid.hlculid_horizons")
    for name, c in (("from_a", a), ("from_b", b)):
        agg.sql(f"CREATE SUBSCRIPTION {name} CONNECTION 'host={c.dir} port={c.port} user=postgres dbname=postgres' "
                f"PUBLICATION events_pub WITH (binary = true)")
    wait_for(lambda: agg.one("SELECT hlculid_watermark(ARRAY[10, 11]) IS NOT NULL"), what="a watermark")
    return a, b, agg


def test_a_reader_below_the_watermark_gets_every_event_once_in_order(fleet):
    a, b, agg = fleet
    assert agg.one("SELECT hlculid_watermark(ARRAY[10, 11, 12])") is None  # 12 never reported
    stop = threading.Event()
    errors = []

    def write(c, origin, seed):
        rnd = random.Random(seed)
        try:
            with c.connect(autocommit=False) as conn:
                seq = 0
                while not stop.is_set():
                    seq += 1
                    conn.execute("INSERT INTO events (origin, seq) VALUES (%s, %s)", (origin, seq))
                    time.sleep(1.5 if seq == 5 and origin == "A1" else rnd.random() * 0.03)
                    conn.commit()
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    got, last = [], None
    writers = [threading.Thread(target=write, args=(c, f"{o}{i}", i)) for c, o in ((a, "A"), (b, "B")) for i in range(3)]
    for t in writers:
        t.start()
    deadline = time.time() + by_tier(4, 12)
    with agg.connect() as conn:
        def poll():
            nonlocal last
            w = conn.execute("SELECT hlculid_watermark(ARRAY[10, 11])::text").fetchone()[0]
            if w is None:
                return []
            rows = conn.execute(
                "SELECT id::text FROM events WHERE (%s::hlculid IS NULL OR id > %s::hlculid) AND id < %s::hlculid "
                "ORDER BY id", (last, last, w)).fetchall()
            if rows:
                last = rows[-1][0]
            return [r[0] for r in rows]

        while time.time() < deadline:
            got += poll()
            time.sleep(0.02)
        stop.set()
        for t in writers:
            t.join(30)
        assert not errors, errors
        sent = {r[0] for c in (a, b) for r in c.sql("SELECT id::text FROM events")}
        # once everything has arrived and both horizons passed it, the reader catches up
        wait_for(lambda: agg.one("SELECT count(*) FROM events") == len(sent), what="replication")
        wait_for(lambda: agg.one("SELECT hlculid_watermark(ARRAY[10, 11]) > max(id) FROM events"),
                 what="the watermark past every event")
        got += poll()
    assert len(got) == len(set(got)), "an event was read twice"
    assert got == sorted(got), "events were read out of order"
    assert set(got) == sent, f"{len(sent - set(got))} events never read"


def test_the_watermark_stops_at_a_publisher_that_stops_publishing(fleet):
    a, b, agg = fleet
    write_as_server(b.data / "postgresql.conf", "hlculid.horizon_interval = 0\n", append=True)
    b.sql("SELECT pg_reload_conf()")
    time.sleep(0.5)
    b_last = b.one("SELECT horizon::text FROM hlculid.hlculid_horizons")
    wait_for(lambda: agg.one("SELECT horizon::text FROM hlculid.hlculid_horizons WHERE publisher = 11") == b_last,
             what="B's last row")
    for i in range(50):
        a.sql("INSERT INTO events (origin, seq) VALUES ('A', %s)", (i,))
    time.sleep(1)
    # A moved on; the watermark waits for B
    assert agg.one("SELECT hlculid_watermark(ARRAY[10, 11])::text") == b_last
    assert agg.one("SELECT hlculid_watermark(ARRAY[10])::text") > b_last
    write_as_server(b.data / "postgresql.conf", "hlculid.horizon_interval = 100\n", append=True)
    b.sql("SELECT pg_reload_conf()")
    wait_for(lambda: agg.one("SELECT hlculid_watermark(ARRAY[10, 11])::text") > b_last, what="B resuming")
