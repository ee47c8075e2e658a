"""What Citus refuses or does differently with hlculid keys, as docs/citus.md says: volatile
functions in UPDATE, changing a distribution key, its own time partitioning on an hlculid key, and
INSERT .. SELECT from a distributed table, which is not pushed down with hlculid_generate() but
repartitioned, its ids made by the workers that hold the source rows."""

import psycopg
import pytest
from conftest import PUBLISHERS


@pytest.fixture(scope="module")
def table(citus):
    co = citus.coordinator
    co.sql("CREATE TABLE f_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_distributed_table('f_events', 'id', shard_count => 8)")
    co.sql("INSERT INTO f_events (n) SELECT g FROM generate_series(1, 1000) g")
    return "f_events"


def test_update_setting_the_key_is_refused(citus, table):
    co = citus.coordinator
    with pytest.raises(psycopg.errors.FeatureNotSupported,
                       match="functions used in UPDATE queries on distributed tables must not be VOLATILE"):
        co.sql("UPDATE f_events SET id = hlculid_generate() WHERE n = 1")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="modifying the partition value of rows is not allowed"):
        co.sql("UPDATE f_events SET id = hlculid_min(now()) WHERE n = 1")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="must not be VOLATILE"):
        co.sql("DELETE FROM f_events WHERE id < hlculid_generate()")
    assert co.one("SELECT count(*) FROM f_events") == 1000


def test_citus_time_partitions_refuse_an_hlculid_key(citus):
    co = citus.coordinator
    co.sql("CREATE TABLE tp_events (id hlculid NOT NULL, PRIMARY KEY (id)) PARTITION BY RANGE (id)")
    co.sql("SELECT create_distributed_table('tp_events', 'id', shard_count => 4)")
    with pytest.raises(psycopg.Error, match="must be date, timestamp or timestamptz"):
        co.sql("SELECT create_time_partitions('tp_events', interval '1 day', now() + interval '2 days')")
    # hlculid's own helper does it (tests/citus/test_partitions.py)
    assert len(co.sql("SELECT hlculid_create_partitions('tp_events', now(), now() + interval '2 days',"
                      " interval '1 day')")) >= 2
    co.sql("DROP TABLE tp_events")


def test_insert_select_from_a_distributed_table_makes_its_ids_on_the_workers(citus, table):
    co = citus.coordinator
    co.sql("CREATE TABLE f_copies (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_distributed_table('f_copies', 'id', colocate_with => 'f_events')")
    co.sql("CREATE TABLE f_ref (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_reference_table('f_ref')")
    for q in ("INSERT INTO f_copies (id, n) SELECT hlculid_generate(), n FROM f_events",
              "INSERT INTO f_copies (n) SELECT n FROM f_events"):
        plan = "\n".join(r[0] for r in co.sql(f"EXPLAIN (COSTS OFF) {q}"))
        assert "INSERT/SELECT method: repartition" in plan, plan
        co.sql(q)
    co.sql("INSERT INTO f_ref (n) SELECT n FROM f_events WHERE n <= 100")
    assert co.one("SELECT count(*) FROM f_copies") == 2000
    assert co.one("SELECT count(DISTINCT id) FROM f_copies") == 2000
    workers = {PUBLISHERS["worker1"], PUBLISHERS["worker2"]}
    # made where the SELECT ran: on each source shard's worker, not on the coordinator
    for t in ("f_copies", "f_ref"):
        assert {r[0] for r in co.sql(f"SELECT DISTINCT hlculid_publisher(id) FROM {t}")} == workers, t
    # a source that is not distributed is read on the coordinator, which makes the ids
    co.sql("INSERT INTO f_copies (n) SELECT g FROM generate_series(1, 10) g")
    assert co.one("SELECT count(*) FROM f_copies WHERE hlculid_publisher(id) = %s",
                  (PUBLISHERS["coordinator"],)) == 10
