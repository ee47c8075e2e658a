"""The cluster horizon's worker against roles that are not trusted (the 0.6.0 security review,
branch sec-review; docs/citus.md, "Security").

- A prepared transaction's gid is text any role picks (PREPARE TRANSACTION needs no privilege).
  The worker once joined every node's pending items into one space-separated string and split it
  again: a gid with a space shifted a real Citus prepared transaction's item, it dropped out of
  the candidates' intersection, and the cluster horizon passed rows still prepared on a worker.
  hlculid_cluster_pending() split each node's gids at spaces as well. Now items are rows (arrays
  in the SQL function) and only gids of Citus' exact form count.
- A node's database owner controls the sessions in their database: `ALTER DATABASE ... SET role`
  (or `ALTER ROLE ... SET`, statement_timeout, read-only transactions) applied to the worker's
  connections to the nodes and to the worker's own session, which pinned only search_path. A role
  without pg_monitor sees other roles' distributed transactions hidden, so the worker run as one
  stops the horizon; now the connections pin role=none and the rest in their startup options."""

import re
import time

import psycopg
import pytest

from test_cluster_horizon import make_table, read_all, via_proxy, eventually  # noqa: F401

CITUS_GID = r"^citus_[0-9]+_[0-9]+_[0-9]+_[0-9]+$"


def ensure_role(node, name):
    node.sql(f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{name}') "
             f"THEN CREATE ROLE {name} LOGIN; END IF; END$$")


def drop_role(nodes, name):
    for n in nodes:
        n.sql(f"SET citus.enable_ddl_propagation = off; DROP ROLE IF EXISTS {name}")


def test_a_gid_with_a_space_does_not_let_the_horizon_pass_a_pending_prepared_transaction(citus, via_proxy):
    co, w1 = citus.coordinator, citus.workers[0]
    ensure_role(co, "gid_mallory")
    ensure_role(w1, "gid_mallory")
    co.sql("DROP TABLE IF EXISTS sec_events")
    make_table(co, "sec_events")
    # rounds every 100 ms: the worker keeps at most 256 candidates (then replaces the newest), and
    # on a fast machine rounds at the default interval fill them all while mallory's first
    # prepared transaction holds them, before the victim's: none taken after the victim's
    # failure would be left to pass its rows
    co.sql("ALTER SYSTEM SET hlculid.cluster_horizon_interval = 100")
    co.sql("SELECT pg_reload_conf()")
    # mallory: one prepared transaction before the victim's (slot 0 of the prepared array)
    m1 = w1.connect(user="gid_mallory", autocommit=False)
    m1.execute("SELECT 1")

    def tick():  # any role may call it: the worker's rounds stay frequent, one between steps
        co.one("SELECT hlculid_cluster_horizon('1 h')")
        time.sleep(0.5)
        co.one("SELECT hlculid_cluster_horizon('1 h')")

    tick()
    m1.execute("PREPARE TRANSACTION 'citus_m1'")
    tick()
    # the victim: a distributed commit whose COMMIT PREPARED to worker 1 fails (as in
    # test_a_failed_commit_prepared_holds_the_cluster_horizon_until_recovery)
    with co.connect(autocommit=False) as conn:
        ids = [r[0] for r in conn.execute(
            "INSERT INTO sec_events (w, n) SELECT 1, g FROM generate_series(1, 40) g RETURNING id::text").fetchall()]
        via_proxy.mode = "drop"
        conn.commit()
    via_proxy.mode = "pass"
    hidden = set(ids) - read_all(co, "sec_events")
    assert hidden, "every row is visible: the failure left nothing pending"
    co.sql("SELECT hlculid_generate()")
    # mallory: a gid with a space (after the victim's), then frees slot 0: hers moves before it
    tick()
    m2 = w1.connect(user="gid_mallory", autocommit=False)
    m2.execute("SELECT 1")
    m2.execute("PREPARE TRANSACTION 'citus_m x'")
    w1.sql("ROLLBACK PREPARED 'citus_m1'", user="gid_mallory")
    tick()
    h = co.one("SELECT hlculid_cluster_horizon('10 s')::text")
    still = [g for (g,) in w1.sql("SELECT gid FROM pg_prepared_xacts WHERE gid ~ %s", (CITUS_GID,))]
    try:
        assert still, "the victim's prepared transaction is gone"
        # the secure result: the horizon stays at or below the hidden rows (or is NULL)
        assert h is None or h <= min(hidden), ("the cluster horizon passed rows still prepared", h, min(hidden))
        # the live list names the victim's gids as they are, and no piece of mallory's
        pending = co.one("SELECT hlculid_cluster_pending()")
        prepared = {p.split(":", 1)[1] for p in pending if p.startswith("prepared ")}
        assert set(still) <= prepared, (still, pending)
        assert all(re.match(CITUS_GID, g) for g in prepared), pending
    finally:
        w1.sql("ROLLBACK PREPARED 'citus_m x'")
        co.sql("SELECT recover_prepared_transactions()")
        co.sql("ALTER SYSTEM RESET hlculid.cluster_horizon_interval")
        co.sql("SELECT pg_reload_conf()")
        m1.close()
        m2.close()
        drop_role([co, *citus.workers], "gid_mallory")
    eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (max(ids),)), timeout=30)
    assert set(ids) <= read_all(co, "sec_events")
    co.sql("DROP TABLE sec_events")


# What a node's database owner may set for every session in their database (the owner may set any
# setting a user may; a superuser runs them here, with the same effect).
HOSTILE = {"role": "owner_mallory", "statement_timeout": "1ms", "lock_timeout": "1ms",
           "default_transaction_read_only": "on"}


