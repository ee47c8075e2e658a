"""hlculid_create_partitions and hlculid_drop_partitions on a distributed table partitioned by
time on its hlculid key: Citus distributes each partition the helper creates and drops the shards
of each one it drops."""

import psycopg
import pytest
from conftest import shard_tables


def partitions(node, table):
    return node.sql("SELECT partition::text, is_default FROM hlculid_partition_bounds(%s) ORDER BY from_id NULLS LAST",
                    (table,))


def test_create_and_drop_partitions_on_a_distributed_time_partitioned_table(citus):
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE p_events (id hlculid NOT NULL DEFAULT hlculid_generate(), body text, PRIMARY KEY (id))"
           " PARTITION BY RANGE (id)")
    co.sql("SELECT create_distributed_table('p_events', 'id', shard_count => 4)")
    made = [r[0] for r in co.sql("SELECT p::text FROM hlculid_create_partitions("
                                  "'p_events', now() - interval '3 days', now() + interval '2 days', interval '1 day') p")]
    # the days that meet [now - 3 days, now + 2 days), UTC
    days = co.one("SELECT count(*) FROM generate_series(date_bin('1 day', now() - interval '3 days', 'epoch'),"
                  " now() + interval '2 days' - interval '1 microsecond', '1 day')")
    assert len(made) == days, made
    # every partition a distributed table colocated with its parent, with shards on both workers
    rows = co.sql("SELECT table_name::text, citus_table_type, colocation_id FROM citus_tables"
                  " WHERE table_name::text LIKE 'p\\_events%'")
    assert {r[0] for r in rows} == {"p_events", *made}
    assert {r[1] for r in rows} == {"distributed"} and len({r[2] for r in rows}) == 1
    for p in made[:1]:  # the shards are tables on the workers
        assert len(shard_tables(w1, p + "\\_%")) + len(shard_tables(w2, p + "\\_%")) == 4
    for p in made:
        ports = {r[0] for r in co.sql("SELECT DISTINCT nodeport FROM citus_shards WHERE table_name = %s::regclass", (p,))}
        assert ports == {w1.port, w2.port}, p
    # idempotent
    assert co.sql("SELECT hlculid_create_partitions('p_events', now() - interval '3 days', now() + interval '2 days',"
                  " interval '1 day')") == []

    # rows of now and of two days ago (ids made for a time: hlculid_min of it, plus a counter)
    co.sql("INSERT INTO p_events (body) SELECT 'now' FROM generate_series(1, 300)")
    co.sql("INSERT INTO p_events (id, body) SELECT hlculid_min(now() - interval '2 days' + g * interval '1 ms'),"
           " 'old' FROM generate_series(1, 200) g")
    today = co.one("SELECT partition::text FROM hlculid_partition_bounds('p_events')"
                   " WHERE hlculid_generate() >= from_id AND hlculid_generate() < to_id")
    assert co.one(f"SELECT count(*) FROM {today}") == 300
    assert co.one("SELECT count(*) FROM p_events") == 500
    # a window is pruned to its partition and goes to every shard of it
    plan = "\n".join(r[0] for r in co.sql(
        "EXPLAIN (COSTS OFF) SELECT count(*) FROM p_events"
        " WHERE id >= hlculid_min(now() - interval '1 minute') AND id < hlculid_min(now() + interval '1 minute')"))
    assert "Task Count: 4" in plan, plan

    # retention: the partitions whose rows are all older than yesterday, shards included
    dropped = [r[0] for r in co.sql("SELECT hlculid_drop_partitions('p_events', now() - interval '1 day')")]
    assert len(dropped) >= 2, dropped
    left = [p for p, _ in partitions(co, "p_events")]
    assert not set(left) & {d.split(".")[-1] for d in dropped}
    assert co.one("SELECT count(*) FROM p_events") == 300  # the old rows went with their partitions
    for d in dropped:
        name = d.split(".")[-1]
        assert co.one("SELECT count(*) FROM citus_shards WHERE table_name::text = %s", (name,)) == 0
        for w in (w1, w2):
            assert shard_tables(w, name + "\\_%") == [], (w.port, name)
    co.sql("DROP TABLE p_events")


def test_create_partitions_with_a_default_partition_moves_waiting_rows(citus):
    co = citus.coordinator
    co.sql("DROP TABLE IF EXISTS d_events")
    co.sql("CREATE TABLE d_events (id hlculid NOT NULL DEFAULT hlculid_generate(), body text, PRIMARY KEY (id))"
           " PARTITION BY RANGE (id)")
    co.sql("CREATE TABLE d_events_default PARTITION OF d_events DEFAULT")
    co.sql("SELECT create_distributed_table('d_events', 'id', shard_count => 4)")
    co.sql("INSERT INTO d_events (body) SELECT 'waiting' FROM generate_series(1, 100)")
    assert co.one("SELECT count(*) FROM d_events_default") == 100
    made = co.sql("SELECT hlculid_create_partitions('d_events', now() - interval '1 day', now() + interval '1 day',"
                  " interval '1 day')")
    assert len(made) >= 2
    assert co.one("SELECT count(*) FROM d_events_default") == 0
    assert co.one("SELECT count(*) FROM d_events") == 100
