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

__version__ = "0.6.0"

# The package's names, one module per concern: ids (Hlculid and the text forms), bigint (BigId),
# errors, clock (Generator), consumer (Consumer, psycopg 3), adapters (psycopg 3, asyncpg), uuidv7, mask (Mask); hlculid.sqlalchemy
# and hlculid.django are imported by name, as they need their frameworks.
from .adapters import register_asyncpg, register_psycopg, register_psycopg_bigint
from .bigint import BIGINT_COUNTER_VALUES, BIGINT_MAX_MS, BIGINT_MAX_PUBLISHER, BigId, json_default
from .clock import DEFAULT_MAX_SKEW_MS, MAX_MS, Generator
from .consumer import Consumer
from .errors import (BigintTimeOutOfRange, Exhausted, HlculidError, PublisherTooWideForBigint, RandomUuid,
                     TooFarAhead, WallClockOutOfRange)
from .ids import Hlculid, IdText, as_hlculid
from .mask import Mask
from .uuidv7 import from_uuidv7, to_uuidv7

__all__ = [
    "BIGINT_COUNTER_VALUES", "BIGINT_MAX_MS", "BIGINT_MAX_PUBLISHER", "DEFAULT_MAX_SKEW_MS", "MAX_MS",
    "BigId", "BigintTimeOutOfRange", "Consumer", "Exhausted", "Generator", "Hlculid", "HlculidError", "IdText",
    "Mask", "PublisherTooWideForBigint", "RandomUuid", "TooFarAhead", "WallClockOutOfRange",
    "as_hlculid", "from_uuidv7", "json_default", "register_asyncpg", "register_psycopg",
    "register_psycopg_bigint", "to_uuidv7",
]
