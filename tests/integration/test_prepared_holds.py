"""Prepared transactions hold the horizon exactly, wherever they go (src/horizon/prepared/mod.rs): across
a clean restart, `-m immediate` and kill -9 of the postmaster with the wall clock stepped back
across it, whoever asks first; on a standby started before or after the PREPARE and promoted, with
the holders view queried during recovery; a hold whose xid is 2^32 old is ended, not revived by a
reused 32-bit xid; 0.4.0's floor file is carried over once. Each test fails on 0.4.0, whose floor
was written once a second and read by the first caller (issue 31, items 2, 3, 7 and 8)."""

import subprocess
import time

import psycopg
import pytest

from pgcluster import as_server, server_test, write_as_server

CONF = ("hlculid.publisher_id = 3", "max_prepared_transactions = 10")
MIN_ID = "000000000000-0001-0000-000000000000"


def setup(c):
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    c.sql("CREATE ROLE reader LOGIN")
    c.sql("GRANT SELECT ON ev TO reader")


def prepare(c, gid, n=1):
    """A prepared transaction that inserted one row; its id, and its full xid."""
    with c.connect(autocommit=False) as p:
        # the clock moves first, so the transaction's lowest value is not the clock's first
        p.execute("SELECT hlculid_generate()")
        p.commit()
        xid = int(p.execute("SELECT pg_current_xact_id()::text").fetchone()[0])
        a = p.execute("INSERT INTO ev (n) VALUES (%s) RETURNING id::text", (n,)).fetchone()[0]
        p.execute(f"PREPARE TRANSACTION '{gid}'")
    return a, xid


def horizon(c, user="postgres"):
    return c.sql("SELECT hlculid_horizon()::text", user=user)[0][0]


def holds(c):
    return c.sql("SELECT gid, holds_at::text FROM hlculid.hlculid_horizon_holders ORDER BY holds_at")


def hold_files(c):
    d = c.data / "pg_hlculid"
    return sorted(as_server("ls", "-A", "--", str(d)).stdout.split()) if server_test("-d", d) else []


def read_below_horizon(c, after):
    """The two-statement reader: the horizon in one statement, the rows below it in the next."""
    h = horizon(c)
    rows = c.sql("SELECT id::text FROM ev WHERE id > %s::hlculid AND id < %s::hlculid ORDER BY id",
                 (after, h))
    return [r[0] for r in rows], h


# the quick tier keeps a clean restart; crashes (immediate, kill -9) in the full tier
@pytest.mark.parametrize("how", ["fast", pytest.param("immediate", marks=pytest.mark.full),
                                 pytest.param("kill9", marks=pytest.mark.full)])
def test_a_prepared_transaction_holds_exactly_across_a_restart_with_the_clock_stepped_back(make_cluster, how):
    c = make_cluster(f"holds-restart-{how}", conf=CONF, faketime=True).start()
    setup(c)
    a, _ = prepare(c, "p1")
    for n in range(2, 5):
        c.sql("INSERT INTO ev (n) VALUES (%s)", (n,))
    before = horizon(c)
    [(gid, held)] = holds(c)
    assert gid == "p1" and before == held and held <= a
    assert len(hold_files(c)) == 1
    if how == "kill9":
        c.kill9_all()
    else:
        c.stop(how)
    c.set_clock("-30")  # the wall clock 30 s behind while it was down
    c.start()
    c.wait_ready()
    # an unprivileged role asks first; nothing it does decides what the others see
    c.sql("GRANT EXECUTE ON FUNCTION hlculid_horizon() TO reader")
    assert horizon(c, user="reader") == before, "the horizon moved across the restart"
    assert horizon(c) == before
    assert holds(c) == [("p1", held)]
    # readers below the horizon have not passed the prepared row; after COMMIT PREPARED they get it
    seen, h = read_below_horizon(c, "000000000000-0000-0000-000000000000")
    assert a not in seen and all(r < h for r in seen)
    c.sql("COMMIT PREPARED 'p1'")
    later, h2 = read_below_horizon(c, seen[-1] if seen else "000000000000-0000-0000-000000000000")
    assert a in later and h2 > a
    assert holds(c) == [] and hold_files(c) == []


# the quick tier keeps the WAL replay (a standby started before); the copied file in the full tier
@pytest.mark.parametrize("standby_started", ["before", pytest.param("after", marks=pytest.mark.full)])
def test_a_promoted_standby_holds_the_primarys_prepared_transactions(make_cluster, standby_started):
    primary = make_cluster(f"holds-primary-{standby_started}", conf=CONF).start()
    setup(primary)
    standby = None
    if standby_started == "before":
        standby = make_cluster(f"holds-standby-{standby_started}", standby_of=primary).start()
    a, _ = prepare(primary, "p1")
    for n in range(2, 5):
        primary.sql("INSERT INTO ev (n) VALUES (%s)", (n,))
    if standby_started == "after":
        standby = make_cluster(f"holds-standby-{standby_started}", standby_of=primary).start()
    standby.wait_ready()
    deadline = time.time() + 30
    while standby.one("SELECT count(*) FROM ev") != 3 and time.time() < deadline:
        time.sleep(0.1)
    # during recovery the holders view (docs/monitoring.md) shows the replayed hold, latching nothing
    during = standby.sql("SELECT holds_at::text FROM hlculid.hlculid_horizon_holders")
    assert during and min(r[0] for r in during) <= a
    primary.stop()
    standby.sql("SELECT pg_promote()")
    deadline = time.time() + 30
    while standby.one("SELECT pg_is_in_recovery()") and time.time() < deadline:
        time.sleep(0.1)
    # docs/many-publishers.md's failover procedure: observe the largest id before taking writes
    standby.sql("SELECT hlculid_observe(max(id)) FROM ev")
    seen, h = read_below_horizon(standby, "000000000000-0000-0000-000000000000")
    assert h <= a, "the promoted server's horizon passed the prepared transaction's id"
    assert a not in seen
    assert [g for g, _ in holds(standby)] == ["p1"]
    standby.sql("COMMIT PREPARED 'p1'")
    later, _ = read_below_horizon(standby, seen[-1] if seen else "000000000000-0000-0000-000000000000")
    assert a in later, "the prepared row was lost to a reader of the promoted server"
    assert holds(standby) == []
    standby.stop("immediate")


