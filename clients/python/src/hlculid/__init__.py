"""hlculid for Python applications: an id type, a client-side generator, and adapters for
psycopg 3 and asyncpg (`pip install hlculid`; the SQLAlchemy and Django column types are the
modules hlculid.sqlalchemy and hlculid.django). No dependencies beyond the drivers.

The id type is a subclass of uuid.UUID: the same 16 bytes in the same order (uuid.UUID compares
by its 128-bit integer, which is the id's big-endian value), so it hashes, sorts, pickles and goes
wherever a UUID goes (JSON encoders, ORMs, uuid columns), and adds what an hlculid has: the
canonical 12-4-4-12 text form and the fields.

BigId is the 64-bit id of a `bigint` column, `[0][42-bit Unix ms][11-bit counter][10-bit
publisher]`, from the same clock. It is deliberately not an int: JSON encoders write ints as
numbers, which JavaScript and other double-based readers round above 2^53 (every id made after
1970-02-19), so a BigId is written as its decimal string (json.dumps(..., default=json_default))
and refuses to be encoded as a number by accident.

Mask (module hlculid.mask) is the keyed, reversible mask of ids shown outside, the server's
hlculid_mask and hlculid_mask_bigint: the same key gives the same values.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, Union

__version__ = "0.5.0"

# Any text form of an id the server reads, as str or ASCII bytes.
IdText = Union[str, bytes, bytearray, memoryview]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_VALUE = {c: i for i, c in enumerate(_CROCKFORD)}
_CROCKFORD_VALUE.update({c.lower(): i for c, i in list(_CROCKFORD_VALUE.items())})
_HEX = frozenset("0123456789abcdefABCDEF")
# Where the hyphens of each hex form sit, by length: canonical 12-4-4-12, 32 digits, uuid 8-4-4-4-12.
_HYPHENS = {35: (12, 17, 22), 32: (), 36: (8, 13, 18, 23)}


def _parse(text: IdText) -> int:
    """The integer value of an hlculid's text, in exactly the forms the server accepts (see
    tests/data/text_forms.json): 12-4-4-12 hex, 32 hex digits, 8-4-4-4-12, or a 26-character
    ULID (Crockford base32 without the I/L/O aliases, first character 0-7), in any letter case.
    Nothing else: no white space, signs, prefixes, braces or non-ASCII look-alikes (which int()
    and str.upper() would let through)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("ascii", errors="replace")
    if not isinstance(text, str):
        raise TypeError(f"an hlculid is read from str or bytes, not {type(text).__name__}")
    n = len(text)
    hyphens = _HYPHENS.get(n)
    if hyphens is not None:
        if any(text[i] != "-" for i in hyphens):
            raise ValueError("a hyphen is missing or misplaced")
        digits = "".join(c for i, c in enumerate(text) if i not in hyphens)
        if not _HEX.issuperset(digits):
            raise ValueError("not a hex digit")
        v = int(digits, 16)
        # the uuid spelling of a random uuid: refused, as the server's input and uuid cast do
        if n == 36 and (v >> 76) & 0xF == 4 and (v >> 62) & 0x3 == 2:
            raise ValueError("a random uuid (version 4 with the RFC 9562 variant) is not an hlculid: "
                             "its bytes would read as a time centuries ahead")
        return v
    if n == 26:
        v = 0
        for c in text:
            d = _CROCKFORD_VALUE.get(c)
            if d is None:
                raise ValueError(f"{c!r} is not a digit of a ULID")
            v = (v << 5) | d
        if v >> 128:
            raise ValueError("the ULID value exceeds 128 bits")
        return v
    raise ValueError(f"{n} characters; the accepted forms have 35, 32, 36 or 26")


