"""A named consumer of an hlculid table (psycopg 3): the server keeps its position, this loop
waits for rows (hlculid_consumer_wait, which sleeps until a commit makes rows readable), takes the
next batch (hlculid_consume) and calls the handler inside the same transaction, so what the handler
writes in it happens exactly once with the move of the position.

A handler that raises: the batch rolls back (its rows come again), then the same rows are handled
one by one, each under a savepoint; a row that still fails is scheduled for a retry with
hlculid_consume_retry (after `retry_delay`; past the consumer's max_attempts it is parked in
hlculid.hlculid_dead_letters) and the consumer moves on.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

Row = Dict[str, Any]
Handler = Callable[[List[Row], Any], None]

_IDLE, _WAITING, _BUSY = 0, 1, 2


class _HandlerFailed(Exception):
    def __init__(self, cause: BaseException):
        super().__init__(cause)
        self.cause = cause


class Consumer:
    """Consumer(dsn, table, name): the consumer `name` of `table` (a table name, schema-qualified
    if needed). It is created on the first run if it does not exist, at `start_after` (an id) or
    `start_at` (a datetime; `datetime.now(timezone.utc)` = from now) or else the start of the table,
    with `max_attempts` (the server's default, 5, when None). Options of an existing consumer are
    left as they are.

        def handle(rows, conn):        # rows: dicts, ids as Hlculid; conn: the open transaction
            for r in rows:
                conn.execute("INSERT INTO mail_outbox (event_id) VALUES (%s)", (r["id"],))

        c = Consumer("dbname=app", "events", "mailer")
        c.run(handle)                   # until c.stop() (from another thread) or SIGTERM/SIGINT

    `lag` is how far behind the consumer is, in seconds, a number to export: 0 after a batch that
    took every readable row (fewer than batch_size) or a wait that timed out, else the age of the
    last row it took (the time in its id against this machine's clock); None before the first
    batch.
    """

    def __init__(self, dsn: str, table: str, name: str, *, batch_size: int = 1000, wait_timeout: float = 30.0,
                 retry_delay: float = 10.0, max_attempts: Optional[int] = None, start_after: Any = None,
                 start_at: Any = None, id_column: str = "id",
                 on_error: Optional[Callable[[Row, BaseException, bool], None]] = None):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.dsn, self.table, self.name = dsn, table, name
        self.batch_size, self.wait_timeout, self.retry_delay = batch_size, wait_timeout, retry_delay
        self.max_attempts, self.start_after, self.start_at = max_attempts, start_after, start_at
        self.id_column, self.on_error = id_column, on_error
        self.lag: Optional[float] = None
        self.consumed = self.retried = self.dead_lettered = 0
        self._conn: Any = None
        self._row_type = ""
        self._lock = threading.RLock()  # stop() may run in a signal handler of the thread holding it
        self._state = _IDLE
        self._stopping = False
        self._cancelled = False

    # -- life cycle ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Ends run() after the batch in hand (which commits); a wait in progress is cancelled.
        Safe from another thread and from a signal handler."""
        with self._lock:
            self._stopping = True
            if self._state == _WAITING and self._conn is not None:
                self._cancelled = True
                self._conn.cancel()

    def run(self, handler: Handler, *, handle_signals: bool = False) -> None:
        """Handles batches until stop(). handle_signals: SIGTERM and SIGINT call stop() (main
        thread only)."""
        previous = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for s in (signal.SIGTERM, signal.SIGINT):
                previous[s] = signal.signal(s, lambda *_: self.stop())
        try:
            self._open()
            full = True
            while not self._stopping:
                if not full and not self._wait():
                    continue
                if self._stopping:
                    break
                n = self._batch(handler)
                full = n >= self.batch_size
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            self.close()
            self._stopping = self._cancelled = False  # run() may be called again

    def run_once(self, handler: Handler) -> int:
        """One batch (no wait): the number of rows it took (0 when none was readable)."""
        self._open()
        return self._batch(handler)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """True as soon as the consumer has rows to take, False at the timeout."""
        self._open()
        return bool(self._conn.execute("SELECT pg_catalog.hlculid_consumer_wait(%s, %s * interval '1 second')",
                                       (self.name, self.wait_timeout if timeout is None else timeout)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            conn, self._conn, self._state = self._conn, None, _IDLE
        if conn is not None:
            conn.close()

    def __enter__(self) -> "Consumer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the loop's steps ------------------------------------------------------------------------

    def _open(self) -> None:
        if self._conn is not None:
            return
        import psycopg
        from psycopg import errors

        from .adapters import register_psycopg

        conn = psycopg.connect(self.dsn, autocommit=True)
        register_psycopg(conn)
        # regclass's text is the name quoted as needed (qualified when not on the path)
        self._row_type = conn.execute("SELECT %s::regclass::text", (self.table,)).fetchone()[0]
        args = {"start_after": self.start_after, "start_at": self.start_at, "max_attempts": self.max_attempts}
        casts = {"start_after": "hlculid", "start_at": "timestamptz", "max_attempts": "int4"}
        named = "".join(f", {k} => %({k})s::{casts[k]}" for k, v in args.items() if v is not None)
        try:
            conn.execute(f"SELECT pg_catalog.hlculid_consumer_create(%(name)s, %(tbl)s::regclass{named}, "
                         "id_column => %(col)s)",
                         {"name": self.name, "tbl": self.table, "col": self.id_column,
                          **{k: v for k, v in args.items() if v is not None}})
        except errors.DuplicateObject:
            pass  # it exists: its position and options stay
        self._conn = conn

    def _wait(self) -> bool:
        from psycopg import errors

        with self._lock:
            if self._stopping:
                return False
            self._state = _WAITING
        try:
            got = self.wait()
        except errors.QueryCanceled:
            if not self._cancelled:
                raise
            got = False
        finally:
            with self._lock:
                self._state = _BUSY
        if not got:
            self.lag = 0.0  # nothing was readable
        return got

    def _consume(self) -> List[Row]:
        from psycopg.rows import dict_row

        cur = self._conn.cursor(row_factory=dict_row)
        # the type name comes from regclass's own quoting, so it is safe to splice
        return cur.execute(f"SELECT * FROM pg_catalog.hlculid_consume(%s, NULL::{self._row_type}, %s)",
                           (self.name, self.batch_size)).fetchall()

    def _batch(self, handler: Handler) -> int:
        conn = self._conn
        try:
            with conn.transaction():
                rows = self._consume()
                if rows:
                    try:
                        handler(rows, conn)
                    except Exception as e:  # the handler's, not ours: handle the rows one by one
                        raise _HandlerFailed(e) from e
            self.consumed += len(rows)
        except _HandlerFailed:
            rows = self._one_by_one(handler)
        self._note_lag(rows)
        return len(rows)

    def _one_by_one(self, handler: Handler) -> Sequence[Row]:
        conn = self._conn
        retried = dead = 0
        with conn.transaction():
            rows = self._consume()
            for row in rows:
                try:
                    with conn.transaction():  # a savepoint
                        handler([row], conn)
                except Exception as e:
                    scheduled = conn.execute(
                        "SELECT pg_catalog.hlculid_consume_retry(%s, %s, %s * interval '1 second', %s)",
                        (self.name, row[self.id_column], self.retry_delay, f"{type(e).__name__}: {e}")).fetchone()[0]
                    retried, dead = retried + bool(scheduled), dead + (not scheduled)
                    if self.on_error is not None:
                        self.on_error(row, e, bool(scheduled))
        self.consumed += len(rows) - retried - dead
        self.retried += retried
        self.dead_lettered += dead
        return rows

    def _note_lag(self, rows: Sequence[Row]) -> None:
        if len(rows) < self.batch_size:
            self.lag = 0.0
        else:
            from .ids import as_hlculid

            self.lag = max(0.0, time.time() - as_hlculid(rows[-1][self.id_column]).ms / 1000)
