"""The Rust crate's server-backed tests against this server: tokio-postgres (core/tests/postgres.rs),
sqlx (core/tests/sqlx.rs), diesel (core/tests/diesel.rs) and the consumer (core/tests/consumer.rs). Each run must pass every test its file
marks `#[ignore]` (the ones that need a server), by name: a test added or lost shows here."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def server_tests(test):
    """The names of the tests of core/tests/TEST.rs marked #[ignore] (they need a server)."""
    src = (ROOT / "core" / "tests" / f"{test}.rs").read_text()
    return set(re.findall(r"#\[ignore[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:async\s+)?fn\s+(\w+)", src))


def cargo_test(dsn, features, test):
    r = subprocess.run(["cargo", "test", "-p", "hlculid-core", "--features", features,
                        "--test", test, "--", "--ignored"],
                       cwd=ROOT, env={**os.environ, "HLCULID_TEST_DSN": dsn}, capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    passed = set(re.findall(r"^test (\w+) \.\.\. ok$", r.stdout, re.M))
    expected = server_tests(test)
    assert expected, f"core/tests/{test}.rs marks no test #[ignore]"
    assert passed == expected, f"passed {sorted(passed)}, expected {sorted(expected)}"


def test_rust_crate_with_tokio_postgres(dsn):
    cargo_test(dsn, "postgres serde consumer", "postgres")  # the consumer's features: one build of the crate for both


def test_rust_crate_consumer(dsn):
    cargo_test(dsn, "postgres serde consumer", "consumer")


def test_rust_crate_with_sqlx(dsn):
    cargo_test(dsn, "sqlx", "sqlx")


def test_rust_crate_with_diesel(dsn):
    cargo_test(dsn, "diesel", "diesel")
