"""The clock: Generator, ids made in this process with the server's (and the crate's) hybrid
logical clock, replayed id by id against the crate's (tests/data/clock_scenario.json)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from typing import Callable, Optional, Union

from .bigint import BIGINT_COUNTER_VALUES, BIGINT_MAX_MS, BIGINT_MAX_PUBLISHER, BigId
from .errors import (BigintTimeOutOfRange, Exhausted, PublisherTooWideForBigint, RandomUuid, TooFarAhead,
                     WallClockOutOfRange)
from .ids import Hlculid, IdText


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

MAX_MS = (1 << 48) - 1  # 10889-08-02 05:31:50.655 UTC, the last millisecond an id holds
DEFAULT_MAX_SKEW_MS = 500  # the server's hlculid.max_clock_skew and the crate's DEFAULT_MAX_SKEW
_EXHAUSTED = (1 << 64) - 1 - (1 << 40)  # the crate's clock::EXHAUSTED: no value at or above it
_RESERVED = _EXHAUSTED - 1  # an in-memory generator has reserved every value below it
_FAST_WALL_MAX = _EXHAUSTED >> 16  # a wall clock at or below it is a value below EXHAUSTED
_BACKWARD_STEP_THRESHOLD_MS = 10  # a smaller step back of the wall clock is not a step
_U64_MAX = (1 << 64) - 1
_RANDOM_BITS = (1 << 48) - 1

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
