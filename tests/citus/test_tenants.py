"""Event tables keyed by tenant (docs/citus.md, "Tenant-keyed event tables"): distributed by
tenant_id, keyed (tenant_id, id), the layout Citus recommends for multi-tenant data. One tenant's
events are read completely, in id order, after the last id read, by `hlculid_read_key` (a router
query on the tenant's shard), beside writers of that tenant and another committing out of order,
on the coordinator and on a worker; a naive cursor over the same tenant loses rows in the same
run. The same on one server (a plain table of the coordinator, read below its own horizon)."""

import random
import threading
import time

import psycopg
import pytest

ZERO = "000000000000-0000-0000-000000000000"


def make(co, name, distributed):
    co.sql(f"CREATE TABLE {name} (tenant_id int8, id hlculid NOT NULL DEFAULT hlculid_generate(), w int, "
           "PRIMARY KEY (tenant_id, id))")
    if distributed:
        co.sql(f"SELECT create_distributed_table('{name}', 'tenant_id', shard_count => 8)")


@pytest.mark.parametrize("distributed", [True, False], ids=["citus", "one-server"])
def test_one_tenants_reader_loses_nothing_where_a_naive_cursor_loses_rows(citus, distributed):
    co, (w1, _) = citus.coordinator, citus.workers
    table = "tenant_events" if distributed else "tenant_local"
    make(co, table, distributed)
    stop, errors = threading.Event(), []

    def writer(node, w):
        rnd = random.Random(w)
        try:
            with node.connect(autocommit=False) as conn:
                while not stop.is_set():
                    tenant = 7 if rnd.random() < 0.7 else 8
                    conn.execute(f"INSERT INTO {table} (tenant_id, w) SELECT %s, %s FROM generate_series(1, %s)",
                                 (tenant, w, rnd.randint(1, 4)))
                    time.sleep(rnd.random() * 0.04)
                    conn.rollback() if rnd.random() < 0.1 else conn.commit()
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    nodes = [co, co, co, w1, w1] if distributed else [co] * 5
    threads = [threading.Thread(target=writer, args=(n, k), daemon=True) for k, n in enumerate(nodes)]
    seen = {"key": [], "naive": []}
    done, reader_errors = threading.Event(), []

    def reader(kind):
        last = ZERO
        try:
            with co.connect() as conn:
                while True:
                    finishing = done.is_set()
                    if kind == "key":
                        rows = conn.execute(f"SELECT tenant_id, id::text FROM hlculid_read_key(NULL::{table}, 'tenant_id', 7, "
                                            "%s::hlculid, 200)", (last,)).fetchall()
                    else:
                        rows = conn.execute(f"SELECT tenant_id, id::text FROM {table} WHERE tenant_id = 7 "
                                            "AND id > %s::hlculid ORDER BY id LIMIT 200", (last,)).fetchall()
                    assert all(t == 7 for t, _ in rows), rows
                    ids = [i for _, i in rows]
                    assert ids == sorted(ids) and (not ids or ids[0] > last)
                    seen[kind] += ids
                    if ids:
                        last = ids[-1]
                    elif finishing:
                        return
                    time.sleep(0.005)
        except Exception as e:  # noqa: BLE001 - reported by the test
            reader_errors.append((kind, e))

    readers = [threading.Thread(target=reader, args=(k,), daemon=True) for k in seen]
    for t in threads + readers:
        t.start()
    time.sleep(5)
    stop.set()
    for t in threads:
        t.join(60)
    committed = {r[0] for r in co.sql(f"SELECT id::text FROM {table} WHERE tenant_id = 7")}
    horizon = "hlculid_cluster_horizon()" if distributed else "hlculid_horizon()"
    deadline = time.monotonic() + 30
    while not co.one(f"SELECT {horizon} > %s::hlculid", (max(committed),)):
        assert time.monotonic() < deadline, "the horizon did not pass the last commit"
        time.sleep(0.02)
    done.set()
    for t in readers:
        t.join(60)
    assert not errors and not reader_errors, (errors, reader_errors)
    assert len(committed) > 100
    if distributed:  # ids made by the coordinator's clock and by worker 1's
        assert co.one(f"SELECT count(DISTINCT hlculid_publisher(id)) FROM {table} WHERE tenant_id = 7") == 2
    assert len(seen["key"]) == len(set(seen["key"])), "the key reader read a row twice"
    assert set(seen["key"]) == committed, f"the key reader lost {len(committed - set(seen['key']))} of {len(committed)}"
    assert committed - set(seen["naive"]), "the naive cursor lost nothing: the run made no late commits"
    co.sql(f"DROP TABLE {table}")