def test_a_node_owners_session_settings_do_not_reach_the_worker(citus):
    """On the coordinator and worker 1 `ALTER DATABASE postgres SET role = mallory` (and short
    timeouts, read-only transactions); on worker 2 `ALTER ROLE postgres SET` the same. mallory has
    no pg_monitor: run as her, the worker sees other roles' distributed transactions hidden (its
    own connection among them) and the horizon stops. The worker, restarted, and every connection
    to the nodes, opened again, stay the role they connected as, and the horizon moves."""
    nodes = [citus.coordinator, *citus.workers]
    for n in nodes:
        ensure_role(n, "owner_mallory")
    # sessions opened before the settings: the settings apply to sessions that start later
    admin = [n.connect() for n in nodes]
    for conn in admin:  # each node's own setting (Citus would send it on, or refuse it on a worker)
        conn.execute("SET citus.enable_ddl_propagation = off")
    co = admin[0]
    targets = ["DATABASE postgres", "DATABASE postgres", "ROLE postgres"]

    def horizon_passes(id_):
        try:
            return co.execute("SELECT hlculid_cluster_horizon('1 s') > %s::hlculid", (id_,)).fetchone()[0]
        except psycopg.Error:
            return False

    try:
        for conn, target in zip(admin, targets):
            for name, value in HOSTILE.items():
                conn.execute(f"ALTER {target} SET {name} = '{value}'")
        # a session that starts now is mallory's (the test's own, Citus' own connections alike)
        for n in nodes[1:]:
            with psycopg.connect(host=str(n.dir), port=n.port, user="postgres", dbname="postgres",
                                 options="-c statement_timeout=0") as c:
                assert c.execute("SELECT current_user").fetchone()[0] == "owner_mallory"
        started = co.execute("SELECT now()").fetchone()[0]
        # the coordinator's worker starts again (its own session takes the database's settings),
        # and every worker's connections to the nodes are opened again
        co.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                   "WHERE backend_type = 'hlculid' AND datname = 'postgres'")
        for conn in admin:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE application_name = 'hlculid cluster horizon'")
        mark = co.execute("SELECT hlculid_generate()::text").fetchone()[0]
        eventually(lambda: horizon_passes(mark), timeout=30,
                   what="the cluster horizon did not move: the worker runs as the owner's role")
        # the coordinator's worker connected again to every node, as its own user
        for conn in admin:
            users = conn.execute("SELECT usename::text FROM pg_stat_activity WHERE application_name = "
                                 "'hlculid cluster horizon' AND backend_start > %s", (started,)).fetchall()
            assert users and {u for (u,) in users} == {"postgres"}, users
        assert co.execute("SELECT count(*) FROM hlculid.hlculid_cluster_nodes WHERE error IS NOT NULL"
                          ).fetchone()[0] == 0
        # and it keeps moving
        mark = co.execute("SELECT hlculid_generate()::text").fetchone()[0]
        eventually(lambda: horizon_passes(mark), timeout=10)
    finally:
        for conn, target in zip(admin, targets):
            for name in HOSTILE:
                conn.execute(f"ALTER {target} RESET {name}")
            conn.close()
        drop_role(nodes, "owner_mallory")


def test_a_prepared_transactions_item_is_its_number_whatever_the_sessions_string_settings(citus):
    """A database owner may `ALTER DATABASE ... SET standard_conforming_strings = off` for the
    sessions the worker opens: a backslash in a literal then means something else, and the
    second review of 0.6.0 found the prepared transactions' items read as one character, not as
    their transaction's number (so one moving from running to prepared left the list). The item
    is the gid's number in any session."""
    w1 = citus.workers[0]
    gid = "citus_0_4242_987654_3"
    with w1.connect() as c:
        c.execute(f"BEGIN; SELECT pg_current_xact_id(); PREPARE TRANSACTION '{gid}'")
    try:
        for setting in ("on", "off"):
            with w1.connect() as c:
                c.execute(f"SET standard_conforming_strings = {setting}")
                items = c.execute("SELECT item FROM hlculid_cluster_pending_here() WHERE gid = %s", (gid,)).fetchall()
                assert items == [("987654",)], (setting, items)
    finally:
        w1.sql(f"ROLLBACK PREPARED '{gid}'")


def test_a_prepared_transaction_of_another_database_does_not_hold_the_horizon(citus):
    """Any role may prepare a transaction with a Citus-like gid in any database it may connect
    to; one in another database than the cluster's writes none of its tables, and the worker's
    listing (hlculid_cluster_pending_here) leaves it out: the horizon moves past it (it stopped
    there before the 0.6.0 review)."""
    co, (w1, _) = citus.coordinator, citus.workers
    w1.sql("CREATE DATABASE hlculid_other")
    try:
        with w1.connect(dbname="hlculid_other") as c:
            c.execute("BEGIN")
            c.execute("SELECT 1")
            c.execute("PREPARE TRANSACTION 'citus_999_1_1_1'")
        try:
            made = co.one("SELECT hlculid_generate()::text")
            eventually(lambda: co.one("SELECT hlculid_cluster_horizon() > %s::hlculid", (made,)), timeout=5)
            assert co.one("SELECT pg_catalog.array_length(hlculid_cluster_pending(), 1)") is None
        finally:
            with w1.connect(dbname="hlculid_other") as c:
                c.execute("COMMIT PREPARED 'citus_999_1_1_1'")
    finally:
        w1.sql("DROP DATABASE hlculid_other")
