//! The high-water mark: the largest logical clock value that may have been issued, made durable
//! before any value below it is (one word for it in the crate and the server: *mark*).
//! [`file`](mod@file) is its on-disk form. This module is the one protocol between a
//! [`SharedClock`] and its durable mark, used by the server and by the crate's
//! [`Generator`](crate::Generator) alike: take values; when the clock asks for a reservation,
//! make a mark durable (writes serialised) and take again; at the run-ahead bound, wait for the
//! wall clock and take again; report anything else as a [`Refusal`], which each side maps to its
//! own errors in one place.
//!
//! The clock never takes a value it then refuses, so however long the mark cannot be written
//! and however often callers retry, the clock moves only by the values it returned.

pub mod file;

use crate::clock::{ClockError, SharedClock, Tick, FULL_COUNTER, MAX_BATCH};

/// Where a clock's high-water mark is made durable.
pub trait MarkStore {
    /// Why a mark could not be made durable, or why no id may be issued at all.
    type Error;
    /// Runs `f` with writes of the mark serialised among everything that uses the clock.
    fn serialised<R>(&self, f: impl FnOnce() -> R) -> R;
    /// Makes `mark` durable: once this returns, a restart resumes at or above it.
    fn store(&self, mark: u64) -> Result<(), Self::Error>;
}

/// Why the protocol could not complete.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal<E> {
    /// The mark store's error: the mark could not be made durable, so nothing was issued.
    Store(E),
    /// The 64-bit logical clock has no value left.
    Exhausted,
    /// The wall clock reads a time an id cannot hold; nothing changed.
    WallClockOutOfRange,
    /// An observed id lies `ahead_ms` ahead of the wall clock, more than the skew allows.
    TooFarAhead { ahead_ms: u64 },
    /// A batch of 0 or more than [`MAX_BATCH`] values; nothing was taken.
    BadBatch,
}

impl<E> Refusal<E> {
    fn from_clock(e: ClockError) -> Refusal<E> {
        match e {
            ClockError::Exhausted => Refusal::Exhausted,
            ClockError::WallClockOutOfRange => Refusal::WallClockOutOfRange,
            ClockError::TooFarAhead { ahead_ms } => Refusal::TooFarAhead { ahead_ms },
            ClockError::BadBatch => Refusal::BadBatch,
            // The protocol handles these itself and never passes them on.
            ClockError::NeedsReservation { .. } | ClockError::AtBound { .. } => {
                unreachable!("handled by the protocol")
            }
        }
    }
}

/// A clock with its mark store: what generating, observing, refreshing and recovering go through.
pub struct DurableClock<'a, S> {
    clock: &'a SharedClock,
    store: &'a S,
    /// How far ahead of the clock a new mark is made durable, in ms.
    window_ms: u64,
}

impl<'a, S: MarkStore> DurableClock<'a, S> {
    pub fn new(clock: &'a SharedClock, store: &'a S, window_ms: u64) -> Self {
        DurableClock {
            clock,
            store,
            window_ms,
        }
    }

    /// `n` consecutive values (1 to [`MAX_BATCH`]), every one above every value returned before:
    /// the returned tick's `logical` is the first. `now` reads the wall clock (Unix ms; 0 for a
    /// time before the epoch); `pace(ms)` waits about that long, at the run-ahead bound.
    pub fn take(
        &self,
        n: u64,
        now: impl Fn() -> u64,
        pace: impl FnMut(u64),
    ) -> Result<Tick, Refusal<S::Error>> {
        self.take_batch(n, FULL_COUNTER, now, pace)
    }

