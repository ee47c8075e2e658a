//! Generating ids: `hlculid_generate()` from the shared clock, `hlculid_observe()` (the HLC
//! receive rule), `hlculid_generate_at()` for backfills, and `hlculid_clock()` to look inside.

use crate::datum::Hlculid;
use crate::errors::{Condition, UserError};
use crate::extract::{ms_to_ts, ts_to_ms};
use crate::pg_c;
use crate::settings;
use crate::shmem::{self, clock, now_ms};
use hlculid_core::clock::{Backfill, ClockError, Tick, MAX_BATCH};
use hlculid_core::random::RandomSource;
use hlculid_core::Id;
use pgrx::prelude::*;
use std::cell::UnsafeCell;

/// State private to this backend. A backend runs SQL functions on one thread only, so a static
/// is enough, and unlike a thread-local in a shared library it costs no lookup per call.
struct BackendLocal<T>(UnsafeCell<T>);
// SAFETY: the value is only reached through `with`, whose contract (one thread, no re-entry)
// every caller upholds; so no two references to it exist at once.
unsafe impl<T> Sync for BackendLocal<T> {}

impl<T> BackendLocal<T> {
    const fn new(v: T) -> Self {
        BackendLocal(UnsafeCell::new(v))
    }

    /// Runs `f` on the value.
    ///
    /// # Safety
    /// Call only on the backend's main thread (where PostgreSQL runs SQL functions), and never
    /// from inside `f` of another `with` on the same value: either would make two `&mut` to it.
    #[inline]
    unsafe fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller guarantees this is the only reference for the duration of `f`.
        f(unsafe { &mut *self.0.get() })
    }
}

/// This process's random stream, with the pid it was seeded in: a process forked from one
/// that already had a stream (never the case for backends today) seeds its own.
static RANDOM: BackendLocal<Option<(i32, RandomSource)>> = BackendLocal::new(None);
static BACKFILL: BackendLocal<Backfill> = BackendLocal::new(Backfill::new());
/// A clock result the fast path took but could not finish with, for the slow path to use.
static PENDING: BackendLocal<Option<Result<Tick, ClockError>>> = BackendLocal::new(None);

/// 48 random bits, if this process's stream is already seeded.
#[inline]
fn random48_ready() -> Option<u64> {
    // SAFETY: MyProcPid is set once at process start and only read afterwards.
    let pid = unsafe { pg_sys::MyProcPid };
    // SAFETY: called on the backend's thread; the closure does not reach RANDOM again.
    unsafe {
        RANDOM.with(|slot| match slot {
            Some((p, r)) if *p == pid => Some(r.next48()),
            _ => None,
        })
    }
}

fn random48() -> u64 {
    if let Some(v) = random48_ready() {
        return v;
    }
    match RandomSource::from_os() {
        Ok(mut r) => {
            let v = r.next48();
            // SAFETY: as in random48_ready; MyProcPid is set once at process start.
            unsafe { RANDOM.with(|slot| *slot = Some((pg_sys::MyProcPid, r))) };
            v
        }
        Err(e) => UserError::new(
            Condition::Internal,
            format!("could not seed hlculid random numbers: {e}"),
        )
        .raise(),
    }
}

fn exhausted() -> ! {
    UserError::new(Condition::TimeOutOfRange, "hlculid clock is exhausted")
        .detail("The logical clock has reached the end of the 48-bit millisecond range.")
        .raise()
}