def test_one_tenants_read_is_a_router_query_on_its_shard(citus):
    co = citus.coordinator
    make(co, "tenant_router", True)
    co.sql("INSERT INTO tenant_router (tenant_id, w) SELECT g % 10, g FROM generate_series(1, 1000) g")
    deadline = time.monotonic() + 30
    while not co.one("SELECT hlculid_cluster_horizon() > (SELECT max(id) FROM tenant_router)"):
        assert time.monotonic() < deadline, "the horizon did not pass the rows"
        time.sleep(0.02)
    with co.connect() as conn:
        # a statement that needs more than one task is an error in this session
        conn.execute("SET citus.multi_task_query_log_level = 'error'")
        got = conn.execute("SELECT count(*) FROM hlculid_read_key(NULL::tenant_router, 'tenant_id', 3, NULL, 1000)").fetchone()[0]
        assert got == 100
        with pytest.raises(psycopg.Error, match="multi-task"):  # the check fails without the key
            conn.execute("SELECT count(*) FROM tenant_router WHERE id < hlculid_min(now())")
    # the statement it runs: one task, the shard's primary key index
    plan = "\n".join(r[0] for r in co.sql(
        "EXPLAIN (COSTS OFF) SELECT * FROM tenant_router t WHERE t.tenant_id = 3::bigint AND t.id > hlculid_min('2000-01-01') "
        "AND t.id < hlculid_min('3000-01-01') ORDER BY t.id LIMIT 100"))
    assert "Task Count: 1" in plan and "tenant_router_pkey" in plan, plan
    co.sql("DROP TABLE tenant_router")


def test_read_key_refuses_what_it_cannot_read_completely(citus):
    co = citus.coordinator
    make(co, "tenant_refuse", True)
    co.sql("CREATE TABLE tenant_nokey (tenant_id int8, id hlculid DEFAULT hlculid_generate(), PRIMARY KEY (tenant_id))")
    try:
        for q, error in (
            ("hlculid_read_key(NULL::tenant_refuse, 'tenant_id', NULL::int8, NULL)", psycopg.errors.NullValueNotAllowed),
            ("hlculid_read_key(NULL::tenant_refuse, 'nope', 1, NULL)", psycopg.errors.UndefinedColumn),
            ("hlculid_read_key(NULL::tenant_refuse, 'tenant_id', 1, NULL, 0)", psycopg.errors.InvalidParameterValue),
            ("hlculid_read_key(NULL::tenant_refuse, 'tenant_id', 1, NULL, 10, 'tenant_id')", psycopg.errors.DatatypeMismatch),
            ("hlculid_read_key(NULL::tenant_nokey, 'tenant_id', 1, NULL)", psycopg.errors.InvalidColumnReference),
            ("hlculid_read_key(1, 'tenant_id', 1, NULL)", psycopg.errors.WrongObjectType),
        ):
            with pytest.raises(error):
                co.sql(f"SELECT * FROM {q}")
    finally:
        co.sql("DROP TABLE tenant_refuse, tenant_nokey")


def horizon_past(co, table):
    """Waits until this server's horizon passed every row of a (local) table."""
    deadline = time.monotonic() + 30
    while not co.one(f"SELECT hlculid_horizon() > (SELECT max(id) FROM {table})"):
        assert time.monotonic() < deadline, f"the horizon did not pass the rows of {table}"
        time.sleep(0.02)


