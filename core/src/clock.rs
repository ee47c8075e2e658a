//! The hybrid logical clock. State is one 64-bit value `L = (ms << 16) | counter`.
//!
//! - send (generate): `L := max(L + 1, now << 16)`; a full counter carries into the ms.
//! - receive (observe): `L := max(L, remote)`, refused when the remote ms is more than
//!   `max_skew` ahead of the local wall clock.
//!
//! [`SharedClock`] holds the state in atomics so that every backend of a server can advance it
//! with compare-and-swap and no lock. It never issues a value above `reserved`, the high-water
//! mark already made durable on disk, so that after a restart the clock can resume above every
//! value it ever issued. The caller owns the clock source and the disk; this module only decides.

use crate::layout::MAX_MS;
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest backward step of the wall clock, in ms, that passes without a warning.
pub const BACKWARD_STEP_THRESHOLD_MS: u64 = 10;

/// The send rule on plain values. `None` when the 64-bit clock is exhausted (year 10889).
#[inline]
pub fn send(l: u64, now_ms: u64) -> Option<u64> {
    let wall = now_ms.saturating_mul(1 << 16);
    Some(l.checked_add(1)?.max(wall))
}

/// Why a clock operation cannot complete now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ClockError {
    /// The next value would pass the durable high-water mark: persist at least `needed`
    /// (with [`SharedClock::reservation_for`]), publish it with [`SharedClock::set_reserved`],
    /// and try again.
    NeedsReservation { needed: u64 },
    /// The 64-bit logical clock has no value left.
    Exhausted,
    /// An observed id lies `ahead_ms` ahead of the local wall clock, more than the allowed skew.
    TooFarAhead { ahead_ms: u64 },
    /// A batch of 0 or more than [`MAX_BATCH`] values was asked for; nothing was taken.
    BadBatch,
    /// The wall clock reads a time an id cannot hold: 0 (the Unix epoch, what an unset clock
    /// reads; callers map readings before it to 0) or after [`MAX_MS`]. Nothing was changed: a
    /// clock in year 10890 must not push the durable mark to the end of the range.
    WallClockOutOfRange,
}

/// One generated value and what happened while making it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tick {
    pub logical: u64,
    /// The wall clock went back this many ms since the last reading (reported once per step).
    pub backward_step_ms: Option<u64>,
}

/// Counters exposed by `hlculid_clock()`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub logical: u64,
    pub reserved: u64,
    pub last_wall_ms: u64,
    pub backward_jumps: u64,
    pub overflows: u64,
    pub observes: u64,
}

/// Beyond this the clock refuses to tick (year 10889). Nothing moves `logical` above it but the
/// `fetch_add` of a tick that saw it below, at most two per tick of at most [`MAX_BATCH`] values,
/// so it exceeds this by less than 2 * 2^16 times the number of ticks in flight at once (one per
/// process; PostgreSQL allows fewer than 2^18): less than 2^35, far from wrapping.
pub const EXHAUSTED: u64 = u64::MAX - (1 << 40);

/// The most values one [`tick_n`](SharedClock::tick_n) takes: one millisecond's counter.
pub const MAX_BATCH: u64 = 1 << 16;

/// Whether a wall clock reading is one the clock accepts (see [`ClockError::WallClockOutOfRange`]).
#[inline]
pub fn wall_in_range(now_ms: u64) -> bool {
    (1..=MAX_MS).contains(&now_ms)
}

/// The wall clock as a logical value, or `None` when it reads outside the id's range.
#[inline]
fn wall_value(now_ms: u64) -> Option<u64> {
    wall_in_range(now_ms).then(|| (now_ms << 16).min(EXHAUSTED))
}

/// The clock shared by all backends of one server (it lives in shared memory, so it is
/// `repr(C)` and made only of atomics). `logical` is written by every id; the padding keeps it
/// alone on its cache line, so the read-mostly fields beside it are not invalidated each time.
#[repr(C)]
#[derive(Debug)]
pub struct SharedClock {
    _pad_before: [u64; 8],
    logical: AtomicU64,
    _pad_after: [u64; 15],
    reserved: AtomicU64,
    last_wall_ms: AtomicU64,
    backward_jumps: AtomicU64,
    overflows: AtomicU64,
    observes: AtomicU64,
}

impl SharedClock {
    /// A clock resuming from a persisted high-water mark: everything issued before was at most
    /// `persisted`, so the next value is above it whatever the wall clock says.
    pub const fn resume(persisted: u64) -> SharedClock {
        SharedClock {
            _pad_before: [0; 8],
            logical: AtomicU64::new(persisted),
            _pad_after: [0; 15],
            reserved: AtomicU64::new(persisted),
            last_wall_ms: AtomicU64::new(0),
            backward_jumps: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            observes: AtomicU64::new(0),
        }
    }

