"""Active-active: three writable servers replicate one events table to each other with logical
replication and `origin = none` (PostgreSQL 16+; run on the newest tested major). Each generates
with its own publisher id under concurrent load; one is stopped mid-run and restarted. Afterwards
every server holds the same rows, no key ever conflicted, and ORDER BY id is identical on all."""

import threading
import time

import psycopg
import pytest
from pgcluster import PG

SECONDS = 30

pytestmark = [pytest.mark.full,  # make test-full (tests/TIERS.md)
              pytest.mark.skipif(str(PG) != "18", reason="active-active runs on the newest tested major (18)")]


def test_three_writable_servers_converge_without_conflicts(make_cluster):
    conf = ["wal_level = logical", "max_wal_senders = 20", "max_replication_slots = 20",
            "max_logical_replication_workers = 10", "wal_receiver_timeout = '10s'"]
    servers = [make_cluster(f"aa-{k}", conf=conf + [f"hlculid.publisher_id = {20 + k}"]).start() for k in range(3)]
    for s in servers:
        s.sql("CREATE EXTENSION hlculid")
        s.sql("CREATE TABLE events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), origin int, n int)")
        s.sql("CREATE PUBLICATION events_pub FOR TABLE events")
    for i, s in enumerate(servers):
        for j, other in enumerate(servers):
            if i != j:
                s.sql(f"CREATE SUBSCRIPTION s{i}_from_{j} CONNECTION "
                      f"'host={other.dir} port={other.port} user=postgres dbname=postgres' "
                      "PUBLICATION events_pub WITH (origin = none, copy_data = false, binary = true)")

    stop = time.time() + SECONDS
    errors, acked, lock = [], [0, 0, 0], threading.Lock()
    down = threading.Event()

    def load(k):
        n = 0
        while time.time() < stop:
            if k == 1 and down.is_set():
                time.sleep(0.05)
                continue
            try:
                with servers[k].connect() as conn:
                    while time.time() < stop and not (k == 1 and down.is_set()):
                        conn.execute("INSERT INTO events (origin, n) SELECT %s, g FROM generate_series(%s::int, %s::int) g",
                                     (k, n, n + 49))
                        n += 50
                        with lock:
                            acked[k] += 50
            except psycopg.OperationalError as e:
                if not (k == 1 and down.is_set()):  # only server 1, and only while it is down
                    errors.append(repr(e))
                    return
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
                return

    threads = [threading.Thread(target=load, args=(k,)) for k in range(3) for _ in range(2)]
    for t in threads:
        t.start()
    # one server goes away for a while mid-run, then comes back
    time.sleep(SECONDS / 3)
    down.set()
    time.sleep(0.5)
    servers[1].stop()
    time.sleep(5)
    servers[1].start()
    down.clear()
    for t in threads:
        t.join()
    assert errors == []
    local = [s.one("SELECT count(*) FROM events WHERE origin = %s", (k,)) for k, s in enumerate(servers)]
    # Every acknowledged insert is there; server 1 may also hold the batches in flight when it
    # went down (committed, but the clients saw the connection drop).
    assert local[0] == acked[0] and local[2] == acked[2], (local, acked)
    assert acked[1] <= local[1] <= acked[1] + 2 * 50, (local, acked)
    total = sum(local)
    assert total > 10_000

    deadline = time.time() + 120
    while True:
        got = [s.one("SELECT count(*) FROM events") for s in servers]
        if got == [total] * 3:
            break
        assert time.time() < deadline, f"servers did not converge: {got}, expected {total}"
        time.sleep(0.5)
    orders = [s.sql("SELECT id::text, origin, hlculid_publisher(id) FROM events ORDER BY id") for s in servers]
    assert orders[0] == orders[1] == orders[2]
    assert all(pub == 20 + origin for _, origin, pub in orders[0])
    for s in servers:
        assert "duplicate key" not in s.log()
        assert "conflict" not in s.log().lower()
        # apply_error_count also counts the lost connections while server 1 was down; key
        # conflicts are counted apart, and there must be none.
        stats = s.sql("SELECT subname, apply_error_count, confl_insert_exists FROM pg_stat_subscription_stats")
        assert len(stats) == 2 and all(conflicts == 0 for _, _, conflicts in stats), stats
        assert all(errors == 0 for name, errors, _ in stats if not name.endswith("_from_1")), stats
