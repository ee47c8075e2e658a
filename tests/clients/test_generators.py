"""The client generators' clock, checked against the crate itself: tests/data/clock_scenario.json
holds what the crate's Generator makes (core/tests/fixtures/clock_scenario.rs) over a scripted clock
(steps back and forward, bursts past 65,536 ids in one millisecond, the run-ahead bound, observes
near and beyond the skew bound, random uuids, bigint ids interleaved, wall clocks outside the id
range, the ends of the ranges). The first test regenerates the file from the crate and fails on a
difference; the Python and Node generators replay it with the same clock, sleep and random source
and must give the same ids, id by id, and the same refusals."""

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from hlculid import (BigintTimeOutOfRange, Generator, Hlculid, HlculidError, PublisherTooWideForBigint,
                            RandomUuid, TooFarAhead, WallClockOutOfRange)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIO = ROOT / "tests" / "data" / "clock_scenario.json"
M64 = (1 << 64) - 1


def test_the_scenario_file_is_what_the_crate_makes():
    # the crate's test regenerates the file and fails on a difference, saying where
    r = subprocess.run(["cargo", "test", "-q", "-p", "hlculid-core", "--test", "fixtures", "--",
                        "the_clock_scenario_file"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, ("the crate's Generator no longer makes the checked-in scenario "
                               "(tests/data/clock_scenario.json):\n" + (r.stdout + r.stderr)[-5000:])
    assert "1 passed" in r.stdout, r.stdout


def splitmix64(seed):
    """The scenario's random source (core/tests/fixtures/clock_scenario.rs): splitmix64."""
    state = seed

    def draw():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    return draw


def summary(ids, out):
    """A step's ids as the scenario file records them."""
    if len(ids) <= 16:
        out["ids"] = ids
    else:
        out.update(count=len(ids), first=ids[0], last=ids[-1],
                   sha256=hashlib.sha256("\n".join(ids).encode()).hexdigest())


def refusal(e, out):
    out["error"] = type(e).__name__
    if isinstance(e, TooFarAhead):
        out["ahead_ms"] = e.ahead_ms
    if isinstance(e, PublisherTooWideForBigint):
        out["publisher"] = e.publisher


def test_python_generator_replays_the_crate_scenario_id_by_id():
    steps = json.loads(SCENARIO.read_text())["steps"]
    now = [0]

    def sleep(ms):
        now[0] += ms

    gen, checked = None, 0
    for k, step in enumerate(steps):
        op, got = step["op"], {}
        if op == "new":
            gen = Generator(step["publisher"], max_skew_ms=step["max_skew_ms"], clock=lambda: now[0],
                            sleep=sleep, random=splitmix64(step["seed"]))
            continue
        if op == "clock":
            now[0] = step["ms"]
            continue
        if op in ("generate", "generate_bigint"):
            make = gen.generate if op == "generate" else gen.generate_bigint
            ids = []
            try:
                for _ in range(step["n"]):
                    ids.append(str(make()))
            except HlculidError as e:
                refusal(e, got)
            summary(ids, got)
        elif op == "horizon":
            summary([str(gen.horizon())], got)
        elif op == "observe":
            try:
                gen.observe(Hlculid(int=int(step["id"], 16)))
                got["ok"] = True
            except HlculidError as e:
                refusal(e, got)
        got["now"] = now[0]
        assert got == step["expect"], f"step {k}: {step}"
        checked += 1
    assert checked == sum("expect" in s for s in steps) > 40


def test_node_generator_replays_the_crate_scenario_and_keeps_its_properties():
    r = subprocess.run(["node", str(HERE / "node_clock.js")], capture_output=True, text=True,
                       env={**os.environ, "HLCULID_CLOCK_SCENARIO": str(SCENARIO)})
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "node clock: ok" in r.stdout


def test_python_generator_ids_increase_on_the_real_clock():
    gen = Generator(12)
    ids = [gen.generate() for _ in range(300_000)]
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert abs(ids[-1].ms - time.time_ns() // 1_000_000) < 60_000


def test_python_observe_on_the_real_clock_refuses_random_uuids_and_far_ids_and_changes_nothing():
    import uuid
    gen = Generator(3)
    before = gen.generate()
    for value in (uuid.uuid4(), Hlculid(uuid.uuid4().hex), str(uuid.uuid4()), uuid.uuid4().hex):
        with pytest.raises(RandomUuid):
            gen.observe(value)
    far = Hlculid(int=(before.ms + 60_000) << 80)
    with pytest.raises(TooFarAhead) as e:
        gen.observe(far)
    assert 59_000 <= e.value.ahead_ms <= 60_000
    # the clock did not move: the next id is near the wall clock, not a minute ahead
    assert gen.generate().ms - before.ms < 1_000
    # within the default skew (the server's 500 ms): observed, later ids sort after it
    near = Hlculid(int=((time.time_ns() // 1_000_000 + 300) << 80) | (5 << 64))
    gen.observe(near)
    assert gen.generate() > near
    # a wider skew, configured
    Generator(3, max_skew_ms=120_000).observe(far)
    with pytest.raises(ValueError):
        Generator(3, max_skew_ms=-1)
    with pytest.raises(ValueError, match="invalid hlculid") as e:
        gen.observe("not an id")
    assert not isinstance(e.value, RandomUuid)


def test_python_generator_refuses_a_clock_before_the_epoch_and_bigint_ids_past_2109():
    with pytest.raises(WallClockOutOfRange):
        Generator(1, clock=lambda: -5).generate()
    with pytest.raises(BigintTimeOutOfRange):
        Generator(1, clock=lambda: 4_417_977_600_000).generate_bigint()
