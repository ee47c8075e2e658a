"""bigint ids in the Python recipe (clients/python/src/hlculid, the hlculid package: BigId, Generator.generate_bigint)
against the server's functions: 10,000 ids made by the server decoded by the client, 10,000 made
by the client decoded by the server, both through psycopg into a bigint column; the two widths
from one clock; bounds at the ends of the range; JSON as decimal strings; the shared list of
decimal forms (tests/data/bigint_forms.json), which the crate and the Node client read too."""

import asyncio
import json
import pickle
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import asyncpg
import psycopg
import pytest
from conftest import N
from hlculid import BigId, Generator, Hlculid, json_default, register_psycopg, register_psycopg_bigint

HERE = Path(__file__).resolve().parent
FORMS = json.loads((HERE.parent / "data" / "bigint_forms.json").read_text(encoding="utf-8"))
UTC = timezone.utc


def test_server_ids_decode_in_the_client_as_in_the_server(dsn):
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT b, b::text, hlculid_bigint_ts(b), hlculid_bigint_counter(b), hlculid_bigint_publisher(b),"
            "       hlculid_from_bigint(b)::text, hlculid_bigint_min(hlculid_bigint_ts(b)),"
            "       hlculid_bigint_max(hlculid_bigint_ts(b)), (hlculid_bigint_decode(b)).*"
            " FROM (SELECT 1 AS part, i, hlculid_generate_bigint() AS b FROM generate_series(1, %(n)s / 2) i"
            "       UNION ALL SELECT 2, i, b FROM unnest(hlculid_generate_bigint_n(%(n)s / 2)) WITH ORDINALITY u(b, i)) s"
            # the order each part made them in (a parallel append may interleave the parts' rows)
            " ORDER BY part, i",
            {"n": N}).fetchall()
    assert len(rows) == N
    ids = []
    for b, text, ts, counter, publisher, wide, lo, hi, d_ts, d_counter, d_publisher in rows:
        big = BigId(b)
        assert str(big) == text and BigId(text) == big and int(big) == b
        assert big.ts == ts == d_ts
        assert big.counter == counter == d_counter
        assert big.publisher == publisher == d_publisher == 50
        assert str(big.to_hlculid()) == wide
        assert BigId.from_hlculid(Hlculid(wide)) == big
        assert (BigId.min_of(ts), BigId.max_of(ts)) == (BigId(lo), BigId(hi))
        ids.append(big)
    half = N // 2
    assert ids[:half] == sorted(ids[:half]) and ids[half:] == sorted(ids[half:]) and len(set(ids)) == N


