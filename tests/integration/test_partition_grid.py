"""Time partitions on a fixed grid (README, "Time partitions"; tests/pg_regress/sql/partitions.sql
has the refused inputs and the naming): the README's daily cron command run for 60 simulated
days with periods of 1 day, 7 days, 1 month and 3 months; partitions made by 0.2.0 (on its own
grid) still recognised after ALTER EXTENSION UPDATE; and two runs at once, at READ COMMITTED and
REPEATABLE READ, in two real sessions."""

import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

UTC = "timezone = 'UTC'"
EVERY = {"daily": "1 day", "weekly": "7 days", "monthly": "1 month", "quarterly": "3 months"}


def coverage(conn, table):
    """The table's range partitions as (lower, upper) canonical ids, by lower bound."""
    return conn.execute(
        """SELECT from_id::text, to_id::text FROM hlculid_partition_bounds(%s)
           WHERE NOT is_default ORDER BY from_id""", (table,)).fetchall()


def assert_one_run(conn, table, start, end):
    """[start, end) is covered with no gap: consecutive partitions meet (overlaps are impossible
    in PostgreSQL, a gap would show as a lower bound differing from the previous upper)."""
    bounds = coverage(conn, table)
    for (_, hi), (lo, _) in zip(bounds, bounds[1:]):
        assert hi == lo, f"{table}: gap or overlap between {hi} and {lo}"
    first, last = bounds[0][0], bounds[-1][1]
    assert conn.execute("SELECT %s::hlculid <= hlculid_min(%s) AND %s::hlculid >= hlculid_min(%s)",
                        (first, start, last, end)).fetchone()[0], (table, first, last)


def rows_in_the_partition_of_their_time(conn, table):
    """Rows outside a range partition holding their id (the default partition included)."""
    return conn.execute(f"""
        SELECT count(*) FROM {table} r
        WHERE NOT EXISTS (SELECT FROM hlculid_partition_bounds(%s) b
                          WHERE b.partition = r.tableoid AND NOT b.is_default
                            AND (b.from_id IS NULL OR r.id >= b.from_id)
                            AND (b.to_id IS NULL OR r.id < b.to_id))""", (table,)).fetchone()[0]


def test_the_daily_cron_command_for_60_days(make_cluster):
    c = make_cluster("part-cron", conf=[UTC]).start()
    c.sql("CREATE EXTENSION hlculid")
    with c.connect() as conn:
        # the session's time zone is not UTC and has a DST change in the span: periods stay UTC
        conn.execute("SET timezone = 'America/New_York'")
        for t in EVERY:
            conn.execute(f"CREATE TABLE {t} (id hlculid NOT NULL, body text) PARTITION BY RANGE (id)")
            conn.execute(f"CREATE TABLE {t}_default PARTITION OF {t} DEFAULT")
        first = datetime(2026, 10, 20, 3, 0, tzinfo=timezone.utc)  # the job runs at 03:00 UTC
        for day in range(60):
            today = first + timedelta(days=day)
            for t, every in EVERY.items():
                # the README's command, with the simulated today for now()
                conn.execute("SELECT hlculid_create_partitions(%s, %s, %s + interval '3 months', %s)",
                             (t, today, today, every))
                conn.execute("SELECT hlculid_drop_partitions(%s, %s - interval '12 months')", (t, today))
                # a row for every hour of the day
                conn.execute(f"""INSERT INTO {t} SELECT hlculid_generate_at(d + h * interval '1 hour'), 'x'
                                 FROM (SELECT date_trunc('day', %s AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' d) s,
                                      generate_series(0, 23) h""", (today,))
        last = first + timedelta(days=59)
        for t in EVERY:
            assert_one_run(conn, t, first.replace(hour=0), last + timedelta(days=90))
            assert conn.execute(f"SELECT count(*), count(DISTINCT date_trunc('hour', hlculid_ts(id) AT TIME ZONE 'UTC')) FROM {t}").fetchone() == (1440, 1440)
            assert conn.execute(f"SELECT count(*) FROM {t}_default").fetchone()[0] == 0
            assert rows_in_the_partition_of_their_time(conn, t) == 0
        # each grid is the fixed one: weeks from 1970-01-01 (a Thursday), quarters from January
        assert coverage(conn, "weekly")[0][0] == conn.execute("SELECT hlculid_min('2026-10-15+00')::text").fetchone()[0]
        assert coverage(conn, "quarterly")[0][0] == conn.execute("SELECT hlculid_min('2026-10-01+00')::text").fetchone()[0]