    /// Records a wall clock reading; returns the size of a backward step the first time it is seen.
    ///
    /// `seen` is `last_wall_ms` as loaded before `now_ms` was read, so it holds only readings
    /// taken before ours: a reading far below it means the clock went back. A reading recorded
    /// after ours was taken (while this process was preempted, or wrote the high-water mark)
    /// says nothing about the clock, and comparing against it gave false warnings.
    fn note_wall(&self, now_ms: u64, seen: u64) -> Option<u64> {
        if now_ms > seen {
            self.last_wall_ms.fetch_max(now_ms, Ordering::Release);
            return None;
        }
        let step = seen - now_ms;
        if step <= BACKWARD_STEP_THRESHOLD_MS {
            return None;
        }
        // Only the caller that moves the mark down from what it saw reports the step, so it is
        // reported once.
        self.last_wall_ms
            .compare_exchange(seen, now_ms, Ordering::Release, Ordering::Relaxed)
            .ok()
            .map(|_| {
                self.backward_jumps.fetch_add(1, Ordering::Relaxed);
                step
            })
    }

    /// Reads the wall clock with `read_clock` and ticks: the way to tick from a live clock.
    /// Before reading, it asks the CPU for the counter's cache line in writable state, so that
    /// fetching the line from another core (the cost every id pays when several backends
    /// generate at once) overlaps with the clock read.
    #[inline]
    pub fn tick_reading(&self, read_clock: impl Fn() -> u64) -> (u64, Result<Tick, ClockError>) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint; it never faults, whatever the address.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
            _mm_prefetch::<_MM_HINT_ET0>((&self.logical as *const AtomicU64).cast());
        }
        // Loaded before the clock is read (see note_wall); the reading is an opaque call, so
        // neither the compiler nor the CPU (Linux reads the TSC ordered) moves it earlier.
        let seen = self.last_wall_ms.load(Ordering::Acquire);
        let now_ms = read_clock();
        (now_ms, self.take(now_ms, seen, 1))
    }

    /// `n` consecutive values in one atomic step (1 to [`MAX_BATCH`]; others are refused as
    /// [`ClockError::BadBatch`] with nothing taken): `Tick::logical` is the first, and the batch is
    /// `logical..logical + n`, every value greater than every value returned before. Reads the
    /// clock like [`tick_reading`](Self::tick_reading).
    pub fn tick_n_reading(
        &self,
        read_clock: impl Fn() -> u64,
        n: u64,
    ) -> (u64, Result<Tick, ClockError>) {
        if !(1..=MAX_BATCH).contains(&n) {
            return (0, Err(ClockError::BadBatch));
        }
        let seen = self.last_wall_ms.load(Ordering::Acquire);
        let now_ms = read_clock();
        (now_ms, self.take(now_ms, seen, n))
    }

    /// The send rule: the next value, strictly greater than every value this clock returned.
    ///
    /// Each value is taken by one atomic step on `logical` (an add, or a max when the wall clock
    /// is ahead), so every returned value is a distinct state of a counter that never goes
    /// down. A value taken and then refused (past the reservation) is never returned: it is a gap.
    ///
    /// `now_ms` is taken as read just now; a reading held across a wait can be mistaken for a
    /// backward step, so live callers use [`tick_reading`](Self::tick_reading).
    pub fn tick(&self, now_ms: u64) -> Result<Tick, ClockError> {
        self.take(now_ms, self.last_wall_ms.load(Ordering::Acquire), 1)
    }

    /// Takes `n` consecutive values (1 to MAX_BATCH, checked by callers): the send rule with
    /// `L + n` for `L + 1`, so `n = 1` is exactly [`tick`](Self::tick).
    #[inline(always)]
    fn take(&self, now_ms: u64, seen: u64, n: u64) -> Result<Tick, ClockError> {
        let wall = wall_value(now_ms).ok_or(ClockError::WallClockOutOfRange)?;
        let backward_step_ms = self.note_wall(now_ms, seen);
        let reserved = self.reserved.load(Ordering::Acquire);
        if reserved >= EXHAUSTED {
            return Err(ClockError::Exhausted);
        }
        loop {
            // Refused ticks (past the reservation) still add, so without this check a disk that
            // never takes the mark could walk `logical` to the end of u64.
            if self.logical.load(Ordering::Relaxed) >= EXHAUSTED {
                return Err(ClockError::Exhausted);
            }
            // Under load the clock is at or ahead of the wall clock and one add is the whole rule.
            let taken = self.logical.fetch_add(n, Ordering::AcqRel) + 1;
            let (value, overflowed) = if taken >= wall {
                // A carry into a millisecond the wall clock has not reached: logical time runs
                // ahead. (For n = 1: taken & 0xFFFF == 0.)
                let last = taken + (n - 1);
                (
                    taken,
                    (taken - 1) >> 16 != last >> 16 && now_ms < last >> 16,
                )
            } else if self.logical.fetch_max(wall + (n - 1), Ordering::AcqRel) < wall {
                (wall, false) // this caller moved the clock up to the wall clock
            } else {
                continue; // another caller got there first: take the next value after it
            };
            if value + (n - 1) > reserved {
                return Err(ClockError::NeedsReservation {
                    needed: value + (n - 1),
                });
            }
            if overflowed {
                self.overflows.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(Tick {
                logical: value,
                backward_step_ms,
            });
        }
    }

    /// The receive rule: afterwards every value from [`tick`](Self::tick) is above `remote`.
    /// Refused, leaving the clock unchanged, when `remote` is more than `max_skew_ms` ahead.
    pub fn observe(&self, remote: u64, now_ms: u64, max_skew_ms: u64) -> Result<(), ClockError> {
        if !wall_in_range(now_ms) {
            return Err(ClockError::WallClockOutOfRange);
        }
        let remote = remote.min(EXHAUSTED);
        let remote_ms = remote >> 16;
        let ahead_ms = remote_ms.saturating_sub(now_ms);
        if ahead_ms > max_skew_ms {
            return Err(ClockError::TooFarAhead { ahead_ms });
        }
        if remote > self.reserved.load(Ordering::Acquire) {
            return Err(ClockError::NeedsReservation { needed: remote });
        }
        self.logical.fetch_max(remote, Ordering::AcqRel);
        self.observes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The high-water mark to persist so that `needed` may be issued, with `window_ms` of room
    /// beyond the wall clock (or beyond `needed`, when logical time runs ahead).
    pub fn reservation_for(&self, needed: u64, now_ms: u64, window_ms: u64) -> u64 {
        let base = needed
            .max(self.logical.load(Ordering::Acquire))
            .max(wall_value(now_ms).unwrap_or(0));
        base.saturating_add(window_ms.saturating_mul(1 << 16))
            .min(EXHAUSTED)
    }

    /// What a background refresh should ask [`reservation_for`](Self::reservation_for) to cover
    /// now, or `None` while more than half of `window_ms` remains ahead of both the wall clock
    /// and the logical clock. Refreshing this way keeps the durable mark between half a window
    /// and one and a half windows ahead, and writes it about once per window.
    /// A wall clock outside the id's range asks for nothing.
    pub fn refresh_due(&self, now_ms: u64, window_ms: u64) -> Option<u64> {
        let base = self
            .logical
            .load(Ordering::Acquire)
            .max(wall_value(now_ms)?);
        let low_water = base.saturating_add((window_ms / 2).saturating_mul(1 << 16));
        (self.reserved.load(Ordering::Acquire) < low_water).then_some(low_water)
    }

    /// Recovery: afterwards every value from [`tick`](Self::tick) is above `floor`. Unlike
    /// [`observe`](Self::observe) there is no skew bound and no reservation check: the caller
    /// has just made a mark above `floor` durable.
    pub fn raise_floor(&self, floor: u64) {
        self.logical
            .fetch_max(floor.min(EXHAUSTED), Ordering::AcqRel);
    }

    /// Publishes a high-water mark that is now durable. Never moves it down.
    pub fn set_reserved(&self, durable: u64) {
        self.reserved.fetch_max(durable, Ordering::AcqRel);
    }

    pub fn stats(&self) -> Stats {
        Stats {
            logical: self.logical.load(Ordering::Acquire),
            reserved: self.reserved.load(Ordering::Acquire),
            last_wall_ms: self.last_wall_ms.load(Ordering::Relaxed),
            backward_jumps: self.backward_jumps.load(Ordering::Relaxed),
            overflows: self.overflows.load(Ordering::Relaxed),
            observes: self.observes.load(Ordering::Relaxed),
        }
    }
}

/// Per-backend clock for `hlculid_generate_at`: ids for one requested millisecond are ordered
/// among themselves (the counter counts up, carrying into the next ms when full); a different
/// millisecond starts again at counter 0.
#[derive(Copy, Clone, Debug, Default)]
pub struct Backfill {
    last: Option<(u64, u64)>, // (requested ms, last logical value issued for it)
}

impl Backfill {
    pub const fn new() -> Backfill {
        Backfill { last: None }
    }

    /// The logical value for the next backfilled id at `ms`; `None` when it would pass the
    /// 48-bit range.
    pub fn next(&mut self, ms: u64) -> Option<u64> {
        let logical = match self.last {
            Some((base, l)) if base == ms => l.checked_add(1)?,
            _ => ms.checked_mul(1 << 16)?,
        };
        if logical >> 16 > crate::layout::MAX_MS {
            return None;
        }
        self.last = Some((ms, logical));
        Some(logical)
    }
}

#[cfg(test)]
mod tests;
