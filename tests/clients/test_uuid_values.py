"""A random uuid.UUID (version 4) going into an hlculid is refused from Python as by the server's
uuid cast: psycopg sends it as a uuid (the server refuses it, 22023 with a HINT), the asyncpg
codec refuses it before sending; a uuid.UUID holding an id's bytes goes in unchanged."""

import asyncio
import uuid

import asyncpg
import psycopg
import pytest
from hlculid import Generator, register_asyncpg, register_psycopg


def test_psycopg_uuid_parameters(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_psycopg(conn)
        conn.execute("DROP TABLE IF EXISTS py_uuid_values; CREATE TABLE py_uuid_values (id hlculid PRIMARY KEY)")
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            conn.execute("INSERT INTO py_uuid_values VALUES (%s)", (uuid.uuid4(),))
        assert e.value.diag.message_hint == "Use hlculid_generate() for new ids."
        mine = Generator(55).generate()
        conn.execute("INSERT INTO py_uuid_values VALUES (%s)", (uuid.UUID(bytes=mine.bytes),))
        assert conn.execute("SELECT id FROM py_uuid_values").fetchall() == [(mine,)]


def test_asyncpg_uuid_parameters(server):
    async def run(binary):
        conn = await asyncpg.connect(host=str(server.dir), port=server.port, user="postgres", database="postgres")
        try:
            await register_asyncpg(conn, binary=binary)
            with pytest.raises(asyncpg.exceptions.DataError, match="random uuid"):  # the codec's ValueError
                await conn.fetchval("SELECT $1::hlculid", uuid.uuid4())
            mine = Generator(56).generate()
            assert await conn.fetchval("SELECT $1::hlculid", uuid.UUID(bytes=mine.bytes)) == mine
            # other versions convert as the server's cast converts them
            v7 = uuid.UUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
            assert (await conn.fetchval("SELECT $1::hlculid", v7)).bytes == v7.bytes
        finally:
            await conn.close()

    for binary in (True, False):
        asyncio.run(run(binary))