    /// `n` values for ids whose counter holds `counter_values` values a millisecond (see
    /// [`SharedClock::tick_batch_reading`]): the `i`th is
    /// [`nth_value`](crate::clock::nth_value)`(first, i, counter_values)`.
    pub fn take_batch(
        &self,
        n: u64,
        counter_values: u64,
        now: impl Fn() -> u64,
        pace: impl FnMut(u64),
    ) -> Result<Tick, Refusal<S::Error>> {
        if !(1..=MAX_BATCH).contains(&n) {
            return Err(Refusal::BadBatch);
        }
        let (now_ms, first) = self.clock.tick_batch_reading(&now, n, counter_values);
        self.settle_batch(first, now_ms, n, counter_values, now, pace)
    }

    /// Finishes a take whose first step (`first`, made with the wall clock at `now_ms`, for `n`
    /// values of a counter of `counter_values` values a millisecond) the caller made itself, as
    /// the server's fast paths do.
    pub fn settle_batch(
        &self,
        first: Result<Tick, ClockError>,
        now_ms: u64,
        n: u64,
        counter_values: u64,
        now: impl Fn() -> u64,
        mut pace: impl FnMut(u64),
    ) -> Result<Tick, Refusal<S::Error>> {
        let (mut now_ms, mut result) = (now_ms, first);
        let mut waited = false;
        loop {
            match result {
                Ok(t) => return Ok(t),
                Err(ClockError::NeedsReservation { needed }) => {
                    self.reserve(needed, now_ms).map_err(Refusal::Store)?
                }
                Err(ClockError::AtBound { wait_ms }) => {
                    if !waited {
                        waited = true;
                        self.clock.count_wait();
                    }
                    pace(wait_ms);
                }
                Err(e) => return Err(Refusal::from_clock(e)),
            }
            // The clock is read again for each step: a reading held across a write of the mark
            // or a wait could be taken for a backward step.
            (now_ms, result) = self.clock.tick_batch_reading(&now, n, counter_values);
        }
    }

    /// The receive rule: afterwards every value taken is above `remote`. Refused, leaving the
    /// clock unchanged, when `remote` is more than `max_skew_ms` ahead of the wall clock (and
    /// above the clock).
    pub fn observe(
        &self,
        remote: u64,
        max_skew_ms: u64,
        now: impl Fn() -> u64,
    ) -> Result<(), Refusal<S::Error>> {
        loop {
            let now_ms = now();
            match self.clock.observe(remote, now_ms, max_skew_ms) {
                Ok(()) => return Ok(()),
                Err(ClockError::NeedsReservation { needed }) => {
                    self.reserve(needed, now_ms).map_err(Refusal::Store)?
                }
                Err(e) => return Err(Refusal::from_clock(e)),
            }
        }
    }

    /// Makes a mark covering at least `needed` (plus the window) durable and publishes it.
    pub fn reserve(&self, needed: u64, now_ms: u64) -> Result<(), S::Error> {
        self.store.serialised(|| {
            if self.clock.reserved() >= needed {
                return Ok(()); // another caller got there first
            }
            let mark = self.clock.reservation_for(needed, now_ms, self.window_ms);
            self.store.store(mark)?;
            self.clock.set_reserved(mark);
            Ok(())
        })
    }

    /// A background refresh: makes a new mark durable when less than half a window is left, so
    /// that callers almost never wait for a write.
    pub fn refresh(&self, now_ms: u64) -> Result<(), S::Error> {
        match self.clock.refresh_due(now_ms, self.window_ms) {
            Some(needed) => self.reserve(needed, now_ms),
            None => Ok(()),
        }
    }

    /// Recovery: makes a mark above `floor` and the wall clock durable, then raises the clock to
    /// `floor`, so that every value taken afterwards is above it. Returns the mark.
    pub fn recover(&self, floor: u64, now_ms: u64) -> Result<u64, S::Error> {
        self.store.serialised(|| {
            let mark = self.clock.reservation_for(floor, now_ms, self.window_ms);
            self.store.store(mark)?;
            self.clock.raise_floor(floor);
            self.clock.set_reserved(mark);
            Ok(mark)
        })
    }
}

#[cfg(test)]
mod tests;
