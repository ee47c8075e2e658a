"""hlculid keys on Citus: distributed, colocated and reference tables, router and time-window
queries, and which node makes each id (COPY, single- and multi-row INSERT on the coordinator and
on a worker)."""

import re

from conftest import PUBLISHERS


def explain(node, query, params=None):
    return "\n".join(r[0] for r in node.sql(f"EXPLAIN (COSTS OFF) {query}", params))


def task_count(plan):
    m = re.search(r"Task Count: (\d+)", plan)
    assert m, plan
    return int(m.group(1))


def test_distributed_colocated_and_reference_tables_keyed_on_hlculid(citus):
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE t_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), kind text)")
    co.sql("SELECT create_distributed_table('t_events', 'id', shard_count => 8)")
    co.sql("CREATE TABLE t_details (id hlculid PRIMARY KEY, note text)")
    co.sql("SELECT create_distributed_table('t_details', 'id', colocate_with => 't_events')")
    co.sql("CREATE TABLE t_kinds (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), name text UNIQUE)")
    co.sql("SELECT create_reference_table('t_kinds')")

    tables = {r[0]: r[1:] for r in co.sql(
        "SELECT table_name::text, citus_table_type, distribution_column, colocation_id, shard_count"
        " FROM citus_tables WHERE table_name::text LIKE 't\\_%'")}
    assert tables["t_events"][:2] == ("distributed", "id")
    assert tables["t_details"][:2] == ("distributed", "id")
    assert tables["t_events"][2] == tables["t_details"][2]  # colocated
    assert tables["t_events"][3] == tables["t_details"][3] == 8
    assert tables["t_kinds"][0] == "reference" and tables["t_kinds"][3] == 1
    # the shards of the distributed table are spread over both workers
    ports = {r[0] for r in co.sql("SELECT DISTINCT nodeport FROM citus_shards WHERE table_name = 't_events'::regclass")}
    assert ports == {w1.port, w2.port}

    co.sql("INSERT INTO t_kinds (name) VALUES ('signup'), ('login')")
    co.sql("INSERT INTO t_events (kind) SELECT CASE WHEN g % 2 = 0 THEN 'signup' ELSE 'login' END"
           " FROM generate_series(1, 400) g")
    # colocated INSERT .. SELECT without a volatile function: pushed down shard by shard
    co.sql("INSERT INTO t_details (id, note) SELECT id, 'n-' || kind FROM t_events")
    assert co.one("SELECT count(*) FROM t_events e JOIN t_details d USING (id)") == 400
    # the reference table is on every node, joinable with the distributed one on its hlculid
    for node in citus.nodes:
        assert node.one("SELECT count(*) FROM t_events e JOIN t_kinds k ON k.name = e.kind") == 400
    # a row of the reference table read on a worker by its hlculid key
    kid = co.one("SELECT id::text FROM t_kinds WHERE name = 'login'")
    assert w2.one("SELECT name FROM t_kinds WHERE id = %s::hlculid", (kid,)) == "login"


