"""hlculid for Python applications: an id type, a client-side generator, and adapters for
psycopg 3 and asyncpg. One file with no dependencies beyond the drivers; copy it into a project.

The id type is a subclass of uuid.UUID: the same 16 bytes in the same order (uuid.UUID compares
by its 128-bit integer, which is the id's big-endian value), so it hashes, sorts, pickles and goes
wherever a UUID goes (JSON encoders, ORMs, uuid columns), and adds what an hlculid has: the
canonical 12-4-4-12 text form and the fields.
"""

import secrets
import threading
import time
import uuid
from datetime import datetime, timezone

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_VALUE = {c: i for i, c in enumerate(_CROCKFORD)}
_CROCKFORD_VALUE.update({c.lower(): i for c, i in list(_CROCKFORD_VALUE.items())})
_HEX = frozenset("0123456789abcdefABCDEF")
# Where the hyphens of each hex form sit, by length: canonical 12-4-4-12, 32 digits, uuid 8-4-4-4-12.
_HYPHENS = {35: (12, 17, 22), 32: (), 36: (8, 13, 18, 23)}


def _parse(text):
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
        return int(digits, 16)
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

    def __init__(self, text=None, *, bytes=None, int=None):  # noqa: A002 - uuid.UUID's names
        if text is not None:
            try:
                int = _parse(text)
            except ValueError as e:
                raise ValueError(f"invalid hlculid {text!r}: {e}") from e
        super().__init__(bytes=bytes, int=int)

    def __str__(self):
        h = self.hex.upper()
        return f"{h[:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def __repr__(self):
        return f"Hlculid('{self}')"

    @property
    def ms(self):
        return self.int >> 80

    @property
    def counter(self):
        return (self.int >> 64) & 0xFFFF

    @property
    def publisher(self):
        return (self.int >> 48) & 0xFFFF

    @property
    def random(self):
        return self.int & 0xFFFF_FFFF_FFFF

    @property
    def ts(self):
        return datetime.fromtimestamp(self.ms / 1000, tz=timezone.utc)

    def ulid(self):
        v, out = self.int, []
        for _ in range(26):
            out.append(_CROCKFORD[v & 31])
            v >>= 5
        return "".join(reversed(out))

    @classmethod
    def min_of(cls, ts):
        """The smallest id of the millisecond containing ts (a datetime), like hlculid_min."""
        return cls(int=(int(ts.timestamp() * 1000) << 80))

    @classmethod
    def max_of(cls, ts):
        return cls(int=(int(ts.timestamp() * 1000) << 80) | ((1 << 80) - 1))


class Generator:
    """Ids made in this process with the server's clock rule: L = max(L + 1, now_ms << 16), one
    step per id under a lock, so ids increase even when the system clock steps back. In memory
    only: for ids that keep increasing across restarts, use the Rust crate's persisted
    generator, or let the server make them."""

    def __init__(self, publisher):
        if not 0 <= publisher <= 0xFFFF:
            raise ValueError("publisher must be between 0 and 65535")
        self.publisher = publisher
        self._logical = 0
        self._lock = threading.Lock()

    def generate(self):
        now = time.time_ns() // 1_000_000
        with self._lock:
            self._logical = max(self._logical + 1, now << 16)
            logical = self._logical
        return Hlculid(int=(logical << 64) | (self.publisher << 48) | secrets.randbits(48))

    def observe(self, remote):
        """The receive rule: later ids sort after remote."""
        with self._lock:
            self._logical = max(self._logical, remote.int >> 64)


# -- psycopg 3 -----------------------------------------------------------------------------------

def register_psycopg(conn):
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
    return info


# -- asyncpg -------------------------------------------------------------------------------------

def _as_hlculid(v):
    """A parameter for an hlculid: an Hlculid; a uuid.UUID of the same bytes, except a random
    (version 4) uuid, which is refused as the server's uuid cast refuses it; or a string in any
    accepted text form."""
    if isinstance(v, Hlculid):
        return v
    if isinstance(v, uuid.UUID):
        if v.version == 4:  # version nibble 4 and the RFC variant, as the server checks
            raise ValueError(f"cannot use a random uuid (version 4) as an hlculid: {v}; "
                             "make ids with Generator.generate() or hlculid_generate()")
        return Hlculid(bytes=v.bytes)
    return Hlculid(v)


async def register_asyncpg(conn, schema="public", binary=True):
    """hlculid columns as Hlculid, and Hlculid (or uuid.UUID, or string) parameters, in binary
    (default) or text."""
    if binary:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="binary",
            encoder=lambda v: _as_hlculid(v).bytes,
            decoder=lambda b: Hlculid(bytes=b))
    else:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="text",
            encoder=lambda v: str(_as_hlculid(v)),
            decoder=Hlculid)