class Hlculid(uuid.UUID):
    """An hlculid. Hlculid("017FC21C5E7A-0000-000A-AAA111111111"), Hlculid(bytes=b), Hlculid(int=i)."""

    __slots__ = ()

    def __init__(self, text: Optional[IdText] = None, *, bytes: Optional[bytes] = None,  # noqa: A002
                 int: Optional[int] = None) -> None:  # noqa: A002 - uuid.UUID's names
        if text is not None:
            try:
                int = _parse(text)
            except ValueError as e:
                raise ValueError(f"invalid hlculid {text!r}: {e}") from e
        super().__init__(bytes=bytes, int=int)

    def __str__(self) -> str:
        h = self.hex.upper()
        return f"{h[:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def __repr__(self) -> str:
        return f"Hlculid('{self}')"

    @property
    def ms(self) -> int:
        return self.int >> 80

    @property
    def counter(self) -> int:
        return (self.int >> 64) & 0xFFFF

    @property
    def publisher(self) -> int:
        return (self.int >> 48) & 0xFFFF

    @property
    def random(self) -> int:
        return self.int & 0xFFFF_FFFF_FFFF

    @property
    def ts(self) -> datetime:
        return datetime.fromtimestamp(self.ms / 1000, tz=timezone.utc)

    def ulid(self) -> str:
        v, out = self.int, []
        for _ in range(26):
            out.append(_CROCKFORD[v & 31])
            v >>= 5
        return "".join(reversed(out))

    @classmethod
    def min_of(cls, ts: datetime) -> Hlculid:
        """The smallest id of the millisecond containing ts (a datetime), like hlculid_min."""
        return cls(int=(int(ts.timestamp() * 1000) << 80))

    @classmethod
    def max_of(cls, ts: datetime) -> Hlculid:
        return cls(int=(int(ts.timestamp() * 1000) << 80) | ((1 << 80) - 1))


# -- bigint ids ----------------------------------------------------------------------------------

BIGINT_MAX_MS = (1 << 42) - 1  # 2109-05-15 07:35:11.103 UTC
BIGINT_COUNTER_VALUES = 1 << 11  # ids a millisecond per publisher
BIGINT_MAX_PUBLISHER = (1 << 10) - 1
_I64_MAX = (1 << 63) - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def _parse_decimal(text: str) -> int:
    """The value of a bigint id's decimal string, in exactly the form the crate and the Node
    client accept (see tests/clients/bigint_forms.json): ASCII digits without sign, white space,
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


# Random bits for Generator.generate(), drawn from the OS in blocks (one os.urandom per 1,024
# ids, 64 bits each, the top 48 used): os.urandom per id costs more than the rest of an id.
# Shared by every Generator: list.pop() hands each value to one caller even across threads. A
# forked child empties it, so parent and child never use the same bits.
_random_pool: list[int] = []
_random_pop = _random_pool.pop


def _refill_random():
    _random_pool.extend(memoryview(os.urandom(8 * 1024)).cast("Q"))
    return _random_pop()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_random_pool.clear)

_new_object = object.__new__
_set_slot = object.__setattr__  # uuid.UUID is immutable through its own __setattr__
_UNKNOWN = uuid.SafeUUID.unknown


# -- the clock ------------------------------------------------------------------------------------

MAX_MS = (1 << 48) - 1  # 10889-08-02 05:31:50.655 UTC, the last millisecond an id holds
DEFAULT_MAX_SKEW_MS = 500  # the server's hlculid.max_clock_skew and the crate's DEFAULT_MAX_SKEW
_EXHAUSTED = (1 << 64) - 1 - (1 << 40)  # the crate's clock::EXHAUSTED: no value at or above it
_RESERVED = _EXHAUSTED - 1  # an in-memory generator has reserved every value below it
_FAST_WALL_MAX = _EXHAUSTED >> 16  # a wall clock at or below it is a value below EXHAUSTED
_BACKWARD_STEP_THRESHOLD_MS = 10  # a smaller step back of the wall clock is not a step
_U64_MAX = (1 << 64) - 1
_RANDOM_BITS = (1 << 48) - 1


class HlculidError(Exception):
    """Why the Generator made no id or refused an observed one; the subclasses are the crate's
    hlculid_core::Error variants (the same cases, the same meaning). Nothing changed."""


class WallClockOutOfRange(HlculidError):
    """The system clock reads the Unix epoch itself, a time before it, or a time after
    10889-08-02: no id is made and nothing changes."""


class Exhausted(HlculidError):
    """The clock reached the end of the 48-bit millisecond range (the last 2^24 ms are kept
    back, as on the server)."""


class TooFarAhead(HlculidError, ValueError):
    """The observed id is ahead_ms ahead of the local clock, more than the generator's
    max_skew_ms; the clock was left unchanged."""

    def __init__(self, ahead_ms: int, max_skew_ms: int) -> None:
        super().__init__(f"the id is {ahead_ms} ms ahead of the local clock, more than the allowed "
                         f"skew of {max_skew_ms} ms; it was not observed")
        self.ahead_ms = ahead_ms


class RandomUuid(HlculidError, ValueError):
    """The observed value is a random uuid (version 4 with the RFC 9562 variant), not an id of any
    clock: refused whatever its time; the clock was left unchanged."""


class PublisherTooWideForBigint(HlculidError, ValueError):
    """A bigint id holds a publisher of 0 to 1023 only; this generator's is larger."""

    def __init__(self, publisher: int) -> None:
        super().__init__(f"publisher {publisher} does not fit a bigint id: a bigint id holds a "
                         f"publisher of 0 to {BIGINT_MAX_PUBLISHER}; make bigint ids with a "
                         "Generator whose publisher is in that range")
        self.publisher = publisher


