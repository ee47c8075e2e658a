"""hlculid benchmarks: each workload runs hlculid and its peers side by side on the same
server in the same run, and reports medians (with min and max over the runs) and ratios.

Run through scripts/bench.sh, which installs a release build first.
  bench.py [--quick] [--pg 15 18] [--runs N] [--out DIR]
--quick uses small sizes and checks no thresholds: it only proves the suite still runs.
"""

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def median_min_max(xs):
    return statistics.median(xs), min(xs), max(xs)


class Report:
    def __init__(self):
        self.lines = []
        self.checks = []  # (description, ok)

    def add(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def check(self, description, ok):
        self.checks.append((description, ok))
        self.add(f"- {'PASS' if ok else 'MISS'}: {description}")


def timed(conn, query, params=None):
    t0 = time.perf_counter()
    conn.execute(query, params).fetchall()
    return time.perf_counter() - t0


def generation(cluster, pg, n, runs, report, quick):
    """count(f()) over n rows for each generator, interleaved run by run; then two backends."""
    with cluster.connect() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS hlculid")
        conn.execute("SET max_parallel_workers_per_gather = 0")
        contenders = {
            "count(*) baseline": "SELECT count(*) FROM generate_series(1, %s)",
            "clock_timestamp()": "SELECT count(clock_timestamp()) FROM generate_series(1, %s)",
            "hlculid_generate()": "SELECT count(hlculid_generate()) FROM generate_series(1, %s)",
            "gen_random_uuid()": "SELECT count(gen_random_uuid()) FROM generate_series(1, %s)",
        }
        if pg >= 18:
            contenders["uuidv7()"] = "SELECT count(uuidv7()) FROM generate_series(1, %s)"
        for q in contenders.values():  # warm up
            timed(conn, q, (min(n, 100_000),))
        times = {k: [] for k in contenders}
        for _ in range(runs):
            for name, q in contenders.items():
                times[name].append(timed(conn, q, (n,)))
    med = {k: median_min_max(v) for k, v in times.items()}
    base = med["count(*) baseline"][0]
    report.add(f"\n### Generation, PostgreSQL {pg}: `SELECT count(f()) FROM generate_series(1, {n:,})`, {runs} runs\n")
    report.add("| function | median ms | min ms | max ms | ns/id net of count(*) | time vs hlculid_generate() |")
    report.add("|---|---:|---:|---:|---:|---:|")
    h = med["hlculid_generate()"][0]
    for name, (m, lo, hi) in med.items():
        net = (m - base) / n * 1e9
        report.add(f"| {name} | {m*1e3:.0f} | {lo*1e3:.0f} | {hi*1e3:.0f} | "
                   f"{'' if name.startswith('count(*)') else f'{net:.0f}'} | {m / h:.2f}x |")

    # Two backends at once against one alone: the shared clock must not serialise them.
    # clock_timestamp() shares nothing between backends, so its scaling is what this machine
    # allows; hlculid's is reported beside it. Connections are opened and warmed before the
    # clock starts; only the queries are timed.
    def rate(query, k):
        conns = [cluster.connect() for _ in range(k)]
        for c in conns:
            c.execute("SET max_parallel_workers_per_gather = 0")
            c.execute(query, (n // 10,))
        barrier = threading.Barrier(k + 1)
        threads = [threading.Thread(target=lambda c=c: (barrier.wait(), c.execute(query, (n,)).fetchall()))
                   for c in conns]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        for c in conns:
            c.close()
        return k * n / elapsed

    scaling = {}
    report.add("\nTwo backends generating at once against one (M ids/s, median of "
               f"{runs}; scaling = two / one, median of the per-run ratios):\n")
    report.add("| function | one backend | two backends | scaling | scaling min-max |")
    report.add("|---|---:|---:|---:|---:|")
    for name in ["clock_timestamp()", "hlculid_generate()"]:
        one, two = [], []
        for _ in range(runs):
            one.append(rate(contenders[name], 1))
            two.append(rate(contenders[name], 2))
        ratios = [b / a for a, b in zip(one, two)]
        scaling[name] = statistics.median(ratios)
        report.add(f"| {name} | {statistics.median(one)/1e6:.2f} | {statistics.median(two)/1e6:.2f} | "
                   f"{scaling[name]:.2f}x | {min(ratios):.2f}-{max(ratios):.2f} |")
    if not quick:
        report.check(f"PG{pg}: hlculid_generate() at least 5x faster than gen_random_uuid() "
                     f"({med['gen_random_uuid()'][0] / h:.1f}x)", med["gen_random_uuid()"][0] >= 5 * h)
        if pg >= 18:
            report.check(f"PG{pg}: hlculid_generate() at least 5x faster than uuidv7() "
                         f"({med['uuidv7()'][0] / h:.1f}x)", med["uuidv7()"][0] >= 5 * h)
        report.check(f"PG{pg}: hlculid_generate() at most 1.5x the time of clock_timestamp() "
                     f"({h / med['clock_timestamp()'][0]:.2f}x)", h <= 1.5 * med["clock_timestamp()"][0])
        report.check(f"PG{pg}: two backends reach at least 1.6x the rate of one "
                     f"({scaling['hlculid_generate()']:.2f}x; clock_timestamp() on this machine: "
                     f"{scaling['clock_timestamp()']:.2f}x)", scaling["hlculid_generate()"] >= 1.6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pg", nargs="+", default=["15", "18"])
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    runs = args.runs or (2 if args.quick else 7)
    n = 20_000 if args.quick else 2_000_000
    report = Report()
    report.add(f"# hlculid benchmark ({'quick' if args.quick else 'full'})\n")
    report.add(f"Machine: {os.cpu_count()} cores, {os.uname().release}; "
               f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    for pg in args.pg:
        os.environ["HLCULID_PG"] = pg
        import importlib
        import pgcluster
        importlib.reload(pgcluster)
        c = pgcluster.Cluster("bench", fsync=False, conf=["hlculid.publisher_id = 1", "shared_buffers = 128MB"])
        try:
            c.start()
            version = c.one("SELECT version()")
            report.add(f"\nPostgreSQL {pg}: {version}")
            generation(c, int(pg), n, runs, report, args.quick)
        finally:
            c.stop("immediate")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "report.md").write_text("\n".join(report.lines) + "\n")
    missed = [d for d, ok in report.checks if not ok]
    report.add(f"\nbench: {len(report.checks) - len(missed)} passed, {len(missed)} failed")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
