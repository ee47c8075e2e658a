"""Throwaway PostgreSQL servers: the one cluster helper of the project.

The integration tests, the benchmarks and (through the command line below) the shell scripts
all make their servers here: real servers (initdb, pg_ctl), each in
its own directory with its own socket directory and a port the kernel says is free, so two
checkouts can run tests at once. A server's major is whatever its pg_config says: scripts/env.sh
exports HLCULID_PG_CONFIG_<major> for every supported major, and HLCULID_PG names the one under
test. Clock steps use libfaketime preloaded into the postmaster, reading a file we rewrite while
it runs.

Who runs the servers: the 'postgres' user when the tests run as root (through runuser, so a
checkout under /root works), the invoking user otherwise (as pg_regress and `cargo pgrx test` do);
SERVER_USER names it, as_server() runs a command as it and give_to_server() hands it a file.

Command line (for scripts):
  pgcluster.py create DIR MAJOR [--conf LINE]...   initdb into DIR/data, start; prints the port
  pgcluster.py stop DIR                            fast shutdown (no error if not running)
"""

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg

PG = os.environ.get("HLCULID_PG", "15")
# (a user who is not root gets a directory of their own: root's is not theirs to write)
RUN_ROOT = Path(os.environ.get("HLCULID_RUN_ROOT", "/tmp/hlculid-integration" + ("" if os.geteuid() == 0 else f"-{os.geteuid()}")))
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
# make test (quick) or make test-full (full): tests marked `full` run only in the full tier, and
# tests read their sizes from FULL (tests/TIERS.md lists what runs where).
TIER = os.environ.get("HLCULID_TIER", "quick")
if TIER not in ("quick", "full"):
    raise RuntimeError(f"HLCULID_TIER must be quick or full, not {TIER!r}")
FULL = TIER == "full"


def by_tier(quick, full):
    """A size for the tier under test: `quick` in make test, `full` in make test-full."""
    return full if FULL else quick


def register_tier_markers(config):
    """The markers of both test directories (their conftest.py calls this from pytest_configure)."""
    config.addinivalue_line("markers", "full: runs only in the full tier (make test-full, HLCULID_TIER=full)")
    config.addinivalue_line("markers", "smoke: the connection smoke test run on every major in the quick tier")


