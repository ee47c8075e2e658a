"""The SQLAlchemy 2 recipe (clients/python/src/hlculid/sqlalchemy.py, module hlculid.sqlalchemy) with psycopg 3 against a real
server, in the ORM's own idioms: a declarative model whose key is `hlculid` with the server
default hlculid_generate(), 10,000 rows with server ids and 10,000 with client ids, a time window
with bound ids (an index range scan, checked with EXPLAIN), ordering, and lookups by id."""

import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from conftest import N
from hlculid import Generator, Hlculid
from hlculid.sqlalchemy import HlculidType
from sqlalchemy import event, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.schema import CreateTable


class Base(DeclarativeBase):
    pass


class Event(Base):
    __tablename__ = "sa_events"
    id: Mapped[Hlculid] = mapped_column(HlculidType, primary_key=True, server_default=func.hlculid_generate())
    n: Mapped[int]


@pytest.fixture
def engine(server):
    url = sa.URL.create("postgresql+psycopg", username="postgres", port=server.port, database="postgres",
                        query={"host": str(server.dir)})
    eng = sa.create_engine(url)
    # plans[...] gets the server's plan of a statement run with execution_options(explain=True),
    # with the very parameters the ORM bound
    plans = []

    @event.listens_for(eng, "before_cursor_execute")
    def explain(conn, cursor, statement, parameters, context, executemany):
        if context is not None and context.execution_options.get("explain"):
            cursor.execute("EXPLAIN (COSTS OFF) " + statement, parameters)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))

    eng.plans = plans
    Base.metadata.drop_all(eng)
    Base.metadata.create_all(eng)
    yield eng
    eng.dispose()


def test_create_all_makes_an_hlculid_column_with_the_server_default(engine):
    ddl = str(CreateTable(Event.__table__).compile(engine))
    assert "id hlculid DEFAULT hlculid_generate() NOT NULL" in ddl
    with engine.connect() as conn:
        row = conn.execute(sa.text(
            "SELECT format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid) "
            "FROM pg_attribute a JOIN pg_attrdef d ON (d.adrelid, d.adnum) = (a.attrelid, a.attnum) "
            "WHERE a.attrelid = 'sa_events'::regclass AND a.attname = 'id'")).one()
    assert tuple(row) == ("hlculid", "hlculid_generate()")


