"""The subscriptions workload of bench.py: hlculid's consumer against PgQ and logical decoding,
the same writers for all, on one server of its own (wal_level = logical, for the decoding
contender; every contender runs under it).

Contenders, interleaved in every round (a round runs each once, in this order):
- none: the writers alone (the throughput every ratio is taken against), and beside 10 idle
  hlculid waiters (sessions in hlculid_consumer_wait on a table no one writes);
- hlculid: a consumer, hlculid_consumer_wait then hlculid_consume (1,000 rows) in a transaction;
- hlculid_read polling every 10 ms (0.5's reader, the poll the wait replaces);
- PgQ (Debian's postgresql-NN-pgq3 and pgqd): trigger pgq.logutriga, pgqd ticking, a consumer
  polling pgq.next_batch every 5 ms, get_batch_events, finish_batch; pgqd at its defaults (and the
  queue's: a tick at 500 events or 3 s), and tuned (ticker_period and the queue's ticker_max_lag
  10 ms);
- logical decoding: test_decoding on a slot, streamed by pg_recvlogical.
Two writer workloads of 8 writers, one row per transaction: immediate commits, and late commits
(a third commit 0-40 ms after their insert, 5 % roll back). Lag is commit (the writer's commit
returned) to the row in the consumer's hands. The drain: a backlog loaded in 1,000-row
transactions while no one consumes, then consumed.
"""

import os
import random
import re
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

WRITERS = 8
TABLE = "CREATE TABLE {t} (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int, body text)"


def _pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def pgq_missing(c):
    import pgcluster
    share = subprocess.run([pgcluster.pg_config(c.major), "--sharedir"], capture_output=True, text=True).stdout.strip()
    if not (Path(share) / "extension" / "pgq.control").exists():
        return f"PgQ is not installed for PostgreSQL {c.major} (Debian packages PgQ for 15 here: postgresql-15-pgq3)"
    if not shutil.which("pgqd"):
        return "pgqd is not installed"
    return None


class Run:
    """What one contender's run saw: the writers' ids with their commit (or rollback) times, and
    the consumer's ids with the time it got them."""

    def __init__(self):
        self.committed, self.rolled_back, self.seen = {}, {}, {}
        self.dups = 0
        self.lock = threading.Lock()

    def got(self, ids):
        t = time.perf_counter()
        with self.lock:
            for i in ids:
                if i in self.seen:
                    self.dups += 1
                else:
                    self.seen[i] = t

    def done(self):
        return len(self.committed) > 0 and all(i in self.seen for i in self.committed)


def _writers(host, port, table, seconds, late):
    """The writers, run in a process of their own (`python subscriptions.py writers ...`), so
    that the consumer's thread competes with no writer for the interpreter lock. Prints their ids
    with their commit or rollback times (perf_counter: CLOCK_MONOTONIC, one clock for both
    processes) and their rate, as JSON."""
    import json

    import psycopg

    committed, rolled_back, stop = {}, {}, threading.Event()

    def writer(w):
        rnd = random.Random(w * 7919 + int(time.time()))
        with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres") as conn:
            while not stop.is_set():
                i = conn.execute(f"INSERT INTO {table} (n, body) VALUES (%s, 'event body of forty bytes, more or less')"
                                 " RETURNING id::text", (w,)).fetchone()[0]
                if late and rnd.random() < 1 / 3:
                    time.sleep(rnd.random() * 0.04)
                if late and rnd.random() < 0.05:
                    conn.rollback()
                    rolled_back[i] = time.perf_counter()
                else:
                    conn.commit()
                    committed[i] = time.perf_counter()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    print(json.dumps([committed, rolled_back, len(committed) / (time.perf_counter() - t0)]))


def writers(c, run, table, seconds, late):
    import json
    import sys

    out = subprocess.run([sys.executable, __file__, "writers", str(c.dir), str(c.port), table, str(seconds),
                          "1" if late else "0"], capture_output=True, text=True, check=True).stdout
    committed, rolled_back, rate = json.loads(out)
    run.committed.update(committed)
    run.rolled_back.update(rolled_back)
    return rate


