//! The hybrid logical clock. State is one 64-bit value `L = (ms << 16) | counter`.
//!
//! - send (generate): `L := max(L + 1, now << 16)`; a full counter carries into the ms.
//! - receive (observe): `L := max(L, remote)`, refused when the remote ms is more than
//!   `max_skew` ahead of the local wall clock.
//!
//! [`SharedClock`] holds the state in atomics so that every backend of a server can advance it
//! with compare-and-swap and no lock. It never issues a value above `reserved`, the high-water
//! mark already made durable on disk, so that after a restart the clock can resume above every
//! value it ever issued; nor one whose millisecond lies more than the run-ahead bound beyond its
//! anchor (the wall clock, or where a restart, an observe, a recovery or a backward step of the
//! wall clock put the clock), so the rate of generation alone never drives ids into the future.
//! A value refused for either reason is not taken: the clock does not move. The caller owns the
//! clock source and the disk ([`crate::mark`] drives the protocol); this module only decides.

use crate::layout::MAX_MS;
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest backward step of the wall clock, in ms, that passes without a warning.
pub const BACKWARD_STEP_THRESHOLD_MS: u64 = 10;

/// `last_wall_ms` holds the last wall clock reading in its low 48 bits and, above them, a count
/// of the backward steps recorded (mod 2^16): a reading raises the mark only while no step was
/// recorded since the mark was loaded before that reading (see `note_wall`).
const WALL_MS_BITS: u32 = 48;
const WALL_MS_MASK: u64 = (1 << WALL_MS_BITS) - 1;

/// The run-ahead bound of a new clock: the server's default `hlculid.max_clock_skew`.
pub const DEFAULT_MAX_RUN_AHEAD_MS: u64 = 500;

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
    /// The values asked for lie beyond the run-ahead bound: generation has pushed logical time
    /// as far ahead of its anchor as allowed. Nothing was taken; the bound moves with the wall
    /// clock, at the earliest `wait_ms` from now.
    AtBound { wait_ms: u64 },
}

/// One generated value and what happened while making it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tick {
    pub logical: u64,
    /// The wall clock went back this many ms since the last reading (reported once per step).
    pub backward_step_ms: Option<u64>,
}

/// Counters exposed by `hlculid_clock()` and `hlculid_clock_pacing()`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub logical: u64,
    pub reserved: u64,
    pub last_wall_ms: u64,
    pub backward_jumps: u64,
    pub overflows: u64,
    pub observes: u64,
    /// The logical value the run-ahead bound counts from when the wall clock is behind it.
    pub anchor: u64,
    pub max_run_ahead_ms: u64,
    /// Generation calls that waited at the run-ahead bound.
    pub waits: u64,
}

/// Beyond this the clock refuses to tick (year 10889). Every tick checks its values against a
/// limit below it before taking them; only a `fetch_add` racing others that checked at the same
/// time can pass the limit, by at most one batch of [`MAX_BATCH`] per process in flight
/// (PostgreSQL allows fewer than 2^18): less than 2^34, far from wrapping.
pub const EXHAUSTED: u64 = u64::MAX - (1 << 40);

/// The most values one [`tick_n_reading`](SharedClock::tick_n_reading) takes: one
/// millisecond's counter.
pub const MAX_BATCH: u64 = 1 << 16;

/// Below this distance from its limit the clock takes values with a compare-and-swap, which
/// never passes the limit; further away, with one `fetch_add`, which scales better but lets
/// takers that checked the limit at once all add. A limit could be passed only by more than
/// `FETCH_ADD_MARGIN / n` takers between their check and their add (2^19 for single ids, more
/// processes than PostgreSQL allows), and even then the values past it are refused, not returned.
const FETCH_ADD_MARGIN: u64 = 8 * MAX_BATCH;

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

/// Values a millisecond of the full 16-bit counter.
pub const FULL_COUNTER: u64 = 1 << 16;

/// The first and last value of a batch of `n` values starting at or after `from`, for a counter
/// of `counter_values` values a millisecond (a power of two, at most [`FULL_COUNTER`]).
#[inline(always)]
fn span(from: u64, n: u64, counter_values: u64) -> (u64, u64) {
    let first = if from & 0xFFFF >= counter_values {
        ((from >> 16) + 1) << 16
    } else {
        from
    };
    (first, nth_value(first, n - 1, counter_values))
}