def test_server_and_client_ids_round_trip_and_a_window_is_an_index_range_scan(engine):
    # 1. server ids. The unit of work reads each new object's id back through RETURNING, one
    # INSERT per object: SQLAlchemy batches an INSERT .. RETURNING only when it can match the rows
    # to the objects (an integer autoincrement key or client-side keys), so the 10,000 go through
    # an ORM bulk INSERT .. RETURNING, batched.
    with Session(engine, expire_on_commit=False) as session:
        few = [Event(n=i) for i in range(100)]
        session.add_all(few)
        session.commit()
        bulk = session.scalars(sa.insert(Event).returning(Event), [{"n": i} for i in range(100, N)]).all()
        session.commit()
    server_rows = [(e.id, e.n) for e in few + bulk]
    server_ids = [i for i, _ in server_rows]
    assert all(type(i) is Hlculid for i in server_ids)
    assert len(set(server_ids)) == N and all(i.publisher == 50 for i in server_ids)
    assert [i for i, _ in server_rows[:100]] == sorted(server_ids[:100])  # in the order of the inserts
    # 2. client ids, made after the server's, bound as parameters
    gen = Generator(51)
    mine = [gen.generate() for _ in range(N)]
    with Session(engine) as session:
        session.add_all([Event(id=i, n=N + k) for k, i in enumerate(mine)])
        session.commit()
    with Session(engine) as session:
        # read back as Hlculid, equal and in the client's order, and the server reads the bytes
        # the client meant (its own text form and fields of each id)
        rows = session.execute(
            select(Event.id, Event.n, sa.cast(Event.id, sa.Text).label("text"),
                   func.hlculid_publisher(Event.id).label("publisher"), func.hlculid_ts(Event.id).label("ts")).order_by(Event.id)).all()
        assert [r[0] for r in rows] == sorted(server_ids + mine)
        assert [(r[0], r[1]) for r in rows if r[1] >= N] == [(i, N + k) for k, i in enumerate(mine)]
        assert {r[0]: r[1] for r in rows if r[1] < N} == dict(server_rows)
        assert all(type(r[0]) is Hlculid and str(r[0]) == r[2] and r[0].publisher == r[3] and r[0].ts == r[4]
                   for r in rows)
        assert [e.id for e in session.scalars(select(Event).where(Event.n >= N).order_by(Event.id))] == mine

    # 3. a time window with bound ids: the client's rows of a stretch of milliseconds, exactly
    lo, hi = Hlculid.min_of(mine[N // 4].ts), Hlculid.max_of(mine[N // 2].ts + timedelta(milliseconds=1))
    expected = sorted(i for i in server_ids + mine if lo <= i <= hi)
    assert N // 4 < len(expected) < 2 * N
    with engine.connect() as conn:
        conn.execute(sa.text("ANALYZE sa_events"))
    with Session(engine) as session:
        session.execute(sa.text("SET LOCAL enable_seqscan = off"))  # an index scan if one can be used
        window = select(Event).where(Event.id.between(lo, hi)).order_by(Event.id)
        assert "::hlculid" in str(window.compile(engine))
        got = [e.id for e in session.scalars(window.execution_options(explain=True))]
        assert got == expected
        plan = engine.plans.pop()
        assert "Seq Scan" not in plan and "Index Cond: ((id >= '" in plan and "::hlculid" in plan, plan
        assert "::text" not in plan and "::uuid" not in plan and "::character varying" not in plan, plan
        got = session.scalars(select(Event.id).where(Event.id >= lo, Event.id <= hi).order_by(Event.id)).all()
        assert got == expected
        # the recipe: in_range, `id <@ tstzrange(...)`, estimated by the planner, an index scan too
        in_range = select(Event).where(Event.id.in_range(lo.ts, hi.ts + timedelta(milliseconds=1))).order_by(Event.id)
        assert "<@ tstzrange(" in str(in_range.compile(engine))
        got = [e.id for e in session.scalars(in_range.execution_options(explain=True))]
        assert got == expected
        plan = engine.plans.pop()
        assert "Seq Scan" not in plan and "Index Cond" in plan, plan
        closed = select(Event.id).where(Event.id.in_range(lo.ts, hi.ts - timedelta(milliseconds=1), "[]")).order_by(Event.id)
        assert session.scalars(closed).all() == [i for i in expected if i.ms < hi.ms]
        with pytest.raises(ValueError, match="range bounds"):
            Event.id.in_range(lo.ts, hi.ts, "[[")

    # 4. lookups by id: an Hlculid, any text form of it, or a uuid.UUID of its bytes
    target = mine[N // 3]
    for key in (target, str(target), str(target).lower(), target.ulid(), uuid.UUID(int=target.int)):
        with Session(engine) as session:
            found = session.get(Event, key)
            assert found is not None and type(found.id) is Hlculid and found.id == target and found.n == N + N // 3
            assert session.scalars(select(Event.n).where(Event.id == key)).one() == N + N // 3
    # a string that is no id fails in the client, before any SQL is sent
    with Session(engine) as session, pytest.raises(sa.exc.StatementError, match="invalid hlculid"):
        session.execute(select(Event).where(Event.id == "not an id"))
    # and so does a random uuid (version 4), as the server's uuid cast refuses one
    with Session(engine) as session, pytest.raises(sa.exc.StatementError, match="random uuid"):
        session.execute(select(Event).where(Event.id == uuid.uuid4()))


def test_literal_binds_render_the_canonical_text(engine):
    id_ = Generator(52).generate()
    stmt = select(Event.n).where(Event.id == id_)
    sql = str(stmt.compile(engine, compile_kwargs={"literal_binds": True}))
    assert f"'{id_}'" in sql
    with engine.connect() as conn:
        assert conn.execute(sa.text(sql)).all() == []
