"""The Rust crate's server-backed tests against this server: tokio-postgres (core/tests/postgres.rs),
sqlx (core/tests/sqlx.rs) and diesel (core/tests/diesel.rs)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cargo_test(dsn, features, test):
    r = subprocess.run(["cargo", "test", "-q", "-p", "hlculid-core", "--features", features,
                        "--test", test, "--", "--ignored"],
                       cwd=ROOT, env={**os.environ, "HLCULID_TEST_DSN": dsn}, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    return r.stdout


def test_rust_crate_with_tokio_postgres(dsn):
    assert "5 passed" in cargo_test(dsn, "postgres serde", "postgres")


def test_rust_crate_with_sqlx(dsn):
    assert "3 passed" in cargo_test(dsn, "sqlx", "sqlx")


def test_rust_crate_with_diesel(dsn):
    assert "2 passed" in cargo_test(dsn, "diesel", "diesel")
