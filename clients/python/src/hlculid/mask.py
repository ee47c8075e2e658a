"""Keyed, reversible masks for ids shown outside, as the server's hlculid_mask/hlculid_unmask and
hlculid_mask_bigint/hlculid_unmask_bigint and the crate's hlculid_core::mask make them: the same
key gives the same values in all of them (tests/data/mask_vectors.json).

    from hlculid import Mask
    m = Mask("000102030405060708090a0b0c0d0e0f")   # 32 hex digits, or 16 bytes
    shown = m.mask(id)          # a uuid.UUID: unrelated to the id's time, order or fields
    m.unmask(shown) == id       # the Hlculid back
    m.unmask_bigint(m.mask_bigint(big)) == big

Construction (the specification is the doc comment of core/src/mask.rs): a balanced Feistel
network of 8 rounds with SipHash-2-4 under the 16-byte key as its round function.
- 128 bits: the id's two 64-bit halves (big-endian); round i computes
  SipHash(0x80, i, half as 8 big-endian bytes).
- 63 bits (bigint ids 1 to 2^63 - 1): x - 1 is permuted by a Feistel on two 32-bit halves, round
  i computing the low 32 bits of SipHash(0x3F, i, half as 4 big-endian bytes), again until the
  value is at most 2^63 - 2 (cycle walking); then + 1.
A mask hides the id's fields and order from anyone without the key; it is no encryption of a
secret (anyone with the key unmasks every value, and an id always gives the same masked value).

With the same key, to_v4_facade/from_v4_facade make and read UUIDv47's v4 facade of the id's
UUIDv7 form (a valid version 4 uuid): only its time is masked, and it shows the id's counter and
publisher as they are (core/src/facade.rs).
"""

from __future__ import annotations

import uuid
from typing import Union

from .bigint import _I64_MAX, BigId
from .ids import Hlculid, IdText, as_hlculid
from .uuidv7 import from_uuidv7, to_uuidv7

__all__ = ["Mask", "siphash24"]

_M64 = (1 << 64) - 1
_M32 = (1 << 32) - 1
_ROUNDS = 8
_TAG_128 = 0x80
_TAG_63 = 0x3F
_TOP_63 = _I64_MAX - 1  # the largest value after x - 1
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def _siphash(k0: int, k1: int, message: bytes) -> int:
    """SipHash-2-4 (Aumasson and Bernstein, 2012) of message under the key halves k0, k1."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def sipround():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & _M64
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _M64
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _M64
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _M64
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)

    n = len(message)
    end = n - n % 8
    # whole 8-byte words, little-endian; then the last 0 to 7 bytes with the length's low byte on top
    words = [int.from_bytes(message[i:i + 8], "little") for i in range(0, end, 8)]
    words.append(int.from_bytes(message[end:], "little") | (n & 0xFF) << 56)
    for m in words:
        v3 ^= m
        sipround()
        sipround()
        v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        sipround()
    return v0 ^ v1 ^ v2 ^ v3


def siphash24(key: bytes, message: bytes) -> int:
    """SipHash-2-4 of message under a 16-byte key, as the 64-bit number the reference code
    returns (its 8 output bytes read little-endian): siphash24(bytes(range(16)), bytes(range(15)))
    is 0xa129ca6149be45e5, the paper's example."""
    if len(key) != 16:
        raise ValueError(f"a SipHash key is 16 bytes, not {len(key)}")
    return _siphash(int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little"), bytes(message))


def _key_bytes(key: Union[str, bytes, bytearray, memoryview]) -> bytes:
    """16 bytes, or 32 hex digits in either case and nothing else. Errors say what is wrong with the
    key's shape, never what it holds."""
    if isinstance(key, str):
        if len(key) != 32:
            raise ValueError(f"a mask key is 32 hex digits (16 bytes); the text given has {len(key)} characters")
        for at, c in enumerate(key):
            if c not in _HEX_DIGITS:
                raise ValueError(f"a mask key is 32 hex digits (16 bytes); character {at + 1} of the text "
                                 "given is not one")
        return bytes.fromhex(key)
    if isinstance(key, (bytes, bytearray, memoryview)):
        key = bytes(key)
        if len(key) != 16:
            raise ValueError(f"a mask key is 16 bytes (or 32 hex digits); {len(key)} bytes given")
        return key
    raise TypeError(f"a mask key is 16 bytes or 32 hex digits, not {type(key).__name__}")


def _positive(v: Union[BigId, int, str], what: str) -> int:
    if isinstance(v, BigId):
        v = int(v)
    elif isinstance(v, str):
        v = int(BigId(v))  # the canonical decimal form only
    elif isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} is an int, a BigId or a decimal string, not {type(v).__name__}")
    if not 1 <= v <= _I64_MAX:
        raise ValueError(f"the bigint masks map 1 to {_I64_MAX} onto themselves; {v} is outside that range")
    return v