/// Finishes a clock step: persists a new high-water mark and steps again while needed.
/// The clock is read again for each step: writing the mark takes long enough for other
/// backends to record later readings, against which an old one would look like a backward step.
/// `n` is the number of values the step takes (1, or a batch).
fn settle(first: Result<Tick, ClockError>, now: u64, n: u64) -> Tick {
    let clock = clock();
    let (mut now, mut result) = (now, first);
    loop {
        match result {
            Ok(t) => return t,
            Err(ClockError::NeedsReservation { needed }) => shmem::reserve(needed, now),
            Err(ClockError::Exhausted) => exhausted(),
            Err(ClockError::WallClockOutOfRange) => shmem::raise_wall_clock_out_of_range(),
            Err(ClockError::TooFarAhead { .. }) => unreachable!("tick never checks skew"),
            Err(ClockError::BadBatch) => unreachable!("batch sizes are checked first"),
        }
        (now, result) = clock.tick_n_reading(now_ms, n);
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

/// SQL `hlculid_generate()`: the next id from this server's clock, greater than every id it
/// returned before.
///
/// A hand-written V1 entry point, because pgrx's per-call guard costs about as much as the
/// clock itself. The common case (preloaded, random stream seeded, a value within the
/// reservation, no clock step, memory available) is one atomic step and a 16-byte allocation,
/// none of which can raise an error or panic. Everything else goes to the guarded
/// [`hlculid_generate_slow`], which raises errors and warnings the pgrx way.
///
/// It is `extern "C"`, not `"C-unwind"`: should the no-panic promise above ever break, Rust
/// aborts the backend (PostgreSQL then recovers as after any backend crash, and the clock resumes
/// from its mark) instead of unwinding into PostgreSQL's C frames, which is undefined.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo`, as for any V1 function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_generate_fast(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    if shmem::preloaded() {
        let (_, first) = shmem::clock_preloaded().tick_reading(now_ms);
        if let Ok(t) = first {
            if t.backward_step_ms.is_none() {
                if let Some(random) = random48_ready() {
                    // SAFETY: inside a function call; a NULL result is handled below.
                    let p = unsafe { pg_c::alloc_no_raise(16) };
                    if !p.is_null() {
                        let id = Id::from_logical(t.logical, settings::publisher_fast(), random);
                        // SAFETY: p is a fresh allocation of 16 bytes.
                        unsafe { p.cast::<[u8; 16]>().write_unaligned(id.0) };
                        return pg_sys::Datum::from(p);
                    }
                }
            }
        }
        // SAFETY: the backend's thread; the closure only stores.
        unsafe { PENDING.with(|p| *p = Some(first)) };
    }
    // SAFETY: pgrx's guarded wrapper of the slow path, called with our own valid fcinfo; it
    // reports errors by longjmp, which passes this frame (it holds nothing to drop).
    unsafe { hlculid_generate_slow_wrapper(fcinfo) }
}

v1_function_info!(pg_finfo_hlculid_generate_fast);

/// The guarded path of `hlculid_generate()`: finishes what the fast path started.
#[pg_extern(volatile, parallel_safe, sql = false)]
fn hlculid_generate_slow() -> Hlculid {
    // SAFETY: the backend's thread; the closure only takes.
    let (now, first) = match unsafe { PENDING.with(|p| p.take()) } {
        Some(first) => (now_ms(), first),
        None => clock().tick_reading(now_ms),
    };
    let t = settle(first, now, 1);
    if let Some(step) = t.backward_step_ms {
        warn_backward_step(step);
    }
    Hlculid(Id::from_logical(
        t.logical,
        settings::publisher().0,
        random48(),
    ))
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_generate() RETURNS hlculid
    STRICT VOLATILE PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_fast';
"#,
    name = "hlculid_generate",
    requires = ["hlculid_type"],
);

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
                Condition::InvalidParameter,
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
            Err(ClockError::WallClockOutOfRange) => shmem::raise_wall_clock_out_of_range(),
            Err(ClockError::BadBatch) => unreachable!("observe takes no batch"),
        }
    }
}