def deselect_for_tier(config, items):
    """Drops the tests marked `full` unless the tier is full (from pytest_collection_modifyitems)."""
    if FULL:
        return
    keep = [i for i in items if i.get_closest_marker("full") is None]
    dropped = [i for i in items if i.get_closest_marker("full") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pg_config(major=None):
    """Path of the pg_config of a major (default: the one under test), as scripts/env.sh set it;
    a path is taken as it is."""
    major = str(major or PG)
    if "/" in major:
        return major
    try:
        return os.environ[f"HLCULID_PG_CONFIG_{major}"]
    except KeyError:
        raise RuntimeError(f"HLCULID_PG_CONFIG_{major} is not set: run through scripts/ (see env.sh)")


def bindir(major=None):
    return subprocess.run([pg_config(major), "--bindir"], check=True, capture_output=True,
                          text=True).stdout.strip()


BIN = bindir() if f"HLCULID_PG_CONFIG_{PG}" in os.environ else None


def free_port():
    """A port no one on this machine listens on now. The servers listen on their own socket
    directory only, so the port just has to be unique there; asking the kernel keeps it simple."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _running(pid):
    """True while pid exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


AS_ROOT = os.geteuid() == 0
SERVER_USER = "postgres" if AS_ROOT else pwd.getpwuid(os.geteuid()).pw_name


def as_server(*cmd, env=None, check=True, **kw):
    """cmd as the servers' user: through runuser as root (PostgreSQL refuses to run as root), as
    it is otherwise."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    prefix = ["runuser", "-u", "postgres", "--"] if AS_ROOT else []
    kw.setdefault("text", True)
    return subprocess.run([*prefix, *cmd], env=full_env, check=check, capture_output=True, **kw)


def give_to_server(*paths):
    """Makes files the test wrote the servers' user's (as root: chown to postgres; otherwise they
    are the invoking user's already). A link is not followed: the link itself changes owner."""
    if AS_ROOT:
        pw = pwd.getpwnam("postgres")
        for p in paths:
            os.chown(p, pw.pw_uid, pw.pw_gid, follow_symlinks=False)


# As root, everything under a server's directory is the server's user's to change, so root never
# writes, reads or follows a link there itself: it asks that user to (a link that user planted then
# reaches only what that user could reach anyway). As any other user the two are the same user.
def write_as_server(path, data, append=False, rename=False, mode=None):
    """Writes (or appends) data (str or bytes) to a file in a directory of the servers' user, as
    that user. rename: written aside and renamed over the file, so a reader never sees half of it;
    mode: then chmod."""
    path = str(path)
    binary = isinstance(data, bytes)
    if not AS_ROOT:
        target = path + ".new" if rename else path
        with open(target, ("a" if append else "w") + ("b" if binary else "")) as f:
            f.write(data)
        if mode is not None:
            os.chmod(target, mode)
        if rename:
            os.replace(target, path)
        return
    target = '"$1.new"' if rename else '"$1"'
    script = f'cat >{">" if append else ""}{target}'
    if mode is not None:
        script += f" && chmod {mode:o} {target}"
    if rename:
        script += f' && mv -f {target} "$1"'
    as_server("sh", "-c", script, "sh", path, input=data, text=not binary)


def signal_server_process(pid, sig):
    """Sends sig to pid, a process a server reported (its postmaster.pid, pg_backend_pid()), as
    the servers' user: a pid read from the server is that user's word, and the kernel's own check
    (a user signals only its own processes) is what keeps it to that user's processes. Gone
    already: nothing to do."""
    r = as_server("kill", "-s", signal.Signals(sig).name.removeprefix("SIG"), "--", str(pid), check=False)
    if r.returncode != 0 and _running(pid):
        raise RuntimeError(f"could not signal pid {pid} as {SERVER_USER}: {r.stderr.strip()}")


def server_test(flag, path):
    """`test FLAG PATH` as the servers' user (-e, -f, -d, -p): what is at a path in its
    directory, without root following a link planted there."""
    return as_server("test", flag, str(path), check=False).returncode == 0


def read_as_server(path, binary=False):
    """A file in a directory of the servers' user, read as that user (str, or bytes if binary)."""
    if not AS_ROOT:
        return Path(path).read_bytes() if binary else Path(path).read_text(errors="replace")
    if binary:
        return as_server("cat", "--", str(path), text=False).stdout
    return as_server("cat", "--", str(path), errors="replace").stdout


def check_root_dir(path):
    """As root, refuses a directory root is to write in that another user could change: it must
    be a directory (not a link), root's, writable by no one else. Scratch directories of root live
    in such a directory, so no other user can put a link where root will write."""
    if not AS_ROOT:
        return
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise RuntimeError(f"{path}: not a directory of root's that only root can write "
                           f"(owner uid {st.st_uid}, mode {stat.filemode(st.st_mode)}): refusing to "
                           "use it as root's scratch space; remove it or set HLCULID_RUN_ROOT")


def make_root_dir(path):
    """As root: path as a directory only root writes, made if missing (never through a link, never
    one another user made; see check_root_dir); as any other user: made if missing."""
    path = Path(path)
    if not AS_ROOT:
        path.mkdir(parents=True, exist_ok=True)
        return
    if not path.parent.exists():
        make_root_dir(path.parent)
    parent = os.stat(path.parent)
    if parent.st_uid != 0 or (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX):
        # a directory others may write is safe only if sticky (/tmp): no one renames root's entry
        raise RuntimeError(f"{path.parent}: another user could replace {path.name} in it: refusing "
                           "to make root's scratch space there; set HLCULID_RUN_ROOT")
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    check_root_dir(path)


class Cluster:
    """One PostgreSQL server in its own directory, port and socket dir."""

    def __init__(self, name, preload=True, conf=(), faketime=False, fsync=True, standby_of=None,
                 major=None, directory=None, initdb_args=()):
        """A new cluster from initdb, or with standby_of, a physical standby of that cluster
        made by pg_basebackup (its data directory, and so its configuration, are copies).
        major: which PostgreSQL (default: the one under test), or the path of a pg_config; directory: where (default: a new
        one under RUN_ROOT); initdb_args: extra initdb options."""
        self.major = str(major or PG)
        self.bin = bindir(self.major)
        label = self.major if "/" not in self.major else "x"
        self.dir = Path(directory) if directory else RUN_ROOT / f"{name}-{label}-{uuid.uuid4().hex[:6]}"
        # the server's socket lives in its directory, and a Unix socket's path has 107 bytes at most
        if len(str(self.dir / ".s.PGSQL.65535")) > 107:
            raise RuntimeError(f"{self.dir}: too deep for the server's Unix socket (107 bytes at most): "
                               "a shorter HLCULID_SCRATCH / HLCULID_RUN_ROOT")
        self.data = self.dir / "data"
        self.port = free_port()
        self.faketime_file = self.dir / "faketime"
        self.faketime = faketime
        # made by root in a directory only root writes (make_root_dir), so it is the one handed over
        make_root_dir(self.dir.parent)
        shutil.rmtree(self.dir, ignore_errors=True)  # (rmtree does not follow links)
        self.dir.mkdir(mode=0o700)
        give_to_server(self.dir)
        if standby_of is None:
            as_server(f"{self.bin}/initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                        "--no-sync", "-E", "UTF8", "--locale=C", *initdb_args)
        else:
            as_server(f"{self.bin}/pg_basebackup", "-h", str(standby_of.dir), "-p", str(standby_of.port),
                        "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream", "--no-sync")
            preload = False  # already in the copied configuration
        lines = [f"port = {self.port}", "listen_addresses = ''", f"unix_socket_directories = '{self.dir}'",
                 "log_line_prefix = '%m [%p] '", f"fsync = {'on' if fsync else 'off'}"]
        if preload:
            lines.append("shared_preload_libraries = 'hlculid'")
        lines += list(conf)
        write_as_server(self.data / "postgresql.conf", "\n".join(lines) + "\n", append=True)
        if faketime:
            self.set_clock("+0")
        write_as_server(self.dir / "cluster.json", json.dumps({"major": self.major, "port": self.port}))

    @classmethod
    def attach(cls, directory):
        """The cluster in a directory made earlier (by another process)."""
        c = cls.__new__(cls)
        c.dir = Path(directory)
        info = json.loads(read_as_server(c.dir / "cluster.json"))
        c.major, c.port = info["major"], info["port"]
        c.bin = bindir(c.major)
        c.data = c.dir / "data"
        c.faketime_file, c.faketime = c.dir / "faketime", False
        return c

    # -- clock -------------------------------------------------------------------------
    def set_clock(self, spec):
        """libfaketime spec: '+0', '-5' (seconds), or an absolute '2026-01-01 00:00:00' to freeze."""
        # written aside and renamed (write_as_server): libfaketime re-reads the file at every clock
        # call, and a reader between a truncation and the write would see the real time for a moment
        write_as_server(self.faketime_file, spec + "\n", rename=True)

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
        as_server(f"{self.bin}/pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"),
                    "-w", "-t", "60", "start", env=self._env())
        return self

    def stop(self, mode="fast"):
        as_server(f"{self.bin}/pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop",
                    check=False)

    def postmaster_pid(self):
        return int(read_as_server(self.data / "postmaster.pid").split("\n")[0])

    def kill9_all(self):
        """kill -9 of the postmaster and every process it started (a machine crash, as far as
        PostgreSQL can tell)."""
        pm = self.postmaster_pid()
        children = subprocess.run(["pgrep", "-P", str(pm)], capture_output=True, text=True).stdout.split()
        signal_server_process(pm, signal.SIGKILL)
        for c in children:
            signal_server_process(int(c), signal.SIGKILL)
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
            as_server("rm", "--", str(self.data / "postmaster.pid"))

    def log(self):
        return read_as_server(self.dir / "server.log")

    def connect(self, user="postgres", autocommit=True, dbname="postgres"):
        conn = psycopg.connect(host=str(self.dir), port=self.port, user=user, dbname=dbname,
                               autocommit=autocommit)
        return conn

    def sql(self, query, params=None, user="postgres", dbname="postgres"):
        with self.connect(user=user, dbname=dbname) as c:
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


CITUS_MAJORS = ("16", "17", "18")
CITUS_PUBLISHERS = {"coordinator": 41, "worker1": 42, "worker2": 43}


def citus_missing(major=None):
    """Why a Citus cluster cannot run on this major, or None (tests/citus and the benchmark)."""
    major = str(major or PG)
    if major not in CITUS_MAJORS:
        return f"Citus 14 supports PostgreSQL {', '.join(CITUS_MAJORS)}, not {major}"
    cfg = pg_config(major)
    share = subprocess.run([cfg, "--sharedir"], check=True, capture_output=True, text=True).stdout.strip()
    lib = subprocess.run([cfg, "--pkglibdir"], check=True, capture_output=True, text=True).stdout.strip()
    if not (Path(share) / "extension/citus.control").exists() or not (Path(lib) / "citus.so").exists():
        why = os.environ.get("HLCULID_CITUS_MISSING") or "run make setup (scripts/setup-citus.sh)"
        return f"Citus is not installed for PostgreSQL {major} ({cfg}): {why}"
    return None


def citus_node_conf(publisher):
    return [
        "shared_preload_libraries = 'citus,hlculid'",  # citus first: it says so at start otherwise
        f"hlculid.publisher_id = {publisher}",
        "listen_addresses = 'localhost'",  # the nodes reach each other over TCP, trust on localhost
        "max_prepared_transactions = 50",  # Citus commits multi-shard writes with 2PC
        "wal_level = logical",  # shard moves copy shards by logical replication
        "max_connections = 200",
        "citus.node_conninfo = 'sslmode=prefer'",
        "TimeZone = 'UTC'",
    ]


class CitusCluster:
    """A coordinator and two workers, each a Cluster (publisher ids 41, 42, 43), Citus and hlculid
    installed; stop() stops and removes them."""

    def __init__(self, major=None, conf=()):
        self.nodes = []
        try:
            for name, publisher in CITUS_PUBLISHERS.items():
                c = Cluster(f"citus-{name}", preload=False, conf=citus_node_conf(publisher) + list(conf),
                            fsync=False, major=major)
                self.nodes.append(c)
                c.start()
            self.coordinator, *self.workers = self.nodes
            for c in self.nodes:
                c.sql("CREATE EXTENSION citus")
            self.coordinator.sql("SELECT citus_set_coordinator_host('localhost', %s)", (self.coordinator.port,))
            for w in self.workers:
                self.coordinator.sql("SELECT citus_add_node('localhost', %s)", (w.port,))
            # created on the coordinator after the workers joined: Citus creates it on every node
            self.coordinator.sql("CREATE EXTENSION hlculid")
        except BaseException:
            self.stop()
            raise

    def stop(self):
        for c in self.nodes:
            c.stop("immediate")
        for c in self.nodes:
            shutil.rmtree(c.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description="throwaway PostgreSQL servers for scripts")
    sub = ap.add_subparsers(dest="cmd", required=True)
    create = sub.add_parser("create")
    create.add_argument("dir")
    create.add_argument("major")
    create.add_argument("--conf", action="append", default=[])
    stop = sub.add_parser("stop")
    stop.add_argument("dir")
    args = ap.parse_args()
    if args.cmd == "create":
        old = Path(args.dir) / "cluster.json"
        if old.exists():
            Cluster.attach(args.dir).stop("immediate")
        c = Cluster("cli", preload=False, conf=args.conf, major=args.major, directory=args.dir, fsync=False)
        c.start()
        print(c.port)
    elif args.cmd == "stop":
        if (Path(args.dir) / "cluster.json").exists() and (Path(args.dir) / "data" / "postmaster.pid").exists():
            Cluster.attach(args.dir).stop()


if __name__ == "__main__":
    sys.exit(main())
