"""Every helper that builds SQL, against hostile but legal names (issue 24): tables, schemas and
columns named like the helpers' internal aliases and output columns, SQL keywords, mixed case,
spaces, quotes, 63-byte names; tables schema-qualified and found through the search_path. One
list of names drives hlculid_create_partitions, hlculid_drop_partitions,
hlculid_partition_bounds, hlculid_backfill, hlculid_read, hlculid_read_below and
hlculid_read_watermark."""

import pytest

from pgcluster import by_tier

# aliases and output columns the helpers' own queries use, keywords, case, spaces, quotes, length
NAMES = ["t", "s", "g", "d", "x", "u", "b", "r", "c", "ms", "more", "l", "mx", "n", "k", "id", "lo", "hi",
         "partition", "is_default", "from_id", "to_id", "user", "order", "group", "select", "Mixed Case",
         "with space", 'quote"d', "semi;colon", "é" * 31 + "x"]
if by_tier(True, False):
    NAMES = NAMES[::3] + ["user", 'quote"d', "é" * 31 + "x"]


def ident(name):
    return '"' + name.replace('"', '""') + '"'


def lit(text):
    return "'" + text.replace("'", "''") + "'"


@pytest.fixture(scope="module")
def server(request):
    from pgcluster import Cluster

    c = Cluster("hostile-names", conf=["hlculid.publisher_id = 9"]).start()
    c.sql("CREATE EXTENSION hlculid")
    yield c
    c.stop("immediate")


@pytest.mark.parametrize("name", NAMES)
def test_every_helper_takes_the_name(server, name):
    # the name itself for schema, table and key; names made from it are cut so they stay apart
    short = name[:20]
    sch, tbl, key, ts = ident(name), ident(name), ident(name), ident(short + "_ts")
    qualified = f"{sch}.{tbl}"
    with server.connect() as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {sch} CASCADE")
        conn.execute(f"CREATE SCHEMA {sch}")
        # partitions: a table partitioned on a key of that name, with a default partition holding a row
        conn.execute(f"CREATE TABLE {qualified} ({key} hlculid NOT NULL, {ts} timestamptz) PARTITION BY RANGE ({key})")
        conn.execute(f"CREATE TABLE {sch}.{ident(short + ' default')} PARTITION OF {qualified} DEFAULT")
        conn.execute(f"INSERT INTO {qualified} VALUES (hlculid_min('2026-02-02 10:00+00'), now())")
        made = conn.execute(f"SELECT p::text FROM hlculid_create_partitions({lit(qualified)}, '2026-02-01', '2026-02-04', '1 day') p").fetchall()
        assert len(made) == 3, made
        bounds = conn.execute(f"SELECT count(*) FILTER (WHERE NOT is_default), count(*) FILTER (WHERE is_default) "
                              f"FROM hlculid_partition_bounds({lit(qualified)})").fetchone()
        assert bounds == (3, 1)
        assert conn.execute(f"SELECT count(*) FROM ONLY {sch}.{ident(short + ' default')}").fetchone()[0] == 0
        # resolved through the search_path too
        conn.execute(f"SET search_path = {sch}, public")
        again = conn.execute(f"SELECT count(*) FROM hlculid_create_partitions({lit(tbl)}, '2026-02-01', '2026-02-05', '1 day')").fetchone()[0]
        assert again == 1
        dropped = conn.execute(f"SELECT count(*) FROM hlculid_drop_partitions({lit(tbl)}, '2026-02-03')").fetchone()[0]
        assert dropped == 2
        conn.execute("RESET search_path")
        # backfill: a key, a time column and an id column of hostile names
        plain = f"{sch}.{ident(short + ' plain')}"
        conn.execute(f"CREATE TABLE {plain} ({key} int PRIMARY KEY, {ts} timestamptz NOT NULL, {ident(short + '_id')} hlculid)")
        conn.execute(f"INSERT INTO {plain} SELECT i, '2024-01-01'::timestamptz + (i % 17) * interval '1 ms' FROM generate_series(1, 300) i")
        conn.execute(f"CALL hlculid_backfill({lit(plain)}, {lit(short + '_id')}, {lit(short + '_ts')}, 900, 70)")
        filled, ordered = conn.execute(
            f"SELECT count({ident(short + '_id')}), array_agg({key} ORDER BY {ident(short + '_id')}) = "
            f"array_agg({key} ORDER BY {ts}, {key}) FROM {plain}").fetchone()
        assert (filled, ordered) == (300, True)
        # hlculid_read: a table keyed on a hostile name
        keyed = f"{sch}.{ident(short + ' keyed')}"
        conn.execute(f"CREATE TABLE {keyed} ({key} hlculid PRIMARY KEY DEFAULT hlculid_generate(), v int)")
        conn.execute(f"INSERT INTO {keyed} (v) SELECT generate_series(1, 5)")
        rows = conn.execute(f"SELECT v FROM hlculid_read(NULL::{keyed}, NULL, 10, {lit(name)})").fetchall()
        assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
        # hlculid_read_below and hlculid_read_watermark on the same table and key (the watermark of
        # this server's own publisher: its live horizon, whatever rows other tests left)
        rows = conn.execute(f"SELECT v FROM hlculid_read_below(NULL::{keyed}, NULL, hlculid_horizon(), 10, "
                            f"{lit(name)})").fetchall()
        assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
        own = conn.execute("SELECT publisher FROM hlculid_clock()").fetchone()[0]
        rows = conn.execute(f"SELECT v FROM hlculid_read_watermark(NULL::{keyed}, NULL, ARRAY[{own}], 10, "
                            f"{lit(name)})").fetchall()
        assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
        conn.execute(f"DROP SCHEMA {sch} CASCADE")
