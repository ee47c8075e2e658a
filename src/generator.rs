//! Generating ids: `hlculid_generate()` from the shared clock, `hlculid_observe()` (the HLC
//! receive rule), `hlculid_generate_at()` for backfills, and `hlculid_clock()` to look inside.

use crate::datum::Hlculid;
use crate::errors::UserError;
use crate::extract::{ms_to_ts, ts_to_ms};
use crate::settings;
use crate::shmem::{self, clock, now_ms};
use hlculid_core::clock::{Backfill, ClockError, Tick};
use hlculid_core::random::RandomSource;
use hlculid_core::Id;
use pgrx::prelude::*;
use std::cell::{Cell, RefCell};

thread_local! {
    /// This process's random stream, with the pid it was seeded in: a process forked from one
    /// that already had a stream (never the case for backends today) seeds its own.
    static RANDOM: RefCell<Option<(i32, RandomSource)>> = const { RefCell::new(None) };
    static BACKFILL: Cell<Backfill> = Cell::new(Backfill::default());
}

#[inline]
fn random48() -> u64 {
    let pid = unsafe { pg_sys::MyProcPid };
    RANDOM.with_borrow_mut(|slot| match slot {
        Some((p, r)) if *p == pid => r.next48(),
        _ => match RandomSource::from_os() {
            Ok(mut r) => {
                let v = r.next48();
                *slot = Some((pid, r));
                v
            }
            Err(e) => UserError::new(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("could not seed hlculid random numbers: {e}"),
            )
            .raise(),
        },
    })
}

fn exhausted() -> ! {
    UserError::new(
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "hlculid clock is exhausted",
    )
    .detail("The logical clock has reached the end of the 48-bit millisecond range.")
    .raise()
}

/// Advances the shared clock, persisting a new high-water mark first when needed.
fn tick() -> Tick {
    let clock = clock();
    let now = now_ms();
    loop {
        match clock.tick(now) {
            Ok(t) => return t,
            Err(ClockError::NeedsReservation { needed }) => shmem::reserve(needed, now),
            Err(ClockError::Exhausted) => exhausted(),
            Err(ClockError::TooFarAhead { .. }) => unreachable!("tick never checks skew"),
        }
    }
}

fn warn_backward_step(step_ms: u64) {
    ereport!(
        PgLogLevel::WARNING,
        PgSqlErrorCode::ERRCODE_WARNING,
        format!("hlculid: system clock went backwards by {step_ms} ms"),
        "hlculid keeps issuing increasing ids: they carry the last time seen, with a rising counter, until the clock catches up."
    );
}

/// The next id from this server's clock: greater than every id it returned before.
#[pg_extern(volatile, parallel_safe)]
fn hlculid_generate() -> Hlculid {
    let t = tick();
    if let Some(step) = t.backward_step_ms {
        warn_backward_step(step);
    }
    Hlculid(Id::from_logical(
        t.logical,
        settings::publisher().0,
        random48(),
    ))
}

/// The HLC receive rule: every id generated here afterwards sorts after `remote`.
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_observe(remote: Hlculid) {
    let clock = clock();
    let skew = settings::max_clock_skew_ms();
    loop {
        let now = now_ms();
        match clock.observe(remote.0.logical(), now, skew) {
            Ok(()) => return,
            Err(ClockError::NeedsReservation { needed }) => shmem::reserve(needed, now),
            Err(ClockError::TooFarAhead { ahead_ms }) => UserError::new(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!(
                    "hlculid {} is {ahead_ms} ms ahead of the local clock",
                    remote.0
                ),
            )
            .detail(format!(
                "hlculid.max_clock_skew is {skew} ms; the clock was left unchanged."
            ))
            .hint(
                "Check the time synchronisation of both servers, or raise hlculid.max_clock_skew.",
            )
            .raise(),
            Err(ClockError::Exhausted) => exhausted(),
        }
    }
}

/// An id for a given time, for backfills. Ids this backend makes for one millisecond are
/// ordered among themselves; the shared clock is not touched.
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_generate_at(ts: TimestampWithTimeZone) -> Hlculid {
    clock(); // same prerequisite as hlculid_generate(): the publisher id is a preload setting
    let ms = ts_to_ms(ts, PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW);
    let logical = BACKFILL.with(|b| {
        let mut state = b.get();
        let l = state.next(ms);
        b.set(state);
        l
    });
    let Some(logical) = logical else { exhausted() };
    Hlculid(Id::from_logical(
        logical,
        settings::publisher().0,
        random48(),
    ))
}

/// The state of this server's clock.
#[pg_extern(volatile, parallel_safe)]
#[allow(clippy::type_complexity)]
fn hlculid_clock() -> TableIterator<
    'static,
    (
        name!(wall_time, TimestampWithTimeZone),
        name!(logical_time, TimestampWithTimeZone),
        name!(counter, i32),
        name!(drift_ms, i64),
        name!(publisher, i32),
        name!(publisher_source, String),
        name!(backward_jumps, i64),
        name!(overflows, i64),
        name!(observes, i64),
        name!(high_water_mark, TimestampWithTimeZone),
    ),
> {
    let s = clock().stats();
    let now = now_ms();
    let (publisher, source) = settings::publisher();
    let logical_ms = s.logical >> 16;
    TableIterator::once((
        ms_to_ts(now.min(hlculid_core::layout::MAX_MS)),
        ms_to_ts(logical_ms),
        (s.logical & 0xFFFF) as i32,
        logical_ms as i64 - now as i64,
        publisher as i32,
        source.describe().to_string(),
        s.backward_jumps as i64,
        s.overflows as i64,
        s.observes as i64,
        ms_to_ts(s.reserved >> 16),
    ))
}
