//! The server's clock as generating functions use it: the shared clock with its high-water mark
//! in the data directory (core's one reservation protocol, [`DurableClock`]), the real-time
//! clock, waiting at the run-ahead bound, and the one place where what the clock refuses
//! becomes a PostgreSQL error.
//!
//! The background writer keeps the mark a window ahead; a backend that reaches it (writer down,
//! a burst past the window, an observe further ahead) extends it itself, writes serialised by
//! `shared::MARK_WRITING`, whose waiters a cancel interrupts.

use crate::base::errors::{Condition, UserError};
use crate::base::process;
use crate::base::settings;
use crate::clock::shared::{self, MarkDamage, MARK_WRITING};
use hlculid_core::clock::{ClockError, Tick, FULL_COUNTER, MAX_BATCH};
use hlculid_core::mark::file as mark_file;
use hlculid_core::mark::{DurableClock, MarkStore, Refusal};
use hlculid_core::Id;
use pgrx::prelude::*;
use std::time::{SystemTime, UNIX_EPOCH};

/// The writer keeps the persisted mark between half a window and one and a half windows ahead
/// of the wall clock (or of the logical clock, when that runs ahead), so after a crash the clock
/// may resume up to 1.5 windows ahead.
pub const RESERVE_WINDOW_MS: u64 = 1000;

/// Why a mark could not be made durable.
pub enum MarkError {
    /// The file was damaged at server start: nothing is issued until a recovery.
    Damaged(MarkDamage),
    Io(std::io::Error),
}

/// The mark file in the data directory. `recovering` skips the damage check: a recovery is what
/// replaces a damaged mark.
pub struct ServerMark {
    recovering: bool,
}

impl MarkStore for ServerMark {
    type Error = MarkError;

    fn serialised<R>(&self, f: impl FnOnce() -> R) -> R {
        // waits interruptibly (not an LWLock): see shared::MarkWriting
        let _writing = MARK_WRITING.get().lock();
        f()
    }

    fn store(&self, mark: u64) -> Result<(), MarkError> {
        if !self.recovering {
            if let Some(damage) = shared::mark_damage() {
                return Err(MarkError::Damaged(damage));
            }
        }
        mark_file::store(&process::data_dir(), mark).map_err(MarkError::Io)
    }
}

static MARK: ServerMark = ServerMark { recovering: false };

/// The shared clock with its mark (55000 when hlculid is not preloaded).
pub fn durable() -> DurableClock<'static, ServerMark> {
    DurableClock::new(shared::clock(), &MARK, RESERVE_WINDOW_MS)
}

/// The real-time clock in Unix milliseconds (read on every call, never `now()`). A reading
/// before the Unix epoch comes back as 0, which the clock refuses as an unset clock.
#[inline]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Waits at the run-ahead bound: at most 10 ms at a time (the clock is read again after each
/// wait), on the process latch, so a query cancel or a shutdown ends it at once.
pub fn pace(wait_ms: u64) {
    let events = pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH;
    // SAFETY: MyLatch is this process's latch, set up before any SQL runs; WaitLatch and
    // ResetLatch are what every PostgreSQL wait loop calls on it.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            events as i32,
            wait_ms.clamp(1, 10) as std::ffi::c_long,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    pg_sys::check_for_interrupts!();
}

/// What a batch holds.
pub fn batch_detail() -> String {
    format!("A batch holds 1 to {MAX_BATCH} ids.")
}

/// One value that is never made into an id (so no transaction holds the horizon for it): moves
/// an idle clock up to the wall clock.
pub fn tick_unused() {
    finish(durable().take_batch(1, FULL_COUNTER, now_ms, pace));
}

/// Finishes what the generation fast path started.
pub fn settle(first: Result<Tick, ClockError>, now: u64) -> Tick {
    settle_batch(first, now, FULL_COUNTER)
}

/// Finishes what the bigint generation fast path started (one value of a narrow counter).
pub fn settle_batch(first: Result<Tick, ClockError>, now: u64, counter_values: u64) -> Tick {
    finish(durable().settle_batch(first, now, 1, counter_values, now_ms, pace))
}

/// The tick, with a backward step of the wall clock warned about, or the error it was refused with.
pub fn finish(r: Result<Tick, Refusal<MarkError>>) -> Tick {
    let t = r.unwrap_or_else(|r| raise(r, None));
    warn_backward_step(t);
    t
}

/// The HLC receive rule for `remote`.
pub fn observe(remote: Id) {
    durable()
        .observe(remote.logical(), settings::max_clock_skew_ms(), now_ms)
        .unwrap_or_else(|r| raise(r, Some(remote)));
}

/// The writer's periodic step: persist a new mark if less than half a window is left. A failed
/// write is returned, not raised: the writer keeps trying, and backends raise it themselves.
pub fn refresh() -> std::io::Result<()> {
    if shared::mark_damage().is_some() {
        return Ok(()); // nothing is issued until a recovery, which writes the mark itself
    }
    match durable().refresh(now_ms()) {
        Ok(()) | Err(MarkError::Damaged(_)) => Ok(()),
        Err(MarkError::Io(e)) => Err(e),
    }
}