def test_client_ids_round_trip_through_a_bigint_column_and_decode_in_the_server(dsn):
    gen = Generator(56)
    start = datetime.now(UTC) - timedelta(milliseconds=5)
    mine = [gen.generate_bigint() for _ in range(N)]
    assert mine == sorted(mine) and len(set(mine)) == N
    with psycopg.connect(dsn) as conn:
        register_psycopg(conn)
        conn.execute("DROP TABLE IF EXISTS py_big; CREATE TABLE py_big (id bigint PRIMARY KEY, n int)")
        # BigId parameters, text then binary, then binary COPY
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO py_big VALUES (%s, %s)", [(b, n) for n, b in enumerate(mine[:1000])])
        with conn.cursor(binary=True) as cur:
            cur.executemany("INSERT INTO py_big VALUES (%b, %b)",
                            [(b, n) for n, b in enumerate(mine[1000:2000], start=1000)])
        with conn.cursor().copy("COPY py_big (id, n) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["int8", "int4"])
            for n, b in enumerate(mine[2000:], start=2000):
                copy.write_row((b, n))
        # the server orders and decodes them as the client does; ints come back, BigId reads them
        for binary in (False, True):
            rows = conn.cursor(binary=binary).execute(
                "SELECT id, n, id::text, hlculid_bigint_ts(id), hlculid_bigint_counter(id),"
                "       hlculid_bigint_publisher(id), hlculid_from_bigint(id)::text"
                " FROM py_big ORDER BY 1").fetchall()
            assert [(BigId(i), n) for i, n, *_ in rows] == [(b, n) for n, b in enumerate(mine)]
            for b, (_, _, text, ts, counter, publisher, wide) in zip(mine, rows):
                assert (text, ts, counter, publisher, wide) == (
                    str(b), b.ts, b.counter, 56, str(b.to_hlculid()))
        # a time window with bound parameters
        end = datetime.now(UTC) + timedelta(milliseconds=5)
        (count,) = conn.execute("SELECT count(*) FROM py_big WHERE id BETWEEN %s AND %s",
                                (BigId.min_of(start), BigId.max_of(end))).fetchone()
        assert count == N
        (count,) = conn.execute("SELECT count(*) FROM py_big WHERE id > %b", (mine[N // 2],)).fetchone()
        assert count == N - N // 2 - 1


def test_a_bigid_parameter_needs_only_the_bigint_registration(dsn):
    b = Generator(57).generate_bigint()
    with psycopg.connect(dsn) as conn:
        with pytest.raises(psycopg.ProgrammingError):
            conn.execute("SELECT %s::int8", (b,))
    with psycopg.connect(dsn) as conn:
        register_psycopg_bigint(conn)
        assert conn.execute("SELECT %s, pg_typeof(%s)::text", (b, b)).fetchone() == (int(b), "bigint")


def test_asyncpg_takes_a_bigid_for_a_bigint(server):
    async def run():
        conn = await asyncpg.connect(host=str(server.dir), port=server.port, user="postgres", database="postgres")
        try:
            b = Generator(58).generate_bigint()
            assert BigId(await conn.fetchval("SELECT $1::int8", b)) == b
            back = await conn.fetchval("SELECT hlculid_bigint_publisher($1)", b)
            assert back == 58
        finally:
            await conn.close()

    asyncio.run(run())


def test_the_widths_from_one_client_clock_sort_together_as_the_server_sorts_them(dsn):
    gen = Generator(59)
    made = []
    for _ in range(2000):
        made.append(gen.generate())
        made.append(gen.generate_bigint().to_hlculid())
    assert made == sorted(made)
    with psycopg.connect(dsn) as conn:
        register_psycopg(conn)
        rows = conn.execute(
            "SELECT x, hlculid_to_bigint(x) FROM unnest(%s::hlculid[]) x ORDER BY x", (made,)).fetchall()
        assert [x for x, _ in rows] == made
        assert [BigId(b) for _, b in rows] == [BigId.from_hlculid(x) for x in made]
        # an id whose counter does not fit 11 bits: 22003 on the server, ValueError here
        wide = Hlculid(int=(made[0].ms << 80) | (2048 << 64) | (59 << 48))
        with pytest.raises(psycopg.errors.NumericValueOutOfRange):
            conn.execute("SELECT hlculid_to_bigint(%s)", (wide,))
    with pytest.raises(ValueError, match="counter 2048 does not fit a bigint id"):
        BigId.from_hlculid(wide)


def test_bounds_at_the_ends_of_the_range_match_the_server(dsn):
    first = datetime(1970, 1, 1, tzinfo=UTC)
    last = datetime(2109, 5, 15, 7, 35, 11, 103999, tzinfo=UTC)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for ts in (first, last, datetime(2024, 2, 29, 23, 59, 59, 999500, tzinfo=UTC)):
            lo, hi = conn.execute("SELECT hlculid_bigint_min(%s), hlculid_bigint_max(%s)", (ts, ts)).fetchone()
            assert (BigId.min_of(ts), BigId.max_of(ts)) == (BigId(lo), BigId(hi))
        assert int(BigId.max_of(last)) == 2**63 - 1
        for ts in (first - timedelta(microseconds=1), last + timedelta(microseconds=1)):
            with pytest.raises(psycopg.errors.DatetimeFieldOverflow):
                conn.execute("SELECT hlculid_bigint_min(%s)", (ts,))
            with pytest.raises(ValueError, match="does not fit a bigint id"):
                BigId.min_of(ts)


def test_client_generator_ids_increase_and_carry_through_a_frozen_clock(monkeypatch):
    gen = Generator(60)
    frozen = time.time_ns()
    monkeypatch.setattr(time, "time_ns", lambda: frozen)
    ids = [gen.generate_bigint() for _ in range(5000)]  # more than one millisecond's 2048
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    ms = frozen // 1_000_000
    assert [(b.ms - ms, b.counter) for b in ids[2046:2050]] == [(0, 2046), (0, 2047), (1, 0), (1, 1)]
    # 128-bit ids take counter values a bigint cannot hold; the next bigint moves to the next ms
    wide = [gen.generate() for _ in range(3000)]
    assert wide[-1].ms == ms + 2 and wide[-1].counter > 2048
    after = gen.generate_bigint()
    assert (after.ms, after.counter) == (ms + 3, 0)
    assert wide[-1] < after.to_hlculid() < gen.generate()


def test_a_publisher_over_1023_is_refused_for_bigint_ids_only():
    gen = Generator(1024)
    first = gen.generate()
    with pytest.raises(ValueError, match=r"publisher 1024 does not fit a bigint id: .* 0 to 1023"):
        gen.generate_bigint()
    assert gen.generate() > first and gen.generate().publisher == 1024
    assert Generator(1023).generate_bigint().publisher == 1023
    with pytest.raises(ValueError, match="publisher 1024 does not fit a bigint id"):
        BigId.from_fields(0, 0, 1024)
    with pytest.raises(ValueError, match="does not fit a bigint id"):
        BigId.from_hlculid(first)


def test_json_carries_bigint_ids_as_decimal_strings(dsn):
    b = Generator(61).generate_bigint()
    doc = json.dumps({"id": b, "wide": b.to_hlculid()}, default=json_default)
    assert doc == f'{{"id": "{int(b)}", "wide": "{b.to_hlculid()}"}}'
    with pytest.raises(TypeError):
        json.dumps({"id": b})  # never a number by accident
    assert BigId(json.loads(doc)["id"]) == b
    with psycopg.connect(dsn) as conn:
        # the server reads the client's JSON, and writes a server id the same way with id::text
        server_b, kind, back = conn.execute(
            "SELECT ((%s::jsonb)->>'id')::int8, jsonb_typeof((%s::jsonb)->'id'),"
            "       jsonb_build_object('id', s.b::text)::text"
            " FROM (SELECT hlculid_generate_bigint() AS b) s", (doc, doc)).fetchone()
    assert BigId(server_b) == b and kind == "string"
    assert BigId(json.loads(back)["id"]).publisher == 50
    # what a double-based reader makes of the number: another id
    assert BigId(int(float(int(b)))) != b
    assert pickle.loads(pickle.dumps(b)) == b and repr(b) == f"BigId('{int(b)}')"


def test_the_shared_decimal_forms():
    assert len(FORMS["accepted"]) >= 3 and len(FORMS["rejected"]) >= 10
    for case in FORMS["accepted"]:
        b = BigId(case["input"])
        assert (str(b), b.ms, b.counter, b.publisher) == (
            case["input"], case["ms"], case["counter"], case["publisher"]), case
    for case in FORMS["rejected"]:
        with pytest.raises(ValueError, match="invalid bigint id"):
            BigId(case["input"])
    for bad in (-1, 2**63, True):
        with pytest.raises((ValueError, TypeError)):
            BigId(bad)
    with pytest.raises(TypeError):
        BigId(1.0)
