"""Installing a new build while a preloaded server generates ids never disturbs it.

The install path every artifact uses (packaging/install.sh, run by `make install` and shipped in
the tarballs; dpkg does the same for the .deb) writes each file under a temporary name and renames
it over the old one. Copying over the loaded library in place instead (what `cargo pgrx test`
run as root with --runas does: `sudo cp` onto each file) makes the background worker die with
SIGSEGV and takes the server down; so make test's #[pg_test] step (scripts/pgrx-test.sh) installs
into a private copy of the PostgreSQL install, and leaves the shared one alone.
"""

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pgcluster import PG, RUN_ROOT, pg_config

REPO = Path(__file__).resolve().parents[2]
VERSION = re.search(r'^version = "(.+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)
STAGE = Path(os.environ.get("HLCULID_STAGE_DIR", REPO / "target" / "package")) / \
    f"hlculid-{VERSION}-pg{PG}-linux-{os.uname().machine}"

# Live installs over a running server: make test-full (tests/TIERS.md); make test installs each
# build the same way (scripts/test.sh) and tests the packages in a copy (scripts/package-test.sh).
pytestmark = pytest.mark.full

needs_stage = pytest.mark.skipif(not (STAGE / "install.sh").exists(),
                                 reason=f"no staged build at {STAGE} (scripts/package.sh {PG})")


def libdir():
    return subprocess.run([pg_config(), "--pkglibdir"], capture_output=True, text=True,
                          check=True).stdout.strip()


def mapped_inodes(pid):
    """Inodes of every hlculid.so the process has mapped."""
    inodes = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[5].endswith("/hlculid.so"):
            inodes.add(int(parts[4]))
    return inodes


def worker_pid(postmaster):
    """The high-water mark writer (a background worker without a database connection, so not in
    pg_stat_activity): the postmaster's child whose process title names it."""
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
    pids = []
    for p in children:
        try:
            title = Path(f"/proc/{p}/cmdline").read_text(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue  # a backend that ended meanwhile
        if "high-water mark writer" in title:
            pids.append(int(p))
    assert len(pids) == 1, pids
    return pids[0]


@needs_stage
def test_install_under_load_keeps_the_server_up_and_loads_the_new_build_at_restart(make_cluster, tmp_path):
    c = make_cluster("live-install", conf=["hlculid.publisher_id = 9"]).start()
    installed = Path(libdir(), "hlculid.so")
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION hlculid")
        conn.execute("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    postmaster = c.postmaster_pid()
    worker = worker_pid(postmaster)
    old_inode = os.stat(installed).st_ino
    assert mapped_inodes(postmaster) == {old_inode}

    # A changed build: the same library with bytes appended (ELF ignores them), so its content
    # differs from the mapped one as any new build's does.
    changed = tmp_path / "changed"
    shutil.copytree(STAGE, changed)
    with open(changed / "lib" / "hlculid.so", "ab") as f:
        f.write(b"\0hlculid live-install test " + os.urandom(16))

    stop, errors, counts = threading.Event(), [], []

    def load():
        n = 0
        try:
            with c.connect() as conn:
                while not stop.is_set():
                    conn.execute("INSERT INTO ev (n) SELECT g FROM generate_series(1, 50) g")
                    n += 50
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append(repr(e))
        counts.append(n)

    threads = [threading.Thread(target=load) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    r = subprocess.run([str(changed / "install.sh"), pg_config()], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    time.sleep(2.5)  # keep generating, and let the high-water mark writer run, on the new file
    with c.connect() as conn:  # new backends start fine while the old library is mapped
        conn.execute("SELECT hlculid_generate()")
    stop.set()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert sum(counts) > 0
        new_inode = os.stat(installed).st_ino
        assert new_inode != old_inode
        assert (changed / "lib" / "hlculid.so").read_bytes() == installed.read_bytes()
        # nobody died: same postmaster, same worker, no crash in the log
        assert c.postmaster_pid() == postmaster and Path(f"/proc/{postmaster}").exists()
        assert worker_pid(postmaster) == worker
        with c.connect() as conn:
            total = conn.execute("SELECT count(*), count(DISTINCT id) FROM ev").fetchone()
            assert total[0] == total[1] == sum(counts)
        log = c.log()
        assert "terminated by signal" not in log and "server process" not in log, log[-3000:]
        # the running server keeps the old mapping; after a restart it loads the new build
        assert mapped_inodes(postmaster) == {old_inode}
        c.stop()
        c.start()
        assert mapped_inodes(c.postmaster_pid()) == {new_inode}
        with c.connect() as conn:
            assert conn.execute("SELECT hlculid_generate() > max(id) FROM ev").fetchone()[0]
    finally:  # put the build under test back
        subprocess.run([str(STAGE / "install.sh"), pg_config()], check=True, capture_output=True)


def scripts_cache_root():
    """The machine's build cache (scripts/env.sh's CACHE_ROOT), where pgrx-test.sh keeps its copies."""
    return subprocess.run(["bash", "-c", f". '{REPO}/scripts/env.sh' && echo \"$CACHE_ROOT\""],
                          capture_output=True, text=True, check=True).stdout.strip()


# The private copy is made the same way for every install of one layout: Debian's (15) and the
# PyPI builds' (16-18). A #[pg_test] build and run costs two minutes a major, so this runs on 15
# and 18, one of each.
@pytest.mark.skipif(PG not in ("15", "18"), reason="one major per install layout: 15 (Debian) and 18 (PyPI build)")
def test_the_pg_test_step_leaves_a_loaded_install_alone(make_cluster):
    """make test's #[pg_test] step, run as scripts/test.sh runs it, while a preloaded server of
    the shared install (a `make demo` server, say) generates ids: the server stays up and never
    stops generating, and not one byte of the library it has mapped is rewritten."""
    c = make_cluster("pg-test-step", conf=["hlculid.publisher_id = 12"]).start()
    installed = Path(libdir(), "hlculid.so")
    with c.connect() as conn:
        conn.execute("CREATE EXTENSION hlculid")
        conn.execute("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    postmaster = c.postmaster_pid()
    worker = worker_pid(postmaster)
    before = (os.stat(installed).st_ino, os.stat(installed).st_mtime_ns, installed.read_bytes())
    assert mapped_inodes(postmaster) == {before[0]}

    stop, errors, done = threading.Event(), [], []  # done: time of each completed batch

    def load():
        try:
            with c.connect() as conn:
                while not stop.is_set():
                    conn.execute("INSERT INTO ev (n) SELECT g FROM generate_series(1, 50) g")
                    done.append(time.monotonic())
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append(repr(e))

    thread = threading.Thread(target=load)
    thread.start()
    pgdata = RUN_ROOT / f"pg-test-step-{os.getpid()}"
    try:
        time.sleep(1)
        started = time.monotonic()
        # the step as scripts/test.sh runs it, limited to one module's tests: the install (what
        # endangers a running server) and the test server's start are the same for any subset
        r = subprocess.run([str(REPO / "scripts" / "pgrx-test.sh"), PG, "--pgdata", str(pgdata),
                            "pg_tests::"], capture_output=True, text=True)
        ended = time.monotonic()
        time.sleep(2)  # keep generating, and let the high-water mark writer run, afterwards
    finally:
        stop.set()
        thread.join()
        shutil.rmtree(pgdata, ignore_errors=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    # tests ran (the framework installs before the first one), and the build went to the copy
    assert sum(map(int, re.findall(r"test result: ok\. (\d+) passed", r.stdout))) > 0, r.stdout[-3000:]
    copy = Path(scripts_cache_root(), "pgrx-test", f"pg{PG}" + str(installed))
    assert copy.stat().st_mtime > time.time() - (time.monotonic() - started), copy
    assert errors == []
    # generation went on throughout the install and the tests on one connection (a crash would
    # have ended it with an error); how long one batch took is the machine's load, not a finding
    assert done and done[0] < started and done[-1] > ended + 1
    # the server is the same one, its worker too, and nothing crashed
    assert c.postmaster_pid() == postmaster and Path(f"/proc/{postmaster}").exists()
    assert worker_pid(postmaster) == worker
    log = c.log()
    assert "terminated by signal" not in log and "server process" not in log, log[-3000:]
    # the shared install was not written: same file, same bytes, still the one mapped
    assert (os.stat(installed).st_ino, os.stat(installed).st_mtime_ns, installed.read_bytes()) == before
    assert mapped_inodes(postmaster) == {before[0]}
    with c.connect() as conn:
        total = conn.execute("SELECT count(*), count(DISTINCT id) FROM ev").fetchone()
        assert total[0] == total[1] == 50 * len(done)