def test_a_key_of_a_type_outside_pg_catalog_is_passed_as_its_own_type(citus):
    """A key column of a domain (or any type outside pg_catalog): hlculid_read_key no longer
    names that type in its query (a swap of the type's schema would give another type when the
    query is parsed, whose CHECK would run as the reader: the fourth review of 0.6.0); the value
    must come as that type (42804 with a hint otherwise), and is passed as it is."""
    co = citus.coordinator
    co.sql("CREATE DOMAIN tenant_key AS int8 CHECK (VALUE > 0)")
    co.sql("CREATE TABLE tenant_domain (tenant_id tenant_key, id hlculid DEFAULT hlculid_generate(), "
           "PRIMARY KEY (tenant_id, id))")
    try:
        co.sql("INSERT INTO tenant_domain (tenant_id) SELECT 1 + g % 3 FROM generate_series(1, 30) g")
        horizon_past(co, "tenant_domain")
        with pytest.raises(psycopg.errors.DatatypeMismatch) as e:
            co.sql("SELECT * FROM hlculid_read_key(NULL::tenant_domain, 'tenant_id', 2, NULL)")
        assert "tenant_key" in e.value.diag.message_hint, e.value.diag.message_hint
        assert co.one("SELECT count(*) FROM hlculid_read_key(NULL::tenant_domain, 'tenant_id', 2::tenant_key, NULL)") == 10
    finally:
        co.sql("DROP TABLE tenant_domain; DROP DOMAIN tenant_key")


def test_a_fixed_length_key_is_compared_at_its_length(citus):
    """A `char(3)` key: the query casts the key to `pg_catalog.bpchar`, not format_type's
    `character` (which is character(1), and cut tenant 'ab' to 'a': another tenant's rows; the
    fifth review of 0.6.0)."""
    co = citus.coordinator
    co.sql("CREATE TABLE tenant_char (tenant_id char(3), id hlculid DEFAULT hlculid_generate(), "
           "PRIMARY KEY (tenant_id, id))")
    try:
        co.sql("INSERT INTO tenant_char (tenant_id) VALUES ('a'), ('a'), ('ab')")
        horizon_past(co, "tenant_char")
        assert co.sql("SELECT tenant_id FROM hlculid_read_key(NULL::tenant_char, 'tenant_id', 'ab', NULL)") == [("ab ",)]
        assert co.one("SELECT count(*) FROM hlculid_read_key(NULL::tenant_char, 'tenant_id', 'a', NULL)") == 2
    finally:
        co.sql("DROP TABLE tenant_char")


def test_a_key_value_that_a_cast_would_change_is_refused(citus):
    """A value that becomes the key only by rounding or cutting (1.5 for an int4 key is 2, a
    timestamp for a date key its day) would read another tenant's rows: 42804 with a hint (the
    sixth review of 0.6.0). A value of the key's type, one an implicit cast widens, text (the
    type's input: exact or an error) and an integer of another width (an error out of range)
    are read as they are."""
    co = citus.coordinator
    co.sql("CREATE TABLE tenant_int (tenant_id int4, id hlculid DEFAULT hlculid_generate(), "
           "PRIMARY KEY (tenant_id, id))")
    co.sql("CREATE TABLE tenant_day (tenant_id date, id hlculid DEFAULT hlculid_generate(), "
           "PRIMARY KEY (tenant_id, id))")
    try:
        co.sql("INSERT INTO tenant_int (tenant_id) SELECT 1 + g % 3 FROM generate_series(1, 30) g")
        co.sql("INSERT INTO tenant_day (tenant_id) SELECT date '2026-01-01' + g % 3 FROM generate_series(1, 30) g")
        horizon_past(co, "tenant_int")
        horizon_past(co, "tenant_day")
        for table, value in (("tenant_int", "1.5::numeric"), ("tenant_int", "1.5::float8"),
                             ("tenant_day", "timestamp '2026-01-02 12:00'")):
            with pytest.raises(psycopg.errors.DatatypeMismatch) as e:
                co.sql(f"SELECT * FROM hlculid_read_key(NULL::{table}, 'tenant_id', {value}, NULL)")
            assert "Pass a value of the column's type" in e.value.diag.message_hint, e.value.diag.message_hint
        for value in ("2", "2::int2", "2::int8", "'2'::text", "'2'::varchar"):
            assert co.one(f"SELECT count(*) FROM hlculid_read_key(NULL::tenant_int, 'tenant_id', {value}, NULL)") == 10, value
        with pytest.raises(psycopg.errors.NumericValueOutOfRange):
            co.sql("SELECT * FROM hlculid_read_key(NULL::tenant_int, 'tenant_id', 4294967298::int8, NULL)")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            co.sql("SELECT * FROM hlculid_read_key(NULL::tenant_int, 'tenant_id', '1.5'::text, NULL)")
        assert co.one("SELECT count(*) FROM hlculid_read_key(NULL::tenant_day, 'tenant_id', date '2026-01-02', NULL)") == 10
    finally:
        co.sql("DROP TABLE tenant_int, tenant_day")
