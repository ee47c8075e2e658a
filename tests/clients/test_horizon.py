"""Application publishers (0.4.0): the Python, Node and Rust generators' horizon, reported with
hlculid_advance_horizon after the ids made before it were committed, is a watermark above every
id sent and at or below every id made after it."""

import os
import subprocess
import time
from pathlib import Path

import psycopg

from hlculid import Generator, Hlculid

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_python_publisher_reports_its_horizon(dsn):
    gen = Generator(20)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS py_app_events (id hlculid PRIMARY KEY)")
        sent = [gen.generate() for _ in range(500)]
        conn.execute("INSERT INTO py_app_events SELECT unnest(%s::text[])::hlculid", ([str(i) for i in sent],))
        h = gen.horizon()
        after = gen.generate()
        assert all(i < h for i in sent) and h <= after
        assert h.publisher == 0 and h.random == 0
        conn.execute("SELECT hlculid_advance_horizon(20, %s::text::hlculid)", (str(h),))
        w, below, above = conn.execute(
            "SELECT hlculid_watermark(ARRAY[20])::text, (SELECT max(id) FROM py_app_events) < hlculid_watermark(ARRAY[20]),"
            " %s::text::hlculid >= hlculid_watermark(ARRAY[20])", (str(after),)).fetchone()
        assert w == str(h) and below and above
    time.sleep(0.005)
    assert gen.horizon() > h  # an idle publisher's horizon moves with the wall clock


def test_python_horizon_after_a_full_counter_is_in_the_next_millisecond(monkeypatch):
    gen = Generator(1)
    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_000 * 1_000_000)
    for _ in range(65535):
        gen.generate()
    assert gen.horizon() == Hlculid(int=((1_700_000_000_001 << 16) | 0) << 64)


def test_node_publisher_reports_its_horizon(server):
    r = subprocess.run(["node", str(HERE / "node_horizon.js")],
                       env={**os.environ, "HLCULID_TEST_HOST": str(server.dir), "HLCULID_TEST_PORT": str(server.port)},
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0 and "node horizon: ok" in r.stdout
