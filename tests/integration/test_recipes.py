"""Every reader recipe the docs give, as written: the blocks marked `<!-- recipe: NAME -->` are
taken from their pages and run in loops beside writers whose transactions commit 0-40 ms late or
roll back, with a naive reader in the same run that loses rows (so each test can fail): the
horizon in one statement and the read in the next, the consumer groups' cursor table
(docs/reading-events.md), the two outbox relays (docs/transaction-groups.md) and the watermark
in two statements (docs/reading-events.md). A block's zero-id literal is its cursor: the test puts
the last id the block got there. `hlculid_read` is tested the same way in test_horizon.py."""

import random
import re
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pgcluster import by_tier

DOCS = Path(__file__).resolve().parents[2] / "docs"
RECIPE = re.compile(r"<!--\s*recipe:\s*([\w-]+)[^>]*-->\s*```sql\n(.*?)```", re.S)
ZERO = "000000000000-0000-0000-000000000000"


def recipe(page, name):
    found = {m.group(1): m.group(2) for m in RECIPE.finditer((DOCS / page).read_text())}
    assert name in found, f"docs/{page} has no recipe block {name!r} (it has {sorted(found)})"
    return found[name]


def statements(block):
    """The block's statements, as psql reads them: `;` or `\\gset` ends one; comment lines go."""
    out, cur = [], []
    for line in block.split("\n"):
        if not cur and (not line.strip() or line.lstrip().startswith("--")):
            continue
        if line.rstrip().endswith("\\gset"):
            out.append(("gset", "\n".join(cur + [line.rstrip()[:-len("\\gset")]])))
            cur = []
        else:
            cur.append(line)
            if line.rstrip().endswith(";"):
                out.append(("sql", "\n".join(cur)))
                cur = []
    assert not cur, f"an unended statement: {cur}"
    return out


def run(conn, stmts):
    """Runs statements on an autocommit connection as psql would (`\\gset` sets variables that
    `:'name'` uses); returns the rows of the last statement that returned rows."""
    variables, rows = {}, None
    for kind, text in stmts:
        for name, value in variables.items():
            # a NULL as a driver passes it (psql's \gset would leave the variable unset)
            text = text.replace(f":'{name}'", "NULL" if value is None else "'" + value.replace("'", "''") + "'")
        cur = conn.execute(text)
        if kind == "gset":
            row = cur.fetchone()
            variables.update({d.name: None if v is None else str(v) for d, v in zip(cur.description, row)})
        elif cur.description is not None:
            rows = cur.fetchall()
    return rows


def cursor_recipe(stmts):
    """A poll that runs the recipe's statements with its zero-id literal replaced by the last id
    it got (the recipe's first column)."""
    assert any(f"'{ZERO}'" in s for _, s in stmts), "the recipe has no cursor literal"
    last = [ZERO]

    def poll(conn):
        rows = [str(r[0]) for r in run(conn, [(k, s.replace(f"'{ZERO}'", f"'{last[0]}'")) for k, s in stmts]) or []]
        if rows:
            last[0] = rows[-1]
        return rows
    return poll


def writers(c, stop, insert, n=6):
    """`n` sessions, each running `insert(conn, rnd)` a transaction and committing 0-40 ms later;
    one transaction in ten rolls back. Returns the threads and their errors."""
    errors = []

    def write(w):
        rnd = random.Random(w)
        try:
            with c.connect(autocommit=False) as conn:
                while not stop.is_set():
                    insert(conn, rnd)
                    time.sleep(rnd.random() * 0.04)
                    conn.rollback() if rnd.random() < 0.1 else conn.commit()
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(n)]
    for t in threads:
        t.start()
    return threads, errors


class Loop(threading.Thread):
    """Calls `poll(conn)` every 5 ms; each call returns the rows it took (a list). After `stop`,
    goes on until a poll returns nothing."""

    def __init__(self, c, poll, stop):
        super().__init__(daemon=True)
        self.c, self.poll, self.stop, self.runs, self.error = c, poll, stop, [], None

    def run(self):
        try:
            with self.c.connect() as conn:
                while True:
                    stopping = self.stop.is_set()
                    rows = self.poll(conn)
                    if rows:
                        self.runs.append(rows)
                    elif stopping:
                        return
                    time.sleep(0.005)
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.error = e

    @property
    def seen(self):
        return [r for run_ in self.runs for r in run_]


