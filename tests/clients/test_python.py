"""The Python recipes (clients/python/src/hlculid, the hlculid package) against a real server: psycopg 3 in
text, binary and binary COPY, and asyncpg in binary and text; 10,000 ids made by the server and
10,000 made by the client each way, and a time window with bound parameters."""

import asyncio
import time
import uuid
from datetime import datetime, timedelta, timezone

import asyncpg
import psycopg
import pytest
from conftest import N
from hlculid import Generator, Hlculid, register_asyncpg, register_psycopg


@pytest.mark.smoke  # make test's connection smoke test on every major (scripts/test.sh)
def test_the_id_type_reads_every_form_and_matches_the_server(dsn):
    with psycopg.connect(dsn) as conn:
        text, ulid, uuid_text, hexs = conn.execute(
            "SELECT id::text, hlculid_to_ulid(id), id::uuid::text, replace(id::uuid::text, '-', '') "
            "FROM (SELECT hlculid_generate() AS id) s").fetchone()
    ids = {Hlculid(form) for form in (text, ulid, uuid_text, hexs, text.lower())}
    assert len(ids) == 1
    (id_,) = ids
    assert str(id_) == text and id_.ulid() == ulid and isinstance(id_, uuid.UUID)
    assert id_.publisher == 50
    assert abs((id_.ts - datetime.now(timezone.utc)).total_seconds()) < 60
    with pytest.raises(ValueError):
        Hlculid("017FC21C5E7A")


def test_psycopg_text_binary_and_copy(dsn):
    gen = Generator(51)
    start = datetime.now(timezone.utc) - timedelta(milliseconds=5)
    mine = [gen.generate() for _ in range(N)]
    assert mine == sorted(mine) and len(set(mine)) == N
    with psycopg.connect(dsn) as conn:
        register_psycopg(conn)
        conn.execute("DROP TABLE IF EXISTS py_events; CREATE TABLE py_events (id hlculid PRIMARY KEY, n int)")
        # server ids, text and binary: the same values, as Hlculid
        for binary in (False, True):
            rows = conn.cursor(binary=binary).execute(
                "SELECT id, id::text FROM (SELECT hlculid_generate() AS id FROM generate_series(1, %s)) s",
                (N,)).fetchall()
            assert all(type(i) is Hlculid and str(i) == t for i, t in rows)
        # client ids as parameters, text then binary
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO py_events VALUES (%s, %s)", [(i, n) for n, i in enumerate(mine[:1000])])
        with conn.cursor(binary=True) as cur:
            cur.executemany("INSERT INTO py_events VALUES (%b, %b)",
                            [(i, n) for n, i in enumerate(mine[1000:2000], start=1000)])
        # binary COPY in and out
        with conn.cursor().copy("COPY py_events (id, n) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["hlculid", "int4"])
            for n, i in enumerate(mine[2000:], start=2000):
                copy.write_row((i, n))
        with conn.cursor().copy("COPY (SELECT id, n FROM py_events ORDER BY id) TO STDOUT (FORMAT BINARY)") as copy:
            copy.set_types(["hlculid", "int4"])
            back = list(copy.rows())
        assert back == [(i, n) for n, i in enumerate(mine)]
        # the server reads them as the client wrote them
        texts = conn.execute("SELECT id::text FROM py_events ORDER BY id").fetchall()
        assert [t for (t,) in texts] == [str(i) for i in mine]
        # a time window with bound parameters, as the planner estimates it (the docs' recipe)
        end = datetime.now(timezone.utc) + timedelta(milliseconds=5)
        (count,) = conn.execute("SELECT count(*) FROM py_events WHERE id <@ tstzrange(%s, %s)",
                                (start, end)).fetchone()
        assert count == N
        (count,) = conn.execute("SELECT count(*) FROM py_events WHERE id <@ tstzrange(%s, %s)",
                                (end, end + timedelta(hours=1))).fetchone()
        assert count == 0
        (count,) = conn.execute("SELECT count(*) FROM py_events WHERE id > %s", (mine[N // 2],)).fetchone()
        assert count == N - N // 2 - 1


def test_asyncpg_binary_and_text(dsn, server):
    async def run(binary):
        conn = await asyncpg.connect(host=str(server.dir), port=server.port, user="postgres", database="postgres")
        try:
            await register_asyncpg(conn, binary=binary)
            table = f"apg_events_{'bin' if binary else 'text'}"
            await conn.execute(f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id hlculid PRIMARY KEY, n int)")
            rows = await conn.fetch(
                "SELECT id, id::text AS t FROM (SELECT hlculid_generate() AS id FROM generate_series(1, $1::int)) s", N)
            assert all(type(r["id"]) is Hlculid and str(r["id"]) == r["t"] for r in rows)
            gen = Generator(52)
            start = datetime.now(timezone.utc) - timedelta(milliseconds=5)
            mine = [gen.generate() for _ in range(N)]
            await conn.executemany(f"INSERT INTO {table} VALUES ($1, $2)", [(i, n) for n, i in enumerate(mine)])
            back = await conn.fetch(f"SELECT id, id::text AS t FROM {table} ORDER BY id")
            assert [r["id"] for r in back] == mine
            assert [r["t"] for r in back] == [str(i) for i in mine]
            end = datetime.now(timezone.utc) + timedelta(milliseconds=5)
            count = await conn.fetchval(f"SELECT count(*) FROM {table} WHERE id <@ tstzrange($1, $2)",
                                        start, end)
            assert count == N
            # min_of/max_of give the same window as explicit bounds
            count = await conn.fetchval(f"SELECT count(*) FROM {table} WHERE id >= $1 AND id <= $2",
                                        Hlculid.min_of(start), Hlculid.max_of(end))
            assert count == N
            # a plain uuid.UUID or a string parameter works too
            assert await conn.fetchval("SELECT $1::hlculid", uuid.UUID(int=mine[0].int)) == mine[0]
            assert await conn.fetchval("SELECT $1::hlculid", mine[0].ulid()) == mine[0]
        finally:
            await conn.close()

    for binary in (True, False):
        asyncio.run(run(binary))


def test_client_generator_ids_increase_and_carry_through_a_frozen_clock(monkeypatch):
    gen = Generator(53)
    frozen = time.time_ns()
    monkeypatch.setattr(time, "time_ns", lambda: frozen)
    ids = [gen.generate() for _ in range(70_000)]  # more than one counter's worth in one ms
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert ids[0].counter == 0 and ids[65_536].ms == ids[0].ms + 1


def test_a_bad_string_parameter_fails_with_22p02_and_inserts_nothing(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bad_param; CREATE TABLE bad_param (id hlculid PRIMARY KEY)")
        for param_type in ("varchar", "text"):
            conn.execute(f"PREPARE ins_{param_type}({param_type}) AS INSERT INTO bad_param VALUES ($1)")
            with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                conn.execute(f"EXECUTE ins_{param_type}('017FC21C5E7A-0000-000A-AAA11111111Z')")
            good = Generator(55).generate()
            conn.execute(f"EXECUTE ins_{param_type}('{good}')")
        # and a driver's own string parameters, which psycopg sends untyped
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute("INSERT INTO bad_param VALUES (%s)", ("not an id",))
        assert conn.execute("SELECT count(*) FROM bad_param").fetchone()[0] == 2
