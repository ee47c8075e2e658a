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
_CROCKFORD_VALUE.update({"I": 1, "L": 1, "O": 0})


def _parse(text):
    """Every text form the server accepts: 12-4-4-12 hex, 32 hex, 8-4-4-4-12, a 26-char ULID."""
    s = text.strip() if isinstance(text, str) else text.decode()
    n = len(s)
    if n == 35 and s[12] == s[17] == s[22] == "-":
        return int(s.replace("-", ""), 16)
    if n == 36 and s[8] == s[13] == s[18] == s[23] == "-":
        return int(s.replace("-", ""), 16)
    if n == 32 and "-" not in s:
        return int(s, 16)
    if n == 26:
        v = 0
        for c in s.upper():
            v = (v << 5) | _CROCKFORD_VALUE[c]
        if v >> 128:
            raise ValueError(f"invalid hlculid {text!r}: the ULID value exceeds 128 bits")
        return v
    raise ValueError(f"invalid hlculid {text!r}")


class Hlculid(uuid.UUID):
    """An hlculid. Hlculid("017FC21C5E7A-0000-000A-AAA111111111"), Hlculid(bytes=b), Hlculid(int=i)."""

    __slots__ = ()

    def __init__(self, text=None, *, bytes=None, int=None):  # noqa: A002 - uuid.UUID's names
        if text is not None:
            try:
                int = _parse(text)
            except (KeyError, ValueError) as e:
                raise ValueError(f"invalid hlculid {text!r}") from e
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

async def register_asyncpg(conn, schema="public", binary=True):
    """hlculid columns as Hlculid and Hlculid (or any uuid.UUID, or a string) parameters, in
    binary (default) or text."""
    if binary:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="binary",
            encoder=lambda v: v.bytes if isinstance(v, uuid.UUID) else Hlculid(v).bytes,
            decoder=lambda b: Hlculid(bytes=b))
    else:
        await conn.set_type_codec(
            "hlculid", schema=schema, format="text",
            encoder=lambda v: str(v if isinstance(v, Hlculid) else Hlculid(str(v))),
            decoder=Hlculid)
