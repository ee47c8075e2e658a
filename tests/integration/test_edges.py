"""Small edges a user reaches in one line (0.4.0, issue 24 item 7): partition maintenance that no
other role can hold up, a session temp table that happens to share the helper's old scratch
name, and the clock's anchor on a new cluster."""

import threading

import psycopg
import pytest

CONF = ("hlculid.publisher_id = 5",)


def test_another_role_cannot_hold_up_partition_maintenance(make_cluster):
    c = make_cluster("edges-lock", conf=CONF).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY) PARTITION BY RANGE (id)")
    c.sql("CREATE ROLE intruder LOGIN")
    c.sql("GRANT SELECT ON ev TO intruder")
    oid = c.one("SELECT 'ev'::regclass::oid::int")
    with c.connect(user="intruder", autocommit=False) as other:
        # 0.3.0's advisory key: any role could take it and block the owner until statement_timeout
        other.execute("SELECT pg_advisory_xact_lock(1259, %s)", (oid,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            other.execute("LOCK TABLE ev IN SHARE UPDATE EXCLUSIVE MODE")
        other.rollback()
        other.execute("SELECT pg_advisory_xact_lock(1259, %s)", (oid,))
        done = []
        t = threading.Thread(target=lambda: done.append(c.sql(
            "SET statement_timeout = '5s'; SELECT count(*) FROM hlculid_create_partitions('ev', '2026-01-01', '2026-01-03', '1 day')")))
        t.start()
        t.join(10)
        assert done, "partition maintenance waited for another role's lock"
        other.rollback()


def test_a_session_temp_table_named_like_the_old_scratch_table_is_no_obstacle(make_cluster):
    c = make_cluster("edges-temp", conf=CONF).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY) PARTITION BY RANGE (id)")
    c.sql("CREATE TABLE ev_default PARTITION OF ev DEFAULT")
    c.sql("INSERT INTO ev VALUES (hlculid_min('2026-01-02 10:00+00'))")
    with c.connect() as conn:
        conn.execute("CREATE TEMP TABLE hlculid_moving_rows (x int)")
        conn.execute("SELECT hlculid_create_partitions('ev', '2026-01-01', '2026-01-03', '1 day')")
        assert conn.execute("SELECT tableoid::regclass::text FROM ev").fetchone()[0] == "ev_p2026_01_02"
        assert conn.execute("SELECT count(*) FROM hlculid_moving_rows").fetchone()[0] == 0


def test_a_new_cluster_has_no_anchor_time(make_cluster):
    c = make_cluster("edges-anchor", conf=CONF).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("SELECT hlculid_generate()")
    assert c.one("SELECT anchor_time FROM hlculid_clock_bound()") is None
    c.stop()
    c.start()
    assert c.one("SELECT anchor_time FROM hlculid_clock_bound()") is not None  # the restart anchors it