/// SQL `hlculid_generate_n(n)`: `n` ids from one atomic step of the clock, in increasing order,
/// every one greater than every id the server returned before; for `INSERT ... SELECT` (with
/// `unnest`) and for applications that pre-allocate ids.
///
/// Hand-written rather than `#[pg_extern]`, so that the array is built in one go from one
/// buffer (pgrx's `Vec` conversion looks the element type up again for every element).
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo`, as for any V1 function.
#[pg_guard]
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn hlculid_generate_n(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the function is STRICT and declared with one int4 argument.
    let n = unsafe { pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 0) }.unwrap_or(0);
    if !(1..=MAX_BATCH as i64).contains(&i64::from(n)) {
        UserError::new(
            Condition::InvalidParameter,
            format!("hlculid_generate_n cannot make {n} ids"),
        )
        .detail(format!(
            "A batch holds 1 to {MAX_BATCH} ids (one millisecond's counter)."
        ))
        .hint("Call it again for more ids: every batch sorts after the one before.")
        .raise();
    }
    let n = n as usize;
    let (now, first) = clock().tick_n_reading(now_ms, n as u64);
    let t = settle(first, now, n as u64);
    if let Some(step) = t.backward_step_ms {
        warn_backward_step(step);
    }
    let publisher = settings::publisher().0;
    // SAFETY: fcinfo is valid; flinfo, when the call has an expression, says the return type.
    let element = match unsafe { pg_sys::get_fn_expr_rettype((*fcinfo).flinfo) } {
        pg_sys::InvalidOid => pgrx::wrappers::regtypein("hlculid"),
        // SAFETY: a syscache lookup of a valid type OID.
        array => unsafe { pg_sys::get_element_type(array) },
    };
    // SAFETY: palloc returns n * 16 writable bytes (or raises); every datum points at 16 of them,
    // and construct_array copies them into the new array (element length 16, by reference,
    // char alignment: the type's own storage).
    unsafe {
        let values = pg_sys::palloc(n * 16).cast::<[u8; 16]>();
        let datums =
            pg_sys::palloc(n * std::mem::size_of::<pg_sys::Datum>()).cast::<pg_sys::Datum>();
        for i in 0..n {
            let id = Id::from_logical(t.logical + i as u64, publisher, random48());
            values.add(i).write(id.0);
            datums.add(i).write(pg_sys::Datum::from(values.add(i)));
        }
        let array = pg_sys::construct_array(
            datums,
            n as i32,
            element,
            16,
            false,
            pg_sys::TYPALIGN_CHAR as core::ffi::c_char,
        );
        pg_sys::Datum::from(array)
    }
}

v1_function_info!(pg_finfo_hlculid_generate_n);

extension_sql!(
    r#"
CREATE FUNCTION hlculid_generate_n(n int4) RETURNS hlculid[]
    STRICT VOLATILE PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_n';
"#,
    name = "hlculid_generate_n",
    requires = ["hlculid_type"],
);

/// An id for a given time, for backfills; the shared clock is not touched. Consecutive calls of
/// one backend for the same millisecond give increasing ids (the counter counts up, carrying
/// into the next millisecond when full). A call for another millisecond in between starts over
/// at counter 0, so ids of a millisecond made in separate runs are ordered by their random bits
/// only (remembering every millisecond ever backfilled would cost unbounded memory).
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_generate_at(ts: TimestampWithTimeZone) -> Hlculid {
    clock(); // same prerequisite as hlculid_generate(): the publisher id is a preload setting
    let ms = ts_to_ms(ts);
    // SAFETY: the backend's thread; the closure only steps the backfill clock.
    let logical = unsafe { BACKFILL.with(|b| b.next(ms)) };
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
        name!(wall_time, Option<TimestampWithTimeZone>),
        name!(logical_time, TimestampWithTimeZone),
        name!(counter, i32),
        name!(drift_ms, Option<i64>),
        name!(publisher, i32),
        name!(publisher_source, String),
        name!(backward_jumps, i64),
        name!(overflows, i64),
        name!(observes, i64),
        name!(high_water_mark, TimestampWithTimeZone),
        name!(high_water_mark_state, String),
    ),
> {
    let s = clock().stats();
    let now = now_ms();
    let (publisher, source) = settings::publisher();
    let logical_ms = s.logical >> 16;
    // NULL while the system clock reads a time an id cannot hold
    let now = hlculid_core::clock::wall_in_range(now).then_some(now);
    TableIterator::once((
        now.map(ms_to_ts),
        ms_to_ts(logical_ms),
        (s.logical & 0xFFFF) as i32,
        now.map(|now| logical_ms as i64 - now as i64),
        publisher as i32,
        source.describe().to_string(),
        s.backward_jumps as i64,
        s.overflows as i64,
        s.observes as i64,
        ms_to_ts(s.reserved >> 16),
        match shmem::mark_damage() {
            None => "ok".to_string(),
            Some(d) => format!("damaged: {}", d.describe()),
        },
    ))
}

/// The way out when the high-water mark file was damaged (or lost with a new data directory):
/// afterwards every id this server issues sorts after `floor`, the largest id known to have been
/// issued (NULL when none was). Writes a new mark and returns it. Superuser only.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_clock_recover(floor: Option<Hlculid>) -> TimestampWithTimeZone {
    // SAFETY: superuser() reads the current role's attributes; a backend always has one here.
    if !unsafe { pg_sys::superuser() } {
        UserError::new(
            Condition::NotSuperuser,
            "permission denied to recover hlculid's clock",
        )
        .detail("Only a superuser may set the floor of the server's clock.")
        .raise();
    }
    let floor = floor.map_or(0, |f| f.0.logical());
    let mark = shmem::recover(floor);
    ms_to_ts(mark >> 16)
}

// Checked in the function too; revoked so that \df+ and has_function_privilege say so.
extension_sql!(
    "REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid) FROM PUBLIC;",
    name = "hlculid_clock_recover_revoke",
    requires = [hlculid_clock_recover],
);
