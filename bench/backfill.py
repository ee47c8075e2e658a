"""hlculid_backfill against 0.3.0's, on the same server in the same run: a bigserial table of
ROWS rows (duplicate and out-of-order times, as tests/integration/test_backfill.py makes it) with
an hlculid column, its DEFAULT and a unique index, filled by this checkout's procedure and by
0.3.0's (its text from sql/released/hlculid--0.3.0.sql, created beside it under another name),
in alternating order, RUNS times each; prints each run and the medians.

  HLCULID_PG=15 bench/backfill.py [ROWS] [RUNS] [BATCH]   (defaults 1000000 3 10000)

Needs hlculid installed for that major (scripts/install.sh) and HLCULID_PG_CONFIG_<major>.
"""

import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pgcluster import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000


def old_procedure():
    """0.3.0's hlculid_backfill, as hlculid_backfill_0_3_0 (in public), naming the extension's objects in pg_catalog."""
    text = (ROOT / "sql/released/hlculid--0.3.0.sql").read_text()
    body = re.search(r"^CREATE PROCEDURE hlculid_backfill\(.*?^\$fn\$;", text, re.S | re.M).group(0)
    return body.replace("CREATE PROCEDURE hlculid_backfill(", "CREATE PROCEDURE hlculid_backfill_0_3_0(") \
               .replace("@extschema@", "pg_catalog")


def main():
    c = Cluster("bench-backfill", conf=["hlculid.publisher_id = 42", "max_wal_size = '4GB'"]).start()
    try:
        c.sql("CREATE EXTENSION hlculid")
        c.sql(old_procedure())
        c.sql(f"""CREATE TABLE base AS
                  SELECT i AS old_id, timestamptz '2024-01-01 00:00:00+00' + (i / 3) * interval '1 ms'
                         + ((i * 7919) % 2000) * interval '1 ms' + ((i * 31) % 1000) * interval '1 us' AS created_at
                  FROM generate_series(1::int8, {rows}) i""")
        times = {"0.3.0": [], "this": []}
        for run in range(runs):
            order = ["0.3.0", "this"] if run % 2 == 0 else ["this", "0.3.0"]
            for which in order:
                c.sql("DROP TABLE IF EXISTS orders")
                c.sql("CREATE TABLE orders (old_id bigint PRIMARY KEY, created_at timestamptz NOT NULL, note text)")
                c.sql("INSERT INTO orders SELECT old_id, created_at, 'x' FROM base")
                c.sql("ALTER TABLE orders ADD COLUMN id hlculid")
                c.sql("ALTER TABLE orders ALTER COLUMN id SET DEFAULT hlculid_generate()")
                c.sql("CREATE UNIQUE INDEX orders_id_key ON orders (id)")
                c.sql("VACUUM ANALYZE orders")
                c.sql("CHECKPOINT")
                proc = "hlculid_backfill_0_3_0" if which == "0.3.0" else "hlculid_backfill"
                with c.connect() as conn:
                    t0 = time.monotonic()
                    conn.execute(f"CALL {proc}('orders', 'id', 'created_at', 65000, {batch})")
                    elapsed = time.monotonic() - t0
                n, distinct = c.sql("SELECT count(id), count(DISTINCT id) FROM orders")[0]
                assert n == distinct == rows, (which, n, distinct)
                times[which].append(elapsed)
                print(f"run {run + 1} {which:5}: {elapsed:7.2f} s", flush=True)
        old, new = statistics.median(times["0.3.0"]), statistics.median(times["this"])
        print(f"{rows} rows, batches of {batch}, PostgreSQL {c.major}: median of {runs} runs: "
              f"0.3.0 {old:.2f} s, this {new:.2f} s ({new / old:.2f}x)")
    finally:
        c.stop("immediate")


if __name__ == "__main__":
    main()
