"""hlculid benchmarks: every workload runs hlculid and what a user would pick instead side by
side, on the same server in the same run, and reports medians (min and max over the runs) and
ratios. Run through scripts/bench.sh, which installs a release build first.

  bench.py [--quick] [--pg 15 18] [--only generation inserts sorting ranges] [--out DIR]

--quick uses small sizes and checks no thresholds: it proves the suite still runs (make test).
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

FULL = dict(gen_rows=2_000_000, gen_runs=3, insert_rows=10_000_000, pgbench_seconds=3, insert_rounds=3,
            sort_rows=5_000_000, sort_runs=3, range_rows=10_000_000, range_runs=7)
QUICK = dict(gen_rows=20_000, gen_runs=2, insert_rows=50_000, pgbench_seconds=1, insert_rounds=1,
             sort_rows=50_000, sort_runs=1, range_rows=200_000, range_runs=2)


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
           "hlculid_generate()": "hlculid_generate()", "gen_random_uuid()": "gen_random_uuid()",
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

    def rate(query, k):
        conns = [c.connect() for _ in range(k)]
        for x in conns:
            x.execute("SET max_parallel_workers_per_gather = 0")
            x.execute(query, (n // 10,))
        barrier = threading.Barrier(k + 1)
        threads = [threading.Thread(target=lambda x=x: (barrier.wait(), x.execute(query, (n,)).fetchall()))
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
        return k * n / elapsed

    scaling, rows = {}, []
    for name in ["clock_timestamp()", "hlculid_generate()"]:
        one, two = [], []
        for _ in range(runs):
            one.append(rate(q.format(fns[name]), 1))
            two.append(rate(q.format(fns[name]), 2))
        ratios = [b / a for a, b in zip(one, two)]
        scaling[name] = statistics.median(ratios)
        rows.append([name, f"{statistics.median(one)/1e6:.2f}", f"{statistics.median(two)/1e6:.2f}",
                     f"{scaling[name]:.2f}x", f"{min(ratios):.2f}-{max(ratios):.2f}"])
    report.add(f"\nTwo backends at once against one (M ids/s, median of {runs}; clock_timestamp() shares "
               "nothing between backends, so its scaling is what this machine allows):\n")
    report.table(["function", "one backend", "two backends", "scaling", "scaling min-max"], rows)
    if not quick:
        for peer in ["gen_random_uuid()"] + (["uuidv7()"] if pg >= 18 else []):
            report.check(f"PG{pg}: hlculid_generate() at least 5x faster than {peer} ({med[peer][0] / h:.1f}x)",
                         med[peer][0] >= 5 * h)
        # Whole queries, each making n ids as n rows: the generate_series that drives
        # hlculid_generate() is part of its cost per id, as the unnest is part of the batch's.
        batch = med["hlculid_generate_n(1000), per id"][0]
        report.check(f"PG{pg}: n ids as rows from hlculid_generate_n(1000) take at most half the time of "
                     f"n calls of hlculid_generate() ({batch / h:.2f}x)", batch <= 0.5 * h)
        report.check(f"PG{pg}: hlculid_generate() at most 1.5x the time of clock_timestamp() "
                     f"({h / med['clock_timestamp()'][0]:.2f}x)", h <= 1.5 * med["clock_timestamp()"][0])
        report.check(f"PG{pg}: two backends reach at least 1.6x the rate of one "
                     f"({scaling['hlculid_generate()']:.2f}x; clock_timestamp(): {scaling['clock_timestamp()']:.2f}x)",
                     scaling["hlculid_generate()"] >= 1.6)


# --- 2. inserts --------------------------------------------------------------------------

INSERT_CONTENDERS = {
    # name: (column definition, which PostgreSQL majors)
    "hlculid": ("id hlculid PRIMARY KEY DEFAULT hlculid_generate()", (15, 18)),
    "gen_random_uuid()": ("id uuid PRIMARY KEY DEFAULT gen_random_uuid()", (15,)),
    "uuidv7()": ("id uuid PRIMARY KEY DEFAULT uuidv7()", (18,)),
    "bigint identity": ("id bigint GENERATED BY DEFAULT AS IDENTITY (CACHE 1) PRIMARY KEY", (15,)),
    "ULID text": ("id text PRIMARY KEY DEFAULT hlculid_to_ulid(hlculid_generate())", (15,)),
}


def pgbench(c, script, clients, seconds):
    path = c.dir / f"bench-{clients}.sql"
    path.write_text(script)
    out = subprocess.run([f"{c.bin}/pgbench", "-h", str(c.dir), "-p", str(c.port), "-U", "postgres", "-n",
                          "-M", "prepared", "-c", str(clients), "-j", str(clients), "-T", str(seconds),
                          "-f", str(path), "postgres"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("number of transactions actually processed"):
            return int(line.split(":")[1].split("/")[0])
    raise RuntimeError(out)


def inserts(c, pg, cfg, report, quick):
    rows_total, secs, rounds = cfg["insert_rows"], cfg["pgbench_seconds"], cfg["insert_rounds"]
    names = [n for n, (_, majors) in INSERT_CONTENDERS.items() if pg in majors]
    table = {n: f"ins_{i}" for i, n in enumerate(names)}
    configs = [(1, 1), (1, 2), (100, 1), (100, 2)]  # (rows per transaction, clients)
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
        for _ in range(rounds):
            for n in names:
                for batch, clients in configs:
                    conn.execute("CHECKPOINT")
                    start_lsn = wal_lsn(conn)
                    before = conn.execute(f"SELECT count(*) FROM {table[n]}").fetchone()[0] if quick else None
                    rows = pgbench(c, scripts[batch].format(t=table[n]), clients, secs) * batch
                    wal = wal_bytes(conn, start_lsn)
                    if quick:
                        assert conn.execute(f"SELECT count(*) FROM {table[n]}").fetchone()[0] == before + rows
                    results[n]["per"][(batch, clients)][0].append(rows / secs)
                    results[n]["per"][(batch, clients)][1].append(wal / max(rows, 1))
        for n in names:
            t = table[n]
            r = results[n]
            r["index_bytes"], r["heap_bytes"], r["rows"], r["value_size"] = conn.execute(
                f"SELECT pg_relation_size('{t}_pkey'), pg_relation_size('{t}'), count(*), pg_column_size(max(id)) "
                f"FROM {t}").fetchone()
            r["spread"] = {cf: (min(v[0]), max(v[0])) for cf, v in r["per"].items()}
            r["per"] = {cf: (statistics.median(v[0]), statistics.median(v[1])) for cf, v in r["per"].items()}
            conn.execute(f"DROP TABLE {t}")
    report.add(f"\n### 2. Inserts, PostgreSQL {pg}: each table grown to {rows_total:,} rows, then pgbench "
               f"(-M prepared, {secs} s per run, CHECKPOINT before each run), {rounds} interleaved rounds, "
               "shared_buffers = 128MB; rows/s median (min-max)\n")
    header = ["key", "bulk load rows/s"] + [f"{'1 row' if b == 1 else '100 rows'}/tx, {c_} client{'s' if c_ > 1 else ''}: rows/s"
                                             for b in (1, 100) for c_ in (1, 2)]
    report.table(header, [[n, f"{r['load_rows_s']:,.0f}"] +
                          [f"{r['per'][(b, c_)][0]:,.0f} ({r['spread'][(b, c_)][0]:,.0f}-{r['spread'][(b, c_)][1]:,.0f})"
                           for b in (1, 100) for c_ in (1, 2)] for n, r in results.items()])
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
    rate = lambda r: r["per"][(100, 1)][0]  # noqa: E731 - the 100-row, one-client rate is the headline
    if pg == 15:
        u = results["gen_random_uuid()"]
        report.check(f"PG15: inserts at {rows_total:,} rows at least 2x gen_random_uuid()'s rows/s "
                     f"({rate(h) / rate(u):.2f}x)", rate(h) >= 2 * rate(u))
        report.check(f"PG15: WAL per row at most half of gen_random_uuid()'s "
                     f"({h['per'][(100, 1)][1] / u['per'][(100, 1)][1]:.2f}x)",
                     h["per"][(100, 1)][1] <= 0.5 * u["per"][(100, 1)][1])
    if pg == 18:
        v = results["uuidv7()"]
        report.check(f"PG18: inserts at least uuidv7()'s rows/s ({rate(h) / rate(v):.2f}x)", rate(h) >= rate(v))
    if "bigint identity" in results:
        b = results["bigint identity"]
        report.check(f"PG{pg}: inserts at least 0.8x bigint identity's rows/s ({rate(h) / rate(b):.2f}x)",
                     rate(h) >= 0.8 * rate(b))


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
        conn.execute(f"""CREATE TABLE s_src AS SELECT hlculid_generate_at('2026-01-01+00'::timestamptz
                         + (i * (30 * 86400.0 / {n})) * interval '1 second') AS id FROM generate_series(1, {n}) i""")
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
    span_s = 30 * 86400  # ids spread over 30 days
    t1, t2 = "2026-01-15 12:00:00+00", "2026-01-15 13:00:00+00"
    q_id = f"SELECT count(*), sum(n) FROM ev WHERE id >= hlculid_min('{t1}') AND id < hlculid_min('{t2}')"
    q_ts = f"SELECT count(*), sum(n) FROM ev WHERE ts >= '{t1}' AND ts < '{t2}'"
    out = {}
    with c.connect() as conn:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("DROP TABLE IF EXISTS ev")
        conn.execute(f"""CREATE TABLE ev AS SELECT id, hlculid_ts(id) AS ts, i AS n FROM (
                         SELECT i, hlculid_generate_at('2026-01-01+00'::timestamptz
                           + (i * ({span_s}.0 / {n})) * interval '1 second') AS id
                         FROM generate_series(1, {n}) i) s""")
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


def charts(report, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []

    def bars(name, title, ylabel, series):
        fig, ax = plt.subplots(figsize=(8, 4))
        labels = list(dict.fromkeys(k for s in series.values() for k in s))
        width = 0.8 / max(len(series), 1)
        for i, (sname, values) in enumerate(series.items()):
            xs = [j + i * width for j in range(len(labels))]
            ax.bar(xs, [values.get(k, 0) for k in labels], width, label=sname)
        ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(labels))])
        ax.set_xticklabels(labels, rotation=15, ha="right", fontsize=8)
        ax.set_title(title)
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
    if "inserts" in d:
        bars("inserts", "Inserts into a table grown to 10M rows, 100 rows/tx, 1 client (higher is better)",
             "rows/s", {f"PostgreSQL {pg}": {k: r["per"][(100, 1)][0] for k, r in v.items()}
                         for pg, v in d["inserts"].items()})
        bars("wal", "WAL per inserted row, 100 rows/tx (lower is better)", "bytes",
             {f"PostgreSQL {pg}": {k: r["per"][(100, 1)][1] for k, r in v.items()} for pg, v in d["inserts"].items()})
    if "sorting" in d:
        bars("sorting", "Sorting shuffled ids (lower is better)", "ms",
             {f"PG{pg} {w}": {k: t[i] * 1e3 for k, t in v.items()}
              for pg, v in d["sorting"].items() for i, w in ((0, "ORDER BY"), (1, "CREATE INDEX"))})
    if "ranges" in d:
        bars("ranges", "One-hour window on the event table (lower is better)", "ms",
             {f"PostgreSQL {pg}": {k: t[0] * 1e3 for k, t in v.items()} for pg, v in d["ranges"].items()})
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pg", nargs="+", default=["15", "16", "17", "18"])
    ap.add_argument("--only", nargs="+", default=["generation", "inserts", "sorting", "ranges"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    report = Report()
    started = time.time()
    report.add(f"# hlculid benchmark report{' (quick)' if args.quick else ''}\n")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    report.add(f"Machine: {os.cpu_count()} cores ({cpu}), {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
               f"Linux {platform.release()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
               "Medians over the runs, with min and max; ratios are between contenders measured in the same run.")
    for pg in args.pg:
        import pgcluster
        c = pgcluster.Cluster("bench", major=pg, conf=["hlculid.publisher_id = 1", "shared_buffers = 128MB",
                                             "synchronous_commit = off", "max_wal_size = 20GB",
                                             "checkpoint_timeout = 1h", "autovacuum = off"])
        try:
            c.start()
            c.sql("CREATE EXTENSION hlculid")
            report.add(f"\n## PostgreSQL {pg}\n\n{c.one('SELECT version()')}; fsync on, synchronous_commit off, "
                       "shared_buffers 128MB, autovacuum off.")
            for w in args.only:
                globals()[w](c, int(pg), cfg, report, args.quick)
        finally:
            c.stop("immediate")
            import shutil
            shutil.rmtree(c.dir, ignore_errors=True)
    report.add(f"\nWhole run: {(time.time() - started) / 60:.1f} minutes.")
    missed = [d for d, ok in report.checks if not ok]
    if report.checks:
        report.add(f"\n## Targets: {len(report.checks) - len(missed)} met, {len(missed)} missed\n")
        for d in missed:
            report.add(f"- missed: {d}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        made = charts(report, out)
        (out / "report.md").write_text("\n".join(report.lines) + "\n\n" +
                                       "\n".join(f"![{m}]({m}.png)" for m in made) + "\n")
    report.add(f"\nbench: {len(report.checks) - len(missed)} passed, {len(missed)} failed")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