/// Gives the clock a floor, makes a mark above it and the wall clock durable, and clears the
/// damage; returns the mark. Callers check privileges and the floor.
pub fn recover(floor: u64) -> u64 {
    static RECOVERING: ServerMark = ServerMark { recovering: true };
    let mark = DurableClock::new(shared::clock(), &RECOVERING, RESERVE_WINDOW_MS)
        .recover(floor, now_ms())
        .unwrap_or_else(|e| raise(Refusal::Store(e), None));
    shared::clear_damage();
    mark
}

fn warn_backward_step(t: Tick) {
    if let Some(step_ms) = t.backward_step_ms {
        ereport!(
            PgLogLevel::WARNING,
            PgSqlErrorCode::ERRCODE_WARNING,
            format!("hlculid: system clock went backwards by {step_ms} ms"),
            "hlculid keeps issuing increasing ids: they carry the last time seen, with a rising counter, until the clock catches up."
        );
    }
}

/// What the clock refused, as a PostgreSQL error: the one mapping for every generating function
/// and observe (`remote`: the observed id, for its message).
pub fn raise(r: Refusal<MarkError>, remote: Option<Id>) -> ! {
    match r {
        Refusal::Store(MarkError::Damaged(damage)) => raise_damaged(damage),
        Refusal::Store(MarkError::Io(e)) => raise_write_error(e),
        Refusal::Exhausted => {
            UserError::new(Condition::TimeOutOfRange, "hlculid clock is exhausted")
                .detail("The logical clock has reached the end of the 48-bit millisecond range.")
                .raise()
        }
        Refusal::WallClockOutOfRange => raise_wall_clock_out_of_range(),
        Refusal::TooFarAhead { ahead_ms } => {
            let skew = settings::max_clock_skew_ms();
            let what = remote.map_or_else(|| "the id".to_string(), |id| format!("hlculid {id}"));
            UserError::new(
                Condition::InvalidParameter,
                format!("{what} is {ahead_ms} ms ahead of the local clock"),
            )
            .detail(format!(
                "hlculid.max_clock_skew is {skew} ms; the clock was left unchanged."
            ))
            .hint(
                "Check the time synchronisation of both servers, or raise hlculid.max_clock_skew.",
            )
            .raise()
        }
        Refusal::BadBatch => UserError::new(
            Condition::InvalidParameter,
            "a batch of hlculids outside the batch limit",
        )
        .detail(batch_detail())
        .raise(),
    }
}

/// The 22008 error of a wall clock an id cannot hold, with what it reads.
fn raise_wall_clock_out_of_range() -> ! {
    let reading = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) if d.as_millis() == 0 => {
            "the Unix epoch itself, which is what an unset clock reads".to_string()
        }
        Ok(d) => format!("{} s after the Unix epoch", d.as_secs()),
        Err(e) => format!("{} s before the Unix epoch", e.duration().as_secs()),
    };
    UserError::new(
        Condition::TimeOutOfRange,
        "the system clock is outside hlculid's time range, so no ids are issued",
    )
    .detail(format!(
        "The system clock reads {reading}. {}",
        crate::types::timestamps::HLCULID.range
    ))
    .hint("Correct the system clock. The high-water mark was left as it was, so ids continue above every earlier one once the clock is back in range.")
    .raise()
}

fn raise_damaged(damage: MarkDamage) -> ! {
    // Describe the file as it is now: the operator may be looking at it.
    let now = match mark_file::load(&process::data_dir()) {
        Ok(Some(_)) => {
            "now holds a valid mark, but it was not there when the server started".to_string()
        }
        Ok(None) => "is now missing".to_string(),
        Err(e) => format!("now reads as: {e}"),
    };
    UserError::new(
        Condition::MarkDamaged,
        "hlculid's high-water mark is damaged, so no ids are issued",
    )
    .detail(format!(
        "The file \"{}\" in the data directory was {} and {now}. Without it the clock cannot know how far it had gone, and new ids could sort before earlier ones.",
        mark_file::FILE_NAME,
        damage.describe()
    ))
    .hint("Find the largest hlculid stored in this cluster and, as a superuser, run SELECT hlculid_clock_recover(that_id); see \"Recovering the clock\" in hlculid's docs/troubleshooting.md.")
    .raise()
}

fn raise_write_error(e: std::io::Error) -> ! {
    UserError::new(
        Condition::MarkWriteFailed,
        format!(
            "could not write hlculid high-water mark file \"{}\": {e}",
            mark_file::FILE_NAME
        ),
    )
    .detail("No id is issued until its high-water mark is on disk, so that ids stay increasing across restarts.")
    .hint("Free space in the data directory, or make it writable again; generation resumes by itself.")
    .raise()
}