# --- the consumers: each a thread that reads until `stop`, reporting ids to run.got -------------

def hlculid_consumer(c, run, table, stop, name="bench"):
    with c.connect() as conn:
        full = True
        while not stop.is_set():
            if not full and not conn.execute("SELECT hlculid_consumer_wait(%s, '0.2 s')", (name,)).fetchone()[0]:
                continue
            with conn.transaction():
                ids = [r[0] for r in conn.execute(f"SELECT id::text FROM hlculid_consume(%s, NULL::{table}, 1000)",
                                                  (name,)).fetchall()]
                run.got(ids)
            full = len(ids) == 1000


def hlculid_poller(c, run, table, stop):
    with c.connect() as conn:
        last = None
        while not stop.is_set():
            ids = [r[0] for r in conn.execute(f"SELECT id::text FROM hlculid_read(NULL::{table}, %s::hlculid, 1000)",
                                              (last,)).fetchall()]
            run.got(ids)
            if ids:
                last = ids[-1]
            if len(ids) < 1000:
                time.sleep(0.01)


def pgq_consumer(c, run, stop, queue="bq", consumer="bench"):
    with c.connect() as conn:
        while not stop.is_set():
            with conn.transaction():
                bid = conn.execute("SELECT pgq.next_batch(%s, %s)", (queue, consumer)).fetchone()[0]
                if bid is not None:
                    data = conn.execute("SELECT ev_data FROM pgq.get_batch_events(%s)", (bid,)).fetchall()
                    # logutriga's urlencoded row: id=...&n=...&body=...
                    run.got([d.split("&", 1)[0][3:] for (d,) in data])
                    conn.execute("SELECT pgq.finish_batch(%s)", (bid,))
            if bid is None:
                time.sleep(0.005)


DECODED = re.compile(r"INSERT: id\[hlculid\]:'([^']+)'")


