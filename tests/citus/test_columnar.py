"""Old partitions of a distributed time-partitioned table converted to columnar: which window
forms skip chunk groups (docs/citus.md, "Old partitions as columnar"). Columnar refutes a chunk
group with constant bounds only, so the window is written with bounds folded to constants
(`hlculid_min('...')` of a literal time, or a parameter of a custom plan)."""

import re


def removed(node, query, params=None):
    """Chunk groups columnar skipped in the (one) task EXPLAIN ANALYZE shows."""
    with node.connect() as conn:
        conn.execute("SET citus.explain_all_tasks = on")
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + query, params).fetchall())
    assert "ColumnarScan" in text, text
    return sum(int(n) for n in re.findall(r"Chunk Groups Removed by Filter: (\d+)", text)), text


def test_an_old_partition_as_columnar_skips_chunk_groups_for_constant_bounds(citus):
    co = citus.coordinator
    co.sql("CREATE EXTENSION IF NOT EXISTS citus_columnar")
    co.sql("CREATE TABLE cl_events (id hlculid NOT NULL, body text) PARTITION BY RANGE (id)")
    co.sql("SELECT create_distributed_table('cl_events', 'id', shard_count => 2)")
    co.sql("SELECT hlculid_create_partitions('cl_events', '2026-01-01', '2026-01-03', interval '1 day')")
    # a day of rows, in id order, into the first day's partition; then that partition to columnar
    co.sql("INSERT INTO cl_events SELECT hlculid_from_parts('2026-01-01'::timestamptz + g * interval '360 ms', 0, 1, g), 'x'"
           " FROM generate_series(0, 239999) g")
    part = co.one("SELECT partition::text FROM hlculid_partition_bounds('cl_events') ORDER BY from_id LIMIT 1")
    co.sql("SELECT alter_table_set_access_method(%s, 'columnar')", (part,))
    assert co.one("SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = %s::regclass", (part,)) == "columnar"
    hour = ("2026-01-01 10:00+00", "2026-01-01 11:00+00")
    expected = 10_000  # 3,600 s at one row every 360 ms
    # the form the docs give for columnar: bounds that fold to constants
    explicit = "SELECT count(*) FROM cl_events WHERE id >= hlculid_min(%s) AND id < hlculid_min(%s)"
    assert co.one(explicit, hour) == expected
    skipped, text = removed(co, explicit.replace("%s", "'{}'").format(*hour))
    assert skipped >= 15, text  # 2 shards of 120,000 rows, 10,000 a chunk group: 11 of 12 each
    # a parameter is a constant in a custom plan
    with co.connect() as conn:
        conn.execute("SET plan_cache_mode = force_custom_plan")
        assert conn.execute(explicit, hour, prepare=True).fetchone()[0] == expected
    # `<@ tstzrange(...)` and now()-relative bounds are answered right, without skipping
    window = "SELECT count(*) FROM cl_events WHERE id <@ tstzrange(%s, %s)"
    assert co.one(window, hour) == expected
    skipped, _ = removed(co, window.replace("%s", "'{}'").format(*hour))
    assert skipped == 0
    relative = ("SELECT count(*) FROM cl_events WHERE id >= hlculid_min(now() - (now() - '2026-01-01 10:00+00'))"
                " AND id < hlculid_min(now() - (now() - '2026-01-01 11:00+00'))")
    assert co.one(relative) == expected
    skipped, _ = removed(co, relative)
    assert skipped == 0
    co.sql("DROP TABLE cl_events")