/// The `i`th value of a batch starting at `first`, for a counter of `counter_values` values a
/// millisecond: consecutive values for the full counter; for a narrower one, the counter counts
/// to `counter_values - 1` and carries into the next millisecond.
#[inline]
pub fn nth_value(first: u64, i: u64, counter_values: u64) -> u64 {
    if counter_values == FULL_COUNTER {
        return first + i;
    }
    let index = (first & 0xFFFF) + i;
    ((first >> 16) + index / counter_values) << 16 | (index % counter_values)
}

/// Why `last` cannot be issued now: past the run-ahead `bound` (wait for the wall clock), or past
/// the reservation (make a mark durable).
fn refusal(last: u64, bound: u64, now_ms: u64, run_ahead_ms: u64) -> ClockError {
    if last > bound {
        // The bound reaches `last` once the wall clock reads `last`'s ms minus the run-ahead.
        let wait_ms = (last >> 16)
            .saturating_sub(run_ahead_ms)
            .saturating_sub(now_ms)
            .max(1);
        ClockError::AtBound { wait_ms }
    } else {
        ClockError::NeedsReservation { needed: last }
    }
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
    /// Where something other than the rate of generation put the clock (a restart's mark, an
    /// observed id, a recovery floor, the wall clock before a backward step): a logical value.
    anchor: AtomicU64,
    max_run_ahead_ms: AtomicU64,
    backward_jumps: AtomicU64,
    overflows: AtomicU64,
    observes: AtomicU64,
    waits: AtomicU64,
}

impl SharedClock {
    /// A clock resuming from a persisted high-water mark: everything issued before was at most
    /// `persisted`, so the next value is above it whatever the wall clock says. The run-ahead
    /// bound counts from there too (the restart put the clock there, not generation).
    pub const fn resume(persisted: u64) -> SharedClock {
        SharedClock {
            _pad_before: [0; 8],
            logical: AtomicU64::new(persisted),
            _pad_after: [0; 15],
            reserved: AtomicU64::new(persisted),
            last_wall_ms: AtomicU64::new(0),
            anchor: AtomicU64::new(persisted),
            max_run_ahead_ms: AtomicU64::new(DEFAULT_MAX_RUN_AHEAD_MS),
            backward_jumps: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            observes: AtomicU64::new(0),
            waits: AtomicU64::new(0),
        }
    }

    /// Sets the run-ahead bound: no value is issued whose millisecond lies more than `ms` beyond
    /// the later of the wall clock and the anchor.
    pub fn set_max_run_ahead(&self, ms: u64) {
        self.max_run_ahead_ms
            .store(ms.min(MAX_MS), Ordering::Relaxed);
    }

