"""Transaction-grouped ids against real servers: concurrent transactions interleaving their
inserts, many sessions at once, a prepared transaction, and restarts with the clock stepped
back. Semantics and errors one session can show are in tests/pg_regress/sql/tx.sql."""

import random
import threading

import psycopg


def setup(c):
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")
    c.sql("CREATE TABLE IF NOT EXISTS outbox (id hlculid PRIMARY KEY DEFAULT hlculid_generate_tx(),"
          " tx text NOT NULL, seq int NOT NULL)")


def groups_in_id_order(c):
    """The outbox in id order as runs of (tx, [seq...]), one per contiguous group."""
    runs = []
    for tx, seq, same_tx in c.sql(
            "SELECT tx, seq, hlculid_tx(id)::text FROM outbox ORDER BY id"):
        if runs and runs[-1][0] == tx:
            assert runs[-1][2] == same_tx, "one transaction, two transaction ids"
            runs[-1][1].append(seq)
        else:
            runs.append((tx, [seq], same_tx))
    return runs


def test_interleaved_transactions_sort_as_contiguous_groups_in_statement_order(make_cluster):
    c = make_cluster("tx-interleave").start()
    setup(c)
    conns = {name: c.connect(autocommit=False) for name in ("a", "b", "c")}
    # a, b, c take turns, 50 inserts each, and commit in another order than they began
    for seq in range(1, 51):
        for name, conn in conns.items():
            conn.execute("INSERT INTO outbox (tx, seq) VALUES (%s, %s)", (name, seq))
    for name in ("c", "a", "b"):
        conns[name].commit()
        conns[name].close()
    runs = groups_in_id_order(c)
    # three groups, each contiguous and in statement order, placed by their first insert
    assert [r[0] for r in runs] == ["a", "b", "c"]
    assert all(r[1] == list(range(1, 51)) for r in runs)
    offsets = c.sql("SELECT tx, array_agg(hlculid_tx_offset(id) ORDER BY seq) FROM outbox GROUP BY tx")
    assert all(o == list(range(1, 51)) for _, o in offsets)


def test_many_sessions_each_transaction_one_contiguous_group(make_cluster):
    c = make_cluster("tx-many").start()
    setup(c)
    errors = []

    def worker(k):
        rnd = random.Random(k)
        try:
            with c.connect(autocommit=False) as conn:
                for t in range(60):
                    name = f"{k}-{t}"
                    for seq in range(1, rnd.randint(1, 20) + 1):
                        conn.execute("INSERT INTO outbox (tx, seq) VALUES (%s, %s)", (name, seq))
                    if t % 7 == 3:
                        conn.rollback()  # an aborted transaction leaves no ids and no gap
                    else:
                        conn.commit()
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    runs = groups_in_id_order(c)
    names = [r[0] for r in runs]
    assert len(names) == len(set(names)), "a transaction's ids are not contiguous"
    assert len(names) == 4 * sum(1 for t in range(60) if t % 7 != 3)
    for _, seqs, _ in runs:
        assert seqs == list(range(1, len(seqs) + 1))
    # each session's transactions in the order it ran them
    for k in range(4):
        mine = [int(n.split("-")[1]) for n in names if n.startswith(f"{k}-")]
        assert mine == sorted(mine)


def test_prepared_transaction_ends_the_group(make_cluster):
    c = make_cluster("tx-prepare", conf=["max_prepared_transactions = 2"]).start()
    setup(c)
    with c.connect(autocommit=True) as conn:
        conn.execute("BEGIN")
        first = conn.execute("SELECT hlculid_generate_tx()::text").fetchone()[0]
        conn.execute("PREPARE TRANSACTION 'tx-one'")
        # the same session's next transaction is a new group, offsets from 1
        conn.execute("BEGIN")
        second = [conn.execute("SELECT hlculid_generate_tx()::text").fetchone()[0] for _ in range(2)]
        conn.execute("COMMIT")
        conn.execute("COMMIT PREPARED 'tx-one'")
    assert second[0] > first and second[0][:17] != first[:17]  # another clock value
    assert [c.one("SELECT hlculid_tx_offset(%s::hlculid)", (i,)) for i in second] == [1, 2]


def test_groups_after_a_restart_with_the_clock_stepped_back_sort_after_earlier_ones(make_cluster):
    c = make_cluster("tx-restart", faketime=True).start()
    setup(c)
    with c.connect(autocommit=False) as conn:
        for t in range(20):
            for seq in range(1, 6):
                conn.execute("INSERT INTO outbox (tx, seq) VALUES (%s, %s)", (f"before-{t}", seq))
            conn.commit()
    c.stop()
    c.set_clock("-10")
    c.start()
    with c.connect(autocommit=False) as conn:
        for t in range(20):
            for seq in range(1, 6):
                conn.execute("INSERT INTO outbox (tx, seq) VALUES (%s, %s)", (f"after-{t}", seq))
            conn.commit()
    # and a crash of the whole server with the clock further back
    c.set_clock("-20")
    with c.connect(autocommit=False) as conn:
        conn.execute("INSERT INTO outbox (tx, seq) VALUES ('crash', 1)")
        conn.commit()
    c.kill9_all()
    c.start()
    with c.connect(autocommit=False) as conn:
        conn.execute("INSERT INTO outbox (tx, seq) VALUES ('recovered', 1)")
        conn.commit()
    runs = groups_in_id_order(c)
    assert [r[0] for r in runs] == ([f"before-{t}" for t in range(20)] + [f"after-{t}" for t in range(20)]
                                    + ["crash", "recovered"])
    assert all(r[1] == list(range(1, len(r[1]) + 1)) for r in runs)