class BigintTimeOutOfRange(HlculidError, ValueError):
    """The clock is past 2109-05-15 07:35:11.103 UTC, the last millisecond a bigint id holds."""




def _system_ms() -> int:
    """The system clock in Unix ms; 0 before the epoch, which the clock refuses."""
    return max(time.time_ns() // 1_000_000, 0)


def _sleep_ms(ms: int) -> None:
    time.sleep(ms / 1000)


def _uuid_int(text: str) -> int:
    """The value of an 8-4-4-4-12 uuid string, or -1 if it is not one."""
    try:
        return uuid.UUID(text).int if text.count("-") == 4 else -1
    except ValueError:
        return -1


def _is_random_uuid(v: int) -> bool:
    """Whether the 128-bit value v is a random uuid: version 4 and the RFC 9562 variant."""
    return (v >> 76) & 0xF == 4 and (v >> 62) & 0x3 == 2


class Generator:
    """Ids made in this process with the server's (and the crate's) clock, checked id by id against
    the crate's Generator (tests/data/clock_scenario.json):

    - generate: L = max(L + 1, now_ms << 16), one step per id under a lock, so ids increase even
      when the system clock steps back, and a counter past 0xFFFF carries into the next ms;
    - the run-ahead bound: generation never pushes the clock more than max_skew_ms beyond the
      system clock (or beyond where an observe or a backward step of the system clock put it); at
      the bound, generate() waits for the system clock to move on (sleeps of 1 to 10 ms);
    - observe: L = max(L, remote), refused (TooFarAhead, clock unchanged) for an id further ahead
      of the system clock than max_skew_ms, and (RandomUuid) for a random uuid.

    In memory only: for ids that keep increasing across restarts, use the Rust crate's persisted
    generator, or let the server make them. clock (Unix ms), sleep (ms) and random (48 bits a
    call, one call per 128-bit id) replace the system's, for tests and simulations."""

    def __init__(self, publisher: int, *, max_skew_ms: int = DEFAULT_MAX_SKEW_MS,
                 clock: Optional[Callable[[], int]] = None, sleep: Optional[Callable[[int], None]] = None,
                 random: Optional[Callable[[], int]] = None) -> None:
        if not (isinstance(publisher, int) and 0 <= publisher <= 0xFFFF):
            raise ValueError("publisher must be between 0 and 65535")
        if not (isinstance(max_skew_ms, int) and max_skew_ms >= 0):
            raise ValueError("max_skew_ms must be a whole number of ms, 0 or more")
        self.publisher = publisher
        self.max_skew_ms = max_skew_ms
        self._run_ahead_ms = min(max_skew_ms, MAX_MS)
        self._publisher_bits = publisher << 48
        self._clock = clock  # None: the system clock (read inline in generate())
        self._sleep = sleep or _sleep_ms
        self._random = random
        self._logical = 0  # L = (ms << 16) | counter, the last value issued
        self._last_wall = 0  # the latest wall clock reading, in ms
        self._anchor = 0  # where an observe or a backward step put the clock: the bound counts from it
        self.waits = 0  # calls that waited at the run-ahead bound
        self.backward_steps = 0  # steps back of the wall clock of more than 10 ms seen
        self._lock = threading.Lock()

    def _now(self) -> int:
        """The wall clock in Unix ms (0 before the epoch, which the clock refuses)."""
        return _system_ms() if self._clock is None else self._clock()

    def _take(self, counter_values: int) -> int:
        """The next clock value whose counter is below counter_values, under the lock: the crate's
        SharedClock::take for one value, with its wait at the bound (durable::settle_batch)."""
        waited = False
        while True:
            now = self._now()
            if not 1 <= now <= MAX_MS:
                raise WallClockOutOfRange(f"the system clock ({now} ms) is outside hlculid's time range")
            wall = min(now << 16, _EXHAUSTED)
            seen = self._last_wall
            if now > seen:
                self._last_wall = now
            elif seen - now > _BACKWARD_STEP_THRESHOLD_MS:
                # a step back: the bound counts from the clock before it, so ids go on unpaced
                self._anchor = max(self._anchor, min(seen << 16, _EXHAUSTED))
                self._last_wall = now
                self.backward_steps += 1
            base_ms = max(self._anchor >> 16, now)
            bound = min((base_ms + self._run_ahead_ms + 1) << 16, _U64_MAX) - 1
            logical = self._logical
            if logical >= _EXHAUSTED:
                raise Exhausted("the hlculid clock is exhausted")
            first = max(logical + 1, wall)
            if first & 0xFFFF >= counter_values:
                first = ((first >> 16) + 1) << 16
            if first > bound:
                if not waited:
                    waited = True
                    self.waits += 1
                wait = max(max((first >> 16) - self._run_ahead_ms, 0) - now, 1)
                self._sleep(min(wait, 10))
                continue
            if first > _RESERVED:
                raise Exhausted("the hlculid clock is exhausted")
            self._logical = first
            return first

    def generate(self) -> Hlculid:
        """The next id: greater than every id this generator returned before."""
        with self._lock:
            # The common case inline (the wall clock in range and not behind the last reading, the
            # value within the bound and the reservation): what _take does for it, without a call.
            clock = self._clock
            now = time.time_ns() // 1_000_000 if clock is None else clock()
            if 0 < now <= _FAST_WALL_MAX and now >= self._last_wall:
                self._last_wall = now
                logical = self._logical + 1
                if now << 16 > logical:
                    logical = now << 16
                anchor_ms = self._anchor >> 16
                if logical <= _RESERVED and logical >> 16 <= (now if now > anchor_ms else anchor_ms) + self._run_ahead_ms:
                    self._logical = logical
                else:
                    logical = self._take(0x10000)
            else:
                logical = self._take(0x10000)
        if self._random is not None:
            r = self._random() & _RANDOM_BITS
        else:
            try:
                r = _random_pop() >> 16
            except IndexError:
                r = _refill_random() >> 16
        # An Hlculid made as uuid.UUID.__init__ makes one, without re-checking a value built here.
        id_ = _new_object(Hlculid)
        _set_slot(id_, "int", (logical << 64) | self._publisher_bits | r)
        _set_slot(id_, "is_safe", _UNKNOWN)
        return id_

    def generate_bigint(self) -> BigId:
        """A bigint id from the same clock as generate(), so the two widths are ordered against
        each other (through BigId.to_hlculid): a clock value whose counter does not fit 11 bits
        (2048 or more) moves to the next millisecond, as on the server. PublisherTooWideForBigint
        (nothing taken) for a publisher over 1023; BigintTimeOutOfRange past 2109-05-15."""
        if self.publisher > BIGINT_MAX_PUBLISHER:
            raise PublisherTooWideForBigint(self.publisher)
        with self._lock:
            logical = self._take(BIGINT_COUNTER_VALUES)
        if logical >> 16 > BIGINT_MAX_MS:
            raise BigintTimeOutOfRange("the clock is past 2109-05-15 07:35:11.103 UTC, the last "
                                       "millisecond a bigint id can hold; use 128-bit ids")
        return BigId.from_fields(logical >> 16, logical & 0xFFFF, self.publisher)

    def horizon(self) -> Hlculid:
        """The horizon an application publisher reports (hlculid_advance_horizon(publisher,
        horizon) on the server): every id made before the call is below it, every id made after
        is at or above it. The clock is first brought up to the wall clock, so an idle
        publisher's horizon moves with time. Report it once every id made before it was sent."""
        with self._lock:
            logical = self._take(0x10000)
        return Hlculid(int=(logical + 1) << 64)

    def observe(self, remote: Union[uuid.UUID, IdText]) -> None:
        """The receive rule: every id generated afterwards sorts after remote (an Hlculid, a
        uuid.UUID or any accepted text form). An id at or below this generator's clock changes
        nothing and is always accepted. Refused, with the clock unchanged: a random uuid
        (RandomUuid), an id further ahead of the system clock than max_skew_ms (TooFarAhead), and
        any id while the system clock reads outside the id range (WallClockOutOfRange)."""
        if isinstance(remote, uuid.UUID):
            v = remote.int
        else:
            try:
                v = Hlculid(remote).int
            except ValueError:
                # the uuid spelling of a random uuid, which the text input refuses: a RandomUuid too
                if isinstance(remote, str) and len(remote) == 36 and _is_random_uuid(_uuid_int(remote)):
                    v = _uuid_int(remote)
                else:
                    raise
        if _is_random_uuid(v):
            raise RandomUuid(f"{Hlculid(int=v)} is a random uuid (version 4 with the RFC 9562 variant), "
                             "not an hlculid; it was not observed")
        r = min(v >> 64, _EXHAUSTED)
        with self._lock:
            if r <= self._logical:
                return
            now = self._now()
            if not 1 <= now <= MAX_MS:
                raise WallClockOutOfRange(f"the system clock ({now} ms) is outside hlculid's time range")
            ahead_ms = max((r >> 16) - now, 0)
            if ahead_ms > self.max_skew_ms:
                raise TooFarAhead(ahead_ms, self.max_skew_ms)
            if r > _RESERVED:
                raise Exhausted("the hlculid clock is exhausted")
            self._anchor = max(self._anchor, r)
            self._logical = r


# -- psycopg 3 -----------------------------------------------------------------------------------

def register_psycopg(conn: Any) -> Any:
    """Makes hlculid columns load as Hlculid (text and binary, including binary COPY) and
    Hlculid parameters dump as hlculid, on this connection."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "hlculid")
    if info is None:
        raise RuntimeError("the hlculid extension is not installed in this database")
    info.register(conn)  # also hlculid[]

    class TextLoader(Loader):
        def load(self, data):
            return Hlculid(bytes(data).decode())

    class BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return Hlculid(bytes=bytes(data))

    class TextDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return str(obj).encode()

    class BinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return obj.bytes

    adapters = conn.adapters
    adapters.register_loader(info.oid, TextLoader)
    adapters.register_loader(info.oid, BinaryLoader)
    adapters.register_dumper(Hlculid, TextDumper)
    adapters.register_dumper(Hlculid, BinaryDumper)
    register_psycopg_bigint(conn)
    return info


def register_psycopg_bigint(context: Any) -> None:
    """Makes BigId parameters dump as bigint (text and binary, binary COPY included) on a
    connection or cursor (register_psycopg does it too). bigint columns still load as int (they
    are not all ids): BigId(value) reads one."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    int8 = context.adapters.types["int8"].oid

    class BigIdTextDumper(Dumper):
        oid = int8

        def dump(self, obj):
            return str(obj).encode()

    class BigIdBinaryDumper(Dumper):
        format = Format.BINARY
        oid = int8

        def dump(self, obj):
            return int(obj).to_bytes(8, "big", signed=True)

    context.adapters.register_dumper(BigId, BigIdTextDumper)
    context.adapters.register_dumper(BigId, BigIdBinaryDumper)


def as_hlculid(v: Union[uuid.UUID, IdText]) -> Hlculid:
    """A parameter for an hlculid (the drivers' and the ORM recipes'): an Hlculid; a uuid.UUID of
    the same bytes, except a random (version 4) uuid, which is refused as the server's uuid cast
    refuses it; or a string in any accepted text form."""
    if isinstance(v, Hlculid):
        return v
    if isinstance(v, uuid.UUID):
        if v.version == 4:  # version nibble 4 and the RFC variant, as the server checks
            raise ValueError(f"cannot use a random uuid (version 4) as an hlculid: {v}; "
                             "make ids with Generator.generate() or hlculid_generate()")
        return Hlculid(bytes=v.bytes)
    return Hlculid(v)


# -- asyncpg -------------------------------------------------------------------------------------

async def register_asyncpg(conn: Any, schema: str = "public", binary: bool = True) -> None:
    """hlculid columns as Hlculid, and Hlculid (or uuid.UUID, or string) parameters, in binary
    (default) or text."""
    if binary:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="binary",
            encoder=lambda v: as_hlculid(v).bytes,
            decoder=lambda b: Hlculid(bytes=b))
    else:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="text",
            encoder=lambda v: str(as_hlculid(v)),
            decoder=Hlculid)


