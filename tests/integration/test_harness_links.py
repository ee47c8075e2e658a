"""The harness as root follows no link another user planted (docs/development.md, "Without root").

Root's scratch directory has a name anyone can work out (/tmp/hlculid-<checkout>), and root hands
each server's directory to postgres: a link planted there by the other user must not make root
write, chmod or read a file of root's. Each test plants the link as that user, shows the naive
way (what the harness did before) is caught by it in the same run, and that the harness is not.
Runs only as root (as any other user, root's files are out of reach anyway)."""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from pgcluster import Cluster, as_server, give_to_server, make_root_dir, write_as_server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the harness drops nothing as any other user")
SECRET = "root's secret\n"


@pytest.fixture
def victim():
    """A directory only root can enter, with a file of mode 600 in it: what the links point at."""
    d = Path(tempfile.mkdtemp(prefix="hlculid-victim-"))  # mode 700
    f = d / "secret"
    f.write_text(SECRET)
    f.chmod(0o600)
    yield f
    shutil.rmtree(d)


def untouched(f):
    st = f.lstat()
    return (f.read_text(), stat.S_IMODE(st.st_mode), st.st_uid, stat.S_IMODE(f.parent.stat().st_mode)) \
        == (SECRET, 0o600, 0, 0o700)


def plant(link, target):
    """A link made by the servers' user (postgres), the other user of these tests."""
    as_server("ln", "-sfn", str(target), str(link))
    assert os.readlink(link) == str(target) and link.lstat().st_uid != 0


def scratch_name():
    return Path("/tmp") / f"hlculid-linktest-{uuid.uuid4().hex[:8]}"


def test_root_refuses_a_scratch_directory_planted_as_a_link(victim):
    link = scratch_name()
    plant(link, victim.parent)
    try:
        # the naive way, as nonroot-test.sh did: mkdir -p accepts the link, chmod -R follows it
        naive_victim = Path(tempfile.mkdtemp(prefix="hlculid-victim-"))
        naive = scratch_name()
        plant(naive, naive_victim)
        subprocess.run(["sh", "-c", f'mkdir -p "{naive}/nonroot" && chmod -R a+rX "{naive}"'], check=True)
        assert stat.S_IMODE(naive_victim.stat().st_mode) == 0o755, "the planted link was not followed"
        naive.unlink()
        shutil.rmtree(naive_victim)
        # the harness: env.sh refuses the scratch directory before any script writes in it
        env = {**os.environ, "HLCULID_SCRATCH": str(link)}
        r = subprocess.run([str(ROOT / "scripts/nonroot-test.sh"), os.environ.get("HLCULID_PG", "16")],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0 and "refusing" in r.stderr, r.stdout + r.stderr
        assert untouched(victim)
        assert not (victim.parent / "nonroot").exists()
    finally:
        link.unlink()


def test_root_refuses_a_scratch_directory_another_user_made():
    d = scratch_name()
    as_server("mkdir", "-m", "755", str(d))
    try:
        r = subprocess.run(["bash", "-c", f'. "{ROOT}/scripts/env.sh" && echo sourced'],
                           env={**os.environ, "HLCULID_SCRATCH": str(d)}, capture_output=True, text=True)
        assert r.returncode != 0 and "sourced" not in r.stdout and "refusing" in r.stderr, r.stderr
        with pytest.raises(RuntimeError, match="refusing"):
            make_root_dir(d)  # tests/pgcluster.py's HLCULID_RUN_ROOT, the same rule
        with pytest.raises(RuntimeError, match="refusing"):
            make_root_dir(d / "integration")
    finally:
        as_server("rmdir", str(d))


def test_root_writes_nothing_through_links_in_a_servers_directory(victim):
    c = Cluster("links", preload=False, faketime=True, fsync=False)
    try:
        # the naive way, as pgcluster.py did: write aside as root, chmod 644, rename
        naive_victim = victim.with_name("naive")
        naive_victim.write_text(SECRET)
        naive_victim.chmod(0o600)
        tmp = c.dir / "faketime.new"
        plant(tmp, naive_victim)
        tmp.write_text("+0\n")
        os.chmod(tmp, 0o644)
        assert naive_victim.read_text() == "+0\n" and stat.S_IMODE(naive_victim.stat().st_mode) == 0o644
        as_server("rm", str(tmp))

        # the harness: every file it writes there is written as postgres, who cannot reach the victim
        plant(c.dir / "faketime.new", victim)
        with pytest.raises(subprocess.CalledProcessError):
            c.set_clock("-5")
        as_server("rm", str(c.dir / "faketime.new"))
        plant(c.dir / "faketime", victim)  # replaced by a rename, never written through
        c.set_clock("-5")
        assert not (c.dir / "faketime").is_symlink() and (c.dir / "faketime").read_text() == "-5\n"
        for name in ("cluster.json", "data/postgresql.conf"):
            plant(c.dir / name, victim)
        with pytest.raises(subprocess.CalledProcessError):  # the constructor's two writes, as it makes them
            write_as_server(c.dir / "cluster.json", json.dumps({"major": c.major, "port": c.port}))
        with pytest.raises(subprocess.CalledProcessError):
            write_as_server(c.data / "postgresql.conf", "port = 1\n", append=True)
        assert untouched(victim)

        # nor reads through one: the server's log, its cluster.json, its postmaster.pid
        for name in ("server.log", "cluster.json", "data/postmaster.pid"):
            as_server("rm", "-f", str(c.dir / name))
            plant(c.dir / name, victim)
        for read in (c.log, lambda: Cluster.attach(c.dir), c.postmaster_pid):
            with pytest.raises(subprocess.CalledProcessError):
                read()

        # a file handed to the server: a link changes owner, not what it points at
        link = c.dir / "handed"
        plant(link, victim)
        give_to_server(link)
        assert untouched(victim)
    finally:
        shutil.rmtree(c.dir)
