"""hlculid columns for SQLAlchemy 2 (PostgreSQL, with psycopg 3 or any driver that sends strings
untyped): `pip install "hlculid[sqlalchemy]"`.

    from sqlalchemy import func
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
    from hlculid import Hlculid
    from hlculid.sqlalchemy import HlculidType

    class Event(Base):
        __tablename__ = "events"
        id: Mapped[Hlculid] = mapped_column(HlculidType, primary_key=True,
                                            server_default=func.hlculid_generate())

    select(Event).where(Event.id.in_range(t1, t2))  # a time window: id <@ tstzrange(t1, t2, '[)')

The column is `hlculid` in DDL (metadata.create_all), loads as Hlculid, and takes an Hlculid, a
uuid.UUID or a string in any text form the server accepts. A parameter is sent as the canonical
text and typed hlculid in the statement (`%(id_1)s::hlculid`, SQLAlchemy's bind cast, rendered by
the psycopg and asyncpg dialects), so comparisons are hlculid against hlculid and use the key's
btree index. Left to SQLAlchemy's defaults, an Hlculid (a uuid.UUID subclass) would be bound as
`uuid`, which the server's cast refuses when its bits look like a random uuid, and a string as
`varchar`, for which hlculid has no btree operator.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hlculid import Hlculid, as_hlculid
from sqlalchemy import func
from sqlalchemy.types import UserDefinedType

_BOUNDS = ("[)", "[]", "(]", "()")


class HlculidType(UserDefinedType):
    """The `hlculid` column type: Python values are Hlculid."""

    cache_ok = True
    render_bind_cast = True

    class comparator_factory(UserDefinedType.Comparator):
        def in_range(self, start: datetime, end: datetime, bounds: str = "[)") -> Any:
            """`id <@ tstzrange(start, end, bounds)`: a time window the planner estimates from the
            column's statistics and turns into index conditions on the key (bounds '[)' by
            default: start included, end not). Prefer it to between(min_of(t1), max_of(t2)),
            which the planner misestimates."""
            if bounds not in _BOUNDS:
                raise ValueError(f"range bounds {bounds!r}: use one of {', '.join(_BOUNDS)}")
            return self.expr.op("<@", is_comparison=True)(func.tstzrange(start, end, bounds))

    def get_col_spec(self, **kw: Any) -> str:
        return "hlculid"

    @property
    def python_type(self):
        return Hlculid

    def bind_processor(self, dialect):
        def process(value):
            return None if value is None else str(as_hlculid(value))

        return process

    def literal_processor(self, dialect):
        def process(value):
            return f"'{as_hlculid(value)}'"  # the canonical form has no quote to escape

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            # text from a plain connection; already an Hlculid where
            # hlculid.register_psycopg was applied to the connection
            return None if value is None else as_hlculid(value)

        return process