def test_a_hold_whose_xid_is_an_epoch_old_is_ended_not_revived(make_cluster):
    """A hold of a transaction 2^32 xids back has the same 32-bit xid as a prepared transaction
    now; it must not hold the horizon (0.4.0 kept holds by 32-bit xid and never cleared them)."""
    c = make_cluster("holds-old-xid", conf=CONF)
    as_server(f"{c.bin}/pg_resetwal", "-e", "5", "-D", str(c.data))
    c.start()
    setup(c)
    a, xid = prepare(c, "p1")
    assert xid >> 32 == 5
    [(_, held)] = holds(c)
    c.stop()
    phantom = c.data / "pg_hlculid" / f"prepared.{xid - (1 << 32):016X}"
    check = 0x5A5A5A5A5A5A5A5A
    write_as_server(phantom, f"hlculid-hwm 1 1 {1 ^ check}\n")  # holds at the minimum id
    c.start()
    c.wait_ready()
    assert horizon(c) == held != MIN_ID
    assert holds(c) == [("p1", held)]
    assert hold_files(c) == [f"prepared.{xid:016X}"], "the ended hold's file was not removed"
    c.sql("ROLLBACK PREPARED 'p1'")
    assert horizon(c) > a and hold_files(c) == []


def test_0_4_0s_floor_file_is_carried_over_once(make_cluster):
    """A server restarted from 0.4.0's library into this one with a transaction still prepared:
    no hold file (0.4.0 wrote none), 0.4.0's floor file `hlculid.horizon`. The prepared
    transaction holds at that floor, gets a hold file, and the floor file goes."""
    c = make_cluster("holds-legacy", conf=CONF).start()
    setup(c)
    a, _ = prepare(c, "p1")
    [(_, held)] = holds(c)
    floor_id = c.one("SELECT (hlculid_min(hlculid_ts(%s::hlculid) - interval '1 second'))::text", (held,))
    floor = int(floor_id.replace("-", "")[:16], 16)  # the clock value: the id's high 64 bits
    c.stop()
    as_server("find", str(c.data / "pg_hlculid"), "-mindepth", "1", "-delete")
    check = 0x5A5A5A5A5A5A5A5A
    legacy = c.data / "hlculid.horizon"
    write_as_server(legacy, f"hlculid-hwm 1 {floor} {floor ^ check}\n")
    c.start()
    c.wait_ready()
    assert horizon(c) == floor_id
    assert not server_test("-e", legacy) and len(hold_files(c)) == 1
    c.stop()
    c.start()
    c.wait_ready()
    assert holds(c) == [("p1", floor_id)]
    c.sql("COMMIT PREPARED 'p1'")
    assert horizon(c) > a


def test_without_prepared_transactions_prepare_gives_postgresqls_own_error(make_cluster):
    c = make_cluster("holds-disabled", conf=("hlculid.publisher_id = 3", "max_prepared_transactions = 0")).start()
    setup(c)
    with c.connect(autocommit=False) as p:
        p.execute("INSERT INTO ev (n) VALUES (1)")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
            p.execute("PREPARE TRANSACTION 'p1'")
    assert "prepared transactions are disabled" in str(e.value)


def test_at_the_prepared_transactions_limit_prepare_gives_postgresqls_own_error(make_cluster):
    """0.4.0 (and the soak, at first): XX000 "hlculid has no room ..." before PostgreSQL's 53200."""
    c = make_cluster("holds-full", conf=("hlculid.publisher_id = 3", "max_prepared_transactions = 3")).start()
    setup(c)
    c.sql("CREATE TABLE plain (n int)")
    errors = {}
    for table in ("plain", "ev"):
        for k in range(3):
            with c.connect(autocommit=False) as p:
                p.execute(f"INSERT INTO {table} (n) VALUES (1)")
                p.execute(f"PREPARE TRANSACTION '{table}{k}'")
        with c.connect(autocommit=False) as p:
            p.execute(f"INSERT INTO {table} (n) VALUES (2)")
            with pytest.raises(psycopg.Error) as e:
                p.execute(f"PREPARE TRANSACTION '{table}-over'")
            errors[table] = (e.value.sqlstate, e.value.diag.message_primary, e.value.diag.message_hint)
        for k in range(3):
            c.sql(f"ROLLBACK PREPARED '{table}{k}'")
    # a transaction that made ids gets exactly what a plain one gets
    assert errors["ev"] == errors["plain"]
    assert errors["ev"][:2] == ("53200", "maximum number of prepared transactions reached")
    assert "max_prepared_transactions" in errors["ev"][2] and "(currently 3)" in errors["ev"][2]