def test_partitions_made_by_0_2_0_are_recognised_after_the_update(make_cluster):
    c = make_cluster("part-020", conf=[UTC]).start()
    c.sql("CREATE EXTENSION hlculid VERSION '0.2.0'")
    tables = {"wk": "7 days", "qt": "3 months", "mo": "1 month"}
    for t, every in tables.items():
        c.sql(f"CREATE TABLE {t} (id hlculid NOT NULL) PARTITION BY RANGE (id)")
        c.sql("SELECT hlculid_create_partitions(%s, '2026-11-20+00', '2026-12-20+00', %s)", (t, every))
    # 0.2.0's next runs fail for any period but one unit: its grid starts at the run's day (month)
    for t, start in (("wk", "2026-11-21+00"), ("qt", "2026-12-21+00")):
        with pytest.raises(psycopg.errors.InvalidObjectDefinition, match="would overlap"):
            c.sql("SELECT hlculid_create_partitions(%s, %s, %s::timestamptz + interval '1 month', %s)",
                  (t, start, start, tables[t]))
    old = {t: c.sql(f"SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = '{t}'::regclass")
           for t in tables}
    c.sql("ALTER EXTENSION hlculid UPDATE")
    with c.connect() as conn:
        for day in range(1, 31):
            today = datetime(2026, 11, 20, 3, 0, tzinfo=timezone.utc) + timedelta(days=day)
            for t, every in tables.items():
                conn.execute("SELECT hlculid_create_partitions(%s, %s, %s + interval '3 months', %s)",
                             (t, today, today, every))
        for t in tables:
            # the old partitions are kept, the new ones fill the rest without a gap
            now = {r[0] for r in conn.execute(f"SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = '{t}'::regclass")}
            assert {r[0] for r in old[t]} <= now
            assert_one_run(conn, t, "2026-11-20+00", "2027-03-20+00")
            conn.execute(f"""INSERT INTO {t} SELECT hlculid_from_parts(timestamptz '2026-11-20+00' + h * interval '1 hour', 0, 0, 0)
                             FROM generate_series(0, 24 * 120 - 1) h""")
            assert rows_in_the_partition_of_their_time(conn, t) == 0
        # the weekly table: 0.2.0's last week [12-18, 12-25), the rest of the grid's week
        # [12-24, 12-31), then whole weeks of the grid
        assert coverage(conn, "wk")[4:7] == conn.execute(
            """SELECT hlculid_min(a)::text, hlculid_min(b)::text FROM (VALUES
               ('2026-12-18+00'::timestamptz, '2026-12-25+00'::timestamptz), ('2026-12-25+00', '2026-12-31+00'),
               ('2026-12-31+00', '2027-01-07+00')) v(a, b)""").fetchall()


def waiting_for_lock(c, pid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if c.one("SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", (pid,)):
            return
        time.sleep(0.05)
    raise AssertionError("the second run never waited for the first")


def run_second(c, isolation, query, params):
    """Starts the second run: its transaction (and, at REPEATABLE READ, its snapshot) begins before
    the first run commits, then it calls the helper, which waits for the first run's lock. Returns
    a function that waits for it and gives its rows (or raises its error)."""
    conn = c.connect(autocommit=False)
    conn.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
    conn.execute("SELECT count(*) FROM pg_class")  # the snapshot
    pid = conn.info.backend_pid
    out = {}

    def body():
        try:
            out["rows"] = [r[0] for r in conn.execute(query, params).fetchall()]
            conn.commit()
        except Exception as e:  # noqa: BLE001 - handed to the test
            out["error"] = e
            conn.rollback()

    t = threading.Thread(target=body)
    t.start()

    def finish():
        t.join(60)
        conn.close()
        if "error" in out:
            raise out["error"]
        return out["rows"]
    return pid, finish


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_two_runs_at_once_never_fail(make_cluster, isolation):
    c = make_cluster("part-race", conf=[UTC]).start()
    c.sql("CREATE EXTENSION hlculid")
    # a key column whose name needs quoting, and the regular expression in it
    c.sql('CREATE TABLE ev ("the id (x.y)" hlculid NOT NULL) PARTITION BY RANGE ("the id (x.y)")')
    with c.connect(autocommit=False) as first:
        made = first.execute("""SELECT p::text FROM hlculid_create_partitions('ev', '2026-01-01+00',
                                '2026-03-01+00', '1 month') p""").fetchall()
        assert [r[0] for r in made] == ["ev_p2026_01", "ev_p2026_02"]
        # the second run asks for days over the same months and one more: it waits for the lock,
        # then sees the months committed meanwhile and creates only March's days
        pid, second = run_second(c, isolation, """SELECT p::text FROM hlculid_create_partitions('ev',
            '2026-01-15+00', '2026-04-01+00', '1 day') p""", None)
        waiting_for_lock(c, pid)
        first.commit()
    assert second() == [f"ev_p2026_03_{d:02}" for d in range(1, 32)]
    with c.connect() as conn:
        assert_one_run(conn, "ev", "2026-01-01+00", "2026-04-01+00")

    # retention at once: the second run sees that the first dropped January and February
    with c.connect(autocommit=False) as first:
        gone = first.execute("SELECT hlculid_drop_partitions('ev', '2026-03-01+00')").fetchall()
        assert [r[0] for r in gone] == ["public.ev_p2026_01", "public.ev_p2026_02"]
        pid, second = run_second(c, isolation, "SELECT hlculid_drop_partitions('ev', %s)", ("2026-03-03+00",))
        waiting_for_lock(c, pid)
        first.commit()
    assert second() == ["public.ev_p2026_03_01", "public.ev_p2026_03_02"]
    with c.connect() as conn:
        assert_one_run(conn, "ev", "2026-03-03+00", "2026-04-01+00")
