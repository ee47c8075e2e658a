"""What users' data passes through: pg_dump/pg_restore, binary protocol parameters from a
driver, and hostile binary input."""

import os
import random
import subprocess

import psycopg
import pytest
from psycopg.adapt import Dumper


TABLES = ["ev", "ev_part", "ev_uuid"]


def fill(conn):
    conn.execute("CREATE EXTENSION hlculid")
    conn.execute("""
        CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int, tags hlculid[]);
        CREATE INDEX ev_hash ON ev USING hash (id);
        CREATE INDEX ev_brin ON ev USING brin (id);
        CREATE INDEX ev_pub ON ev (hlculid_publisher(id));
        INSERT INTO ev (n, tags) SELECT i, ARRAY[hlculid_generate(), hlculid_generate_at('2020-01-01')]
        FROM generate_series(1, 20000) i;
        INSERT INTO ev VALUES ('000000000000-0000-0000-000000000000', -1, NULL),
                              ('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF', -2, '{}');
        CREATE TABLE ev_part (id hlculid PRIMARY KEY, n int) PARTITION BY HASH (id);
        CREATE TABLE ev_part_0 PARTITION OF ev_part FOR VALUES WITH (MODULUS 4, REMAINDER 0);
        CREATE TABLE ev_part_1 PARTITION OF ev_part FOR VALUES WITH (MODULUS 4, REMAINDER 1);
        CREATE TABLE ev_part_2 PARTITION OF ev_part FOR VALUES WITH (MODULUS 4, REMAINDER 2);
        CREATE TABLE ev_part_3 PARTITION OF ev_part FOR VALUES WITH (MODULUS 4, REMAINDER 3);
        INSERT INTO ev_part SELECT id, n FROM ev;
        CREATE TABLE ev_uuid (u uuid, h hlculid GENERATED ALWAYS AS (u::hlculid) STORED);
        INSERT INTO ev_uuid (u) SELECT hlculid_generate()::uuid FROM generate_series(1, 1000);
    """)


def fingerprint(conn):
    out = {}
    for t in TABLES:
        out[t] = conn.execute(
            f"SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM {t} t").fetchone()
    out["partitions"] = conn.execute(
        "SELECT string_agg(tableoid::regclass::text || ':' || n, ',' ORDER BY n) FROM ev_part").fetchone()
    out["indexes"] = conn.execute(
        "SELECT string_agg(indexdef, E'\\n' ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'public'").fetchone()
    return out


def test_dump_and_restore_keep_data_indexes_and_partitions(make_cluster, tmp_path):
    c = make_cluster("dump", conf=["hlculid.publisher_id = 5"]).start()
    with c.connect() as conn:
        fill(conn)
        before = fingerprint(conn)
        conn.execute("CREATE DATABASE restored")
    dump = c.dir / "dump.custom"
    env = dict(os.environ, PGHOST=str(c.dir), PGPORT=str(c.port), PGUSER="postgres")
    subprocess.run([f"{c.bin}/pg_dump", "-Fc", "-d", "postgres", "-f", str(dump)], env=env, check=True)
    subprocess.run([f"{c.bin}/pg_restore", "-d", "restored", "--exit-on-error", str(dump)], env=env, check=True)
    with psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname="restored", autocommit=True) as r:
        after = fingerprint(r)
        assert after == before
        # rows land in the same hash partitions, and the indexes answer queries
        r.execute("SET enable_seqscan = off")
        some = r.execute("SELECT id::text FROM ev WHERE n = 777").fetchone()[0]
        plan = "\n".join(x[0] for x in r.execute("EXPLAIN SELECT n FROM ev WHERE id = %s::hlculid", (some,)))
        assert "Index" in plan
        assert r.execute("SELECT n FROM ev WHERE id = %s::hlculid", (some,)).fetchone()[0] == 777
        assert r.execute("SELECT count(*) FROM ev WHERE id >= hlculid_min(now() - interval '1 hour')").fetchone()[0] == 20001
        # the restored database generates on
        assert r.execute("SELECT hlculid_generate() > max(id) FROM ev WHERE id < 'FFFFFFFFFFFF-0000-0000-000000000000'").fetchone()[0]


class HlculidBinaryDumper(Dumper):
    """Sends raw bytes as an hlculid parameter in binary format, like a driver would."""
    format = psycopg.pq.Format.BINARY

    def dump(self, obj):
        return obj


def test_binary_protocol_parameters_and_hostile_binary_input(make_cluster):
    c = make_cluster("binary").start()
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION hlculid")
        oid = conn.execute("SELECT 'hlculid'::regtype::oid").fetchone()[0]
        HlculidBinaryDumper.oid = oid
        conn.adapters.register_dumper(bytes, HlculidBinaryDumper)
        rng = random.Random(7)
        # valid values round-trip through binary parameters and binary results
        for _ in range(200):
            b = bytes(rng.getrandbits(8) for _ in range(16))
            got = conn.execute("SELECT %b::hlculid::bytea", (b,)).fetchone()[0]
            assert got == b
            cur = conn.cursor(binary=True)
            assert cur.execute("SELECT %b::hlculid", (b,)).fetchone()[0] == b
        # every other length is refused with 22P03, and the session stays usable
        for n in list(range(0, 16)) + list(range(17, 40)) + [1000, 100000]:
            b = bytes(rng.getrandbits(8) for _ in range(n))
            with pytest.raises(psycopg.errors.InvalidBinaryRepresentation) as e:
                conn.execute("SELECT %b::hlculid", (b,))
            assert f"got {n}" in e.value.diag.message_detail
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_hostile_text_input_never_crashes_the_server(make_cluster):
    c = make_cluster("hostile").start()
    rng = random.Random(11)
    alphabet = "0123456789abcdefABCDEFXYZ-_ {}\\'\"é\u00ff"
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION hlculid")
        for i in range(3000):
            n = rng.choice([0, 1, 25, 26, 27, 31, 32, 33, 34, 35, 36, 37, rng.randrange(0, 200)])
            s = "".join(rng.choice(alphabet) for _ in range(n))
            try:
                conn.execute("SELECT %s::hlculid", (s,))
            except psycopg.errors.InvalidTextRepresentation as e:
                assert e.diag.message_primary.startswith("invalid input syntax for type hlculid")
        for q in ["SELECT hlculid_from_parts('infinity', 0, 0, 0)",
                  "SELECT hlculid_from_parts(now(), 2147483647, 0, 0)",
                  "SELECT hlculid_from_parts(now(), 0, -2147483648, 0)",
                  "SELECT hlculid_from_parts(now(), 0, 0, -9223372036854775808)",
                  "SELECT hlculid_min('294276-12-31 23:59:59+00')",
                  "SELECT hlculid_generate_at('4713-11-24 00:00:00+00 BC')",
                  "SELECT '\\x'::bytea::hlculid",
                  "SELECT hlculid_observe('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF')"]:
            with pytest.raises(psycopg.Error) as e:
                conn.execute(q)
            assert e.value.sqlstate[:2] in ("22", "55"), (q, e.value.sqlstate)
            assert "panic" not in str(e.value).lower()
        assert conn.execute("SELECT 1").fetchone()[0] == 1
    assert "terminated by signal" not in c.log()
