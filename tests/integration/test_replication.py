"""Many servers, one order: two publishers and an aggregator subscribed to both with native
logical replication in binary mode. One publisher's clock runs 300 ms behind the other's."""

import threading
import time

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
