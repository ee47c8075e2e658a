"""hlculid benchmarks: every workload runs hlculid and what a user would pick instead side by
side, on the same server in the same run, and reports medians (min and max over the runs) and
ratios. Run through scripts/bench.sh, which installs a release build first.

  bench.py [--quick] [--pg 15 18] [--only generation inserts sorting ranges textio decode compare companion horizon masks citus
            subscriptions clients]
           [--out DIR] [--baseline PG_CONFIG]

A full run over several majors runs every workload on the newest and, on the others, the two
whose peers differ between majors (generation, text I/O); the subscriptions run on 15, where PgQ
is packaged: under 30 minutes on the 2-core VM (the subscriptions about 10 of them). The
client generators (clients) need no server: they run once, after the majors.
--quick uses small sizes on every major given and checks no thresholds: it proves the suite
still runs (make test).
A size can be set from the environment for a look at one workload, e.g.
HLCULID_BENCH_IO_ROWS=3000000 bench.py --quick --only textio.
"""

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

FULL = dict(gen_rows=2_000_000, gen_runs=3, insert_rows=10_000_000, pgbench_seconds=1, insert_rounds=3,
            sort_rows=3_000_000, sort_runs=5, range_rows=10_000_000, range_runs=31, io_rows=10_000_000, io_runs=3)
QUICK = dict(gen_rows=20_000, gen_runs=2, insert_rows=50_000, pgbench_seconds=1, insert_rounds=1,
             sort_rows=50_000, sort_runs=1, range_rows=200_000, range_runs=2, io_rows=50_000, io_runs=1)
FULL.update(companion_rows=1_000_000, companion_runs=3)
QUICK.update(companion_rows=20_000, companion_runs=1)
FULL.update(client_ms=300, client_runs=7)
QUICK.update(client_ms=20, client_runs=5)
FULL.update(decode_rows=1_000_000, decode_runs=5, compare_rows=1_000_000, compare_runs=3)
QUICK.update(decode_rows=20_000, decode_runs=1, compare_rows=20_000, compare_runs=1)
FULL.update(horizon_rows=2_000_000, horizon_runs=3, lag_seconds=10, horizon_seconds=5)
QUICK.update(horizon_rows=20_000, horizon_runs=1, lag_seconds=2, horizon_seconds=1)
FULL.update(mask_rows=1_000_000, mask_lookups=200_000, mask_runs=5)
QUICK.update(mask_rows=20_000, mask_lookups=5_000, mask_runs=1)
FULL.update(citus_single=3_000, citus_batches=300, citus_copy=200_000, citus_window_rows=1_000_000, citus_runs=3,
            citus_seconds=5)
QUICK.update(citus_single=200, citus_batches=20, citus_copy=5_000, citus_window_rows=20_000, citus_runs=1,
             citus_seconds=1)
FULL.update(subs_seconds=4, subs_runs=3, subs_backlog=1_000_000, subs_drain_runs=3)
QUICK.update(subs_seconds=0.3, subs_runs=1, subs_backlog=2_000, subs_drain_runs=1)
# Sizes from the environment, for a quick look at one workload (HLCULID_BENCH_IO_ROWS=2000000).
for _k in list(FULL):
    if os.environ.get(f"HLCULID_BENCH_{_k.upper()}"):
        FULL[_k] = QUICK[_k] = int(os.environ[f"HLCULID_BENCH_{_k.upper()}"])


def mmm(xs):
    return statistics.median(xs), min(xs), max(xs)


