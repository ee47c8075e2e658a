"""Why a Generator made no id or refused an observed one: HlculidError and its subclasses, the
Rust crate's hlculid_core::Error variants (the same cases, the same meaning)."""

from __future__ import annotations

from .bigint import BIGINT_MAX_PUBLISHER


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
