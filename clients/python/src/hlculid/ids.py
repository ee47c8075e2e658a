"""The id type, Hlculid, and its text forms: the canonical 12-4-4-12 hex, 32 hex digits, the uuid
spelling 8-4-4-4-12 and the 26-character ULID, read exactly as the server reads them
(tests/data/text_forms.json); as_hlculid, what the adapters take as a parameter."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Optional, Union


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
