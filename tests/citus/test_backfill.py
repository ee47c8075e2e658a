"""hlculid_backfill (docs/converting.md) and Citus. The procedure finds each batch's rows again by
(tableoid, ctid), which repeat across shards, so since 0.5.0 it refuses a table Citus manages
(0A000) before changing anything; converting the table before distributing it works."""

import psycopg
import pytest


def make_orders(co, name, index):
    co.sql(f"CREATE TABLE {name} (order_id bigint PRIMARY KEY, created_at timestamptz NOT NULL, hid hlculid)")
    if index:
        co.sql(f"CREATE INDEX ON {name} (hid)")
    co.sql(f"SELECT create_distributed_table('{name}', 'order_id', shard_count => 4)")
    co.sql(f"INSERT INTO {name} SELECT g, now() - g * interval '1 minute' FROM generate_series(1, 100) g")


@pytest.mark.parametrize("index", [False, True], ids=["no-index", "indexed-ids"])
def test_backfill_refuses_a_distributed_or_reference_table_before_changing_anything(citus, index):
    """0.4.0 gave rows of different shards one id (without an index on the ids) or failed in
    Citus' planner (with one)."""
    co = citus.coordinator
    name = "bi_orders" if index else "b_orders"
    make_orders(co, name, index=index)
    with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
        co.sql(f"CALL hlculid_backfill('{name}', 'hid', 'created_at', 960)")
    assert "which Citus manages" in e.value.diag.message_primary
    assert "create_distributed_table" in e.value.diag.message_hint
    assert co.one(f"SELECT count(hid) FROM {name}") == 0
    co.sql("CREATE TABLE r_orders (order_id bigint PRIMARY KEY, created_at timestamptz NOT NULL, hid hlculid)")
    co.sql("SELECT create_reference_table('r_orders')")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        co.sql("CALL hlculid_backfill('r_orders', 'hid', 'created_at', 960)")
    co.sql(f"DROP TABLE {name}, r_orders")


def test_backfill_before_distributing_then_distribute(citus):
    co = citus.coordinator
    co.sql("CREATE TABLE bb_orders (order_id bigint PRIMARY KEY, created_at timestamptz NOT NULL, hid hlculid)")
    co.sql("INSERT INTO bb_orders SELECT g, now() - g * interval '1 minute' FROM generate_series(1, 100) g")
    co.sql("CALL hlculid_backfill('bb_orders', 'hid', 'created_at', 960)")
    co.sql("SELECT create_distributed_table('bb_orders', 'order_id', shard_count => 4)")
    assert co.one("SELECT count(DISTINCT hid) FROM bb_orders") == 100
    assert co.one("SELECT bool_and(hlculid_publisher(hid) = 960 AND hlculid_ts(hid) = date_trunc('milliseconds', created_at))"
                  " FROM bb_orders")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="must not be VOLATILE"):
        co.sql("UPDATE bb_orders SET hid = hlculid_generate_at(created_at)")
