//! The horizon's slots: one per backend, in shared memory, saying the lowest clock value that
//! backend's running transaction may take. src/horizon/server.rs reads them; the generators hold a slot
//! before their first tick; the transaction's end (src/generate/xact_callbacks.rs) releases it.
//!
//! Each slot is one cache line, indexed by the backend's proc number. Before the first tick of a
//! top-level transaction the backend stores there the lowest value the transaction can take (the
//! clock's current value + 1); the tick's AcqRel step on the clock publishes that store to any
//! reader that sees the tick. The slot is cleared when the top-level resource owner is released,
//! after `ProcArrayEndTransaction` and after every transaction callback (src/generate/xact_callbacks.rs says why),
//! so a cleared slot means the transaction's rows are visible to every later snapshot, on every
//! node a distributed commit reached. At `PRE_PREPARE` the value becomes a prepared hold
//! (src/horizon/prepared/mod.rs) before the slot is cleared.
//!
//! Beside the value, the slot keeps the wall time the transaction held it (its first id), so
//! `hlculid.hlculid_horizon_holders.lag` says how long a reader has been held: the clock's value
//! may be far behind the wall clock on an idle server, and says nothing about that.
//!
//! The generators are PARALLEL RESTRICTED: a parallel worker's commit (`PARALLEL_COMMIT`) comes
//! before its leader's, so a worker's slot would release ids the leader has not committed.

use crate::base::backend_local::BackendLocal;
use crate::base::errors::{Condition, UserError};
use crate::clock::shared;
use crate::horizon::prepared;
use pgrx::prelude::*;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicPtr, AtomicU64, Ordering};

/// One backend's slot: the lowest clock value its running transaction may take (0: none), and
/// when it was held (a TimestampTz, stored before `lowest`).
#[repr(C, align(64))]
struct Slot {
    lowest: AtomicU64,
    since: AtomicI64,
    pid: AtomicI32,
}

/// A slot in use, as readers see it.
pub struct Held {
    pub pid: i32,
    /// The lowest clock value the transaction may take.
    pub lowest: u64,
    /// When the transaction held the slot (before its first id), a TimestampTz.
    pub since: i64,
}

#[repr(C, align(64))]
struct Header {
    /// The largest horizon returned since the server started (a clock value, exclusive).
    published: AtomicU64,
    nslots: usize,
}

static SHARED: AtomicPtr<Header> = AtomicPtr::new(std::ptr::null_mut());

static mut PREV_REQUEST: Option<unsafe extern "C-unwind" fn()> = None;
static mut PREV_STARTUP: Option<unsafe extern "C-unwind" fn()> = None;

fn layout() -> (usize, usize) {
    // SAFETY: set from postgresql.conf before shmem_request_hook runs, constant afterwards.
    let nslots = unsafe { pg_sys::MaxBackends.max(0) as usize };
    (
        nslots,
        std::mem::size_of::<Header>() + nslots * std::mem::size_of::<Slot>(),
    )
}