    /// Counts one generation call that waited at the run-ahead bound.
    pub fn count_wait(&self) {
        self.waits.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a wall clock reading; returns the size of a backward step the first time it is seen.
    ///
    /// `seen` is `last_wall_ms` as loaded before `now_ms` was read, so it holds only readings
    /// taken before ours: a reading far below it means the clock went back. A reading recorded
    /// after ours was taken (while this process was preempted, or wrote the high-water mark)
    /// says nothing about the clock, and comparing against it gave false warnings.
    fn note_wall(&self, now_ms: u64, seen: u64) -> Option<u64> {
        let seen_ms = seen & WALL_MS_MASK;
        if now_ms > seen_ms {
            // Raise the mark to our reading, unless a step was recorded since `seen` was loaded:
            // our reading may then have been taken before that step (and reported after it), and
            // a mark raised back to it would make the next caller report the same step again.
            let mut cur = seen;
            loop {
                if cur >> WALL_MS_BITS != seen >> WALL_MS_BITS || cur & WALL_MS_MASK >= now_ms {
                    return None;
                }
                match self.last_wall_ms.compare_exchange_weak(
                    cur,
                    (cur & !WALL_MS_MASK) | now_ms,
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return None,
                    Err(actual) => cur = actual,
                }
            }
        }
        let step = seen_ms - now_ms;
        if step <= BACKWARD_STEP_THRESHOLD_MS {
            return None;
        }
        // The clock stays where the wall clock was before the step: the bound counts from there,
        // so generation goes on without waiting while the wall clock is behind. The anchor
        // first: once the lowered mark is visible, a caller reading a wall clock above it takes
        // no step and goes straight to the bound, which must already count from the anchor.
        // (`seen` is a real earlier reading, so raising the anchor to it is harmless even when
        // another caller reports this step.)
        self.anchor
            .fetch_max((seen_ms << 16).min(EXHAUSTED), Ordering::AcqRel);
        // Only the caller that moves the mark down from what it saw reports the step, so it is
        // reported once; the mark's step count goes up with it.
        let stepped = (seen >> WALL_MS_BITS).wrapping_add(1) << WALL_MS_BITS;
        self.last_wall_ms
            .compare_exchange(seen, stepped | now_ms, Ordering::Release, Ordering::Relaxed)
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
        (now_ms, self.take(now_ms, seen, 1, FULL_COUNTER))
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
        self.tick_batch_reading(read_clock, n, FULL_COUNTER)
    }

    /// `n` values for ids whose counter holds only `counter_values` values a millisecond (a
    /// power of two up to [`FULL_COUNTER`]: 2048 for bigint ids), in one atomic step: values
    /// whose counter would not fit are skipped, the batch carrying into the next millisecond.
    /// The batch's values are [`nth_value`]`(logical, i, counter_values)` for `i` in `0..n`,
    /// every one greater than every value returned before (of either width).
    pub fn tick_batch_reading(
        &self,
        read_clock: impl Fn() -> u64,
        n: u64,
        counter_values: u64,
    ) -> (u64, Result<Tick, ClockError>) {
        if !(1..=MAX_BATCH).contains(&n)
            || !counter_values.is_power_of_two()
            || counter_values > FULL_COUNTER
        {
            return (0, Err(ClockError::BadBatch));
        }
        let seen = self.last_wall_ms.load(Ordering::Acquire);
        let now_ms = read_clock();
        (now_ms, self.take(now_ms, seen, n, counter_values))
    }

    /// The send rule: the next value, strictly greater than every value this clock returned.
    ///
    /// Each value is taken by one atomic step on `logical`, so every returned value is a distinct
    /// state of a counter that never goes down. Values that would pass the reservation or the
    /// run-ahead bound are refused before they are taken: the clock does not move.
    ///
    /// `now_ms` is taken as read just now; a reading held across a wait can be mistaken for a
    /// backward step, so live callers use [`tick_reading`](Self::tick_reading).
    pub fn tick(&self, now_ms: u64) -> Result<Tick, ClockError> {
        self.take(
            now_ms,
            self.last_wall_ms.load(Ordering::Acquire),
            1,
            FULL_COUNTER,
        )
    }

    /// Takes `n` values (1 to MAX_BATCH, checked by callers) of ids whose counter holds
    /// `counter_values` values: the send rule with `L + n` for `L + 1` (consecutive values for the
    /// full counter), so `n = 1` is exactly [`tick`](Self::tick).
    #[inline(always)]
    fn take(
        &self,
        now_ms: u64,
        seen: u64,
        n: u64,
        counter_values: u64,
    ) -> Result<Tick, ClockError> {
        let wall = wall_value(now_ms).ok_or(ClockError::WallClockOutOfRange)?;
        let backward_step_ms = self.note_wall(now_ms, seen);
        let reserved = self.reserved.load(Ordering::Acquire);
        if reserved >= EXHAUSTED {
            return Err(ClockError::Exhausted);
        }
        // The last value of the bound's millisecond: `max_run_ahead_ms` past the later of the
        // wall clock and the anchor.
        let base_ms = (self.anchor.load(Ordering::Acquire) >> 16).max(now_ms);
        let bound_ms = base_ms.saturating_add(self.max_run_ahead_ms.load(Ordering::Relaxed));
        let bound = bound_ms
            .saturating_add(1)
            .saturating_mul(1 << 16)
            .saturating_sub(1);
        let limit = reserved.min(bound);
        loop {
            let l = self.logical.load(Ordering::Relaxed);
            if l >= EXHAUSTED {
                return Err(ClockError::Exhausted);
            }
            let (first, last) = span((l + 1).max(wall), n, counter_values);
            if last > limit {
                return Err(refusal(last, bound, now_ms, bound_ms - base_ms));
            }
            let contiguous = counter_values == FULL_COUNTER;
            let first =
                if contiguous && first == l + 1 && last.saturating_add(FETCH_ADD_MARGIN) <= limit {
                    // Under load the clock is at or ahead of the wall clock and one add is the rule.
                    // Others may add between our load and our add, so the values are checked again.
                    let first = self.logical.fetch_add(n, Ordering::AcqRel) + 1;
                    let last = first + (n - 1);
                    if last > limit {
                        return Err(refusal(last, bound, now_ms, bound_ms - base_ms));
                    }
                    first
                } else {
                    // Near a limit, moving up to the wall clock, or skipping counters a narrow id
                    // cannot hold: exact, and nothing moves unless the whole batch is issued.
                    if self
                        .logical
                        .compare_exchange_weak(l, last, Ordering::AcqRel, Ordering::Relaxed)
                        .is_err()
                    {
                        continue;
                    }
                    first
                };
            let last = span(first, n, counter_values).1;
            // A carry into a millisecond the wall clock has not reached: logical time runs ahead.
            if first > wall && (first - 1) >> 16 != last >> 16 && now_ms < last >> 16 {
                self.overflows.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(Tick {
                logical: first,
                backward_step_ms,
            });
        }
    }

    /// The receive rule: afterwards every value from [`tick`](Self::tick) is above `remote`.
    /// Refused, leaving the clock unchanged, when `remote` is more than `max_skew_ms` ahead,
    /// unless the clock is already at or above it (then there is nothing to do, whatever the
    /// wall clock reads: a server can always observe its own ids).
    pub fn observe(&self, remote: u64, now_ms: u64, max_skew_ms: u64) -> Result<(), ClockError> {
        let remote = remote.min(EXHAUSTED);
        if remote <= self.logical.load(Ordering::Acquire) {
            self.observes.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        if !wall_in_range(now_ms) {
            return Err(ClockError::WallClockOutOfRange);
        }
        let remote_ms = remote >> 16;
        let ahead_ms = remote_ms.saturating_sub(now_ms);
        if ahead_ms > max_skew_ms {
            return Err(ClockError::TooFarAhead { ahead_ms });
        }
        if remote > self.reserved.load(Ordering::Acquire) {
            return Err(ClockError::NeedsReservation { needed: remote });
        }
        // The anchor first: a tick between the two must not find the clock past its bound.
        self.anchor.fetch_max(remote, Ordering::AcqRel);
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
        let floor = floor.min(EXHAUSTED);
        self.anchor.fetch_max(floor, Ordering::AcqRel);
        self.logical.fetch_max(floor, Ordering::AcqRel);
    }

    /// The clock's current value (the last value issued, or where a restart, an observe or a
    /// recovery put it): every value issued after this load is above it.
    #[inline]
    pub fn current(&self) -> u64 {
        self.logical.load(Ordering::Acquire)
    }

    /// The durable high-water mark published last.
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Acquire)
    }

    /// Publishes a high-water mark that is now durable. Never moves it down.
    pub fn set_reserved(&self, durable: u64) {
        self.reserved.fetch_max(durable, Ordering::AcqRel);
    }

    pub fn stats(&self) -> Stats {
        Stats {
            logical: self.logical.load(Ordering::Acquire),
            reserved: self.reserved.load(Ordering::Acquire),
            last_wall_ms: self.last_wall_ms.load(Ordering::Relaxed) & WALL_MS_MASK,
            backward_jumps: self.backward_jumps.load(Ordering::Relaxed),
            overflows: self.overflows.load(Ordering::Relaxed),
            observes: self.observes.load(Ordering::Relaxed),
            anchor: self.anchor.load(Ordering::Relaxed),
            max_run_ahead_ms: self.max_run_ahead_ms.load(Ordering::Relaxed),
            waits: self.waits.load(Ordering::Relaxed),
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

/// The values of one batch of a backfill (`hlculid_backfill`): for times `ms` in ascending order,
/// each value is the send rule of the server's clock, `max(last + 1, ms << 16)` (a full counter
/// carries into the next millisecond), then past `held(m)`, the largest value already held in
/// the millisecond `m` it lands in (ids of the same publisher already in the table). So the
/// values increase, each lies in its own time's millisecond unless the counter carried, and none
/// is at or below a held value of its millisecond. `None` when a value would pass the 48-bit
/// range.
pub fn backfill_batch(ms: &[u64], mut held: impl FnMut(u64) -> Option<u64>) -> Option<Vec<u64>> {
    let mut out = Vec::with_capacity(ms.len());
    let mut last: Option<u64> = None;
    // the millisecond whose held value was last looked up, and that value
    let mut seen: Option<(u64, Option<u64>)> = None;
    for &m in ms {
        let mut v = m.checked_mul(FULL_COUNTER)?;
        if let Some(l) = last {
            v = v.max(l.checked_add(1)?);
        }
        loop {
            let vm = v >> 16;
            if vm > crate::layout::MAX_MS {
                return None;
            }
            let h = match seen {
                Some((sm, h)) if sm == vm => h,
                _ => {
                    let h = held(vm);
                    seen = Some((vm, h));
                    h
                }
            };
            match h {
                Some(h) if v <= h => v = h.checked_add(1)?,
                _ => break,
            }
        }
        out.push(v);
        last = Some(v);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