def test_router_query_on_the_key_and_a_time_window_pushed_to_every_shard_with_an_index(citus):
    co = citus.coordinator
    co.sql("CREATE TABLE r_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    co.sql("SELECT create_distributed_table('r_events', 'id', shard_count => 8)")
    co.sql("INSERT INTO r_events (n) SELECT g FROM generate_series(1, 20000) g")
    co.sql("ANALYZE r_events")
    some = co.sql("SELECT id::text, n FROM r_events ORDER BY n LIMIT 8 OFFSET 1000")

    # id = $1: one shard, one task (also past the fifth execution, when the plan is generic)
    with co.connect() as c:
        c.execute("PREPARE by_id(hlculid) AS SELECT n FROM r_events WHERE id = $1")
        for id_, n in some:
            plan = "\n".join(r[0] for r in c.execute(f"EXPLAIN (COSTS OFF) EXECUTE by_id('{id_}')"))
            assert task_count(plan) == 1, plan
            assert c.execute(f"EXECUTE by_id('{id_}')").fetchall() == [(n,)]
    # (EXPLAIN shows the shard's plan for a constant; for a bound $1 Citus prints "Could not get
    # remote plan" though the query runs on one shard)
    plan = explain(co, f"SELECT n FROM r_events WHERE id = '{some[0][0]}'")
    assert task_count(plan) == 1, plan
    assert "Index Scan" in plan and "Index Cond" in plan, plan

    # a time window: every shard, each scanning the index of its own shard
    window = "id <@ tstzrange(now() - interval '2 hours', now() - interval '1 hour')"
    plan = explain(co, f"SELECT count(*) FROM r_events WHERE {window}")
    assert task_count(plan) == 8, plan
    assert "Index Cond" in plan and ("Index Scan" in plan or "Index Only Scan" in plan
                                     or "Bitmap Index Scan" in plan), plan
    assert "hlculid_range_min" in plan or ">=" in plan, plan
    assert co.one(f"SELECT count(*) FROM r_events WHERE {window}") == 0
    assert co.one("SELECT count(*) FROM r_events WHERE id <@ tstzrange(now() - interval '1 hour', now())") == 20000
    # the window's bounds cut exactly: the rows at or after the 1,000th id's time
    t = co.one("SELECT hlculid_ts(id) FROM r_events WHERE id = %s::hlculid", (some[0][0],))
    assert co.one("SELECT count(*) FROM r_events WHERE id <@ tstzrange(%s, now())", (t,)) \
        == co.one("SELECT count(*) FROM r_events WHERE hlculid_ts(id) >= %s", (t,))


def test_copy_and_inserts_through_the_coordinator_and_a_worker_make_unique_ids_of_their_node(citus):
    co, (w1, w2) = citus.coordinator, citus.workers
    co.sql("CREATE TABLE c_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), src text, n int)")
    co.sql("SELECT create_distributed_table('c_events', 'id', shard_count => 8)")

    with co.connect() as c:
        with c.cursor().copy("COPY c_events (src, n) FROM STDIN") as cp:
            for i in range(5000):
                cp.write_row(("copy-co", i))
    single = []
    with co.connect() as c:
        for i in range(50):
            single.append(c.execute("INSERT INTO c_events (src, n) VALUES ('single-co', %s) RETURNING id::text",
                                    (i,)).fetchone()[0])
        values = ", ".join(f"('multi-co', {i})" for i in range(300))
        c.execute(f"INSERT INTO c_events (src, n) VALUES {values}")
        c.execute("INSERT INTO c_events (src, n) SELECT 'select-co', g FROM generate_series(1, 700) g")
    # the same statements issued on worker 1 (Citus routes them from there): its clock, its id
    with w1.connect() as c:
        with c.cursor().copy("COPY c_events (src, n) FROM STDIN") as cp:
            for i in range(2000):
                cp.write_row(("copy-w1", i))
        for i in range(20):
            c.execute("INSERT INTO c_events (src, n) VALUES ('single-w1', %s)", (i,))
        values = ", ".join(f"('multi-w1', {i})" for i in range(300))
        c.execute(f"INSERT INTO c_events (src, n) VALUES {values}")

    counts = dict(co.sql("SELECT src, count(*) FROM c_events GROUP BY src"))
    assert counts == {"copy-co": 5000, "single-co": 50, "multi-co": 300, "select-co": 700,
                      "copy-w1": 2000, "single-w1": 20, "multi-w1": 300}
    assert co.one("SELECT count(DISTINCT id) FROM c_events") == 8370
    publishers = {r[0]: r[1] for r in co.sql(
        "SELECT src, array_agg(DISTINCT hlculid_publisher(id)) FROM c_events GROUP BY src")}
    for src, pubs in publishers.items():
        want = PUBLISHERS["worker1"] if src.endswith("-w1") else PUBLISHERS["coordinator"]
        assert pubs == [want], (src, pubs)
    # one statement after another on one node: each id above the one before
    assert single == sorted(single) and len(set(single)) == 50
    # within a statement, ids follow the rows' order
    for src in ("copy-co", "multi-co", "select-co", "copy-w1"):
        assert co.one("SELECT bool_and(ok) FROM (SELECT lag(n) OVER (ORDER BY id) < n OR lag(n) OVER (ORDER BY id) IS NULL AS ok"
                      " FROM c_events WHERE src = %s) s", (src,)), src
    # the rows are where their ids hash: each one found by a router query on its id
    for (id_,) in co.sql("SELECT id::text FROM c_events WHERE src = 'single-w1'"):
        assert w2.one("SELECT src FROM c_events WHERE id = %s::hlculid", (id_,)) == "single-w1"