/// Registers the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
pub fn init() {
    // SAFETY: _PG_init of a preloaded library runs once in the postmaster, before any hook is
    // called; chaining the previous hooks is what every extension does.
    unsafe {
        PREV_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request);
        PREV_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(startup);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn request() {
    // SAFETY: the hook chain, as installed by init; called by the postmaster once.
    unsafe {
        if let Some(prev) = PREV_REQUEST {
            prev();
        }
        pg_sys::RequestAddinShmemSpace(layout().1 + 64);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn startup() {
    // SAFETY: the hook chain, then the region (shared::add_in_region's protocol), from the hook.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        let (nslots, size) = layout();
        let p = shared::add_in_region(c"hlculid_horizon", size, |p| {
            (*p.cast::<Header>()).nslots = nslots;
        });
        SHARED.store(p.cast(), Ordering::Release);
    }
}

fn header() -> Option<&'static Header> {
    // SAFETY: set once per shared memory segment by `startup` (in the postmaster, inherited by
    // every backend); the region lives as long as the segment.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

/// Whether the slots exist (the library was preloaded when the server started).
pub fn available() -> bool {
    header().is_some()
}

fn slots(h: &'static Header) -> &'static [Slot] {
    // SAFETY: `layout` put `nslots` cache-line slots right after the header, inside the region.
    unsafe {
        let base = (h as *const Header)
            .cast::<u8>()
            .add(std::mem::size_of::<Header>());
        std::slice::from_raw_parts(base.cast::<Slot>(), h.nslots)
    }
}

/// The slots in use: (pid, lowest value).
pub fn held() -> impl Iterator<Item = (i32, u64)> {
    header()
        .into_iter()
        .flat_map(|h| slots(h).iter())
        .filter_map(|s| {
            let v = s.lowest.load(Ordering::Acquire);
            (v != 0).then(|| (s.pid.load(Ordering::Relaxed), v))
        })
}

/// The slots in use with their times. `since` is read between two reads of `lowest`: when the
/// slot changed hands in between, it is read again, so a row never pairs one transaction's
/// value with another's time.
pub fn held_since() -> impl Iterator<Item = Held> {
    header()
        .into_iter()
        .flat_map(|h| slots(h).iter())
        .filter_map(|s| loop {
            let v = s.lowest.load(Ordering::Acquire);
            if v == 0 {
                return None;
            }
            let since = s.since.load(Ordering::Acquire);
            if s.lowest.load(Ordering::Acquire) == v {
                return Some(Held {
                    pid: s.pid.load(Ordering::Relaxed),
                    lowest: v,
                    since,
                });
            }
        })
}

/// Raises the shared horizon to `h` (never lowers it) and returns it: every earlier answer stays
/// true, since later transactions take values above the clock as it was.
pub fn publish(horizon: u64) -> u64 {
    match header() {
        Some(h) => h
            .published
            .fetch_max(horizon, Ordering::AcqRel)
            .max(horizon),
        None => horizon,
    }
}

/// This backend's slot: its proc number indexes the slots (regular backends, autovacuum and
/// background workers number below MaxBackends).
fn my_slot() -> Option<&'static Slot> {
    let h = header()?;
    // SAFETY: MyProc and ProcGlobal are set when a backend starts and never change; MyProc
    // points into ProcGlobal->allProcs.
    let n = unsafe {
        if pg_sys::MyProc.is_null() || pg_sys::ProcGlobal.is_null() {
            return None;
        }
        pg_sys::MyProc.offset_from((*pg_sys::ProcGlobal).allProcs)
    };
    usize::try_from(n).ok().and_then(|n| slots(h).get(n))
}

/// 0: the backend has not registered its exit backstop (slow path); 1: ready, no slot held;
/// 2: this transaction holds its slot.
static STATE: BackendLocal<u8> = BackendLocal::new(0);
const READY: u8 = 1;
const HELD: u8 = 2;

/// Holds this transaction's slot before its first tick, without raising: false when the slow
/// path must do it (first use in this backend). One branch once held.
#[inline]
pub fn hold_fast() -> bool {
    // SAFETY: the backend's thread; the closure does not reach STATE again.
    unsafe {
        STATE.with(|s| match *s {
            HELD => true,
            READY => {
                if let Some(slot) = my_slot() {
                    set(slot);
                    *s = HELD;
                    true
                } else {
                    false
                }
            }
            _ => false,
        })
    }
}

fn set(slot: &Slot) {
    // SAFETY: MyProcPid is set once at process start.
    slot.pid
        .store(unsafe { pg_sys::MyProcPid }, Ordering::Relaxed);
    // SAFETY: reads the system clock; no shared state. Once per transaction that makes ids.
    slot.since
        .store(unsafe { pg_sys::GetCurrentTimestamp() }, Ordering::Release);
    // The lowest value any tick after this load can take; the tick's AcqRel step publishes it.
    slot.lowest
        .store(shared::clock_preloaded().current() + 1, Ordering::Release);
}

/// [`hold_fast`], registering the backend's exit backstop the first time; raises in a parallel
/// worker, and when the process has no slot (never for a backend or a background worker).
pub fn hold() {
    if hold_fast() {
        return;
    }
    // SAFETY: a plain read of this process's parallel worker number (-1 outside one).
    if unsafe { pg_sys::ParallelWorkerNumber } >= 0 {
        UserError::new(
            Condition::GenerateInParallelWorker,
            "hlculid cannot make ids in a parallel worker",
        )
        .detail("A parallel worker's transaction ends before its leader's: its ids could pass a reader's horizon before they are visible.")
        .hint("Mark the function that calls the generator PARALLEL RESTRICTED, as the generators are.")
        .raise();
    }
    if header().is_none() || my_slot().is_none() {
        UserError::new(
            Condition::Internal,
            "this process has no hlculid horizon slot",
        )
        .raise();
    }
    // SAFETY: registers a callback for the life of the process; it only stores into shared
    // memory the process owns.
    unsafe { pg_sys::on_shmem_exit(Some(on_exit), pg_sys::Datum::from(0)) };
    // SAFETY: the backend's thread.
    unsafe { STATE.with(|s| *s = READY) };
    hold_fast();
}

/// The backstop: a backend that exits without ending its transaction (it always does end it,
/// through AbortTransaction, unless it crashes, and a crash reinitialises shared memory).
unsafe extern "C-unwind" fn on_exit(_code: core::ffi::c_int, _arg: pg_sys::Datum) {
    let _ = release();
}

/// Clears this backend's slot; true when it held one.
fn release() -> bool {
    // SAFETY: the backend's thread; only stores.
    let held = unsafe { STATE.with(|s| std::mem::replace(s, (*s).min(READY)) == HELD) };
    if held {
        if let Some(slot) = my_slot() {
            slot.lowest.store(0, Ordering::Release);
        }
    }
    held
}

/// The transaction callback's part (src/generate/xact_callbacks.rs): prepare moves the slot into a prepared hold,
/// before the transaction's end.
pub fn end_of_transaction(event: pg_sys::XactEvent::Type) {
    if event == pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE {
        move_to_hold();
    }
}

/// The resource-release callback's part (src/generate/xact_callbacks.rs): the top-level transaction has ended
/// (commit, abort or prepare), its end is visible, and every transaction callback has run,
/// another library's commit work (Citus' `COMMIT PREPARED` on the workers) included. True when
/// the transaction held a slot (it made ids, or was about to): src/horizon/wait.rs wakes the waiters.
pub fn after_transaction() -> bool {
    release()
}

/// At PRE_PREPARE: the transaction's slot value becomes a hold on its xid.
fn move_to_hold() {
    // SAFETY: the backend's thread; only reads.
    if unsafe { STATE.with(|s| *s) } != HELD {
        return;
    }
    if let Some(slot) = my_slot() {
        prepared::take(
            slot.lowest.load(Ordering::Acquire),
            slot.since.load(Ordering::Acquire),
        );
    }
}
