"""The client generators' clock rule without a server: the Node Generator against a model of the
server's rule over a scripted clock (tests/clients/node_clock.js), and the Python Generator the
same way through a patched time.time_ns."""

import subprocess
import time
from pathlib import Path

from hlculid_client import Generator, Hlculid

HERE = Path(__file__).resolve().parent
T = 1_780_000_000_000


def test_node_generator_follows_the_server_rule():
    r = subprocess.run(["node", str(HERE / "node_clock.js")], capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "node clock: ok" in r.stdout


def test_python_generator_follows_the_server_rule(monkeypatch):
    script = [T] * 10 + [T + 1] * 70_000 + [T + 2] * 5 + [T + 1_000] * 3 + [T - 5_000] * 20 + [T + 999] * 3 \
        + [T + 1_001] * 2 + [T + 2_000 + i // 300 - (50 if i % 997 == 0 else 0) for i in range(100_000)] + [2**47] * 2
    clock = iter(script)
    monkeypatch.setattr(time, "time_ns", lambda: next(clock) * 1_000_000 + 999_999)
    gen = Generator(0xABCD)
    model, prev, randoms = 0, None, set()
    for k, now in enumerate(script):
        id_ = gen.generate()
        model = max(model + 1, now << 16)
        assert type(id_) is Hlculid and id_.int >> 64 == model, (k, id_, now)
        assert prev is None or id_ > prev
        assert id_.publisher == 0xABCD and Hlculid(str(id_)) == id_
        prev = id_
        randoms.add(id_.random)
    assert len(randoms) >= len(script) - 10
    assert (prev.ms, prev.counter) == (2**47, 1)


def test_python_generator_ids_increase_on_the_real_clock():
    gen = Generator(12)
    ids = [gen.generate() for _ in range(300_000)]
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert abs(ids[-1].ms - time.time_ns() // 1_000_000) < 60_000
