"""The design's scenario end to end (core/examples/scenario.rs): two publisher processes built on
the crate, the second with its clock 300 ms behind (libfaketime); it observes the first one's
events before stamping effects of them; a consumer gets every event shuffled, loads them with
binary COPY through tokio-postgres, and ORDER BY id puts each effect after its cause and each
publisher's events in the order it made them. Without the observe, the slow publisher's effects
sort before their causes: the check has teeth."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
EXAMPLE = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "examples" / "scenario"


def publish_and_react(causes, effects, behind, *flags):
    """The publisher's events reach the reacting one through a pipe, as they are made."""
    a = subprocess.Popen([str(EXAMPLE), "publish", "1", "2000", str(causes)], stdout=subprocess.PIPE)
    b = subprocess.Popen([str(EXAMPLE), "react", "2", "-", str(effects), *flags], stdin=a.stdout,
                         env={**os.environ, **behind})
    a.stdout.close()
    assert a.wait(60) == 0 and b.wait(60) == 0


def run(*args, env=None):
    r = subprocess.run([str(EXAMPLE), *map(str, args)], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    print(r.stdout, r.stderr)
    return r


def test_causes_sort_before_effects_across_skewed_publishers(dsn, tmp_path):
    subprocess.run(["cargo", "build", "-q", "-p", "hlculid-core", "--features", "postgres",
                    "--example", "scenario"], cwd=ROOT, check=True)
    behind = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": "-0.3", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    causes, effects, blind = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "b-blind.txt"
    publish_and_react(causes, effects, behind)
    r = run("consume", dsn, causes, effects)
    assert r.returncode == 0
    assert "4000 events loaded" in r.stdout and "effects sorted before their cause: 0" in r.stdout
    assert "publisher 1: cause 0" in r.stdout  # hlculid_decode names who made the first event

    # the same publisher without the receive rule: its clock, 300 ms behind, wins
    publish_and_react(causes, blind, behind, "--no-observe")
    r = run("consume", dsn, causes, blind)
    assert r.returncode == 1
    assert "effects sorted before their cause: 0" not in r.stdout
