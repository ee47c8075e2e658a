"""Many servers, one order: two publishers and an aggregator subscribed to both with native
logical replication in binary mode. One publisher's clock runs 300 ms behind the other's."""

import threading
import time

import psycopg
import pytest

N_PER_PUBLISHER = 3000


def schema(conn):
    conn.execute("CREATE EXTENSION hlculid")
    conn.execute("""CREATE TABLE events (
        id hlculid PRIMARY KEY DEFAULT hlculid_generate(),
        origin text NOT NULL, seq int NOT NULL, cause hlculid)""")


def wait_for(cluster, query, expected, timeout=60):
    deadline = time.time() + timeout
    while True:
        got = cluster.one(query)
        if got == expected:
            return
        if time.time() > deadline:
            raise AssertionError(f"{query}: {got!r}, expected {expected!r}")
        time.sleep(0.2)


@pytest.fixture
def fleet(make_cluster):
    conf = ["wal_level = logical", "max_wal_senders = 10", "max_replication_slots = 10"]
    a = make_cluster("pub-a", faketime=True, conf=conf + ["hlculid.publisher_id = 10"]).start()
    b = make_cluster("pub-b", faketime=True, conf=conf + ["hlculid.publisher_id = 11"]).start()
    agg = make_cluster("aggregator", conf=conf + ["hlculid.publisher_id = 99"]).start()
    b.set_clock("-0.3")  # B runs 300 ms behind A
    for c in (a, b, agg):
        schema(c.connect())
    for c in (a, b):
        c.sql("CREATE PUBLICATION events_pub FOR TABLE events")
    for name, c in (("from_a", a), ("from_b", b)):
        agg.sql(f"CREATE SUBSCRIPTION {name} CONNECTION 'host={c.dir} port={c.port} user=postgres dbname=postgres' "
                f"PUBLICATION events_pub WITH (binary = true)")
    return a, b, agg


def test_every_row_arrives_unchanged_and_in_publisher_order(fleet):
    a, b, agg = fleet
    sent = {}

    def publish(c, origin):
        with c.connect() as conn:
            sent[origin] = [conn.execute(
                "INSERT INTO events (origin, seq) VALUES (%s, %s) RETURNING id::text", (origin, i)).fetchone()[0]
                for i in range(N_PER_PUBLISHER)]

    threads = [threading.Thread(target=publish, args=(a, "A")), threading.Thread(target=publish, args=(b, "B"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert agg.one("SELECT subbinary FROM pg_subscription WHERE subname = 'from_a'") is True
    wait_for(agg, "SELECT count(*) FROM events", 2 * N_PER_PUBLISHER)
    for origin, pub in (("A", 10), ("B", 11)):
        rows = agg.sql("SELECT id::text, seq, hlculid_publisher(id) FROM events WHERE origin = %s ORDER BY id",
                       (origin,))
        assert [r[0] for r in rows] == sent[origin], "ids changed on the way"
        assert [r[1] for r in rows] == list(range(N_PER_PUBLISHER)), "ORDER BY id is not insertion order"
        assert {r[2] for r in rows} == {pub}
    # both publishers' ids interleave into one order on the aggregator
    assert agg.one("SELECT count(DISTINCT id) FROM events") == 2 * N_PER_PUBLISHER


def test_observed_cause_sorts_before_its_effect_on_the_aggregator(fleet):
    a, b, agg = fleet
    # A (the fast clock) records a cause; B (300 ms behind) acts on it.
    cause = a.one("INSERT INTO events (origin, seq) VALUES ('A', 1) RETURNING id::text")
    with b.connect() as conn:
        # Without observe, B's clock puts its next event before the cause: the problem.
        unobserved = conn.execute(
            "INSERT INTO events (origin, seq, cause) VALUES ('B', 1, %s) RETURNING id::text", (cause,)).fetchone()[0]
        # With observe first, the effect sorts after its cause.
        conn.execute("SELECT hlculid_observe(%s)", (cause,))
        effect = conn.execute(
            "INSERT INTO events (origin, seq, cause) VALUES ('B', 2, %s) RETURNING id::text", (cause,)).fetchone()[0]
    wait_for(agg, "SELECT count(*) FROM events", 3)
    order = [r[0] for r in agg.sql("SELECT id::text FROM events ORDER BY id")]
    assert order.index(effect) > order.index(cause)
    assert order.index(unobserved) < order.index(cause), "the clocks were not skewed as the test intends"
    assert agg.one("SELECT bool_and(e.id > c.id) FROM events e JOIN events c ON c.id = e.cause "
                   "WHERE e.seq = 2 AND e.origin = 'B'") is True


@pytest.mark.full  # make test-full
def test_failover_to_a_standby_keeps_order_after_observing_the_last_id(make_cluster):
    """A promoted physical standby resumes from its own clock: its first ids can sort before the
    last ids of the old primary (here the standby's clock is 5 s behind). Observing the largest
    replicated id before taking writes, as the README's failover procedure says, fixes that."""
    conf = ["wal_level = replica", "hlculid.publisher_id = 20"]
    primary = make_cluster("primary", conf=conf).start()
    primary.sql("CREATE EXTENSION hlculid")
    primary.sql("CREATE TABLE events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    standby = make_cluster("standby", standby_of=primary, faketime=True)
    standby.set_clock("-5")
    standby.start()
    # The standby's copy of hlculid.hwm covers what the primary issued until the base backup
    # (plus its window); what it issues later reaches the standby only as rows.
    time.sleep(2)
    primary.sql("INSERT INTO events (n) SELECT generate_series(1, 1000)")
    last = primary.one("SELECT max(id)::text FROM events")
    lsn = primary.one("SELECT pg_current_wal_lsn()::text")
    wait_for(standby, f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn", True)
    primary.kill9_all()  # the primary dies
    standby.sql("SELECT pg_promote()")
    wait_for(standby, "SELECT pg_is_in_recovery()", False)
    # the same publisher id: the configuration came with the data directory
    assert standby.one("SELECT hlculid_publisher(hlculid_generate())") == 20
    assert standby.one("SELECT hlculid_generate()::text") < last, "the standby's clock was meant to be behind"
    # the failover procedure: observe the largest id of each table keyed by hlculid; a clock
    # further behind than hlculid.max_clock_skew makes observe refuse, so raise it for the step
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        standby.sql("SELECT hlculid_observe(max(id)) FROM events")
    standby.sql("ALTER SYSTEM SET hlculid.max_clock_skew = '1min'")
    standby.sql("SELECT pg_reload_conf()")
    wait_for(standby, "SHOW hlculid.max_clock_skew", "1min")
    standby.sql("SELECT hlculid_observe(max(id)) FROM events")
    standby.sql("ALTER SYSTEM RESET hlculid.max_clock_skew")
    standby.sql("SELECT pg_reload_conf()")
    assert standby.one("SELECT hlculid_generate()::text") > last
    assert standby.one("INSERT INTO events (n) VALUES (0) RETURNING id > %s::hlculid", (last,)) is True
