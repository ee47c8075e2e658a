"""Throwaway PostgreSQL servers for the integration tests and the benchmarks.

Real servers (initdb, pg_ctl, run as the 'postgres' user) of the version named by HLCULID_PG
(15 or 18), with hlculid installed beforehand by the calling script. Clock steps use
libfaketime preloaded into the postmaster, reading a file we rewrite while it runs.
"""

import itertools
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import psycopg

PG = os.environ.get("HLCULID_PG", "15")
RUN_ROOT = Path(os.environ.get("HLCULID_RUN_ROOT", "/tmp/hlculid-integration"))
BIN = {
    "15": "/usr/lib/postgresql/15/bin",
    "18": os.environ.get("HLCULID_PG18_BIN", ""),
}[PG]
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
# Each cluster has its own socket directory, so ports only need to differ within this run.
_ports = itertools.count(50000 + int(PG) * 500)


def _running(pid):
    """True while pid exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def as_postgres(*cmd, env=None, check=True, **kw):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], env=full_env, check=check,
                          capture_output=True, text=True, **kw)


class Cluster:
    """One PostgreSQL server in its own directory, port and socket dir."""

    def __init__(self, name, preload=True, conf=(), faketime=False, fsync=True, standby_of=None):
        """A new cluster from initdb, or with standby_of, a physical standby of that cluster
        made by pg_basebackup (its data directory, and so its configuration, are copies)."""
        self.dir = RUN_ROOT / f"{name}-{PG}-{uuid.uuid4().hex[:6]}"
        self.data = self.dir / "data"
        self.port = next(_ports)
        self.faketime_file = self.dir / "faketime"
        self.faketime = faketime
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        shutil.chown(self.dir, "postgres", "postgres")
        if standby_of is None:
            as_postgres(f"{BIN}/initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                        "--no-sync", "-E", "UTF8", "--locale=C")
        else:
            as_postgres(f"{BIN}/pg_basebackup", "-h", str(standby_of.dir), "-p", str(standby_of.port),
                        "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream", "--no-sync")
            preload = False  # already in the copied configuration
        lines = [f"port = {self.port}", "listen_addresses = ''", f"unix_socket_directories = '{self.dir}'",
                 "log_line_prefix = '%m [%p] '", f"fsync = {'on' if fsync else 'off'}"]
        if preload:
            lines.append("shared_preload_libraries = 'hlculid'")
        lines += list(conf)
        with open(self.data / "postgresql.conf", "a") as f:
            f.write("\n".join(lines) + "\n")
        if faketime:
            self.set_clock("+0")

    # -- clock -------------------------------------------------------------------------
    def set_clock(self, spec):
        """libfaketime spec: '+0', '-5' (seconds), or an absolute '2026-01-01 00:00:00' to freeze."""
        self.faketime_file.write_text(spec + "\n")
        os.chmod(self.faketime_file, 0o644)

    def _env(self):
        if not self.faketime:
            return {}
        return {
            "LD_PRELOAD": FAKETIME_LIB,
            "FAKETIME_TIMESTAMP_FILE": str(self.faketime_file),
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        }

    # -- lifecycle -----------------------------------------------------------------------
    def start(self):
        as_postgres(f"{BIN}/pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"),
                    "-w", "-t", "60", "start", env=self._env())
        return self

    def stop(self, mode="fast"):
        as_postgres(f"{BIN}/pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop",
                    check=False)

    def postmaster_pid(self):
        return int((self.data / "postmaster.pid").read_text().split("\n")[0])

    def kill9_all(self):
        """kill -9 of the postmaster and every process it started (a machine crash, as far as
        PostgreSQL can tell)."""
        pm = self.postmaster_pid()
        children = subprocess.run(["pgrep", "-P", str(pm)], capture_output=True, text=True).stdout.split()
        os.kill(pm, signal.SIGKILL)
        for c in children:
            try:
                os.kill(int(c), signal.SIGKILL)
            except ProcessLookupError:
                pass
        procs = [pm, *map(int, children)]
        deadline = time.time() + 30
        while any(_running(p) for p in procs):
            if time.time() > deadline:
                raise RuntimeError("processes survived kill -9")
            time.sleep(0.05)
        # A killed postmaster can linger as a zombie until this sandbox's init reaps it, and
        # PostgreSQL would take the zombie for a live server. After a real crash the machine
        # reboots and the pid is gone, so drop the lock file as the reboot would make it stale.
        deadline = time.time() + 5
        while Path(f"/proc/{pm}").exists() and time.time() < deadline:
            time.sleep(0.05)
        if Path(f"/proc/{pm}").exists():
            (self.data / "postmaster.pid").unlink()

    def log(self):
        return (self.dir / "server.log").read_text(errors="replace")

    def connect(self, user="postgres", autocommit=True):
        conn = psycopg.connect(host=str(self.dir), port=self.port, user=user, dbname="postgres",
                               autocommit=autocommit)
        return conn

    def sql(self, query, params=None, user="postgres"):
        with self.connect(user=user) as c:
            cur = c.execute(query, params)
            return cur.fetchall() if cur.description else None

    def one(self, query, params=None):
        return self.sql(query, params)[0][0]

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                self.one("SELECT 1")
                return
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise RuntimeError("server did not come back")