# -- RFC 9562 UUIDv7 form ------------------------------------------------------------------------

_V7_RAND_B = (1 << 62) - 1


def to_uuidv7(id: Union[Hlculid, IdText]) -> uuid.UUID:  # noqa: A002 - the SQL function's argument name
    """The RFC 9562 version 7 uuid.UUID of an id (an Hlculid or any accepted text form), as the
    server's hlculid_to_uuidv7 makes it: the same millisecond, version 7, the counter's top 12
    bits, the variant, the counter's low 4 bits, the publisher and the top 42 random bits. Keeps
    the order of ids; for validators and stores that accept only real uuids."""
    v = (id if isinstance(id, Hlculid) else Hlculid(id)).int
    rest = (v & ((1 << 80) - 1)) >> 6  # counter, publisher, top 42 random bits
    return uuid.UUID(int=(v >> 80) << 80 | 7 << 76 | (rest >> 62) << 64 | 0b10 << 62
                     | (rest & _V7_RAND_B))


def from_uuidv7(u: Union[uuid.UUID, str]) -> Hlculid:
    """The Hlculid a version 7 uuid stands for (a uuid.UUID or its text), as the server's
    hlculid_from_uuidv7 reads it: exact time, counter and publisher, the lowest 6 random bits 0.
    Any RFC 9562 v7 uuid is accepted, in the same order; ValueError for any other uuid."""
    if not isinstance(u, uuid.UUID):
        u = uuid.UUID(u)
    if u.variant != uuid.RFC_4122 or u.version != 7:
        raise ValueError(f"uuid {u} is not an RFC 9562 version 7 uuid "
                         f"(version field {u.int >> 76 & 0xF}, variant {u.variant})")
    v = u.int
    rest = (v >> 64 & 0xFFF) << 62 | (v & _V7_RAND_B)
    return Hlculid(int=(v >> 80) << 80 | rest << 6)


# -- masks (hlculid.mask imports the names above) ------------------------------------------------

from .mask import Mask  # noqa: E402
