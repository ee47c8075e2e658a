"""The RFC 9562 UUIDv7 form of an id, as the server's hlculid_to_uuidv7 and hlculid_from_uuidv7
make and read it (docs/uuidv7.md)."""

from __future__ import annotations

import uuid
from typing import Union

from .ids import Hlculid, IdText


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