def recvlogical(c, run, slot):
    """pg_recvlogical streaming the slot to a pipe; a thread parses the inserts. Returns the
    process and the thread (terminate the process to end both)."""
    p = subprocess.Popen([f"{c.bin}/pg_recvlogical", "-h", str(c.dir), "-p", str(c.port), "-U", "postgres",
                          "-d", "postgres", "-S", slot, "--start", "-f", "-", "-s", "1",
                          "-o", "skip-empty-xacts=1", "-o", "include-xids=0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def read():
        for line in p.stdout:
            m = DECODED.search(line)
            if m:
                run.got([m.group(1)])

    t = threading.Thread(target=read)
    t.start()
    return p, t


class Pgqd:
    """pgqd ticking this server's postgres database; ticker_period None: pgqd's default."""

    def __init__(self, c, ticker_period=None):
        self.conf = c.dir / f"pgqd-{os.getpid()}.ini"
        lines = ["[pgqd]", f"base_connstr = host={c.dir} port={c.port} user=postgres",
                 "initial_database = postgres", "database_list = postgres",
                 f"logfile = {c.dir}/pgqd.log", f"pidfile = {c.dir}/pgqd.pid"]
        if ticker_period is not None:
            lines.append(f"ticker_period = {ticker_period}")
        self.conf.write_text("\n".join(lines) + "\n")
        self.p = subprocess.Popen(["pgqd", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(10)


# --- the contenders: set up, start the consumer, and tear down ------------------------------------

class Contender:
    wal_note = ""

    def __init__(self, c):
        self.c = c

    def setup(self, table):
        pass

    def start(self, run, table):
        return None

    def stop(self):
        pass

    def teardown(self, table):
        pass


class NoConsumer(Contender):
    pass


class IdleWaiters(Contender):
    """10 sessions in hlculid_consumer_wait on a table no one writes, with the clients' default
    timeout (30 s): waiting consumers, ended by a cancel when the run stops. (A wait's call
    itself costs its set-up queries, about 2 ms of CPU: a wait that times out every 0.2 s is a
    poll, which is not what this measures.)"""

    def setup(self, table):
        self.c.sql("DROP TABLE IF EXISTS sub_idle")
        self.c.sql(TABLE.format(t="sub_idle"))
        for k in range(10):
            self.c.sql("SELECT hlculid_consumer_create(%s, 'sub_idle')", (f"idle{k}",))

    def start(self, run, table):
        import psycopg

        self.halt = threading.Event()
        self.pids = []

        def waiter(k):
            with self.c.connect() as conn:
                self.pids.append(conn.info.backend_pid)
                while not self.halt.is_set():
                    try:
                        conn.execute("SELECT hlculid_consumer_wait(%s, '30 s')", (f"idle{k}",))
                    except psycopg.errors.QueryCanceled:
                        pass

        self.threads = [threading.Thread(target=waiter, args=(k,)) for k in range(10)]
        for t in self.threads:
            t.start()
        time.sleep(0.3)  # all asleep before the writers start

    def stop(self):
        self.halt.set()
        while any(t.is_alive() for t in self.threads):
            self.c.sql("SELECT pg_catalog.pg_cancel_backend(p) FROM pg_catalog.unnest(%s::int[]) p", (self.pids,))
            for t in self.threads:
                t.join(0.2)

    def teardown(self, table):
        for k in range(10):
            self.c.sql("SELECT hlculid_consumer_drop(%s)", (f"idle{k}",))
        self.c.sql("DROP TABLE sub_idle")


class Threaded(Contender):
    def start(self, run, table):
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self.body, args=(run, table, self.halt))
        self.thread.start()

    def stop(self):
        self.halt.set()
        self.thread.join()


class HlculidConsumer(Threaded):
    def setup(self, table):
        self.c.sql("SELECT hlculid_consumer_create('bench', %s::regclass)", (table,))

    def body(self, run, table, halt):
        hlculid_consumer(self.c, run, table, halt)

    def teardown(self, table):
        self.c.sql("SELECT hlculid_consumer_drop('bench')")


class HlculidPoller(Threaded):
    def body(self, run, table, halt):
        hlculid_poller(self.c, run, table, halt)


class PgQ(Threaded):
    def __init__(self, c, ticker_period=None, max_lag=None):
        super().__init__(c)
        self.ticker_period, self.max_lag = ticker_period, max_lag

    def setup(self, table):
        self.c.sql("SELECT pgq.create_queue('bq')")
        if self.max_lag:
            self.c.sql("SELECT pgq.set_queue_config('bq', 'ticker_max_lag', %s)", (self.max_lag,))
        self.c.sql("SELECT pgq.register_consumer('bq', 'bench')")
        self.c.sql(f"CREATE TRIGGER sub_pgq AFTER INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION pgq.logutriga('bq')")
        self.pgqd = Pgqd(self.c, self.ticker_period)

    def body(self, run, table, halt):
        pgq_consumer(self.c, run, halt)

    def teardown(self, table):
        self.pgqd.stop()
        self.c.sql(f"DROP TRIGGER sub_pgq ON {table}")
        self.c.sql("SELECT pgq.unregister_consumer('bq', 'bench')")
        self.c.sql("SELECT pgq.drop_queue('bq')")


class Logical(Contender):
    def setup(self, table):
        self.c.sql("SELECT pg_create_logical_replication_slot('bench_slot', 'test_decoding')")

    def start(self, run, table):
        self.p, self.t = recvlogical(self.c, run, "bench_slot")

    def stop(self):
        self.p.terminate()
        self.p.wait(10)
        self.t.join()

    def teardown(self, table):
        for _ in range(100):  # the walsender ends a moment after pg_recvlogical
            if not self.c.one("SELECT active FROM pg_replication_slots WHERE slot_name = 'bench_slot'"):
                break
            time.sleep(0.05)
        self.c.sql("SELECT pg_drop_replication_slot('bench_slot')")


def contenders(c, pgq_why, quick=False):
    """--quick (make test) leaves out the poller and PgQ at its defaults (a second a run for its
    ticks): the same code as the others."""
    cs = {"none": NoConsumer(c), "none, 10 idle hlculid waiters": IdleWaiters(c),
          "hlculid consumer (wait + consume)": HlculidConsumer(c)}
    if not quick:
        cs["hlculid_read, polling 10 ms"] = HlculidPoller(c)
    if not pgq_why:
        if not quick:
            cs["PgQ, pgqd defaults"] = PgQ(c)
        cs["PgQ, ticks every 10 ms"] = PgQ(c, ticker_period="0.01", max_lag="10 ms")
    cs["logical decoding (test_decoding)"] = Logical(c)
    return cs


CONSUMES = ("hlculid consumer (wait + consume)", "hlculid_read, polling 10 ms", "PgQ, pgqd defaults",
            "PgQ, ticks every 10 ms", "logical decoding (test_decoding)")


def one_run(c, contender, seconds, late, drain_timeout):
    """One contender's run of the writers: a fresh table; the figures of this run."""
    table = "sub_ev"
    c.sql(f"DROP TABLE IF EXISTS {table}")
    c.sql(TABLE.format(t=table))
    c.sql("CHECKPOINT")
    contender.setup(table)
    run = Run()
    lsn = c.one("SELECT pg_current_wal_lsn()")
    size = c.one("SELECT pg_database_size(current_database())")
    try:
        contender.start(run, table)
        rate = writers(c, run, table, seconds, late)
        deadline = time.perf_counter() + drain_timeout
        consumes = not isinstance(contender, (NoConsumer, IdleWaiters))
        while consumes and not run.done() and time.perf_counter() < deadline:
            time.sleep(0.01)
        wal = c.one("SELECT pg_current_wal_lsn() - %s::pg_lsn", (lsn,))
        disk = c.one("SELECT pg_database_size(current_database()) - %s", (size,))
        contender.stop()
    finally:
        contender.teardown(table)
    n = len(run.committed)
    out = dict(rate=rate, wal=float(wal) / n, disk=float(disk) / n, n=n)
    if consumes:
        lags = [(run.seen[i] - t) * 1e3 for i, t in run.committed.items() if i in run.seen]
        out.update(lost=sum(1 for i in run.committed if i not in run.seen), dups=run.dups,
                   ghosts=sum(1 for i in run.rolled_back if i in run.seen),
                   p50=statistics.median(lags) if lags else float("nan"), p99=_pct(lags, 0.99),
                   order_p50=None, inversions=_inversions(run))
        if late:
            out["order_p50"], out["order_p99"] = _order_wait(run)
    return out


def pgbench_run(c, contender, seconds):
    """The writers' cost without the disk's flushes in the way: pgbench, 8 clients of single-row
    autocommit inserts with synchronous_commit off, beside the contender at work. Rows/s."""
    table = "sub_ev"
    c.sql(f"DROP TABLE IF EXISTS {table}")
    c.sql(TABLE.format(t=table))
    c.sql("CHECKPOINT")
    contender.setup(table)
    script = c.dir / "subs-insert.sql"
    script.write_text(f"INSERT INTO {table} (n, body) VALUES (1, 'event body of forty bytes, more or less');\n")
    try:
        contender.start(Run(), table)
        out = subprocess.run([f"{c.bin}/pgbench", "-h", str(c.dir), "-p", str(c.port), "-U", "postgres", "-n",
                              "-M", "prepared", "-c", str(WRITERS), "-j", str(WRITERS), "-T", str(seconds),
                              "-f", str(script), "postgres"], capture_output=True, text=True, check=True,
                             env={**os.environ, "PGOPTIONS": "-c synchronous_commit=off"}).stdout
        contender.stop()
    finally:
        contender.teardown(table)
    return float(re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", out, re.M).group(1))


def _inversions(run):
    """Pairs delivered out of id order: how many rows arrived after a row with a larger id."""
    order = sorted(run.seen.items(), key=lambda kv: kv[1])
    top, inv = "", 0
    for i, _ in order:
        if i < top:
            inv += 1
        else:
            top = i
    return inv


def _order_wait(run):
    """The id-order wait alone: for each committed row, how long after its commit the last
    transaction holding a smaller id ended (commit or rollback). A consumer in id order cannot
    have it sooner."""
    ends = sorted(list(run.committed.items()) + list(run.rolled_back.items()))
    waits, latest = [], float("-inf")
    for i, t in ends:
        latest = max(latest, t)
        if i in run.committed:
            waits.append(max(0.0, latest - t) * 1e3)
    return statistics.median(waits), _pct(waits, 0.99)


# --- the drain -------------------------------------------------------------------------------------

def load(c, table, n):
    with c.connect() as conn:
        for k in range(0, n, 1000):
            conn.execute(f"INSERT INTO {table} (n, body) SELECT g, 'event body of forty bytes, more or less' "
                         "FROM generate_series(%s::int, %s::int) g", (k, min(n, k + 1000) - 1))


def drains(c, kinds, n, runs):
    """Seconds to consume a backlog of n events loaded while no one consumed, `runs` times per
    kind, interleaved. Each kind's backlog is loaded once, for `runs` consumers made before the
    load (hlculid consumers; PgQ consumers of one queue, pgqd ticking at its defaults during the
    load; logical slots, made after the other loads so that they decode only their own)."""
    tables = {k: f"sub_drain_{i}" for i, k in enumerate(kinds)}
    for t in tables.values():
        c.sql(f"DROP TABLE IF EXISTS {t}")
        c.sql(TABLE.format(t=t))
    pgq = None
    if "hlculid" in kinds:
        for r in range(runs):
            c.sql("SELECT hlculid_consumer_create(%s, %s::regclass)", (f"drain{r}", tables["hlculid"]))
        load(c, tables["hlculid"], n)
    if "PgQ" in kinds:
        pgq = PgQ(c)
        pgq.setup(tables["PgQ"])
        for r in range(1, runs):
            c.sql("SELECT pgq.register_consumer('bq', %s)", (f"bench{r}",))
        load(c, tables["PgQ"], n)
        pgq.pgqd.stop()
        with c.connect() as conn:  # the last events' tick, as pgqd would make it within 3 s
            conn.execute("SELECT pgq.force_tick('bq')")
            conn.execute("SELECT pgq.ticker('bq')")
    if "logical decoding" in kinds:
        for r in range(runs):
            c.sql("SELECT pg_create_logical_replication_slot(%s, 'test_decoding')", (f"drain{r}",))
        load(c, tables["logical decoding"], n)
    c.sql("CHECKPOINT")
    times = {k: [] for k in kinds}
    try:
        for r in range(runs):
            for k in kinds:
                run, table = Run(), tables[k]
                t0 = time.perf_counter()
                if k == "hlculid":
                    with c.connect() as conn:
                        while len(run.seen) < n:
                            with conn.transaction():
                                run.got([i for (i,) in conn.execute(
                                    f"SELECT id::text FROM hlculid_consume(%s, NULL::{table}, 1000)", (f"drain{r}",))])
                elif k == "PgQ":
                    halt = threading.Event()
                    th = threading.Thread(target=pgq_consumer, args=(c, run, halt, "bq", "bench" if r == 0 else f"bench{r}"))
                    th.start()
                    while len(run.seen) < n:
                        time.sleep(0.001)
                    halt.set()
                    th.join()
                else:
                    p, th = recvlogical(c, run, f"drain{r}")
                    while len(run.seen) < n:
                        time.sleep(0.001)
                    p.terminate()
                    p.wait(10)
                    th.join()
                times[k].append(time.perf_counter() - t0)
                assert len(run.seen) == n and run.dups == 0, (k, len(run.seen), run.dups)
    finally:
        if "hlculid" in kinds:
            for r in range(runs):
                c.sql("SELECT hlculid_consumer_drop(%s)", (f"drain{r}",))
        if pgq:
            for r in range(1, runs):
                c.sql("SELECT pgq.unregister_consumer('bq', %s)", (f"bench{r}",))
            pgq.teardown(tables["PgQ"])
        if "logical decoding" in kinds:
            for r in range(runs):
                for _ in range(100):  # the walsender ends a moment after pg_recvlogical
                    if not c.one("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (f"drain{r}",)):
                        break
                    time.sleep(0.05)
                c.sql("SELECT pg_drop_replication_slot(%s)", (f"drain{r}",))
        for t in tables.values():
            c.sql(f"DROP TABLE {t}")
    return times


# --- the workload -----------------------------------------------------------------------------

HL = "hlculid consumer (wait + consume)"


def subscriptions(pg, cfg, report, quick):
    import pgcluster

    # synchronous_commit on (PostgreSQL's default): a walsender decodes flushed WAL only, so with it
    # off logical decoding would wait for the WAL writer (200 ms) and measure that
    c = pgcluster.Cluster("bench-subs", major=pg, conf=[
        "hlculid.publisher_id = 1", "shared_buffers = 128MB", "max_wal_size = 20GB",
        "checkpoint_timeout = 1h", "autovacuum = off", "max_connections = 120", "wal_level = logical",
        "max_replication_slots = 4", "max_wal_senders = 4"])
    try:
        c.start()
        c.sql("CREATE EXTENSION hlculid")
        pgq_why = pgq_missing(c)
        pgq_version = None
        if not pgq_why:
            c.sql("CREATE EXTENSION pgq")
            pgq_version = c.one("SELECT extversion FROM pg_extension WHERE extname = 'pgq'")
        _measure(c, pg, cfg, report, quick, pgq_why, pgq_version)
    finally:
        c.stop("immediate")
        shutil.rmtree(c.dir, ignore_errors=True)


def _med(rs, k):
    return statistics.median(r[k] for r in rs)


def _measure(c, pg, cfg, report, quick, pgq_why, pgq_version):
    secs, rounds, backlog = cfg["subs_seconds"], cfg["subs_runs"], cfg["subs_backlog"]
    cs = contenders(c, pgq_why, quick)
    report.add(f"\n### Subscriptions, PostgreSQL {pg}: hlculid's consumer against PgQ and logical decoding\n")
    report.add(f"A server of its own (`wal_level = logical` for every contender, `synchronous_commit` on). 8 writers "
               f"in a process of their own, one row per transaction, {secs} s a run; {rounds} round{'s' * (rounds > 1)}, "
               "the contenders interleaved in each; medians (min-max over the rounds). Lag: from the writer's commit "
               "returning to the row in the consumer's hands. The hlculid consumer takes up to 1,000 rows a batch "
               "in a transaction after `hlculid_consumer_wait`. "
               + (f"PgQ {pgq_version} (Debian's package): trigger `pgq.logutriga`, its consumer polling "
                  "`pgq.next_batch` every 5 ms; pgqd at its defaults (ticker_period 1 s; the queue ticks at 500 "
                  "events or 3 s) and tuned (pgqd ticker_period 10 ms, the queue's ticker_max_lag 10 ms). "
                  if not pgq_why else f"PgQ: not measured here ({pgq_why}). ")
               + "Logical decoding: a `test_decoding` slot streamed by `pg_recvlogical`.")
    data = report.data.setdefault("subscriptions", {}).setdefault(pg, {})
    # --quick (make test): the late commits alone, which take every code path
    for late in (True,) if quick else (False, True):
        label = "late commits (a third 0-40 ms late), 5 % rollbacks" if late else "immediate commits"
        results = {k: [] for k in cs}
        for _ in range(rounds):
            for name, contender in cs.items():
                results[name].append(one_run(c, contender, secs, late, drain_timeout=5 if quick else 10))
        base = _med(results["none"], "rate")
        rows = []
        for name, rs in results.items():
            rate = _med(rs, "rate")
            row = [name, f"{rate:,.0f} ({min(r['rate'] for r in rs) / base:.2f}-{max(r['rate'] for r in rs) / base:.2f})",
                   f"{rate / base:.2f}x", f"{_med(rs, 'wal'):.0f}", f"{_med(rs, 'disk'):.0f}"]
            if name in CONSUMES:
                row += [f"{sum(r['lost'] for r in rs)} / {sum(r['dups'] for r in rs)}",
                        f"{_med(rs, 'p50'):.1f} / {_med(rs, 'p99'):.1f}", f"{_med(rs, 'inversions'):,.0f}"]
                data[(late, name)] = {k: _med(rs, k) for k in ("rate", "wal", "disk", "p50", "p99")}
            else:
                row += ["", "", ""]
            rows.append(row)
        report.add(f"\nWriters: {label}.\n")
        report.table(["contender", "writers' rows/s (min-max vs none)", "vs none", "WAL B/event", "disk B/event",
                      "lost / duplicated (all runs)", "lag p50 / p99 ms", "rows after a larger id"], rows)
        if late:
            w50 = _med(results[HL], "order_p50")
            w99 = _med(results[HL], "order_p99")
            data[(late, "id-order wait")] = (w50, w99)
            report.add(f"\nThe id-order wait alone under these writers (for each committed row, until every transaction "
                       f"that took a smaller id had ended; from the writers' own times): p50 {w50:.1f} ms, p99 {w99:.1f} ms. "
                       "A consumer in id order cannot see a row sooner; what the hlculid consumer adds to it is its own.")
        bad = sum(r["lost"] + r["dups"] + r["ghosts"] for n in CONSUMES if n in results for r in results[n])
        report.check(f"no consumer lost, duplicated or invented an event ({label}, PostgreSQL {pg})", bad == 0)
        if not late and not quick:
            h = data[(late, HL)]
            report.check(f"hlculid consumer lag p50 <= 2 ms and p99 <= 10 ms with immediate commits "
                         f"({h['p50']:.1f} / {h['p99']:.1f} ms)", h["p50"] <= 2 and h["p99"] <= 10)
    # the writers' cost, CPU-bound
    pb_secs = max(1, int(secs))
    pb = {k: v for k, v in cs.items() if not quick or k in ("none", "none, 10 idle hlculid waiters")}
    tps = {k: [] for k in pb}
    for _ in range(rounds):
        for name, contender in pb.items():
            tps[name].append(pgbench_run(c, contender, pb_secs))
    base = statistics.median(tps["none"])
    report.add(f"\nThe writers' cost with the disk's flushes out of the way: pgbench, 8 clients of single-row "
               f"autocommit inserts with `synchronous_commit = off`, {pb_secs} s a run, beside each contender at work "
               "(rows/s, medians):\n")
    report.table(["contender", "rows/s", "vs none", "min-max vs none"],
                 [[k, f"{statistics.median(v):,.0f}", f"{statistics.median(v) / base:.3f}x",
                   f"{min(v) / base:.2f}-{max(v) / base:.2f}"] for k, v in tps.items()])
    data["pgbench"] = {k: statistics.median(v) / base for k, v in tps.items()}
    if not quick:
        idle = base / statistics.median(tps["none, 10 idle hlculid waiters"])
        report.check(f"writers beside 10 idle hlculid waiters within 1.03x of none ({idle:.3f}x, pgbench, PostgreSQL {pg})",
                     idle <= 1.03)
    # the drain
    kinds = ["hlculid", *(["PgQ"] if not pgq_why else []), "logical decoding"]
    times = drains(c, kinds, backlog, cfg["subs_drain_runs"])
    rates = {k: backlog / statistics.median(v) for k, v in times.items()}
    report.add(f"\nDraining a backlog of {backlog:,} events (loaded once in 1,000-row transactions while no one "
               f"consumed, for {cfg['subs_drain_runs']} consumers of each kind made before, drained in turn; hlculid "
               "1,000 rows a transaction, PgQ a tick's batch a transaction; medians):\n")
    report.table(["contender", "events/s", "min-max", "vs hlculid"],
                 [[k, f"{rates[k]:,.0f}", f"{backlog / max(v):,.0f}-{backlog / min(v):,.0f}",
                   f"{rates[k] / rates['hlculid']:.2f}x"] for k, v in times.items()])
    data["drain"] = rates


if __name__ == "__main__":
    import sys

    if sys.argv[1] == "writers":
        _writers(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), sys.argv[6] == "1")