class Report:
    def __init__(self):
        self.lines, self.checks, self.data = [], [], {}

    def add(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def table(self, header, rows):
        self.add("| " + " | ".join(header) + " |")
        self.add("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for r in rows:
            self.add("| " + " | ".join(str(x) for x in r) + " |")

    def check(self, description, ok):
        self.checks.append((description, ok))
        self.add(f"- {'PASS' if ok else 'MISS'}: {description}")


def timed(conn, query, params=None):
    t0 = time.perf_counter()
    conn.execute(query, params).fetchall()
    return time.perf_counter() - t0


def spread_ids(n, days=30):
    """SELECT of n ids spread evenly over `days` days from 2026-01-01, as columns i and id."""
    return (f"SELECT i, hlculid_generate_at('2026-01-01+00'::timestamptz + (i * ({days} * 86400.0 / {n})) "
            f"* interval '1 second') AS id FROM generate_series(1, {n}) i")


def wal_lsn(conn):
    return conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]


def wal_bytes(conn, start):
    return float(conn.execute("SELECT pg_current_wal_lsn() - %s::pg_lsn", (start,)).fetchone()[0])


# --- 1. generation -----------------------------------------------------------------------

def generation(c, pg, cfg, report, quick):
    n, runs = cfg["gen_rows"], cfg["gen_runs"]
    q = "SELECT count({}) FROM generate_series(1, %s)"
    fns = {"count(*) baseline": "*", "clock_timestamp()": "clock_timestamp()",
           "nextval() (bigint identity)": "nextval('bench_seq')",
           "hlculid_generate()": "hlculid_generate()", "hlculid_generate_bigint()": "hlculid_generate_bigint()",
           "gen_random_uuid()": "gen_random_uuid()",
           "hlculid as ULID text": "hlculid_to_ulid(hlculid_generate())"}
    if pg >= 18:
        fns["uuidv7()"] = "uuidv7()"
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("CREATE SEQUENCE IF NOT EXISTS bench_seq CACHE 1")
        for f in fns.values():
            timed(conn, q.format(f), (min(n, 100_000),))
        times = {k: [] for k in fns}
        for _ in range(runs):
            for name, f in fns.items():
                times[name].append(timed(conn, q.format(f), (n,)))
        # batches: the same number of ids, 1,000 per call of hlculid_generate_n
        qn = "SELECT count(*) FROM (SELECT unnest(hlculid_generate_n(1000)) FROM generate_series(1, %s)) s"
        timed(conn, qn, (10,))
        times["hlculid_generate_n(1000), per id"] = [timed(conn, qn, (n // 1000,)) for _ in range(runs)]
    med = {k: mmm(v) for k, v in times.items()}
    base, h = med["count(*) baseline"][0], med["hlculid_generate()"][0]
    report.add(f"\n### 1. Generation, PostgreSQL {pg}: `SELECT count(f()) FROM generate_series(1, {n:,})`, {runs} runs\n")
    report.table(["function", "median ms", "min ms", "max ms", "ns/id net of count(*)", "time vs hlculid_generate()"],
                 [[name, f"{m*1e3:.0f}", f"{lo*1e3:.0f}", f"{hi*1e3:.0f}",
                   "" if name.startswith("count(*)") or "generate_n" in name else f"{(m - base) / n * 1e9:.0f}",
                   f"{m / h:.2f}x"]
                  for name, (m, lo, hi) in med.items()])
    report.data.setdefault("generation", {})[pg] = {k: (v[0] - base) / n * 1e9 for k, v in med.items()
                                                      if not k.startswith("count(*)") and "generate_n" not in k}
    # n ids as rows, whole query time per id (median, min, max): one call per id against batches
    report.data.setdefault("batch", {})[pg] = {
        k: tuple(x / n * 1e9 for x in med[m]) for k, m in (("hlculid_generate()", "hlculid_generate()"),
                                                          ("hlculid_generate_n(1000)", "hlculid_generate_n(1000), per id"))}

    def rate(query, k, ids):
        conns = [c.connect() for _ in range(k)]
        for x in conns:
            x.execute("SET max_parallel_workers_per_gather = 0")
            x.execute(query, (ids // 10,))
        barrier = threading.Barrier(k + 1)
        threads = [threading.Thread(target=lambda x=x: (barrier.wait(), x.execute(query, (ids,)).fetchall()))
                   for x in conns]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        for x in conns:
            x.close()
        return k * ids / elapsed

    # Scaling: the same work from 1, 2 and 4 backends at once. clock_timestamp() shares nothing
    # between backends, so its scaling is what this machine allows; hlculid's is judged against it.
    q_batch = "SELECT count(*) FROM (SELECT unnest(hlculid_generate_n(1000)) FROM generate_series(1, %s / 1000)) s"
    # (query, ids per backend): the batch makes more ids so that its runs last as long.
    scaled = {"clock_timestamp()": (q.format(fns["clock_timestamp()"]), n),
              "hlculid_generate()": (q.format(fns["hlculid_generate()"]), n),
              "hlculid_generate_n(1000)": (q_batch, 3 * n)}
    backends = (1, 2, 4)
    scaling, rows = {}, []
    # The functions take turns at each number of backends, so that a slow phase of the VM falls
    # on all of them and not on one function's whole series.
    rates = {(name, k): [] for name in scaled for k in backends}
    for _ in range(runs):
        for k in backends:
            for name, (query, ids) in scaled.items():
                rates[(name, k)].append(rate(query, k, ids))
    for name in scaled:
        scaling[name] = {k: statistics.median([r / one for r, one in zip(rates[(name, k)], rates[(name, 1)])])
                         for k in backends}
        rows.append([name] + [f"{statistics.median(rates[(name, k)])/1e6:.2f}" for k in backends] +
                    [f"{scaling[name][k]:.2f}x" for k in backends[1:]])
    report.add(f"\nScaling with backends running at once (M ids/s, median of {runs}, the functions taking turns; "
               f"{os.cpu_count()} cores; "
               "clock_timestamp() shares nothing between backends, so its scaling is what this machine allows):\n")
    report.table(["function"] + [f"{k} backend{'s' if k > 1 else ''}" for k in backends] +
                 [f"scaling at {k}" for k in backends[1:]], rows)
    report.data.setdefault("scaling", {})[pg] = scaling
    if not quick:
        for peer in ["gen_random_uuid()"] + (["uuidv7()"] if pg >= 18 else []):
            report.check(f"PG{pg}: hlculid_generate() at least 5x faster than {peer} ({med[peer][0] / h:.1f}x)",
                         med[peer][0] >= 5 * h)
        # Whole queries, each making n ids as n rows: the generate_series that drives
        # hlculid_generate() is part of its cost per id, as the unnest is part of the batch's.
        batch = med["hlculid_generate_n(1000), per id"][0]
        report.check(f"PG{pg}: n ids as rows from hlculid_generate_n(1000) take at most half the time of "
                     f"n calls of hlculid_generate() ({batch / h:.2f}x)", batch <= 0.5 * h)
        net = {k: (v[0] - base) / n for k, v in med.items()}
        big, seq = net["hlculid_generate_bigint()"], net["nextval() (bigint identity)"]
        report.check(f"PG{pg}: hlculid_generate_bigint() at least 2x faster than nextval(), ns/id net of count(*) "
                     f"({seq * 1e9:.0f} vs {big * 1e9:.0f} ns: {seq / big:.1f}x)", seq >= 2 * big)
        report.check(f"PG{pg}: hlculid_generate() at most 1.5x the time of clock_timestamp() "
                     f"({h / med['clock_timestamp()'][0]:.2f}x)", h <= 1.5 * med["clock_timestamp()"][0])
        free = scaling["clock_timestamp()"]
        for name in ("hlculid_generate()", "hlculid_generate_n(1000)"):
            for k in backends[1:]:
                report.check(f"PG{pg}: {name} scales to {k} backends at least 0.8x as well as clock_timestamp() "
                             f"({scaling[name][k]:.2f}x vs {free[k]:.2f}x: {scaling[name][k] / free[k]:.2f})",
                             scaling[name][k] >= 0.8 * free[k])


# --- 2. inserts --------------------------------------------------------------------------

INSERT_CONTENDERS = {
    # name: (column definition, the PostgreSQL majors that have it)
    "hlculid": ("id hlculid PRIMARY KEY DEFAULT hlculid_generate()", (15, 16, 17, 18)),
    "gen_random_uuid()": ("id uuid PRIMARY KEY DEFAULT gen_random_uuid()", (15, 16, 17, 18)),
    "uuidv7()": ("id uuid PRIMARY KEY DEFAULT uuidv7()", (18,)),
    "bigint identity": ("id bigint GENERATED BY DEFAULT AS IDENTITY (CACHE 1) PRIMARY KEY", (15, 16, 17, 18)),
    "hlculid bigint": ("id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint()", (15, 16, 17, 18)),
}
CLIENTS = (1, 2, 4, 8)


def pgbench(c, script, clients, seconds):
    """Transactions per second over the run, net of connecting, and the transactions done."""
    import pgcluster  # (imported where used, as elsewhere in this file)

    path = c.dir / f"bench-{clients}.sql"
    pgcluster.write_as_server(path, script)  # as the server's user, who owns c.dir (tests/pgcluster.py)
    out = subprocess.run([f"{c.bin}/pgbench", "-h", str(c.dir), "-p", str(c.port), "-U", "postgres", "-n",
                          "-M", "prepared", "-c", str(clients), "-j", str(clients), "-T", str(seconds),
                          "-f", str(path), "postgres"], capture_output=True, text=True, check=True).stdout
    tps = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", out, re.M)
    done = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
    if not (tps and done):
        raise RuntimeError(out)
    return float(tps.group(1)), int(done.group(1))


def inserts(c, pg, cfg, report, quick):
    rows_total, secs, rounds = cfg["insert_rows"], cfg["pgbench_seconds"], cfg["insert_rounds"]
    names = [n for n, (_, majors) in INSERT_CONTENDERS.items() if pg in majors]
    table = {n: f"ins_{i}" for i, n in enumerate(names)}
    configs = [(b, k) for b in (1, 100) for k in CLIENTS]  # (rows per transaction, clients)
    scripts = {1: "INSERT INTO {t} (n) VALUES (1);\n",
               100: "INSERT INTO {t} (n) SELECT g FROM generate_series(1, 100) g;\n"}
    results = {n: dict(per={cf: ([], []) for cf in configs}) for n in names}
    with c.connect() as conn:
        # Grow every table first, then measure them in interleaved rounds, so that a noisy
        # minute on the machine does not land on one contender only.
        for n in names:
            conn.execute(f"DROP TABLE IF EXISTS {table[n]}")
            conn.execute(f"CREATE TABLE {table[n]} ({INSERT_CONTENDERS[n][0]}, n int NOT NULL)")
            t0 = time.perf_counter()
            step = 1_000_000
            for start in range(0, rows_total, step):
                conn.execute(f"INSERT INTO {table[n]} (n) SELECT g FROM generate_series(%s, %s) g",
                             (start + 1, min(start + step, rows_total)))
            results[n]["load_rows_s"] = rows_total / (time.perf_counter() - t0)
        # Each configuration runs every contender back to back, in an order that rotates with
        # the round, so that no contender always follows the same one or meets the same minute.
        for r in range(rounds):
            for batch, clients in configs:
                for n in names[r % len(names):] + names[:r % len(names)]:
                    # A checkpoint before each contender's run at one client, where WAL per row is
                    # measured: every contender starts that run from the same state.
                    if clients == CLIENTS[0]:
                        conn.execute("CHECKPOINT")
                    start_lsn = wal_lsn(conn)
                    before = conn.execute(f"SELECT count(*) FROM {table[n]}").fetchone()[0] if quick else None
                    tps, done = pgbench(c, scripts[batch].format(t=table[n]), clients, secs)
                    rows = done * batch
                    wal = wal_bytes(conn, start_lsn)
                    if quick:
                        assert conn.execute(f"SELECT count(*) FROM {table[n]}").fetchone()[0] == before + rows
                    results[n]["per"][(batch, clients)][0].append(tps * batch)
                    results[n]["per"][(batch, clients)][1].append(wal / max(rows, 1))
        for n in names:
            t = table[n]
            r = results[n]
            r["index_bytes"], r["heap_bytes"], r["rows"], r["value_size"] = conn.execute(
                f"SELECT pg_relation_size('{t}_pkey'), pg_relation_size('{t}'), count(*), max(pg_column_size(id)) "
                f"FROM {t}").fetchone()
            r["spread"] = {cf: (min(v[0]), max(v[0])) for cf, v in r["per"].items()}
            r["per"] = {cf: (statistics.median(v[0]), statistics.median(v[1])) for cf, v in r["per"].items()}
            conn.execute(f"DROP TABLE {t}")
    report.add(f"\n### 2. Inserts, PostgreSQL {pg}: each table grown to {rows_total:,} rows, then pgbench "
               f"(-M prepared, {secs} s per run at 1, 2, 4 and 8 clients, the contenders back to back in each "
               f"configuration, a CHECKPOINT before each run at one client), "
               f"{rounds} round{'s' if rounds > 1 else ''} in rotating order, "
               "shared_buffers = 128MB; rows/s median (min-max)\n")
    report.table(["key", "bulk load rows/s"], [[n, f"{r['load_rows_s']:,.0f}"] for n, r in results.items()])
    for batch in (1, 100):
        report.add(f"\n{'One row' if batch == 1 else '100 rows'} per transaction, rows/s median (min-max) "
                   "by number of pgbench clients:\n")
        report.table(["key"] + [f"{k} client{'s' if k > 1 else ''}" for k in CLIENTS],
                     [[n] + [f"{r['per'][(batch, k)][0]:,.0f} ({r['spread'][(batch, k)][0]:,.0f}-"
                             f"{r['spread'][(batch, k)][1]:,.0f})" for k in CLIENTS] for n, r in results.items()])
    report.add("")
    report.table(["key", "WAL bytes/row, 1 row/tx", "WAL bytes/row, 100 rows/tx", "final PK index MB",
                  "index bytes/row", "heap bytes/row", "value bytes"],
                 [[n, f"{r['per'][(1, 1)][1]:.0f}", f"{r['per'][(100, 1)][1]:.0f}", f"{r['index_bytes']/2**20:.0f}",
                   f"{r['index_bytes']/r['rows']:.1f}", f"{r['heap_bytes']/r['rows']:.1f}", r["value_size"]]
                  for n, r in results.items()])
    report.data.setdefault("inserts", {})[pg] = results
    if quick:
        return
    h = results["hlculid"]

    def ratios(other, batches=(1, 100)):
        cfs = [cf for cf in configs if cf[0] in batches and cf in other["per"]]
        rs = [h["per"][cf][0] / other["per"][cf][0] for cf in cfs]
        return min(rs), ", ".join(f"{b}x{k}: {r:.2f}" for (b, k), r in zip(cfs, rs))

    if "gen_random_uuid()" in results:
        u = results["gen_random_uuid()"]
        worst, detail = ratios(u, (100,))
        report.check(f"PG{pg}: inserts at {rows_total:,} rows at least 2x gen_random_uuid()'s rows/s at every client "
                     f"count, 100 rows/tx (rows/tx x clients: {detail})", worst >= 2)
        report.check(f"PG{pg}: WAL per row at most half of gen_random_uuid()'s "
                     f"({h['per'][(100, 1)][1] / u['per'][(100, 1)][1]:.2f}x)",
                     h["per"][(100, 1)][1] <= 0.5 * u["per"][(100, 1)][1])
    for peer in ("uuidv7()", "bigint identity"):
        if peer in results:
            worst, detail = ratios(results[peer])
            report.check(f"PG{pg}: inserts at least {peer}'s rows/s at every client count "
                         f"(rows/tx x clients: {detail})", worst >= 1)
    # bigint ids against the bigint key they replace: the median over the configurations (one
    # noisy configuration on this VM does not decide), and the same index bytes per row
    b, ident = results["hlculid bigint"], results["bigint identity"]
    rs = [b["per"][cf][0] / ident["per"][cf][0] for cf in configs]
    report.check(f"PG{pg}: hlculid bigint inserts at least bigint identity's rows/s, median over "
                 f"rows/tx x clients ({statistics.median(rs):.2f}x; range {min(rs):.2f}-{max(rs):.2f})",
                 statistics.median(rs) >= 1)
    per_row = (b["index_bytes"] / b["rows"], ident["index_bytes"] / ident["rows"])
    report.check(f"PG{pg}: hlculid bigint index bytes per row equal bigint identity's within 2% "
                 f"({per_row[0]:.1f} vs {per_row[1]:.1f})", abs(per_row[0] / per_row[1] - 1) <= 0.02)


# --- 3. sorting --------------------------------------------------------------------------

def sorting(c, pg, cfg, report, quick):
    n, runs = cfg["sort_rows"], cfg["sort_runs"]
    with c.connect() as conn:
        conn.execute("SET work_mem = '1GB'")
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("SET max_parallel_maintenance_workers = 0")
        # Time-ordered ids over 30 days, shuffled; the uuid and text tables hold the same values.
        conn.execute("DROP TABLE IF EXISTS s_src, s_hlculid, s_uuid, s_text")
        conn.execute(f"CREATE TABLE s_src AS SELECT id FROM ({spread_ids(n)}) s")
        conn.execute("CREATE TABLE s_hlculid AS SELECT id FROM s_src ORDER BY md5(id::text)")
        conn.execute("CREATE TABLE s_uuid AS SELECT id::uuid AS id FROM s_hlculid")
        conn.execute("CREATE TABLE s_text AS SELECT id::text AS id FROM s_hlculid")
        conn.execute("DROP TABLE s_src")
        conn.execute("VACUUM ANALYZE s_hlculid, s_uuid, s_text")
        # Settle the writes of the load, warm every table, then interleave the runs so that
        # background noise spreads over all three types.
        conn.execute("CHECKPOINT")
        types = ["s_hlculid", "s_uuid", "s_text"]
        order = {t: [] for t in types}
        build = {t: [] for t in types}
        sizes = {}
        for t in types:
            timed(conn, f"SELECT id FROM {t} ORDER BY id OFFSET {n - 1}")
        for _ in range(runs):
            for t in types:
                order[t].append(timed(conn, f"SELECT id FROM {t} ORDER BY id OFFSET {n - 1}"))
        for _ in range(runs):
            for t in types:
                t0 = time.perf_counter()
                conn.execute(f"CREATE INDEX {t}_idx ON {t} (id)")
                build[t].append(time.perf_counter() - t0)
                sizes[t] = conn.execute(f"SELECT pg_relation_size('{t}_idx')").fetchone()[0]
                conn.execute(f"DROP INDEX {t}_idx")
        res = {t: (mmm(order[t]), mmm(build[t])) for t in types}
        conn.execute("DROP TABLE s_hlculid, s_uuid, s_text")
    names = {"s_hlculid": "hlculid", "s_uuid": "uuid (same bytes)", "s_text": "text (canonical form, C collation)"}
    report.add(f"\n### 3. Sorting, PostgreSQL {pg}: {n:,} shuffled time-ordered ids, work_mem and "
               f"maintenance_work_mem 1GB, no parallelism, {runs} runs\n")
    h = res["s_hlculid"]
    report.table(["type", "ORDER BY ms (min-max)", "vs hlculid", "CREATE INDEX ms (min-max)", "vs hlculid",
                  "btree MB"],
                 [[names[t], f"{o[0]*1e3:.0f} ({o[1]*1e3:.0f}-{o[2]*1e3:.0f})", f"{o[0]/h[0][0]:.2f}x",
                   f"{b[0]*1e3:.0f} ({b[1]*1e3:.0f}-{b[2]*1e3:.0f})", f"{b[0]/h[1][0]:.2f}x",
                   f"{sizes[t]/2**20:.1f}"] for t, (o, b) in res.items()])
    report.data.setdefault("sorting", {})[pg] = {names[t]: (o[0], b[0]) for t, (o, b) in res.items()}
    if quick:
        return
    u, x = res["s_uuid"], res["s_text"]
    report.check(f"PG{pg}: btree index size within 2% of uuid's on the same data "
                 f"({sizes['s_hlculid'] / sizes['s_uuid']:.4f}x)", abs(sizes["s_hlculid"] / sizes["s_uuid"] - 1) <= 0.02)
    for i, what in ((0, "ORDER BY"), (1, "CREATE INDEX")):
        report.check(f"PG{pg}: {what} within 1.10x of uuid ({h[i][0] / u[i][0]:.2f}x)", h[i][0] <= 1.10 * u[i][0])
        report.check(f"PG{pg}: {what} at least 2x faster than text ({x[i][0] / h[i][0]:.2f}x)", x[i][0] >= 2 * h[i][0])


# --- 4. time ranges and 5. storage ----------------------------------------------------------

def ranges(c, pg, cfg, report, quick):
    n, runs = cfg["range_rows"], cfg["range_runs"]
    t1, t2 = "2026-01-15 12:00:00+00", "2026-01-15 13:00:00+00"
    q_id = f"SELECT count(*), sum(n) FROM ev WHERE id >= hlculid_min('{t1}') AND id < hlculid_min('{t2}')"
    q_ts = f"SELECT count(*), sum(n) FROM ev WHERE ts >= '{t1}' AND ts < '{t2}'"
    out = {}
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("DROP TABLE IF EXISTS ev")
        conn.execute(f"CREATE TABLE ev AS SELECT id, hlculid_ts(id) AS ts, i AS n FROM ({spread_ids(n)}) s")
        conn.execute("VACUUM ANALYZE ev")
        conn.execute("CHECKPOINT")
        expected = conn.execute(q_ts).fetchone()

        def measure(label, query, index_sql, index_name):
            t0 = time.perf_counter()
            conn.execute(index_sql)
            build = time.perf_counter() - t0
            conn.execute("ANALYZE ev")
            size = conn.execute("SELECT pg_relation_size(%s)", (index_name,)).fetchone()[0]
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) " + query))
            top = re.search(r"Buffers: ([^\n]*)", plan)
            buffers = sum(int(x) for x in re.findall(r"shared (?:hit|read)=(\d+)", top.group(1))) if top else 0
            assert conn.execute(query).fetchone() == expected
            lat = mmm([timed(conn, query) for _ in range(runs)])
            out[label] = dict(build=build, size=size, latency=lat, buffers=buffers, plan=plan)

        measure("BRIN on id", q_id, "CREATE INDEX ev_brin ON ev USING brin (id)", "ev_brin")
        measure("btree on ts (separate column)", q_ts, "CREATE INDEX ev_ts ON ev (ts)", "ev_ts")
        measure("btree on id", q_id, "ALTER TABLE ev ADD PRIMARY KEY (id)", "ev_pkey")
        heap = conn.execute("SELECT pg_relation_size('ev')").fetchone()[0]
        conn.execute("DROP TABLE ev")
    report.add(f"\n### 4. A one-hour window on a {n:,}-row event table, PostgreSQL {pg} "
               f"({expected[0]:,} rows in the window; ids over 30 days; {runs} warm runs)\n")
    report.table(["access path", "latency ms (min-max)", "shared buffers", "index MB", "index build s"],
                 [[k, f"{v['latency'][0]*1e3:.2f} ({v['latency'][1]*1e3:.2f}-{v['latency'][2]*1e3:.2f})",
                   v["buffers"], f"{v['size']/2**20:.2f}", f"{v['build']:.1f}"] for k, v in out.items()])
    report.add(f"\nHeap: {heap/2**20:.0f} MB ({heap/n:.1f} bytes/row including the timestamptz and int columns).")
    report.data.setdefault("ranges", {})[pg] = {k: (v["latency"][0], v["size"]) for k, v in out.items()}
    brin, bt = out["BRIN on id"], out["btree on id"]
    used_brin = "Bitmap Index Scan on ev_brin" in brin["plan"]
    if quick:
        assert used_brin, brin["plan"]
        return
    report.check(f"PG{pg}: BRIN index under 1% of the btree's size "
                 f"({brin['size'] / bt['size'] * 100:.3f}%)", brin["size"] < 0.01 * bt["size"])
    report.check(f"PG{pg}: the one-hour window is answered through BRIN", used_brin)


# --- 5. time windows the planner estimates --------------------------------------------------

WINDOWS = {"1 minute": "1 minute", "1 hour": "1 hour", "1 day": "1 day", "7 days": "7 days"}


def plan_rows(conn, query):
    return conn.execute("EXPLAIN (FORMAT JSON) " + query).fetchone()[0][0]["Plan"]["Plan Rows"]


def plan_shape(conn, query):
    """The plan's node types and join types, depth first: what decides its cost, without names."""
    def walk(node):
        yield node["Node Type"] + (f" {node['Join Type']}" if "Join Type" in node else "")
        for child in node.get("Plans", []):
            yield from walk(child)
    return list(walk(conn.execute("EXPLAIN (FORMAT JSON) " + query).fetchone()[0][0]["Plan"]))


def windows(c, pg, cfg, report, quick):
    n, runs = cfg["range_rows"], cfg["range_runs"]
    mid = "2026-01-15 12:00:17+00"
    forms = {
        "id <@ tstzrange (0.3.0)": "id <@ tstzrange('{a}', '{b}')",
        "id, explicit bounds": "id >= hlculid_min('{a}') AND id < hlculid_min('{b}')",
        "timestamptz column": "ts >= '{a}' AND ts < '{b}'",
        "bigint id, explicit bounds": "bid >= hlculid_bigint_min('{a}') AND bid < hlculid_bigint_min('{b}')",
    }
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("DROP TABLE IF EXISTS ev, ev_user, ev_kind")
        conn.execute(f"CREATE TABLE ev AS SELECT id, hlculid_ts(id) AS ts, hlculid_bigint_min(hlculid_ts(id)) + i % 1024 AS bid, "
                     f"i AS n, i % 1000 AS user_id, i % 20 AS kind_id FROM ({spread_ids(n)}) s")
        conn.execute("ALTER TABLE ev ADD PRIMARY KEY (id)")
        conn.execute("CREATE INDEX ev_ts ON ev (ts)")
        conn.execute("CREATE INDEX ev_bid ON ev (bid)")
        conn.execute("CREATE TABLE ev_user AS SELECT i AS id, 'user ' || i AS name FROM generate_series(0, 999) i")
        conn.execute("CREATE TABLE ev_kind AS SELECT i AS id, 'kind ' || i AS name FROM generate_series(0, 19) i")
        conn.execute("ALTER TABLE ev_user ADD PRIMARY KEY (id)")
        conn.execute("ALTER TABLE ev_kind ADD PRIMARY KEY (id)")
        conn.execute("VACUUM ANALYZE ev, ev_user, ev_kind")
        rows, ratios = [], {}
        for label, width in WINDOWS.items():
            a = mid
            b = conn.execute("SELECT (%s::timestamptz + %s::interval)::text", (mid, width)).fetchone()[0]
            actual = conn.execute(f"SELECT count(*) FROM ev WHERE ts >= '{a}' AND ts < '{b}'").fetchone()[0]
            est = {f: plan_rows(conn, "SELECT * FROM ev WHERE " + w.format(a=a, b=b)) for f, w in forms.items()}
            ratios[label] = {f: e / max(actual, 1) for f, e in est.items()}
            rows.append([label, f"{actual:,}"] + [f"{e:,.0f} ({e / max(actual, 1):.2f})" for e in est.values()])
        # execution: the one-hour window, <@ against the explicit bounds, taking turns
        a, b = mid, conn.execute("SELECT (%s::timestamptz + interval '1 hour')::text", (mid,)).fetchone()[0]
        q = {f: "SELECT count(*), sum(n) FROM ev WHERE " + forms[f].format(a=a, b=b)
             for f in ("id <@ tstzrange (0.3.0)", "id, explicit bounds")}
        assert len({conn.execute(x).fetchone() for x in q.values()}) == 1
        times = {f: [] for f in q}
        for _ in range(runs):
            for f, x in q.items():
                times[f].append(timed(conn, x))
        lat = {f: mmm(v) for f, v in times.items()}
        # a three-table join filtered by the window, against the same filter on the timestamptz column
        join = ("SELECT k.name, count(*), count(DISTINCT u.name) FROM ev e JOIN ev_user u ON u.id = e.user_id "
                "JOIN ev_kind k ON k.id = e.kind_id WHERE {w} GROUP BY k.name")
        shapes = {f: plan_shape(conn, join.format(w="e." + forms[f].format(a=a, b=b).replace(" AND ", " AND e.")))
                  for f in ("id <@ tstzrange (0.3.0)", "id, explicit bounds", "timestamptz column")}
        conn.execute("DROP TABLE ev, ev_user, ev_kind")
    report.add(f"\n### 5. Row estimates of time windows, PostgreSQL {pg}: {n:,} rows over 30 days, ANALYZEd; "
               "estimated rows (estimate/actual)\n")
    report.table(["window", "actual rows"] + list(forms), rows)
    report.add(f"\nThe one-hour window, {runs} runs each, taking turns: "
               + ", ".join(f"{f} {v[0]*1e3:.2f} ms ({v[1]*1e3:.2f}-{v[2]*1e3:.2f})" for f, v in lat.items()) + ".")
    report.add("\nPlan of a three-table join (events, users, kinds) filtered by the one-hour window: "
               + "; ".join(f"{f}: {' > '.join(sh)}" for f, sh in shapes.items()) + ".")
    report.data.setdefault("windows", {})[pg] = ratios
    if quick:
        return
    for label, r in ratios.items():
        x = r["id <@ tstzrange (0.3.0)"]
        report.check(f"PG{pg}: the {label} window through <@ is estimated within 2x ({x:.2f})", 0.5 <= x <= 2)
    speed = lat["id <@ tstzrange (0.3.0)"][0] / lat["id, explicit bounds"][0]
    report.check(f"PG{pg}: the one-hour window through <@ runs within 1.1x of the explicit bounds ({speed:.2f}x)",
                 speed <= 1.1)
    report.check(f"PG{pg}: a three-table join filtered by the window through <@ has the plan shape of the same "
                 f"join filtered on a timestamptz column", shapes["id <@ tstzrange (0.3.0)"] == shapes["timestamptz column"])


# --- 6. text and binary I/O -------------------------------------------------------------------

def textio(c, pg, cfg, report, quick):
    """What clients, pg_dump and COPY pay per id: the type's output and input functions alone
    (count over a cast), and whole COPY TO / COPY FROM in text and binary. The uuid table holds
    the same bytes, so the text files are identical."""
    n, runs = cfg["io_rows"], cfg["io_runs"]
    import pgcluster  # (imported where used, as elsewhere in this file)

    files = c.dir / "io"
    pgcluster.as_server("mkdir", "-p", "-m", "777", "--", str(files))
    kinds = {"hlculid": "io_h", "uuid": "io_u"}
    work = {
        "output function: count(id::text)": lambda t, _k: f"SELECT count(id::text) FROM {t}",
        "input function: count(text::type)": lambda _t, k: f"SELECT count(id::{k}) FROM io_x",
        "COPY TO text": lambda t, _k: f"COPY {t} TO '/dev/null'",
        "COPY TO binary": lambda t, _k: f"COPY {t} TO '/dev/null' (FORMAT binary)",
        "COPY FROM text": lambda t, _k: f"COPY {t}_in FROM '{files}/ids.txt'",
        "COPY FROM binary": lambda t, _k: f"COPY {t}_in FROM '{files}/{t}.bin' (FORMAT binary)",
    }
    times = {(w, k): [] for w in work for k in kinds}
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("DROP TABLE IF EXISTS io_h, io_u, io_x, io_h_in, io_u_in")
        conn.execute(f"COPY (SELECT id FROM ({spread_ids(n)}) s) TO '{files}/ids.txt'")
        # Loaded frozen (hint bits and visibility map set, as after a VACUUM) by COPY FREEZE,
        # which needs the table created in the same transaction.
        for t, ty in (("io_h", "hlculid"), ("io_u", "uuid"), ("io_x", "text")):
            with conn.transaction():
                conn.execute(f"CREATE TABLE {t} (id {ty})")
                conn.execute(f"COPY {t} FROM '{files}/ids.txt' (FREEZE)")
        conn.execute("CREATE UNLOGGED TABLE io_h_in (id hlculid)")
        conn.execute("CREATE UNLOGGED TABLE io_u_in (id uuid)")
        for t in kinds.values():
            conn.execute(f"COPY {t} TO '{files}/{t}.bin' (FORMAT binary)")
        conn.execute("CHECKPOINT")
        for _ in range(runs):
            for w, q in work.items():
                for k, t in kinds.items():
                    conn.execute(f"TRUNCATE {t}_in")
                    t0 = time.perf_counter()
                    cur = conn.execute(q(t, k))
                    if not w.startswith("COPY"):
                        cur.fetchall()
                    times[(w, k)].append(time.perf_counter() - t0)
        got = conn.execute("SELECT (SELECT count(*) FROM io_h_in), (SELECT count(*) FROM io_u_in), "
                           "(SELECT count(*) FROM io_h_in JOIN io_h USING (id))").fetchone()
        assert got == (n, n, n), got
        conn.execute("DROP TABLE io_h, io_u, io_x, io_h_in, io_u_in")
    import shutil
    shutil.rmtree(files, ignore_errors=True)
    med = {key: mmm(v) for key, v in times.items()}
    report.add(f"\n### 6. Text and binary I/O, PostgreSQL {pg}: {n:,} ids, the uuid table holding the same bytes; "
               f"COPY TO /dev/null and COPY FROM a server file into an unlogged table; {runs} interleaved runs\n")
    rows = []
    for w in work:
        h, u = med[(w, "hlculid")], med[(w, "uuid")]
        rows.append([w, f"{h[0]*1e3:.0f} ({h[1]*1e3:.0f}-{h[2]*1e3:.0f})", f"{u[0]*1e3:.0f} ({u[1]*1e3:.0f}-{u[2]*1e3:.0f})",
                     f"{h[0] / u[0]:.2f}x"])
    report.table(["work", "hlculid ms (min-max)", "uuid ms (min-max)", "hlculid vs uuid"], rows)
    report.data.setdefault("textio", {})[pg] = {w: (med[(w, "hlculid")][0], med[(w, "uuid")][0]) for w in work}
    if quick:
        return
    ratio = {w: med[(w, "hlculid")][0] / med[(w, "uuid")][0] for w in work}
    for w in ("output function: count(id::text)", "COPY TO text"):
        report.check(f"PG{pg}: {w} within 1.05x of uuid's time ({ratio[w]:.2f}x)", ratio[w] <= 1.05)
    for w in ("input function: count(text::type)", "COPY FROM text"):
        report.check(f"PG{pg}: {w} no slower than uuid ({ratio[w]:.2f}x)", ratio[w] <= 1.0)



# --- 6b. decoding and 6c. comparing -----------------------------------------------------------

def decode(c, pg, cfg, report, quick):
    """hlculid_decode / hlculid_bigint_decode against the field extractors they bundle, on the
    same rows, interleaved, net of the scan (count(*)). Target: at most 2x the extractors' sum
    called the same way: in the select list, and in FROM (LATERAL), where PostgreSQL runs any
    non-set-returning function through a FunctionScan that builds a tuplestore per outer row, a
    fixed cost per call that no function of this signature avoids (shown by one extractor in
    FROM, and by the subquery form, which the planner pulls up)."""
    n, runs = cfg["decode_rows"], cfg["decode_runs"]
    ext = ("hlculid_ts", "hlculid_counter", "hlculid_publisher", "hlculid_random")
    bext = ("hlculid_bigint_ts", "hlculid_bigint_counter", "hlculid_bigint_publisher")
    # (label, query, what it is compared with)
    work = [
        ("scan", "SELECT count(*) FROM dec", None),
        ("extractors, select list", "SELECT " + ", ".join(f"count({f}(id))" for f in ext) + " FROM dec", None),
        ("decode, select list: count((hlculid_decode(id)).ts)", "SELECT count((hlculid_decode(id)).ts) FROM dec",
         "extractors, select list"),
        ("decode, select list: count(hlculid_decode(id))", "SELECT count(hlculid_decode(id)) FROM dec",
         "extractors, select list"),
        ("extractors, FROM: LATERAL each", "SELECT count(e0), count(e1), count(e2), count(e3) FROM dec, "
         + ", ".join(f"LATERAL {f}(id) e{i}" for i, f in enumerate(ext)), None),
        ("one extractor, FROM: LATERAL hlculid_ts(id)", "SELECT count(e) FROM dec, LATERAL hlculid_ts(id) e", None),
        ("decode, FROM: LATERAL hlculid_decode(id) d",
         "SELECT count(d.ts), count(d.counter), count(d.publisher), count(d.random) FROM dec, LATERAL hlculid_decode(id) d",
         "extractors, FROM: LATERAL each"),
        # (pulled up by the planner, and .* calls the function once per field: shown, no target)
        ("decode, FROM: LATERAL (SELECT (hlculid_decode(id)).*) d",
         "SELECT count(d.ts), count(d.counter), count(d.publisher), count(d.random) FROM dec, "
         "LATERAL (SELECT (hlculid_decode(id)).*) d", "extractors, select list", False),
        ("bigint scan", "SELECT count(*) FROM dec_b", None),
        ("bigint extractors, select list", "SELECT " + ", ".join(f"count({f}(b))" for f in bext) + " FROM dec_b", None),
        ("bigint decode, select list: count((hlculid_bigint_decode(b)).ts)",
         "SELECT count((hlculid_bigint_decode(b)).ts) FROM dec_b", "bigint extractors, select list"),
        ("bigint extractors, FROM: LATERAL each", "SELECT count(e0), count(e1), count(e2) FROM dec_b, "
         + ", ".join(f"LATERAL {f}(b) e{i}" for i, f in enumerate(bext)), None),
        ("bigint decode, FROM: LATERAL hlculid_bigint_decode(b) d",
         "SELECT count(d.ts), count(d.counter), count(d.publisher) FROM dec_b, LATERAL hlculid_bigint_decode(b) d",
         "bigint extractors, FROM: LATERAL each"),
    ]
    work = [w if len(w) == 4 else (*w, True) for w in work]
    times = {w: [] for w, *_ in work}
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("DROP TABLE IF EXISTS dec, dec_b")
        conn.execute(f"CREATE TABLE dec AS SELECT id FROM ({spread_ids(n)}) s")
        conn.execute("CREATE TABLE dec_b AS SELECT hlculid_to_bigint(hlculid_from_parts(hlculid_ts(id), "
                     "hlculid_counter(id) % 2048, 1, 0)) AS b FROM dec")
        conn.execute("VACUUM (FREEZE, ANALYZE) dec, dec_b")
        for _, q, *_ in work:
            timed(conn, q)
        for _ in range(runs):
            for w, q, *_ in work:
                times[w].append(timed(conn, q))
        conn.execute("DROP TABLE dec, dec_b")
    med = {w: mmm(v) for w, v in times.items()}
    report.add(f"\n### 6b. Decoding, PostgreSQL {pg}: {n:,} ids, hlculid_decode against the extractors it "
               f"bundles, called the same way, {runs} interleaved runs; net = minus the scan's count(*)\n")
    rows, ratios = [], {}
    for w, _, base, target in work:
        scan = med["bigint scan" if w.startswith("bigint") else "scan"][0]
        m = med[w]
        net = m[0] - scan
        ratio = ""
        if base:
            r = net / (med[base][0] - scan)
            if target:
                ratios[w] = (r, base)
            ratio = f"{r:.2f}x {base}"
        rows.append([w, f"{m[0]*1e3:.0f} ({m[1]*1e3:.0f}-{m[2]*1e3:.0f})", f"{net / n * 1e9:.0f}", ratio])
    report.table(["query", "ms (min-max)", "ns/row net of scan", "net vs"], rows)
    report.data.setdefault("decode", {})[pg] = {w: med[w][0] for w in times}
    if quick:
        return
    for w, (r, base) in ratios.items():
        report.check(f"PG{pg}: {w} at most 2x {base} (net of the scan: {r:.2f}x)", r <= 2.0)


def masks(c, pg, cfg, report, quick):
    """Masks (docs/masks.md): a lookup by masked id (hlculid_unmask, then the primary key) against a
    lookup by id and by a gen_random_uuid() key, each a nested loop of index probes over the same
    number of keys, interleaved runs; and a mask per row against hlculid_generate() and
    gen_random_uuid() per row. Target: a lookup by masked id within 1.2x one by id."""
    n, k, runs = cfg["mask_rows"], cfg["mask_lookups"], cfg["mask_runs"]
    work = [
        ("lookup by id", "SELECT count(*) FROM mk_keys q JOIN mk ON mk.id = q.id"),
        ("lookup by masked id", "SELECT count(*) FROM mk_keys q JOIN mk ON mk.id = hlculid_unmask(q.masked)"),
        ("lookup by gen_random_uuid() key", "SELECT count(*) FROM mk_ukeys q JOIN mku ON mku.u = q.u"),
        ("hlculid_mask(id) per row", "SELECT count(hlculid_mask(id)) FROM mk"),
        ("hlculid_unmask(masked) per row", "SELECT count(hlculid_unmask(masked)) FROM mk_keys"),
        ("hlculid_generate() per row", f"SELECT count(hlculid_generate()) FROM generate_series(1, {n})"),
        ("gen_random_uuid() per row", f"SELECT count(gen_random_uuid()) FROM generate_series(1, {n})"),
        ("scan", "SELECT count(*) FROM mk"),
    ]
    times = {w: [] for w, _ in work}
    with c.connect() as conn:
        for setting in ("max_parallel_workers_per_gather = 0", "enable_hashjoin = off", "enable_mergejoin = off"):
            conn.execute(f"SET {setting}")
        conn.execute("DROP TABLE IF EXISTS mk, mk_keys, mku, mk_ukeys")
        conn.execute(f"CREATE TABLE mk AS SELECT id FROM ({spread_ids(n)}) s")
        conn.execute("ALTER TABLE mk ADD PRIMARY KEY (id)")
        conn.execute(f"CREATE TABLE mk_keys AS SELECT id, hlculid_mask(id) AS masked FROM mk ORDER BY random() LIMIT {k}")
        conn.execute(f"CREATE TABLE mku AS SELECT gen_random_uuid() AS u FROM generate_series(1, {n})")
        conn.execute("ALTER TABLE mku ADD PRIMARY KEY (u)")
        conn.execute(f"CREATE TABLE mk_ukeys AS SELECT u FROM mku ORDER BY random() LIMIT {k}")
        conn.execute("VACUUM (FREEZE, ANALYZE) mk, mk_keys, mku, mk_ukeys")
        assert conn.execute(work[1][1]).fetchone()[0] == k, "a masked key missed its row"
        for _, q in work:
            timed(conn, q)
        for _ in range(runs):
            for w, q in work:
                times[w].append(timed(conn, q))
        conn.execute("DROP TABLE mk, mk_keys, mku, mk_ukeys")
    med = {w: mmm(v) for w, v in times.items()}
    report.add(f"\n### Masks, PostgreSQL {pg}: {n:,} rows, {k:,} lookups (nested loops of index probes), "
               f"{runs} interleaved runs\n")
    base = med["lookup by id"][0]
    rows = []
    for w, _ in work:
        m = med[w]
        per = k if w.startswith("lookup") or "unmask" in w else n
        rows.append([w, f"{m[0]*1e3:.0f} ({m[1]*1e3:.0f}-{m[2]*1e3:.0f})", f"{m[0] / per * 1e9:.0f}",
                     f"{m[0] / base:.2f}x" if w.startswith("lookup") else ""])
    report.table(["query", "ms (min-max)", "ns per key or row", "vs lookup by id"], rows)
    report.data.setdefault("masks", {})[pg] = {w: med[w][0] for w in times}
    if quick:
        return
    r = med["lookup by masked id"][0] / base
    report.check(f"PG{pg}: a lookup by masked id within 1.2x a lookup by id ({r:.2f}x)", r <= 1.2)


def compare(c, pg, cfg, report, quick):
    """The comparison functions against a previous build's (--baseline, scripts/bench-baseline.sh)
    on a second server of the same major, taking turns on the same data: ORDER BY and CREATE
    INDEX (btree sortsupport, which never called hlculid_cmp), and what calls hlculid_cmp and the
    operators' functions: index probes (btree descent), btree inserts, a seq scan filter with <
    and a hash join on =. Without --baseline, this build's figures alone."""
    import pgcluster

    n, runs = cfg["compare_rows"], max(cfg["compare_runs"], 1 if quick else 3)
    servers = {"this build": c}
    old = None
    if cfg.get("baseline"):
        old = pgcluster.Cluster("bench-baseline", major=cfg["baseline"],
                                conf=["hlculid.publisher_id = 1", "shared_buffers = 128MB", "synchronous_commit = off",
                                      "autovacuum = off", "max_connections = 120"])
    try:
        if old:
            old.start()
            old.sql("CREATE EXTENSION hlculid")
            servers[old.one("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'")] = old
        work = {
            "ORDER BY (sortsupport)": f"SELECT id FROM cmp_t ORDER BY id OFFSET {n - 1}",
            "CREATE INDEX (sortsupport)": "CREATE INDEX cmp_t_idx ON cmp_t (id); DROP INDEX cmp_t_idx",
            "index probes (hlculid_cmp), nested loop": "SELECT count(*) FROM cmp_probe p JOIN cmp_i i ON i.id = p.id",
            "btree inserts (hlculid_cmp)": "TRUNCATE cmp_ins; INSERT INTO cmp_ins SELECT id FROM cmp_t",
            "seq scan filter id < x (hlculid_lt)": "SELECT count(*) FROM cmp_t WHERE id < (SELECT id FROM cmp_mid)",
            "seq scan filter hlculid_cmp(id, x) < 0": "SELECT count(*) FROM cmp_t WHERE hlculid_cmp(id, (SELECT id FROM cmp_mid)) < 0",
            "hash join on = (hlculid_eq)": "SELECT count(*) FROM cmp_probe p JOIN cmp_t t ON t.id = p.id",
        }
        times = {(w, s): [] for w in work for s in servers}
        conns = {}
        for name, server in servers.items():
            conn = server.connect()
            conns[name] = conn
            for setting in ("work_mem = '1GB'", "maintenance_work_mem = '1GB'", "max_parallel_workers_per_gather = 0",
                            "max_parallel_maintenance_workers = 0"):
                conn.execute(f"SET {setting}")
            conn.execute("DROP TABLE IF EXISTS cmp_t, cmp_i, cmp_probe, cmp_ins, cmp_mid")
            conn.execute(f"CREATE TABLE cmp_t AS SELECT id FROM ({spread_ids(n)}) s ORDER BY md5(i::text)")
            conn.execute("CREATE TABLE cmp_i AS SELECT id FROM cmp_t")
            conn.execute("CREATE INDEX ON cmp_i (id)")
            conn.execute(f"CREATE TABLE cmp_probe AS SELECT id FROM cmp_t LIMIT {max(n // 4, 1)}")
            conn.execute("CREATE UNLOGGED TABLE cmp_ins (id hlculid PRIMARY KEY)")
            conn.execute(f"CREATE TABLE cmp_mid AS SELECT id FROM cmp_t ORDER BY id OFFSET {n // 2} LIMIT 1")
            conn.execute("VACUUM (FREEZE, ANALYZE) cmp_t, cmp_i, cmp_probe, cmp_mid")
            conn.execute("CHECKPOINT")
        for _ in range(runs + 1):  # the first round warms the caches and is not counted
            for w, q in work.items():
                for name, conn in conns.items():
                    for setting in ("enable_hashjoin", "enable_mergejoin", "enable_nestloop"):
                        conn.execute(f"RESET {setting}")
                    if "nested loop" in w:
                        conn.execute("SET enable_hashjoin = off")
                        conn.execute("SET enable_mergejoin = off")
                    if "hash join" in w:
                        conn.execute("SET enable_nestloop = off")
                        conn.execute("SET enable_mergejoin = off")
                    t0 = time.perf_counter()
                    for part in q.split("; "):
                        conn.execute(part)
                    times[(w, name)].append(time.perf_counter() - t0)
        for conn in conns.values():
            conn.execute("DROP TABLE cmp_t, cmp_i, cmp_probe, cmp_ins, cmp_mid")
            conn.close()
    finally:
        if old:
            old.stop("immediate")
    med = {k: mmm(v[1:]) for k, v in times.items()}
    names = list(servers)
    report.add(f"\n### 6c. Comparing, PostgreSQL {pg}: {n:,} shuffled time-ordered ids"
               f"{', against ' + names[1] + ' on a second server, taking turns' if len(names) > 1 else ''}; "
               f"work_mem 1GB, no parallelism, medians of {runs}\n")
    rows = []
    for w in work:
        row = [w] + [f"{med[(w, s)][0]*1e3:.0f} ({med[(w, s)][1]*1e3:.0f}-{med[(w, s)][2]*1e3:.0f})" for s in names]
        if len(names) > 1:
            row.append(f"{med[(w, names[0])][0] / med[(w, names[1])][0]:.2f}x")
        rows.append(row)
    report.table(["work"] + [f"{s} ms (min-max)" for s in names] + (["ratio"] if len(names) > 1 else []), rows)
    report.data.setdefault("compare", {})[pg] = {w: {s: med[(w, s)][0] for s in names} for w in work}


# --- 7. the plain-SQL companion (managed servers) ----------------------------------------------

COMPANION_SQL = Path(__file__).resolve().parent.parent / "sql" / "hlculid_uuid.sql"


def companion(c, pg, cfg, report, quick):
    """What reading ids costs on a server without the extension: sql/hlculid_uuid.sql's
    functions on a uuid column (a database of the same server where the companion is installed)
    against the extension's on the same ids, in an hlculid column and in a uuid column (cast to
    hlculid: the cast is assignment-only since 0.4.0). ns per row, net of count(*) over the same
    table."""
    import psycopg

    n, runs = cfg["companion_rows"], cfg["companion_runs"]
    import pgcluster  # (imported where used, as elsewhere in this file)

    files = c.dir / "companion"
    pgcluster.as_server("mkdir", "-p", "-m", "777", "--", str(files))
    other = psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname="postgres", autocommit=True)
    other.execute("DROP DATABASE IF EXISTS bench_companion")
    other.execute("CREATE DATABASE bench_companion")
    other.close()
    work = {"count(*) baseline": "count(*)", "hlculid_ts(id)": "count(hlculid_ts({x}))",
            "hlculid_decode(id)": "count(hlculid_decode({x}))"}
    # (database, table, the id as the functions take it)
    places = {"extension, hlculid column": ("ext", "cmp_h", "id"),
              "extension, uuid column": ("ext", "cmp_u", "id::hlculid"),
              "companion, uuid column": ("comp", "cmp_u", "id")}
    times = {(w, p): [] for w in work for p in places}
    with c.connect() as ext, psycopg.connect(host=str(c.dir), port=c.port, user="postgres",
                                             dbname="bench_companion", autocommit=True) as comp:
        conns = {"ext": ext, "comp": comp}
        for conn in conns.values():
            conn.execute("SET max_parallel_workers_per_gather = 0")
            conn.execute("SET jit = off")
        ext.execute("DROP TABLE IF EXISTS cmp_h, cmp_u")
        ext.execute(f"CREATE TABLE cmp_h AS SELECT id FROM ({spread_ids(n)}) s")
        ext.execute("CREATE TABLE cmp_u AS SELECT id::uuid AS id FROM cmp_h")
        ext.execute(f"COPY cmp_u TO '{files}/ids.txt'")
        comp.execute("CREATE SCHEMA hlc")
        comp.execute("SET search_path = hlc")
        comp.execute(COMPANION_SQL.read_text())
        comp.execute("SET search_path = public, hlc")
        comp.execute("CREATE TABLE cmp_u (id uuid)")
        comp.execute(f"COPY cmp_u FROM '{files}/ids.txt'")
        for conn in conns.values():
            conn.execute("VACUUM (FREEZE, ANALYZE) cmp_u")
        ext.execute("VACUUM (FREEZE, ANALYZE) cmp_h")
        # the same answers (the first 10,000 ids), then warm runs taking turns
        check = ("SELECT md5(string_agg(hlculid_ts({x})::text || hlculid_decode({x})::text, ',' ORDER BY id)) "
                 "FROM (SELECT id FROM {t} ORDER BY id LIMIT 10000) s")
        assert len({conns[d].execute(check.format(t=t, x=x)).fetchone() for d, t, x in places.values()}) == 1
        for (d, t, x) in places.values():
            timed(conns[d], f"SELECT count(hlculid_ts({x})) FROM {t}")
        for _ in range(runs):
            for w, expr in work.items():
                for p, (d, t, x) in places.items():
                    times[(w, p)].append(timed(conns[d], f"SELECT {expr.format(x=x)} FROM {t}"))
        ext.execute("DROP TABLE cmp_h, cmp_u")
    other = psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname="postgres", autocommit=True)
    other.execute("DROP DATABASE bench_companion")
    other.close()
    import shutil
    shutil.rmtree(files, ignore_errors=True)
    med = {k: mmm(v) for k, v in times.items()}
    net = {(w, p): (med[(w, p)][0] - med[("count(*) baseline", p)][0]) / n * 1e9
           for w in work if w != "count(*) baseline" for p in places}
    report.add(f"\n### 7. Reading ids without the extension, PostgreSQL {pg}: sql/hlculid_uuid.sql on a uuid "
               f"column against the extension's functions, {n:,} ids, `SELECT count(f(id))`, no parallelism, "
               f"{runs} interleaved run{'s' if runs > 1 else ''}; ns/row net of count(*) (median ms)\n")
    def ratio(w):  # a few thousand rows (--quick) can leave the native cost below the noise
        native = net[(w, "extension, hlculid column")]
        return f"{net[(w, 'companion, uuid column')] / native:.1f}x" if native > 0 else "-"

    report.table(["function"] + list(places) + ["companion vs extension (hlculid column)"],
                 [[w] + [f"{net[(w, p)]:,.0f} ({med[(w, p)][0]*1e3:.0f} ms)" for p in places] + [ratio(w)]
                  for w in work if w != "count(*) baseline"])
    report.data.setdefault("companion", {})[pg] = net


# --- 8. client generators (no server) ---------------------------------------------------------

def clients(_c, _pg, cfg, report, quick):
    """What a publisher pays per id it makes itself: the Python and Node Generators (clients/)
    against their language's own uuid generators, each in one process, the contenders taking
    turns within every run. Python here (this interpreter); Node through bench/client_generators.js."""
    import json
    import uuid

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python" / "src"))
    from hlculid import Generator, Mask

    runs, budget = cfg["client_runs"], cfg["client_ms"]
    py = {"hlculid Generator.generate()": Generator(12).generate, "uuid.uuid4()": uuid.uuid4}
    mask, some_id = Mask(os.urandom(16)), Generator(12).generate()
    masked = mask.mask(some_id)
    py["hlculid Mask.mask(id)"] = lambda: mask.mask(some_id)
    py["hlculid Mask.unmask(masked)"] = lambda: mask.unmask(masked)
    if hasattr(uuid, "uuid7"):  # Python 3.14
        py["uuid.uuid7()"] = uuid.uuid7

    def per_id(f, n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            f()
        return (time.perf_counter_ns() - t0) / n

    sizes = {}
    for k, f in py.items():  # warm up (the random pool), and as many ids a run as take about `budget` ms
        per_id(f, 2_000)
        sizes[k] = max(5_000, round(budget * 1e6 / per_id(f, 20_000)))
    ns = {k: [] for k in py}
    for _ in range(runs):
        for k, f in py.items():
            ns[k].append(per_id(f, sizes[k]))
    r = subprocess.run(["node", str(Path(__file__).resolve().parent / "client_generators.js"), str(budget), str(runs)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"bench/client_generators.js failed:\n{r.stderr}")
    node = json.loads(r.stdout)
    med = {("Python", k): mmm(v) for k, v in ns.items()}
    med.update({("Node", k): mmm(v) for k, v in node["ns"].items()})
    base = {"Python": med[("Python", "uuid.uuid4()")][0], "Node": med[("Node", "crypto.randomUUID()")][0]}
    gen = {lang: med[(lang, "hlculid Generator.generate()")][0] for lang in ("Python", "Node")}
    report.add(f"\n## Client generators\n\n### 8. Client generators: ids made in the application, one thread, "
               f"Python {platform.python_version()} and Node {node['node']}; {runs} interleaved runs of about "
               f"{budget} ms per contender; ns/id, median (min-max)\n")
    report.table(["language", "generator", "ns/id", "vs the language's uuid v4", "vs Generator.generate()"],
                 [[lang, k, f"{m[0]:,.0f} ({m[1]:,.0f}-{m[2]:,.0f})", f"{m[0] / base[lang]:.2f}x",
                   f"{m[0] / gen[lang]:.1f}x"] for (lang, k), m in med.items()])
    report.data["clients"] = {f"{lang}: {k}": m[0] for (lang, k), m in med.items()}
    if quick:
        return
    for lang, peer in (("Python", "uuid.uuid4()"), ("Node", "crypto.randomUUID()")):
        x = med[(lang, "hlculid Generator.generate()")][0] / base[lang]
        report.check(f"the {lang} Generator.generate() is within 2x of {peer} ({x:.2f}x)", x <= 2)


# --- the horizon (0.4.0) ---------------------------------------------------------------------

def horizon(c, pg, cfg, report, quick):
    """What the horizon costs and what it buys: generation, which now holds a slot once per
    transaction; single-row autocommit inserts, which pay that once per id; how soon a reader
    sees a committed row, below the horizon against a 1-second cut-off; and hlculid_horizon()
    calls a second from 100 connections."""
    n, runs = cfg["horizon_rows"], cfg["horizon_runs"]
    q = "SELECT count({}) FROM generate_series(1, %s)"
    fns = {"count(*) baseline": "*", "gen_random_uuid()": "gen_random_uuid()",
           "hlculid_generate()": "hlculid_generate()"}
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        for f in fns.values():
            timed(conn, q.format(f), (min(n, 100_000),))
        times = {k: [] for k in fns}
        # in autocommit: each statement is a transaction that takes its slot once
        for _ in range(runs):
            for name, f in fns.items():
                times[name].append(timed(conn, q.format(f), (n,)))
        # inside a transaction that already holds its slot: the fast path's one extra branch only
        conn.execute("BEGIN")
        conn.execute("SELECT hlculid_generate()")
        times["hlculid_generate(), slot held"] = [timed(conn, q.format("hlculid_generate()"), (n,)) for _ in range(runs)]
        conn.execute("COMMIT")
    med = {k: mmm(v) for k, v in times.items()}
    base, peer = med["count(*) baseline"][0], med["gen_random_uuid()"][0] - med["count(*) baseline"][0]
    report.add(f"\n### Horizon, PostgreSQL {pg}: generation, `SELECT count(f()) FROM generate_series(1, {n:,})`, {runs} runs\n")
    report.table(["function", "median ms", "ns/id net of count(*)", "vs gen_random_uuid()"],
                 [[k, f"{m*1e3:.0f}", f"{(m - base) / n * 1e9:.0f}", f"{(m - base) / peer:.2f}x"]
                  for k, (m, _, _) in med.items() if not k.startswith("count(*)")])
    # single-row autocommit inserts: one slot store and one release per id
    secs = max(cfg["pgbench_seconds"], 1)
    rows = []
    with c.connect() as conn:
        conn.execute("DROP TABLE IF EXISTS hz_h, hz_u")
        conn.execute("CREATE TABLE hz_h (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
        conn.execute("CREATE TABLE hz_u (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n int)")
    for clients in (1, 8):
        tps = {t: mmm([pgbench(c, f"INSERT INTO {t} (n) VALUES (1);\n", clients, secs)[0] for _ in range(runs)])[0]
               for t in ("hz_h", "hz_u")}
        rows.append([clients, f"{tps['hz_h']:.0f}", f"{tps['hz_u']:.0f}", f"{tps['hz_h'] / tps['hz_u']:.2f}x"])
    report.add("\nSingle-row autocommit inserts (pgbench, rows/s):\n")
    report.table(["clients", "hlculid", "gen_random_uuid()", "hlculid / uuid"], rows)
    # reader lag under 8 writers: commit -> readable, horizon reader against a 1 s cut-off
    with c.connect() as conn:
        conn.execute("DROP TABLE IF EXISTS hz_lag")
        conn.execute("CREATE TABLE hz_lag (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    committed, seen = {}, {"horizon": {}, "1 s cut-off": {}}
    stop = threading.Event()

    def writer(w):
        import random
        rnd = random.Random(w)
        with c.connect(autocommit=False) as conn:
            while not stop.is_set():
                i = conn.execute("INSERT INTO hz_lag (n) VALUES (%s) RETURNING id::text", (w,)).fetchone()[0]
                time.sleep(rnd.random() * 0.01)
                conn.commit()
                committed[i] = time.perf_counter()

    def reader(kind):
        last = "000000000000-0000-0000-000000000000"
        with c.connect() as conn:
            while not stop.is_set():
                if kind == "horizon":
                    h = conn.execute("SELECT hlculid_horizon()::text").fetchone()[0]
                    got = conn.execute("SELECT id::text FROM hz_lag WHERE id > %s::hlculid AND id < %s::hlculid "
                                       "ORDER BY id", (last, h)).fetchall()
                else:
                    got = conn.execute("SELECT id::text FROM hz_lag WHERE id > %s::hlculid "
                                       "AND id < hlculid_min(now() - interval '1 second') ORDER BY id", (last,)).fetchall()
                t = time.perf_counter()
                for (i,) in got:
                    seen[kind][i] = t
                if got:
                    last = got[-1][0]
                time.sleep(0.005)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    threads += [threading.Thread(target=reader, args=(k,)) for k in seen]
    for t in threads:
        t.start()
    time.sleep(cfg["lag_seconds"])
    stop.set()
    for t in threads:
        t.join()
    rows = []
    for kind, got in seen.items():
        lags = sorted((got[i] - committed[i]) * 1e3 for i in got if i in committed)
        if lags:
            p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
            rows.append([kind, len(lags), f"{statistics.median(lags):.1f}", f"{p99:.1f}",
                         len([i for i in committed if i not in got])])
    report.add(f"\nReader lag, commit to readable, 8 writers for {cfg['lag_seconds']} s (ms; readers poll every 5 ms):\n")
    report.table(["reader", "rows read", "median ms", "p99 ms", "committed, not (yet) read"], rows)
    # hlculid_horizon() from 100 connections
    tps, _ = pgbench(c, "SELECT hlculid_horizon();\n", 100, cfg["horizon_seconds"])
    report.add(f"\n`hlculid_horizon()` from 100 connections: {tps:,.0f} calls/s "
               f"({1e6 / tps * 100:.0f} us a call per connection).")
    if cfg.get("baseline"):
        against_baseline(c, pg, cfg, report)


def against_baseline(c, pg, cfg, report):
    """This build's generation against a previous release's (scripts/bench-baseline.sh) on a
    second server of the same major, taking turns: the horizon's slot is the difference."""
    import pgcluster

    n, runs = cfg["horizon_rows"], max(cfg["horizon_runs"], 3)
    old = pgcluster.Cluster("bench-baseline", major=cfg["baseline"],
                            conf=["hlculid.publisher_id = 1", "shared_buffers = 128MB", "synchronous_commit = off",
                                  "autovacuum = off", "max_connections = 120"])
    try:
        old.start()
        old.sql("CREATE EXTENSION hlculid")
        version = old.one("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'")
        q = "SELECT count({}) FROM generate_series(1, %s)"
        times = {}
        with c.connect() as new_conn, old.connect() as old_conn:
            conns = {"this build": new_conn, version: old_conn}
            for conn in conns.values():
                conn.execute("SET max_parallel_workers_per_gather = 0")
                for f in ("*", "hlculid_generate()"):
                    timed(conn, q.format(f), (min(n, 100_000),))
            for _ in range(runs):
                for name, conn in conns.items():
                    for f in ("*", "hlculid_generate()"):
                        times.setdefault((name, f), []).append(timed(conn, q.format(f), (n,)))
        net = {name: (mmm(times[(name, "hlculid_generate()")])[0] - mmm(times[(name, "*")])[0]) / n * 1e9
               for name in ("this build", version)}
        rows = []
        for clients in (1, 8):
            tps = {}
            for name, server in (("this build", c), (version, old)):
                with server.connect() as conn:
                    conn.execute("DROP TABLE IF EXISTS hz_base")
                    conn.execute("CREATE TABLE hz_base (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
            for name, server in (("this build", c), (version, old)) * runs:
                tps.setdefault(name, []).append(pgbench(server, "INSERT INTO hz_base (n) VALUES (1);\n", clients,
                                                        max(cfg["pgbench_seconds"], 1))[0])
            rows.append([clients, f"{mmm(tps['this build'])[0]:.0f}", f"{mmm(tps[version])[0]:.0f}",
                         f"{mmm(tps['this build'])[0] / mmm(tps[version])[0]:.2f}x"])
        report.add(f"\nAgainst hlculid {version} on a second PostgreSQL {pg} server, taking turns, medians of {runs}: "
                   f"`hlculid_generate()` {net['this build']:.0f} ns/id against {net[version]:.0f} "
                   f"({net['this build'] / net[version]:.2f}x, net of count(*)); single-row autocommit inserts (rows/s):\n")
        report.table(["clients", "this build", version, "ratio"], rows)
        report.check(f"hlculid_generate() within 5% of {version}'s (same run, PostgreSQL {pg})",
                     net["this build"] <= 1.05 * net[version])
    finally:
        old.stop("immediate")


# --- subscriptions (0.6.0): bench/subscriptions.py ------------------------------------------------

def subscriptions(_c, pg, cfg, report, quick):
    """hlculid's consumer against PgQ and logical decoding, on a server of its own (wal_level =
    logical): bench/subscriptions.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import subscriptions as subs
    subs.subscriptions(pg, cfg, report, quick)


def charts(report, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []

    def bars(name, title, ylabel, series, spread=None):
        fig, ax = plt.subplots(figsize=(8, 4))
        labels = list(dict.fromkeys(k for s in series.values() for k in s))
        width = 0.8 / max(len(series), 1)
        for i, (sname, values) in enumerate(series.items()):
            xs = [j + i * width for j in range(len(labels))]
            ys = [values.get(k, 0) for k in labels]
            err = None
            if spread:  # min-max whiskers
                lo_hi = [spread[sname].get(k, (y, y)) for k, y in zip(labels, ys)]
                err = [[y - lo for y, (lo, _) in zip(ys, lo_hi)], [hi - y for y, (_, hi) in zip(ys, lo_hi)]]
            ax.bar(xs, ys, width, label=sname, yerr=err, capsize=3 if err else 0)
        ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(labels))])
        ax.set_xticklabels(labels, rotation=15, ha="right", fontsize=8)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=110)
        plt.close(fig)
        made.append(name)

    def lines(name, title, xlabel, ylabel, series, spread=None):
        fig, ax = plt.subplots(figsize=(8, 4))
        for sname, points in series.items():
            xs = sorted(points)
            line, = ax.plot(xs, [points[x] for x in xs], marker="o", label=sname)
            if spread:
                ax.fill_between(xs, [spread[sname][x][0] for x in xs], [spread[sname][x][1] for x in xs],
                                color=line.get_color(), alpha=0.15)
            ax.set_xticks(xs)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=110)
        plt.close(fig)
        made.append(name)

    d = report.data
    if "generation" in d:
        bars("generation", "Generation cost (lower is better)", "ns per id, net of count(*)",
             {f"PostgreSQL {pg}": v for pg, v in d["generation"].items()})
    if "batch" in d:
        bars("batch", "Per-id time, n ids as rows: a call per id or batches of 1,000 (lower is better)",
             "ns per id, median with min-max",
             {f"PostgreSQL {pg}": {k: t[0] for k, t in v.items()} for pg, v in d["batch"].items()},
             {f"PostgreSQL {pg}": {k: t[1:] for k, t in v.items()} for pg, v in d["batch"].items()})
    if "scaling" in d:
        lines("scaling", "Generation: rate at k backends over the rate at one (higher is better)", "backends",
              "scaling", {f"PG{pg} {name}": v for pg, s in d["scaling"].items() for name, v in s.items()})
    if "inserts" in d:
        picked = {f"PG{pg} {k}": r for pg, v in d["inserts"].items() for k, r in v.items()}
        for batch in (1, 100):
            lines(f"clients-{batch}", f"Inserts, {batch} row{'s' if batch > 1 else ''}/tx, table of 10M rows: "
                  "median, min-max band (higher is better)", "pgbench clients", "rows/s",
                  {k: {cl: r["per"][(b, cl)][0] for (b, cl) in r["per"] if b == batch} for k, r in picked.items()},
                  {k: {cl: r["spread"][(b, cl)] for (b, cl) in r["spread"] if b == batch} for k, r in picked.items()})
        bars("wal", "WAL per inserted row, 100 rows/tx (lower is better)", "bytes",
             {f"PostgreSQL {pg}": {k: r["per"][(100, 1)][1] for k, r in v.items()} for pg, v in d["inserts"].items()})
    if "sorting" in d:
        bars("sorting", "Sorting shuffled ids (lower is better)", "ms",
             {f"PG{pg} {w}": {k: t[i] * 1e3 for k, t in v.items()}
              for pg, v in d["sorting"].items() for i, w in ((0, "ORDER BY"), (1, "CREATE INDEX"))})
    if "textio" in d:
        bars("textio", "Text and binary I/O of 10M ids: hlculid's time over uuid's (lower is better)", "ratio",
             {f"PostgreSQL {pg}": {w: h / u for w, (h, u) in v.items()} for pg, v in d["textio"].items()})
    if "ranges" in d:
        bars("ranges", "One-hour window on the event table (lower is better)", "ms",
             {f"PostgreSQL {pg}": {k: t[0] * 1e3 for k, t in v.items()} for pg, v in d["ranges"].items()})
    return made


# Workloads whose peers differ between majors (uuidv7() is new in 18, uuid_out got twice as fast);
# the others are PostgreSQL's own heap and btree work, so a full run over several majors measures
# them once, on the newest, to stay within 20 minutes.
def citus(c, pg, cfg, report, quick):
    """Event tables on Citus (a coordinator and two workers on this machine) against the same on
    one node, in the same run: inserts a second through the coordinator (single rows, 100-row
    statements, COPY), a one-hour window of a day's rows, and what the cluster horizon costs:
    calls a second, and how long after its commit a reader through `hlculid_read` gets a row."""
    import pgcluster
    why = pgcluster.citus_missing(pg)
    if quick and not why and str(pg) != max(pgcluster.CITUS_MAJORS):
        why = f"--quick measures it on PostgreSQL {max(pgcluster.CITUS_MAJORS)} only"
    if why:
        report.add(f"\n### Citus, PostgreSQL {pg}: not measured ({why})")
        return
    runs = cfg["citus_runs"]
    cluster = pgcluster.CitusCluster(major=pg, conf=["synchronous_commit = off", "shared_buffers = 128MB"])
    try:
        co = cluster.coordinator
        sides = {"one node": c, "Citus, 3 nodes": co}
        for node in sides.values():
            node.sql("CREATE TABLE bench_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), body text)")
            node.sql("CREATE TABLE bench_win (id hlculid PRIMARY KEY, body text)")
            node.sql("CREATE TABLE bench_lag (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), t float8)")
        for t in ("bench_ev", "bench_win", "bench_lag"):
            co.sql(f"SELECT create_distributed_table('{t}', 'id')")

        def single(conn):
            for _ in range(cfg["citus_single"]):
                conn.execute("INSERT INTO bench_ev (body) VALUES ('x')")
            return cfg["citus_single"]

        hundred = "INSERT INTO bench_ev (body) VALUES " + ", ".join(["('x')"] * 100)

        def batches(conn):
            # VALUES, as an application batches: INSERT .. SELECT with a volatile default is not
            # pushed down by Citus (repartitioned through the coordinator)
            for _ in range(cfg["citus_batches"]):
                conn.execute(hundred)
            return 100 * cfg["citus_batches"]

        def copy(conn):
            with conn.cursor().copy("COPY bench_ev (body) FROM STDIN") as cp:
                for _ in range(cfg["citus_copy"]):
                    cp.write_row(("x",))
            return cfg["citus_copy"]

        rates = {}
        for what, f in (("single-row INSERT, autocommit", single), ("100-row INSERT .. VALUES", batches), ("COPY", copy)):
            for side, node in sides.items():
                with node.connect() as conn:
                    got = []
                    for _ in range(runs):
                        t0 = time.perf_counter()
                        n = f(conn)
                        got.append(n / (time.perf_counter() - t0))
                rates[(what, side)] = mmm(got)
        report.add(f"\n### Citus, PostgreSQL {pg}: inserts through the coordinator against one node, {runs} runs\n")
        report.add("A coordinator and two workers on this machine (each its own server, 32 shards), against the "
                   "benchmark's single server; the same table and `DEFAULT hlculid_generate()` key.\n")
        report.table(["statement", "one node, rows/s", "Citus, rows/s", "Citus / one node"],
                     [[what, f"{rates[(what, 'one node')][0]:,.0f}", f"{rates[(what, 'Citus, 3 nodes')][0]:,.0f}",
                       f"{rates[(what, 'Citus, 3 nodes')][0] / rates[(what, 'one node')][0]:.2f}x"]
                      for what in dict.fromkeys(w for w, _ in rates)])
        # a one-hour window of a day of rows: every shard prunes to its index range
        n = cfg["citus_window_rows"]
        window = "SELECT count(*) FROM bench_win WHERE id <@ tstzrange(now() - interval '13 hours', now() - interval '12 hours')"
        times = {}
        for side, node in sides.items():
            node.sql(f"INSERT INTO bench_win SELECT hlculid_from_parts(now() - g * (86400.0 / {n}) * interval '1 s', 0, 1, g), 'x' "
                     f"FROM generate_series(1, {n}) g")
            node.sql("ANALYZE bench_win")
            with node.connect() as conn:
                timed(conn, window)
                times[side] = mmm([timed(conn, window) for _ in range(max(runs, 5))])
        rows = co.one(window)
        report.add(f"\nOne-hour window of {n:,} rows spread over a day ({rows:,} rows in it), `count(*)` with "
                   f"`id <@ tstzrange(...)`, {max(runs, 5)} runs:\n")
        report.table(["", "median ms", "min", "max"],
                     [[side, f"{m * 1e3:.1f}", f"{lo * 1e3:.1f}", f"{hi * 1e3:.1f}"] for side, (m, lo, hi) in times.items()])
        # the cluster horizon's cost: calls a second, against hlculid_horizon() on one node
        secs = cfg["citus_seconds"]
        calls = {}
        for side, node, q in (("hlculid_horizon(), one node", c, "SELECT hlculid_horizon()"),
                              ("hlculid_cluster_horizon(), coordinator", co, "SELECT hlculid_cluster_horizon()")):
            with node.connect() as conn:
                k, t0 = 0, time.perf_counter()
                while time.perf_counter() - t0 < secs:
                    conn.execute(q).fetchone()
                    k += 1
                calls[side] = k / (time.perf_counter() - t0)
        # lag: 8 writers, a row each every 20 ms, single-row commits; a reader polling as fast as
        # it can, through hlculid_read (the horizon, then a read of every shard), or the horizon
        # alone (when the horizon passes a row: what the worker adds, without the read); a reader
        # that waits (hlculid_wait when a read found nothing); a consumer as bench/subscriptions.py
        # runs it (hlculid_consumer_wait unless its last batch was full, then hlculid_consume in a
        # transaction)
        lags = {}
        readers = ("hlculid_read", "horizon only", "hlculid_wait, hlculid_read", "consumer")
        horizon_q = {"one node": "SELECT hlculid_horizon()::text",
                     "Citus, 3 nodes": "SELECT hlculid_cluster_horizon()::text"}
        for side, node in sides.items():
            for k, how in enumerate(readers):
                stop, written, committed, seen = threading.Event(), threading.Event(), {}, {}
                with node.connect() as conn:
                    start = conn.execute(horizon_q[side]).fetchone()[0]
                    if how == "consumer":
                        conn.execute("SELECT hlculid_consumer_create(%s, 'bench_lag', %s::hlculid)", (f"lag{k}", start))

                def write():
                    with node.connect() as conn:
                        while not stop.is_set():
                            i = conn.execute("INSERT INTO bench_lag (t) VALUES (0) RETURNING id::text").fetchone()[0]
                            committed[i] = time.perf_counter()
                            time.sleep(0.02)

                def read():
                    last, full = start, True
                    with node.connect() as conn:
                        # until every writer is done and the reader has every row they committed
                        while not written.is_set() or len(seen) < len(committed):
                            if how == "consumer":
                                if not full and not conn.execute("SELECT hlculid_consumer_wait(%s, '0.2 s')",
                                                                 (f"lag{k}",)).fetchone()[0]:
                                    continue
                                with conn.transaction():
                                    rows = conn.execute("SELECT id::text FROM hlculid_consume(%s, NULL::bench_lag, 1000)",
                                                        (f"lag{k}",)).fetchall()
                                now = time.perf_counter()
                                for (i,) in rows:
                                    seen[i] = now
                                full = len(rows) == 1000
                            elif how != "horizon only":
                                rows = conn.execute("SELECT id::text FROM hlculid_read(NULL::bench_lag, %s::hlculid, 10000)",
                                                    (last,)).fetchall()
                                now = time.perf_counter()
                                for (i,) in rows:
                                    seen[i] = now
                                if rows:
                                    last = rows[-1][0]
                                elif how == "hlculid_wait, hlculid_read":
                                    conn.execute("SELECT hlculid_wait(NULL::bench_lag, %s::hlculid, '0.2 s')", (last,))
                            else:
                                h = conn.execute(horizon_q[side]).fetchone()[0]
                                now = time.perf_counter()
                                if h is not None:
                                    for i in [i for i in list(committed) if i not in seen and i < h]:
                                        seen[i] = now
                                time.sleep(0.0005)

                writers = [threading.Thread(target=write) for _ in range(8)]
                reader = threading.Thread(target=read)
                for t in writers + [reader]:
                    t.start()
                time.sleep(secs * 2)
                stop.set()
                for t in writers:
                    t.join(60)
                written.set()
                reader.join(60)
                if how == "consumer":
                    node.sql("SELECT hlculid_consumer_drop(%s)", (f"lag{k}",))
                got = sorted(seen[i] - committed[i] for i in committed if i in seen)
                lags[(side, how)] = (statistics.median(got), got[int(len(got) * 0.95)], got[int(len(got) * 0.99)],
                                     len(got), len(committed))
        report.add(f"\nThe horizon's cost: calls a second over {secs} s on one connection, and the lag from a "
                   "row's commit (8 writers, single-row inserts, each every 20 ms) to a reader polling "
                   "`hlculid_read`, the horizon alone (when it passes the row), a reader that calls `hlculid_wait` "
                   "when a read found nothing, and a consumer (`hlculid_consumer_wait` unless its last batch "
                   "was full, then `hlculid_consume` in a transaction):\n")
        report.table(["", "calls/s"], [[k, f"{v:,.0f}"] for k, v in calls.items()])
        report.add("")
        report.table(["", "reader", "median lag ms", "p95 ms", "p99 ms", "rows read / committed"],
                     [[side, how, f"{m * 1e3:.1f}", f"{p95 * 1e3:.1f}", f"{p99 * 1e3:.1f}", f"{a:,} / {b:,}"]
                      for (side, how), (m, p95, p99, a, b) in lags.items()])
        for (side, how), (_, _, _, a, b) in lags.items():
            assert a == b, f"{side}, {how}: the reader got {a} of {b} rows"
        # per-tenant windows: a table keyed (tenant_id, id), distributed by tenant_id; one
        # tenant's hour of a day's rows of 100 tenants (a router query on Citus)
        for node in sides.values():
            node.sql("CREATE TABLE bench_tenant (tenant_id int8, id hlculid NOT NULL, body text, PRIMARY KEY (tenant_id, id))")
        co.sql("SELECT create_distributed_table('bench_tenant', 'tenant_id')")
        tenant_window = ("SELECT count(*) FROM bench_tenant WHERE tenant_id = 7 "
                         "AND id <@ tstzrange(now() - interval '13 hours', now() - interval '12 hours')")
        tenant_read = "SELECT count(*) FROM hlculid_read_key(NULL::bench_tenant, 'tenant_id', 7, hlculid_min(now() - interval '13 hours'), 100)"
        ttimes = {}
        for side, node in sides.items():
            node.sql(f"INSERT INTO bench_tenant SELECT g % 100, hlculid_from_parts(now() - g * (86400.0 / {n}) * interval '1 s', 0, 1, g), 'x' "
                     f"FROM generate_series(1, {n}) g")
            node.sql("ANALYZE bench_tenant")
            with node.connect() as conn:
                for q in (tenant_window, tenant_read):
                    timed(conn, q)
                    ttimes[(side, q)] = mmm([timed(conn, q) for _ in range(max(runs, 5))])
        trows = co.one(tenant_window)
        report.add(f"\nOne tenant of 100 (`tenant_id = 7`), {n:,} rows over a day, keyed `(tenant_id, id)`, "
                   f"distributed by `tenant_id` on Citus: its one-hour window ({trows:,} rows, `count(*)`), and "
                   f"`hlculid_read_key` of 100 of its rows; {max(runs, 5)} runs:\n")
        report.table(["", "query", "median ms", "min", "max"],
                     [[side, "window" if q == tenant_window else "hlculid_read_key, 100 rows",
                       f"{m * 1e3:.1f}", f"{lo * 1e3:.1f}", f"{hi * 1e3:.1f}"]
                      for (side, q), (m, lo, hi) in ttimes.items()])
    finally:
        cluster.stop()
        for t in ("bench_ev", "bench_win", "bench_lag", "bench_tenant"):
            c.sql(f"DROP TABLE IF EXISTS {t}")


PER_MAJOR = ("generation", "textio", "windows")
# Workloads a full run measures on one major: PgQ, the subscriptions' peer, is packaged for 15.
ON_MAJOR = {"subscriptions": "15"}
# Workloads without a server (the client libraries): run once, after the majors.
CLIENT_SIDE = ("clients",)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pg", nargs="+", default=["15", "18"])
    ap.add_argument("--only", nargs="+", default=["generation", "inserts", "sorting", "ranges", "windows", "textio",
                                                  "decode", "compare", "companion", "horizon", "masks", "citus", "subscriptions",
                                                  "clients"])
    ap.add_argument("--out", default=None)
    ap.add_argument("--baseline", default=None, metavar="PG_CONFIG",
                    help="a previous release installed by scripts/bench-baseline.sh: the horizon "
                         "workload measures generation, the compare workload the comparisons against it in the same run")
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    cfg["baseline"] = args.baseline
    report = Report()
    started = time.time()
    report.add(f"# hlculid benchmark report{' (quick)' if args.quick else ''}\n")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    report.add(f"Machine: {os.cpu_count()} cores ({cpu}), {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
               f"Linux {platform.release()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
               "Medians over the runs, with min and max; ratios are between contenders measured in the same run.")
    newest = max(args.pg, key=int)
    server_side = [w for w in args.only if w not in CLIENT_SIDE]
    for pg in args.pg if server_side else []:
        import pgcluster
        c = pgcluster.Cluster("bench", major=pg, conf=["hlculid.publisher_id = 1", "shared_buffers = 128MB",
                                             "synchronous_commit = off", "max_wal_size = 20GB",
                                             "checkpoint_timeout = 1h", "autovacuum = off",
                                             "max_connections = 120",
                                             "hlculid.mask_key_file = 'bench_mask.keys'"])
        keys = c.data / "bench_mask.keys"  # the masks workload's key
        pgcluster.write_as_server(keys, os.urandom(16).hex() + "\n", mode=0o600)
        try:
            c.start()
            c.sql("CREATE EXTENSION hlculid")
            report.add(f"\n## PostgreSQL {pg}\n\n{c.one('SELECT version()')}; fsync on, synchronous_commit off, "
                       "shared_buffers 128MB, autovacuum off.")
            elsewhere = [w for w in server_side if not args.quick and w not in PER_MAJOR
                         and pg != (ON_MAJOR[w] if ON_MAJOR.get(w) in args.pg else newest)]
            if elsewhere:
                report.add(f"\n({', '.join(elsewhere)}: measured on PostgreSQL {newest} (subscriptions on "
                           f"{ON_MAJOR['subscriptions']}) in this run; "
                           f"`--pg {pg}` alone measures them here)")
            for w in server_side:
                if w in elsewhere:
                    continue
                t0 = time.time()
                globals()[w](c, int(pg), cfg, report, args.quick)
                report.add(f"\n({w}: {time.time() - t0:.0f} s)")
        finally:
            c.stop("immediate")
            import shutil
            shutil.rmtree(c.dir, ignore_errors=True)
    for w in args.only:
        if w in CLIENT_SIDE:
            t0 = time.time()
            globals()[w](None, None, cfg, report, args.quick)
            report.add(f"\n({w}: {time.time() - t0:.0f} s)")
    report.add(f"\nWhole run: {(time.time() - started) / 60:.1f} minutes.")
    missed = [d for d, ok in report.checks if not ok]
    if report.checks:
        report.add(f"\n## Targets: {len(report.checks) - len(missed)} met, {len(missed)} missed\n")
        for d in missed:
            report.add(f"- missed: {d}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.png"):  # charts of an earlier run's workloads would outlive it
            old.unlink()
        made = charts(report, out)
        (out / "report.md").write_text("\n".join(report.lines) + "\n\n" +
                                       "\n".join(f"![{m}]({m}.png)" for m in made) + "\n")
    report.add(f"\nbench: {len(report.checks) - len(missed)} passed, {len(missed)} failed")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
