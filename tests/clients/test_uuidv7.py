"""The UUIDv7 form (hlculid_to_uuidv7 / hlculid_from_uuidv7) in the three clients against this
server, 10,000 ids each way: the Python recipe's to_uuidv7/from_uuidv7 (here, with Python's uuid
module reading the form), the Node recipe's with the npm uuid package (tests/clients/uuidv7.js),
and the crate's with the uuid crate (core/tests/uuidv7_server.rs)."""

import os
import random
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest
from hlculid import Generator, Hlculid, from_uuidv7, to_uuidv7

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
N = 10_000


def random_v7(rng):
    """Any RFC 9562 version 7 uuid: random bits with the version and variant set."""
    r = rng.getrandbits(128)
    return uuid.UUID(int=(r & ~(0xF << 76) & ~(0b11 << 62)) | 7 << 76 | 0b10 << 62)


def test_python_recipe_against_the_server(server):
    with server.connect() as conn:
        # server ids: the same v7 form on both sides, version 7 to Python's uuid, in id order
        rows = conn.execute(
            "SELECT id::text, hlculid_to_uuidv7(id) FROM (SELECT hlculid_generate() AS id "
            "FROM generate_series(1, %s)) s ORDER BY id", (N,)).fetchall()
        assert len(rows) == N
        ours = [to_uuidv7(i) for i, _ in rows]
        assert ours == [u for _, u in rows]
        assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in ours)
        assert all(uuid.UUID(str(u)).version == 7 for u in ours)
        assert ours == sorted(ours) and len(set(ours)) == N
        # client ids, converted by the server
        gen = Generator(56)
        mine = [gen.generate() for _ in range(N)]
        theirs = conn.execute(
            "SELECT array_agg(hlculid_to_uuidv7(x::hlculid) ORDER BY i) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(x, i)", ([str(i) for i in mine],)).fetchone()[0]
        assert theirs == [to_uuidv7(i) for i in mine]
        # the other way: any v7 uuid and the client's forms read as the same ids on both sides
        rng = random.Random(7)
        uuids = [random_v7(rng) for _ in range(N // 2)] + theirs[: N // 2]
        back = conn.execute(
            "SELECT array_agg(hlculid_from_uuidv7(x)::text ORDER BY i) "
            "FROM unnest(%s::uuid[]) WITH ORDINALITY AS u(x, i)", (uuids,)).fetchone()[0]
        assert back == [str(from_uuidv7(u)) for u in uuids]
        # order kept both ways; time, counter and publisher exact, the lowest 6 random bits 0
        assert sorted(uuids, key=from_uuidv7) == sorted(uuids)
        for i, u in zip(mine, theirs):
            b = from_uuidv7(u)
            assert (b.ms, b.counter, b.publisher, b.random) == (i.ms, i.counter, i.publisher, i.random & ~63)
        assert from_uuidv7(str(theirs[0])) == from_uuidv7(theirs[0])


def test_other_uuids_are_refused_on_both_sides(server):
    others = [uuid.uuid4(), uuid.uuid1(), uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1),
              uuid.UUID("018f3c1f-0e6b-7d4a-cc3d-5e6f70819203"),  # version 7, Microsoft variant
              uuid.UUID(bytes=Generator(10).generate().bytes)]  # an id's own bytes
    with server.connect() as conn:
        for u in others:
            with pytest.raises(ValueError, match="not an RFC 9562 version 7 uuid"):
                from_uuidv7(u)
            with pytest.raises(psycopg.errors.InvalidParameterValue):
                conn.execute("SELECT hlculid_from_uuidv7(%s)", (u,))
    with pytest.raises(ValueError):
        to_uuidv7("not an id")
    assert to_uuidv7(Hlculid("017FC21C5E7A-0001-000A-AAA333333333")) == \
        uuid.UUID("017fc21c-5e7a-7000-8400-2aaa8ccccccc")


def test_node_recipe_and_npm_uuid(server):
    r = subprocess.run(["node", str(HERE / "uuidv7.js")],
                       env={**os.environ, "HLCULID_TEST_HOST": str(server.dir), "HLCULID_TEST_PORT": str(server.port)},
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "node uuidv7: ok" in r.stdout


def test_rust_crate_and_uuid_crate(dsn):
    r = subprocess.run(["cargo", "test", "-q", "-p", "hlculid-core", "--features", "postgres serde",
                        "--test", "uuidv7_server", "--", "--ignored"],
                       cwd=ROOT, env={**os.environ, "HLCULID_TEST_DSN": dsn}, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "2 passed" in r.stdout