class Mask:
    """A mask key (16 bytes, or 32 hex digits in either case). Its repr never shows the key."""

    __slots__ = ("_k0", "_k1")

    def __init__(self, key: Union[str, bytes, bytearray, memoryview]) -> None:
        k = _key_bytes(key)
        self._k0 = int.from_bytes(k[:8], "little")
        self._k1 = int.from_bytes(k[8:], "little")

    def __repr__(self) -> str:
        return "Mask(<hidden>)"

    # -- 128 bits ---------------------------------------------------------------------------------

    def _f128(self, i: int, half: int) -> int:
        return _siphash(self._k0, self._k1, bytes((_TAG_128, i)) + half.to_bytes(8, "big"))

    def mask_int(self, v: int) -> int:
        """The masked value of an id's 128-bit integer (a permutation of 0 to 2^128 - 1)."""
        left, right = v >> 64, v & _M64
        for i in range(_ROUNDS):
            left, right = right, left ^ self._f128(i, right)
        return left << 64 | right

    def unmask_int(self, v: int) -> int:
        """The inverse of mask_int."""
        left, right = v >> 64, v & _M64
        for i in reversed(range(_ROUNDS)):
            left, right = right ^ self._f128(i, left), left
        return left << 64 | right

    def mask(self, id: Union[Hlculid, uuid.UUID, IdText]) -> uuid.UUID:  # noqa: A002 - the SQL argument's name
        """The masked form of an id (an Hlculid, a uuid.UUID of an id, or any text form the server
        reads) as a uuid.UUID, as hlculid_mask gives it. Its version and variant bits are whatever
        the permutation gives (it is no valid uuid of any version); str() of it is the uuid text."""
        return uuid.UUID(int=self.mask_int(as_hlculid(id).int))

    def unmask(self, masked: Union[uuid.UUID, str]) -> Hlculid:
        """The Hlculid a masked uuid (a uuid.UUID, or its text) stands for under this key, as
        hlculid_unmask gives it. Every uuid unmasks to some id: a value masked with another key
        gives an unrelated id, not an error."""
        if isinstance(masked, str):
            masked = uuid.UUID(masked)
        elif not isinstance(masked, uuid.UUID):
            raise TypeError(f"a masked id is a uuid.UUID or its text, not {type(masked).__name__}")
        return Hlculid(int=self.unmask_int(masked.int))

    # -- 63 bits ----------------------------------------------------------------------------------

    def _f63(self, i: int, half: int) -> int:
        return _siphash(self._k0, self._k1, bytes((_TAG_63, i)) + half.to_bytes(4, "big")) & _M32

    def _permute64(self, v: int) -> int:
        left, right = v >> 32, v & _M32
        for i in range(_ROUNDS):
            left, right = right, left ^ self._f63(i, right)
        return left << 32 | right

    def _unpermute64(self, v: int) -> int:
        left, right = v >> 32, v & _M32
        for i in reversed(range(_ROUNDS)):
            left, right = right ^ self._f63(i, left), left
        return left << 32 | right

    def mask_bigint(self, id: Union[BigId, int, str]) -> int:  # noqa: A002
        """The masked form of a positive bigint (a BigId, an int, or its decimal string), as
        hlculid_mask_bigint gives it: an int from 1 to 2^63 - 1. ValueError for 0 or less.
        Most masked values are above 2^53: send them to JavaScript as strings."""
        z = self._permute64(_positive(id, "a bigint id") - 1)
        while z > _TOP_63:
            z = self._permute64(z)
        return z + 1

    def unmask_bigint(self, masked: Union[int, str]) -> BigId:
        """The BigId a masked bigint (an int or its decimal string) stands for under this key, as
        hlculid_unmask_bigint gives it. ValueError for 0 or less."""
        z = self._unpermute64(_positive(masked, "a masked bigint") - 1)
        while z > _TOP_63:
            z = self._unpermute64(z)
        return BigId(z + 1)

    # -- UUIDv47 v4 facade of the UUIDv7 form -----------------------------------------------------

    def _facade_mask48(self, u: int) -> int:
        b = u.to_bytes(16, "big")
        m = bytes((b[6] & 0x0F, b[7], b[8] & 0x3F)) + b[9:]
        return _siphash(self._k0, self._k1, m) & 0xFFFF_FFFF_FFFF

    def _uuidv47_swap(self, u: int, version: int) -> int:
        u ^= self._facade_mask48(u) << 80
        return (u & ~(0xF << 76) | version << 76) & ~(0b11 << 62) | 0b10 << 62

    def to_v4_facade(self, id: Union[Hlculid, uuid.UUID, IdText]) -> uuid.UUID:  # noqa: A002
        """UUIDv47's v4 facade of the id's UUIDv7 form, as a uuid.UUID: a valid RFC 9562 version 4
        uuid whose time is masked. Its other bits show the id's counter and publisher."""
        return uuid.UUID(int=self._uuidv47_swap(to_uuidv7(as_hlculid(id)).int, 4))

    def from_v4_facade(self, facade: Union[uuid.UUID, str]) -> Hlculid:
        """The Hlculid a v4 facade (a uuid.UUID or its text) stands for under this key: time,
        counter and publisher, the 6 lowest random bits 0. ValueError for anything but a version 4
        uuid of the RFC 9562 variant."""
        if isinstance(facade, str):
            facade = uuid.UUID(facade)
        elif not isinstance(facade, uuid.UUID):
            raise TypeError(f"a v4 facade is a uuid.UUID or its text, not {type(facade).__name__}")
        if facade.variant != uuid.RFC_4122 or facade.version != 4:
            raise ValueError(f"uuid {facade} is not a v4 facade (an RFC 9562 version 4 uuid): version "
                             f"field {facade.int >> 76 & 0xF}, variant {facade.variant}")
        return from_uuidv7(uuid.UUID(int=self._uuidv47_swap(facade.int, 7)))
