"""The Rust crate's tokio-postgres tests (core/tests/postgres.rs) against this server."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_rust_crate_with_tokio_postgres(dsn):
    r = subprocess.run(["cargo", "test", "-q", "-p", "hlculid-core", "--features", "postgres serde",
                        "--test", "postgres", "--", "--ignored"],
                       cwd=ROOT, env={**os.environ, "HLCULID_TEST_DSN": dsn}, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "5 passed" in r.stdout