def drive(loops, stop_writers, threads, errors, stop_readers, idle=lambda: None):
    for t in loops:
        t.start()
    time.sleep(by_tier(3, 10))
    stop_writers.set()
    for t in threads:
        t.join(60)
    idle()  # what idle publishers report once the writers stopped
    stop_readers.set()
    for t in loops:
        t.join(120)
        assert not t.is_alive(), "a reader did not finish"
        assert t.error is None, t.error
    assert not errors, errors


def id_order(ids):
    return sorted(ids, key=lambda i: i.replace("-", ""))  # text order of the canonical form


def test_the_two_statement_horizon_recipe_loses_no_row_where_a_plain_cursor_does(make_cluster):
    """docs/reading-events.md's two statements (`\\gset` the horizon, then read below it)."""
    c = make_cluster("recipe-horizon", conf=["hlculid.publisher_id = 7"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE feed (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), body text)")
    stmts = statements(recipe("reading-events.md", "horizon-two-statements"))
    assert [k for k, _ in stmts] == ["gset", "sql"] and "hlculid_horizon()" in stmts[0][1]
    assert "hlculid_horizon" not in stmts[1][1], "the read takes the bound in its own statement"

    plain = cursor_recipe([("sql", f"SELECT id FROM feed WHERE id > '{ZERO}' ORDER BY id LIMIT 100")])
    stop_w, stop_r = threading.Event(), threading.Event()
    threads, errors = writers(c, stop_w, lambda conn, rnd: conn.execute(
        "INSERT INTO feed (body) SELECT 'e' FROM generate_series(1, %s)", (rnd.randint(1, 3),)))
    good, bad = Loop(c, cursor_recipe(stmts), stop_r), Loop(c, plain, stop_r)
    drive([good, bad], stop_w, threads, errors, stop_r)

    committed = {r[0] for r in c.sql("SELECT id::text FROM feed")}
    assert len(committed) > 100
    assert good.seen == id_order(committed), f"the recipe lost {len(committed - set(good.seen))} rows or left id order"
    assert committed - set(bad.seen), "the plain cursor lost nothing: the run made no late commits"


def test_the_consumer_groups_recipe_loses_no_row_where_a_cursor_moved_to_the_tables_max_does(make_cluster):
    c = make_cluster("recipe-groups", conf=["hlculid.publisher_id = 5"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE feed (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), body text)")
    stmts = statements(recipe("reading-events.md", "consumer-groups"))
    begin = [i for i, (_, s) in enumerate(stmts) if s.strip() == "BEGIN;"][0]
    setup, poll = stmts[:begin], stmts[begin:]
    with c.connect() as conn:
        run(conn, setup)
        conn.execute("INSERT INTO feed_cursors VALUES ('naive', NULL)")
    assert any("'mailer'" in s for _, s in poll)
    other = [(k, s.replace("'mailer'", "'search-index'")) for k, s in poll]

    def group(p):
        return lambda conn: [r[0] for r in run(conn, p) or []]

    def naive(conn):
        # the recipe 0.4.0's page gave: the cursor moves to the table's largest id
        conn.execute("BEGIN")
        rows = conn.execute("SELECT f.id::text FROM feed_cursors c, hlculid_read(NULL::feed, c.last_id, 100) f "
                            "WHERE c.consumer = 'naive'").fetchall()
        conn.execute("UPDATE feed_cursors SET last_id = (SELECT max(id) FROM feed) WHERE consumer = 'naive'")
        conn.execute("COMMIT")
        return [r[0] for r in rows]

    stop_w, stop_r = threading.Event(), threading.Event()
    threads, errors = writers(c, stop_w, lambda conn, rnd: conn.execute(
        "INSERT INTO feed (body) SELECT 'e' FROM generate_series(1, %s)", (rnd.randint(1, 3),)))
    # two instances of the mailer take turns on its cursor's row; one search indexer; the naive group
    mailers = [Loop(c, group(poll), stop_r) for _ in range(2)]
    indexer, bad = Loop(c, group(other), stop_r), Loop(c, naive, stop_r)
    drive(mailers + [indexer, bad], stop_w, threads, errors, stop_r)

    committed = {r[0] for r in c.sql("SELECT id::text FROM feed")}
    assert len(committed) > 100
    mailed = mailers[0].seen + mailers[1].seen
    assert len(mailed) == len(set(mailed)), "two instances of one group read a row twice"
    assert set(mailed) == committed, f"the mailer lost {len(committed - set(mailed))} rows"
    assert mailers[0].runs and mailers[1].runs, "one instance never read: the test did not test turns"
    assert indexer.seen == sorted(committed, key=lambda i: i.replace("-", "")), "the indexer lost rows or left id order"
    for m in mailers + [indexer]:
        for rows in m.runs:
            assert rows == sorted(rows)
    lost = committed - set(bad.seen)
    assert lost, "the naive group lost nothing: the run made no late commits"
    # the cursors rest at the largest id each group got
    assert c.one("SELECT last_id::text FROM feed_cursors WHERE consumer = 'mailer'") == max(mailed)


def test_both_outbox_relays_publish_every_event_once_where_a_cursor_relay_loses_some(make_cluster):
    c = make_cluster("recipe-outbox", conf=["hlculid.publisher_id = 6"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("""CREATE TABLE outbox (id hlculid PRIMARY KEY DEFAULT hlculid_generate_tx(),
                                  topic text NOT NULL, payload jsonb NOT NULL)""")
    c.sql("CREATE TABLE outbox2 (LIKE outbox INCLUDING ALL)")
    c.sql("CREATE TABLE sent_log (id hlculid PRIMARY KEY)")
    relay = statements(recipe("transaction-groups.md", "outbox-relay"))
    ordered_block = recipe("transaction-groups.md", "outbox-relay-in-order")
    assert ordered_block.count("FROM outbox") == 2
    ordered = statements(ordered_block.replace("FROM outbox", "FROM outbox2"))

    def insert(conn, rnd):
        # one group: one to three events, the same ids in the second outbox and the log
        for k in range(rnd.randint(1, 3)):
            i = conn.execute("INSERT INTO outbox (topic, payload) VALUES ('t', %s) RETURNING id",
                             (f'{{"k": {k}}}',)).fetchone()[0]
            conn.execute("INSERT INTO outbox2 SELECT * FROM outbox WHERE id = %s", (i,))
            conn.execute("INSERT INTO sent_log VALUES (%s)", (i,))

    last = [ZERO]

    def cursor_relay(conn):
        rows = [r[0] for r in conn.execute("SELECT id::text FROM sent_log WHERE id > %s::hlculid ORDER BY id",
                                           (last[0],)).fetchall()]
        if rows:
            last[0] = rows[-1]
        return rows

    def as_text(stmts):
        return lambda conn: [str(r[0]) for r in run(conn, stmts) or []]

    stop_w, stop_r = threading.Event(), threading.Event()
    threads, errors = writers(c, stop_w, insert)
    a, b, bad = Loop(c, as_text(relay), stop_r), Loop(c, as_text(ordered), stop_r), Loop(c, cursor_relay, stop_r)
    drive([a, b, bad], stop_w, threads, errors, stop_r)

    committed = {r[0] for r in c.sql("SELECT id::text FROM sent_log")}
    tx = dict(c.sql("SELECT id::text, hlculid_tx(id)::text FROM sent_log"))
    assert len(committed) > 100
    assert c.one("SELECT count(*) FROM outbox") == c.one("SELECT count(*) FROM outbox2") == 0
    key = lambda i: i.replace("-", "")  # noqa: E731 - text order of the canonical form is id order
    for r in (a, b):
        assert len(r.seen) == len(set(r.seen)) and set(r.seen) == committed
        for rows in r.runs:
            assert rows == sorted(rows, key=key)
            groups = [tx[i] for i in rows]
            # each group whole and contiguous within one run
            assert all(groups.count(g) == sum(1 for i in committed if tx[i] == g) for g in set(groups))
            assert [g for k, g in enumerate(groups) if k == 0 or groups[k - 1] != g] == sorted(set(groups), key=key)
    assert b.seen == sorted(committed, key=key), "the in-order relay published out of id order"
    assert committed - set(bad.seen), "the cursor relay lost nothing: the run made no late commits"


def test_the_watermark_reader_loses_no_row_where_a_naive_cursor_loses_some(make_cluster):
    """This server is publisher 1 (its live horizon) and ingests publisher 2's events, whose
    ingester advances publisher 2's row after each commit."""
    c = make_cluster("recipe-watermark", conf=["hlculid.publisher_id = 1"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE inbox (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), name text)")
    two_statements = statements(recipe("reading-events.md", "watermark-two-statements"))
    assert [k for k, _ in two_statements] == ["gset", "sql"] and "ARRAY[1, 2]" in two_statements[0][1]
    stop_w, stop_r = threading.Event(), threading.Event()
    threads, errors = writers(c, stop_w, lambda conn, rnd: conn.execute("INSERT INTO inbox (name) VALUES ('1')"), n=4)

    def ingest():
        # publisher 2's events in its order, committed late, its row advanced after each commit
        # (times as exact milliseconds: to_timestamp(ms / 1000.0) can round one down, below a row)
        rnd, ms, counter = random.Random(2), 0, 0
        try:
            with c.connect(autocommit=False) as conn:
                while not stop_w.is_set():
                    for _ in range(rnd.randint(1, 3)):
                        now = int(time.time() * 1000)
                        ms, counter = (now, 0) if now > ms else (ms, counter + 1)
                        conn.execute("INSERT INTO inbox VALUES (hlculid_from_parts((timestamptz 'epoch' + %s * interval '1 millisecond'), %s, 2, %s), '2')",
                                     (ms, counter, rnd.randrange(1 << 48)))
                    time.sleep(rnd.random() * 0.04)
                    conn.commit()
                    conn.execute("SELECT hlculid_advance_horizon(2, hlculid_from_parts((timestamptz 'epoch' + %s * interval '1 millisecond'), %s, 0, 0))",
                                 (ms, counter + 1))
                    conn.commit()
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    ingester = threading.Thread(target=ingest, daemon=True)
    ingester.start()

    def cursor(query):
        last = [ZERO]

        def poll(conn):
            params = [last[0]]
            rows = [str(r[0]) for r in conn.execute(query, params).fetchall()]
            if rows:
                last[0] = rows[-1]
            return rows
        return poll

    helper = Loop(c, cursor("SELECT id FROM hlculid_read_watermark(NULL::inbox, %s::hlculid, ARRAY[1, 2], 500)"), stop_r)
    two = Loop(c, cursor_recipe(two_statements), stop_r)
    bad = Loop(c, cursor("SELECT id FROM inbox WHERE id > %s::hlculid ORDER BY id"), stop_r)
    # at the end both publishers are idle: this server's clock is brought up to the wall clock
    # (as the publisher worker's catch-up does; an idle clock's horizon stays at its last id,
    # which may be below publisher 2's last event), and publisher 2 reports everything up to it
    drive([helper, two, bad], stop_w, threads + [ingester], errors, stop_r,
          idle=lambda: c.sql("SELECT hlculid_advance_horizon(2, hlculid_horizon_catch_up())"))

    committed = {r[0] for r in c.sql("SELECT id::text FROM inbox")}
    assert c.one("SELECT count(DISTINCT hlculid_publisher(id)) FROM inbox") == 2
    assert len(committed) > 100
    for r in (helper, two):
        assert len(r.seen) == len(set(r.seen)) and set(r.seen) == committed, f"lost {len(committed - set(r.seen))}"
    assert committed - set(bad.seen), "the naive cursor lost nothing: the run made no late commits"


def test_the_watermark_in_the_reading_statement_passes_an_event_arriving_during_it(make_cluster):
    """The one-statement form 0.4.0's page gave: its snapshot predates the watermark it computes.
    Under REPEATABLE READ the watermark is an error with a hint; the helper reads the event."""
    c = make_cluster("recipe-watermark-race", conf=["hlculid.publisher_id = 1"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE inbox (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), w int)")
    late = c.connect(autocommit=False)
    late_id = late.execute("INSERT INTO inbox (w) VALUES (1) RETURNING id::text").fetchone()[0]
    threading.Timer(0.3, late.commit).start()
    rows = c.sql("SELECT id::text FROM inbox WHERE id < (SELECT hlculid_watermark(ARRAY[1]) FROM pg_sleep(1))")
    assert rows == []
    assert c.one("SELECT hlculid_watermark(ARRAY[1]) > %s::hlculid", (late_id,))
    assert c.sql("SELECT id::text FROM hlculid_read_watermark(NULL::inbox, NULL, ARRAY[1])") == [(late_id,)]
    late.close()
    # the helper reads by the index, once (0.4.0's page read `WHERE id < hlculid_watermark(...)`:
    # a filter calling the function for every row, 5.2 s for 20,004 rows)
    c.sql("INSERT INTO inbox (w) SELECT 2 FROM generate_series(1, 20000)")
    c.sql("ANALYZE inbox")
    with c.connect(autocommit=False) as conn:
        got = conn.execute("SELECT count(*) FROM hlculid_read_watermark(NULL::inbox, %s::hlculid, ARRAY[1], 10)",
                           (late_id,)).fetchone()[0]
        scans = conn.execute("SELECT idx_scan, seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'inbox'").fetchone()
    assert got == 10
    assert scans[0] >= 1 and scans[1] == 0, scans
    with c.connect(autocommit=False) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            conn.execute("SELECT hlculid_watermark()")
        assert "before BEGIN" in e.value.diag.message_hint
        conn.rollback()
        conn.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("SELECT * FROM hlculid_read_watermark(NULL::inbox, NULL)")
