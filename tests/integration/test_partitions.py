"""Time partitions keyed on the id (README, "Time partitions"): hlculid_create_partitions and
hlculid_drop_partitions on a table PARTITION BY RANGE (id): rows land in the partition of their
time, pruning at plan time and at execution time, a default partition, indexes per partition,
retention that loses no other row, idempotence, and logical replication through the root."""

import re
import time
from datetime import datetime, timezone

import psycopg
import pytest

UTC = "timezone = 'UTC'"
TABLE = """CREATE TABLE ev (id hlculid NOT NULL, body text) PARTITION BY RANGE (id);
           CREATE INDEX ON ev (id); CREATE INDEX ON ev USING brin (id);"""


def months_around_now(c):
    """Partitions for two months back to two months ahead, monthly, and a default."""
    made = c.sql("""SELECT p::text FROM hlculid_create_partitions('ev',
                        date_trunc('month', now()) - interval '2 months',
                        date_trunc('month', now()) + interval '2 months') p""")
    c.sql("CREATE TABLE ev_default PARTITION OF ev DEFAULT")
    return [r[0] for r in made]


def test_rows_land_in_the_partition_of_their_time_and_retention_keeps_the_rest(make_cluster):
    c = make_cluster("partitions", conf=["hlculid.publisher_id = 12", UTC]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql(TABLE)
    made = months_around_now(c)
    now = datetime.now(timezone.utc)
    assert len(made) == 4
    assert f"ev_p{now:%Y_%m}" in made
    # idempotent: a second run makes nothing; a longer span makes only the new months
    assert c.sql("SELECT * FROM hlculid_create_partitions('ev', now() - interval '2 months', now() + interval '1 month')") == []
    more = c.sql("""SELECT p::text FROM hlculid_create_partitions('ev', now(),
                        date_trunc('month', now()) + interval '3 months') p""")
    assert len(more) == 1

    # rows of every month (backfilled), now, and far outside the partitions
    c.sql("""INSERT INTO ev SELECT hlculid_generate_at(date_trunc('month', now()) + (m || ' months')::interval
                                                       + (d || ' days')::interval), 'm' || m
             FROM generate_series(-2, 2) m, generate_series(0, 27) d""")
    c.sql("INSERT INTO ev SELECT hlculid_generate(), 'now' FROM generate_series(1, 100)")
    c.sql("INSERT INTO ev VALUES (hlculid_generate_at('2001-01-01+00'), 'old'), (hlculid_generate_at('2300-01-01+00'), 'future')")
    wrong = c.one("""SELECT count(*) FROM ev
                     WHERE tableoid::regclass::text <> 'ev_p' || to_char(hlculid_ts(id) AT TIME ZONE 'UTC', 'YYYY_MM')
                       AND tableoid::regclass::text <> 'ev_default'""")
    assert wrong == 0
    assert sorted(r[0] for r in c.sql("SELECT body FROM ev_default")) == ["future", "old"]
    # every partition has both indexes
    per_part = c.sql("""SELECT c.relname, count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                        JOIN pg_index x ON x.indrelid = c.oid WHERE i.inhparent = 'ev'::regclass GROUP BY 1""")
    assert len(per_part) == 6 and all(n == 2 for _, n in per_part)

    # retention: the months wholly before last month go; nothing else does
    total = c.one("SELECT count(*) FROM ev")
    oldest = c.one("SELECT count(*) FROM ev WHERE hlculid_ts(id) < date_trunc('month', now()) - interval '1 month' AND body <> 'old'")
    gone = c.sql("SELECT * FROM hlculid_drop_partitions('ev', date_trunc('month', now()) - interval '1 month')")
    assert [g[0] for g in gone] == [f"public.{made[0]}"]
    assert c.one("SELECT count(*) FROM ev") == total - oldest
    assert c.one("SELECT to_regclass(%s)", (made[0],)) is None
    # again: nothing more to retire; the default partition is never retired
    assert c.sql("SELECT * FROM hlculid_drop_partitions('ev', date_trunc('month', now()) - interval '1 month')") == []
    detached = c.sql("SELECT * FROM hlculid_drop_partitions('ev', date_trunc('month', now()), true)")
    assert [g[0] for g in detached] == [f"public.{made[1]}"]
    assert c.one("SELECT count(*) FROM " + made[1]) == 28  # detached, kept
    assert c.one("SELECT count(*) FROM ev_default") == 2


def test_pruning_at_plan_time_and_at_execution_time(make_cluster):
    c = make_cluster("pruning", conf=[UTC]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql(TABLE)
    months_around_now(c)
    c.sql("INSERT INTO ev SELECT hlculid_generate(), 'x' FROM generate_series(1, 1000)")
    c.sql("ANALYZE ev")
    now = datetime.now(timezone.utc)
    # a constant window: only this month's partition is in the plan
    lo = c.one("SELECT hlculid_min(date_trunc('month', now()))::text")
    hi = c.one("SELECT hlculid_min(date_trunc('month', now()) + interval '1 month')::text")
    plan = "\n".join(r[0] for r in c.sql(
        f"EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE id >= '{lo}' AND id < '{hi}'"))
    assert set(re.findall(r"\bon (ev_\w+)", plan)) == {f"ev_p{now:%Y_%m}"}, plan
    # a window relative to now(): pruned when the executor starts
    plan = "\n".join(r[0] for r in c.sql(
        """EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
           SELECT * FROM ev WHERE id >= hlculid_min(now() - interval '1 hour')"""))
    assert "Subplans Removed" in plan, plan


def test_bad_tables_and_intervals_are_refused(make_cluster):
    c = make_cluster("partition-errors", conf=[UTC]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE plain (id hlculid PRIMARY KEY)")
    c.sql("CREATE TABLE by_text (k text) PARTITION BY RANGE (k)")
    c.sql(TABLE)
    for table in ("plain", "by_text"):
        with pytest.raises(psycopg.errors.WrongObjectType):
            c.sql(f"SELECT hlculid_create_partitions('{table}', now(), now() + interval '1 month')")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        c.sql("SELECT hlculid_create_partitions('ev', now(), now() + interval '1 day', interval '1 month 2 hours')")
    with pytest.raises(psycopg.errors.ProgramLimitExceeded):
        c.sql("SELECT hlculid_create_partitions('ev', now(), now() + interval '100 years', interval '1 hour')")
    # hourly and daily partitions are named after their period
    made = [r[0] for r in c.sql("""SELECT p::text FROM hlculid_create_partitions('ev',
                 '2026-03-01 10:00+00', '2026-03-01 12:00+00', interval '1 hour') p""")]
    assert made == ["ev_p2026_03_01_10", "ev_p2026_03_01_11"]


def test_logical_replication_through_the_partition_root(make_cluster):
    conf = ["wal_level = logical", "max_wal_senders = 10", "max_replication_slots = 10", UTC]
    pub = make_cluster("part-pub", conf=conf + ["hlculid.publisher_id = 13"]).start()
    sub = make_cluster("part-sub", conf=conf + ["hlculid.publisher_id = 14"]).start()
    for c in (pub, sub):
        c.sql("CREATE EXTENSION hlculid")
    pub.sql(TABLE)
    pub.sql("ALTER TABLE ev ADD PRIMARY KEY (id)")  # the replica identity: deletes are published
    months_around_now(pub)
    # the subscriber keeps one plain table: rows arrive as the root's
    sub.sql("CREATE TABLE ev (id hlculid PRIMARY KEY, body text)")
    pub.sql("CREATE PUBLICATION evpub FOR TABLE ev WITH (publish_via_partition_root = true)")
    sub.sql(f"CREATE SUBSCRIPTION evsub CONNECTION 'host={pub.dir} port={pub.port} user=postgres dbname=postgres' "
            "PUBLICATION evpub")
    pub.sql("INSERT INTO ev SELECT hlculid_generate(), 'r' || g FROM generate_series(1, 2000) g")
    pub.sql("INSERT INTO ev VALUES (hlculid_generate_at('2001-01-01+00'), 'old')")
    # rows waiting in the default partition for a period not created yet: the helper moves them
    # into the partition it creates (delete from the default, insert into the new partition), and
    # the subscriber sees a delete and an insert of each, so it keeps exactly the same rows
    pub.sql("""INSERT INTO ev SELECT hlculid_generate_at(date_trunc('month', now()) + interval '6 months'
                                                         + g * interval '1 hour'), 'later' FROM generate_series(1, 50) g""")
    assert pub.one("SELECT count(*) FROM ev_default") == 51
    made = pub.sql("""SELECT p::text FROM hlculid_create_partitions('ev', now(),
                          date_trunc('month', now()) + interval '7 months') p""")
    assert len(made) == 5
    assert pub.one("SELECT count(*) FROM ev_default") == 1
    deadline = time.time() + 60
    while sub.sql("SELECT id::text FROM ev ORDER BY id") != pub.sql("SELECT id::text FROM ev ORDER BY id"):
        assert time.time() < deadline, "rows did not arrive"
        time.sleep(0.2)
    assert sub.one("SELECT count(*) FROM ev") == 2051
    assert "duplicate key" not in sub.log()
