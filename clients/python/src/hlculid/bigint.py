"""Bigint ids: BigId, the 64-bit id of a `bigint` column, [0][42-bit Unix ms][11-bit counter]
[10-bit publisher], from the same clock as the 128-bit ids; read from an int or its canonical
decimal string (tests/data/bigint_forms.json), and written to JSON as that string
(json_default), never as a number."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from typing import Any, Union

from .ids import Hlculid


BIGINT_MAX_MS = (1 << 42) - 1  # 2109-05-15 07:35:11.103 UTC
BIGINT_COUNTER_VALUES = 1 << 11  # ids a millisecond per publisher
BIGINT_MAX_PUBLISHER = (1 << 10) - 1
_I64_MAX = (1 << 63) - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def _parse_decimal(text: str) -> int:
    """The value of a bigint id's decimal string, in exactly the form the crate and the Node
    client accept (see tests/data/bigint_forms.json): ASCII digits without sign, white space,
    underscores, prefix or leading zero, so that one id has one string. int() would also take
    white space, '_', '+' and non-ASCII digits."""
    if not isinstance(text, str):
        raise TypeError(f"a bigint id is read from int or str, not {type(text).__name__}")
    if text == "":
        raise ValueError("a bigint id cannot be empty")
    if text[0] == "-" and text[1:].isascii() and text[1:].isdigit():
        raise ValueError("a bigint id is never negative")
    if not (text.isascii() and text.isdigit()):
        at = next(i for i, c in enumerate(text) if not ("0" <= c <= "9"))
        raise ValueError(f"a bigint id is written in decimal digits only; character {at} is not one")
    if len(text) > 1 and text[0] == "0":
        raise ValueError("a bigint id is written without leading zeros")
    v = int(text)
    if v > _I64_MAX:
        raise ValueError("a bigint id is at most 9223372036854775807")
    return v


@functools.total_ordering
class BigId:
    """A bigint id. BigId(3565158400000005162) (an int, as psycopg and asyncpg return bigint
    columns), BigId("3565158400000005162") (its decimal string, as JSON carries it), or
    BigId.from_fields(ms, counter, publisher). Ordered like the ids themselves, hashable,
    immutable; int(b) is the bigint value."""

    __slots__ = ("_v",)
    _v: int

    def __init__(self, value: Union[BigId, int, str]) -> None:
        if isinstance(value, BigId):
            v = value._v
        elif isinstance(value, int) and not isinstance(value, bool):
            v = int(value)
        elif isinstance(value, str):
            try:
                v = _parse_decimal(value)
            except ValueError as e:
                raise ValueError(f"invalid bigint id {value!r}: {e}") from e
        else:
            raise TypeError(f"a bigint id is made from int or str, not {type(value).__name__}")
        if not 0 <= v <= _I64_MAX:
            raise ValueError(f"bigint id {v} is out of range: an id is between 0 and {_I64_MAX}")
        object.__setattr__(self, "_v", v)

    def __setattr__(self, name, value):
        raise AttributeError("a BigId is immutable")

    def __reduce__(self):
        return (BigId, (self._v,))

    @classmethod
    def from_fields(cls, ms: int, counter: int, publisher: int) -> BigId:
        for name, v, top in (("timestamp (ms)", ms, BIGINT_MAX_MS),
                             ("counter", counter, BIGINT_COUNTER_VALUES - 1),
                             ("publisher", publisher, BIGINT_MAX_PUBLISHER)):
            if not 0 <= v <= top:
                raise ValueError(f"{name} {v} does not fit a bigint id (0 to {top})")
        return cls((ms << 21) | (counter << 10) | publisher)

    def __int__(self) -> int:
        return self._v

    __index__ = __int__

    def __str__(self) -> str:
        return str(self._v)

    def __repr__(self) -> str:
        return f"BigId('{self._v}')"

    def __eq__(self, other: object) -> bool:
        return self._v == other._v if isinstance(other, BigId) else NotImplemented

    def __lt__(self, other: BigId) -> bool:
        return self._v < other._v if isinstance(other, BigId) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._v)

    @property
    def ms(self) -> int:
        return self._v >> 21

    @property
    def counter(self) -> int:
        return (self._v >> 10) & (BIGINT_COUNTER_VALUES - 1)

    @property
    def publisher(self) -> int:
        return self._v & BIGINT_MAX_PUBLISHER

    @property
    def ts(self) -> datetime:
        """The millisecond, exactly (an aware UTC datetime), as hlculid_bigint_ts gives it."""
        return _EPOCH + self.ms * _MS

    @classmethod
    def min_of(cls, ts: datetime) -> BigId:
        """The smallest bigint id of the millisecond containing ts, like hlculid_bigint_min (a
        naive datetime is local time, as datetime.timestamp() takes it)."""
        return cls.from_fields(_ms_of(ts), 0, 0)

    @classmethod
    def max_of(cls, ts: datetime) -> BigId:
        return cls.from_fields(_ms_of(ts), BIGINT_COUNTER_VALUES - 1, BIGINT_MAX_PUBLISHER)

    def to_hlculid(self) -> Hlculid:
        """The 128-bit id with the same time, counter and publisher and random bits 0, as
        hlculid_from_bigint: it sorts among 128-bit ids where this id's clock value lies."""
        return Hlculid(int=(self.ms << 80) | (self.counter << 64) | (self.publisher << 48))

    @classmethod
    def from_hlculid(cls, id_: Hlculid) -> BigId:
        """The bigint id with a 128-bit id's time, counter and publisher (its random bits are
        dropped), as hlculid_to_bigint; ValueError when one does not fit."""
        try:
            return cls.from_fields(id_.ms, id_.counter, id_.publisher)
        except ValueError as e:
            raise ValueError(f"hlculid {id_} does not fit a bigint id: {e}") from e


def _ms_of(ts: datetime) -> int:
    return (ts.astimezone(timezone.utc) - _EPOCH) // _MS

def json_default(obj: Any) -> str:
    """For json.dumps(..., default=json_default): a BigId as its decimal string (never a number:
    JavaScript would round it), an Hlculid as its canonical string."""
    if isinstance(obj, (BigId, Hlculid)):
        return str(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
