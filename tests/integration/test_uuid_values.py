"""uuid values meeting hlculid (0.3.0): a derived publisher id keeps bit 15 clear, so a server's
own ids never carry the RFC 9562 variant; and the update from 0.2.0 replaces the binary uuid cast
by the checking one without being blocked by what users built on it."""

import re
import subprocess
import time

import psycopg
import pytest

V4 = "8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203"


def fold(sysid):
    return ((sysid >> 48) ^ (sysid >> 32) ^ (sysid >> 16) ^ sysid) & 0xFFFF


def test_derived_publisher_keeps_bit_15_clear(make_cluster):
    # A cluster whose system identifier folds to 32768 or more, where 0.2.0 used bit 15 (half of
    # them; 16 tries all failing has odds 2^-16).
    for _ in range(16):
        c = make_cluster("derived15")
        out = subprocess.run([f"{c.bin}/pg_controldata", "-D", str(c.data)], capture_output=True,
                             text=True, check=True).stdout
        sysid = int(re.search(r"Database system identifier:\s+(\d+)", out).group(1))
        if fold(sysid) >= 0x8000:
            break
    else:
        pytest.fail("no system identifier folding to 32768 or more in 16 clusters")
    c.start()
    c.sql("CREATE EXTENSION hlculid")
    pub, source = c.sql("SELECT publisher, publisher_source FROM hlculid_clock()")[0]
    assert source == "system identifier"
    assert pub == fold(sysid) & 0x7FFF and pub < 32768
    # every id of a batch (every counter value, 16384-20479 included) has byte 8 below 0x80, so
    # its uuid form is no RFC uuid and converts back
    assert c.one("""
        SELECT count(*) FILTER (WHERE get_byte(hlculid_to_bytea(id), 8) < 128
                                  AND hlculid_publisher(id) = %s AND id::uuid::hlculid = id)
        FROM unnest(hlculid_generate_n(65536)) id""", (pub,)) == 65536
    deadline = time.time() + 10
    while f"using publisher id {pub}, derived from the system identifier" not in c.log():
        assert time.time() < deadline, c.log()
        time.sleep(0.1)


def refused(conn, query):
    try:
        conn.execute(query)
    except psycopg.errors.InvalidParameterValue as e:
        assert e.diag.message_primary == "cannot cast a random uuid (version 4) to type hlculid"
        assert e.diag.message_hint == "Use hlculid_generate() for new ids."
        return True
    return False


def test_upgrade_from_0_2_0_keeps_what_uses_the_uuid_cast(make_cluster):
    c = make_cluster("uuidcast", conf=["hlculid.publisher_id = 7"]).start()
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION hlculid VERSION '0.2.0'")
        conn.execute(f"""
            CREATE TABLE refs (u uuid, h hlculid GENERATED ALWAYS AS (u::hlculid) STORED);
            INSERT INTO refs (u) SELECT hlculid_generate()::uuid FROM generate_series(1, 100);
            INSERT INTO refs (u) VALUES ('{V4}');
            CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT gen_random_uuid(), n int);
            INSERT INTO ev (n) VALUES (1);
            CREATE VIEW refs_as_ids AS SELECT u::hlculid AS id FROM refs;
            CREATE VIEW refs_matching AS SELECT count(*) AS n FROM refs JOIN ev ON ev.id = refs.u;
            CREATE FUNCTION as_id(x uuid) RETURNS hlculid LANGUAGE sql IMMUTABLE RETURN x::hlculid;
        """)
        before = conn.execute("SELECT array_agg(id ORDER BY id) FROM refs_as_ids").fetchone()[0]
        assert not refused(conn, f"SELECT '{V4}'::uuid::hlculid")  # 0.2.0: binary, unchecked
        conn.execute("ALTER EXTENSION hlculid UPDATE")
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'").fetchone()[0] != "0.2.0"
        assert conn.execute("SELECT castfunc::regproc::text, castmethod FROM pg_cast "
                            "WHERE castsource = 'uuid'::regtype AND casttarget = 'hlculid'::regtype"
                            ).fetchone() == ("hlculid_from_uuid", "f")
        # what was built under 0.2.0 still runs, with the relabelling it was made with (no
        # dependency on a binary cast, so nothing to update): unchecked until created again
        assert conn.execute("SELECT array_agg(id ORDER BY id) FROM refs_as_ids").fetchone()[0] == before
        assert conn.execute("SELECT n FROM refs_matching").fetchone()[0] == 0
        assert not refused(conn, f"SELECT as_id('{V4}')")
        assert not refused(conn, "INSERT INTO ev (n) VALUES (2)")  # DEFAULT gen_random_uuid()
        assert not refused(conn, f"INSERT INTO refs (u) VALUES ('{V4}')")  # the generated column
        # new statements are checked
        assert refused(conn, f"SELECT '{V4}'::uuid::hlculid")
        assert refused(conn, "INSERT INTO ev (id) VALUES (gen_random_uuid())")
        assert not refused(conn, "INSERT INTO ev (id) VALUES (hlculid_generate()::uuid)")
        # created again, they check
        conn.execute("CREATE OR REPLACE VIEW refs_as_ids AS SELECT u::hlculid AS id FROM refs")
        assert refused(conn, "SELECT * FROM refs_as_ids")
        conn.execute("ALTER TABLE ev ALTER COLUMN id SET DEFAULT gen_random_uuid()")
        assert refused(conn, "INSERT INTO ev (n) VALUES (3)")
