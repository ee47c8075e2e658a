//! The horizon: an id below which every id of this server's clock that will ever be visible
//! already is. `hlculid_horizon()`, `hlculid_horizon_bigint()` and the holders behind them.
//!
//! Each backend has a slot in shared memory, one cache line, indexed by its proc number. Before
//! the first tick of a top-level transaction the backend stores there the lowest value the
//! transaction can take (the clock's current value + 1); the tick's AcqRel step on the clock
//! publishes that store to any reader that sees the tick. The slot is cleared at
//! `XACT_EVENT_COMMIT`/`ABORT`, which run after `ProcArrayEndTransaction`, so a cleared slot
//! means the transaction's rows are visible to every later snapshot. A reader loads the clock,
//! then scans the slots: `H = min(clock + 1, every slot)`. H only goes up (a shared
//! `fetch_max`): every earlier answer stays true, since later transactions take values above the
//! clock as it was.
//!
//! A prepared transaction leaves its backend: at `PRE_PREPARE` its slot's value moves into a
//! hold keyed by its xid, kept while `TransactionIdIsInProgress(xid)`. Shared memory starts empty
//! at a restart while prepared transactions survive, so the largest H returned is persisted
//! (`hlculid.horizon`, beside the mark file) and, at the first call after a start, every prepared
//! transaction holds the horizon at that floor (at the minimum id, with a WARNING, when there is
//! no file: a restored backup, a promoted standby, the first start of 0.4.0).
//!
//! The generators are PARALLEL RESTRICTED: a parallel worker's commit (`PARALLEL_COMMIT`) comes
//! before its leader's, so a worker's slot would release ids the leader has not committed.

use crate::backend_local::BackendLocal;
use crate::datum::Hlculid;
use crate::errors::{Condition, UserError};
use crate::shmem;
use hlculid_core::persist;
use hlculid_core::Id;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgLwLock};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// File holding the largest horizon returned, in the data directory.
pub const FLOOR_FILE: &str = "hlculid.horizon";

/// One backend's slot: the lowest clock value its running transaction may take (0: none).
#[repr(C, align(64))]
struct Slot {
    lowest: AtomicU64,
    pid: AtomicI32,
}

/// A prepared transaction's hold: its xid and the lowest value it may have taken.
#[repr(C)]
struct Hold {
    xid: AtomicU32,
    lowest: AtomicU64,
}

#[repr(C, align(64))]
struct Header {
    /// The largest horizon returned since the server started (a clock value, exclusive).
    published: AtomicU64,
    /// The floor persisted last by the writer.
    persisted: AtomicU64,
    /// Holds in use (a reader skips the lock while there are none).
    holds_in_use: AtomicU32,
    /// The prepared transactions found at start hold the horizon at the floor.
    prepared_loaded: AtomicBool,
    /// When this shared memory was made (a start, or a crash restart): transactions prepared
    /// before it have no slot and no hold of their own.
    started_at: i64,
    nslots: usize,
    nholds: usize,
}

static SHARED: AtomicPtr<Header> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises changes of the holds; readers take it shared while they scan them.
// SAFETY: the name is unique to this extension's LWLock tranches.
static HOLDS_LOCK: PgLwLock<bool> = unsafe { PgLwLock::new(c"hlculid_horizon_holds") };

static mut PREV_REQUEST: Option<unsafe extern "C-unwind" fn()> = None;
static mut PREV_STARTUP: Option<unsafe extern "C-unwind" fn()> = None;

fn layout() -> (usize, usize, usize) {
    // SAFETY: both are set from postgresql.conf before shmem_request_hook runs, and constant
    // afterwards.
    let (nslots, nholds) = unsafe {
        (
            pg_sys::MaxBackends.max(0) as usize,
            crate::pg_c::max_prepared_xacts.max(0) as usize,
        )
    };
    let holds_at = std::mem::size_of::<Header>();
    let slots_at = (holds_at + nholds * std::mem::size_of::<Hold>()).next_multiple_of(64);
    (
        nslots,
        nholds,
        slots_at + nslots * std::mem::size_of::<Slot>(),
    )
}

/// Registers the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
#[allow(unexpected_cfgs)]
pub fn init() {
    pg_shmem_init!(HOLDS_LOCK = false);
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
        pg_sys::RequestAddinShmemSpace(layout().2 + 64);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn startup() {
    // SAFETY: the hook chain; then PostgreSQL's protocol for an add-in's shared memory: under
    // AddinShmemInitLock (MainLWLockArray[21]), ShmemInitStruct returns the named region,
    // allocating it (found = false) once per shared memory segment, zero-filled here.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        let (nslots, nholds, size) = layout();
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let p = pg_sys::ShmemInitStruct(c"hlculid_horizon".as_ptr(), size + 64, &mut found);
        // ShmemInitStruct aligns to a cache line on every supported platform; be sure.
        let p = p.cast::<u8>().add(p.cast::<u8>().align_offset(64));
        if !found {
            std::ptr::write_bytes(p, 0, size);
            let h = p.cast::<Header>();
            (*h).nslots = nslots;
            (*h).nholds = nholds;
            (*h).started_at = pg_sys::GetCurrentTimestamp();
        }
        SHARED.store(p.cast(), Ordering::Release);
        pg_sys::LWLockRelease(init_lock);
    }
}

fn header() -> Option<&'static Header> {
    // SAFETY: set once per shared memory segment by `startup` (in the postmaster, inherited by
    // every backend); the region lives as long as the segment.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

fn holds(h: &'static Header) -> &'static [Hold] {
    // SAFETY: `layout` put `nholds` holds right after the header, inside the region.
    unsafe {
        let base = (h as *const Header)
            .cast::<u8>()
            .add(std::mem::size_of::<Header>());
        std::slice::from_raw_parts(base.cast::<Hold>(), h.nholds)
    }
}

fn slots(h: &'static Header) -> &'static [Slot] {
    let at = (std::mem::size_of::<Header>() + h.nholds * std::mem::size_of::<Hold>())
        .next_multiple_of(64);
    // SAFETY: `layout` put `nslots` cache-line slots at this offset, inside the region.
    unsafe {
        let base = (h as *const Header).cast::<u8>().add(at);
        std::slice::from_raw_parts(base.cast::<Slot>(), h.nslots)
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
    // The lowest value any tick after this load can take; the tick's AcqRel step publishes it.
    slot.lowest
        .store(shmem::clock_preloaded().current() + 1, Ordering::Release);
}

/// [`hold_fast`], registering the backend's exit backstop the first time; raises when the
/// backend has no slot (never for a backend or a background worker).
pub fn hold() {
    if hold_fast() {
        return;
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
    release();
}

fn release() {
    // SAFETY: the backend's thread; only stores.
    let held = unsafe { STATE.with(|s| std::mem::replace(s, (*s).min(READY)) == HELD) };
    if held {
        if let Some(slot) = my_slot() {
            slot.lowest.store(0, Ordering::Release);
        }
    }
}

/// The transaction callback's part (src/xact.rs): commit and abort release the slot (they run
/// after the transaction's end is visible); prepare moves it into a hold first.
pub fn end_of_transaction(event: pg_sys::XactEvent::Type) {
    use pg_sys::XactEvent::*;
    match event {
        XACT_EVENT_PRE_PREPARE => move_to_hold(),
        XACT_EVENT_COMMIT
        | XACT_EVENT_ABORT
        | XACT_EVENT_PREPARE
        | XACT_EVENT_PARALLEL_COMMIT
        | XACT_EVENT_PARALLEL_ABORT => release(),
        _ => {}
    }
}

/// At PRE_PREPARE: the transaction's slot value becomes a hold on its xid. A transaction without
/// an xid wrote nothing, so nothing of it can become visible: no hold.
fn move_to_hold() {
    // SAFETY: the backend's thread; only reads.
    if unsafe { STATE.with(|s| *s) } != HELD {
        return;
    }
    let Some(slot) = my_slot() else { return };
    // SAFETY: inside the transaction being prepared, which is still running.
    let xid = unsafe { pg_sys::GetTopTransactionIdIfAny() };
    if xid == pg_sys::InvalidTransactionId {
        return;
    }
    add_hold(xid, slot.lowest.load(Ordering::Acquire));
}

fn in_progress(xid: u32) -> bool {
    // SAFETY: a shared-memory lookup of the proc array, as any backend does.
    unsafe { pg_sys::TransactionIdIsInProgress(pg_sys::TransactionId::from_inner(xid)) }
}

fn add_hold(xid: pg_sys::TransactionId, lowest: u64) {
    let Some(h) = header() else { return };
    let _lock = HOLDS_LOCK.exclusive();
    let holds = holds(h);
    if let Some(e) = holds
        .iter()
        .find(|e| e.xid.load(Ordering::Relaxed) == xid.into_inner())
    {
        e.lowest.fetch_min(lowest, Ordering::AcqRel);
        return;
    }
    let free = holds
        .iter()
        .find(|e| e.xid.load(Ordering::Relaxed) == 0)
        .or_else(|| {
            // Reuse the hold of a transaction that has ended.
            holds
                .iter()
                .find(|e| !in_progress(e.xid.load(Ordering::Relaxed)))
        });
    match free {
        Some(e) => {
            if e.xid.load(Ordering::Relaxed) == 0 {
                h.holds_in_use.fetch_add(1, Ordering::AcqRel);
            }
            e.lowest.store(lowest, Ordering::Relaxed);
            e.xid.store(xid.into_inner(), Ordering::Release);
        }
        None => UserError::new(
            Condition::Internal,
            "hlculid has no room to hold the horizon for another prepared transaction",
        )
        .detail("Every hold is taken by a prepared transaction that is still in progress.")
        .hint("Commit or roll back prepared transactions (pg_prepared_xacts), or raise max_prepared_transactions.")
        .raise(),
    }
}

/// At the first horizon after a start: every prepared transaction holds the horizon at the
/// persisted floor (they survived the restart; their slots did not).
fn load_prepared(h: &'static Header) {
    if h.prepared_loaded.load(Ordering::Acquire) {
        return;
    }
    // A standby (or a server replaying WAL) shows no prepared transaction yet: load nothing and
    // latch nothing until recovery is over.
    // SAFETY: reads a shared-memory flag; callable in any backend.
    if unsafe { pg_sys::RecoveryInProgress() } {
        return;
    }
    // Those prepared before this shared memory was made; later ones hold by themselves. The
    // result is shared by every session, so no name resolves through the caller's search_path,
    // and an error is raised, never read as "none".
    let query = format!(
        "SELECT p.transaction::pg_catalog.text::pg_catalog.int8 FROM pg_catalog.pg_prepared_xacts p \
         WHERE p.prepared OPERATOR(pg_catalog.<) \
               ('2000-01-01 00:00:00+00'::pg_catalog.timestamptz \
                OPERATOR(pg_catalog.+) '{} microseconds'::pg_catalog.interval)",
        h.started_at
    );
    let xids: Vec<u32> = Spi::connect(|client| {
        client.select(&query, None, &[]).map(|rows| {
            rows.filter_map(|r| r.get::<i64>(1).ok().flatten())
                .map(|x| x as u32)
                .collect()
        })
    })
    .unwrap_or_else(|e| {
        UserError::new(
            Condition::Internal,
            format!("hlculid could not list the prepared transactions: {e}"),
        )
        .raise()
    });
    if !xids.is_empty() {
        let floor = match persist_load_floor() {
            Some(f) => f,
            None => {
                ereport!(
                    PgLogLevel::WARNING,
                    PgSqlErrorCode::ERRCODE_WARNING,
                    format!(
                        "hlculid: {} prepared transactions and no horizon floor file \"{FLOOR_FILE}\"; they hold the horizon at the minimum id until they end",
                        xids.len()
                    ),
                    "This happens once after restoring a backup, promoting a standby or the first start of hlculid 0.4.0 with prepared transactions. COMMIT PREPARED or ROLLBACK PREPARED them to release it."
                );
                0
            }
        };
        for xid in xids {
            add_hold(pg_sys::TransactionId::from_inner(xid), floor.max(1));
        }
    }
    h.prepared_loaded.store(true, Ordering::Release);
}

/// The persisted floor; a damaged file counts as none (the minimum id is always safe).
fn persist_load_floor() -> Option<u64> {
    persist::load_named(&shmem::data_dir(), FLOOR_FILE)
        .ok()
        .flatten()
}

/// The background writer's step: makes the largest horizon returned durable (it only grows; the
/// file is written when it moved). Errors are returned for the writer to report.
pub fn persist_floor() -> std::io::Result<()> {
    let Some(h) = header() else { return Ok(()) };
    let v = h.published.load(Ordering::Acquire);
    if v == 0 || v == h.persisted.load(Ordering::Relaxed) {
        return Ok(());
    }
    persist::store_named(&shmem::data_dir(), FLOOR_FILE, v)?;
    h.persisted.store(v, Ordering::Relaxed);
    Ok(())
}

/// The holds of prepared transactions still in progress: (xid, lowest value), read under the
/// holds lock (skipped while there are none).
fn live_holds(h: &'static Header) -> Vec<(u32, u64)> {
    if h.holds_in_use.load(Ordering::Acquire) == 0 {
        return Vec::new();
    }
    let _lock = HOLDS_LOCK.share();
    holds(h)
        .iter()
        .map(|e| {
            (
                e.xid.load(Ordering::Acquire),
                e.lowest.load(Ordering::Relaxed),
            )
        })
        .filter(|&(xid, _)| xid != 0 && in_progress(xid))
        .collect()
}

/// The horizon as a clock value (exclusive): no running or prepared transaction has taken a
/// value below it.
pub fn compute() -> u64 {
    let h = header().unwrap_or_else(|| not_available());
    load_prepared(h);
    let clock = shmem::clock();
    let mut horizon = clock.current() + 1;
    for s in slots(h) {
        let v = s.lowest.load(Ordering::Acquire);
        if v != 0 {
            horizon = horizon.min(v);
        }
    }
    // After the slots: a prepared transaction's hold is made before its slot is cleared.
    for (_, lowest) in live_holds(h) {
        horizon = horizon.min(lowest);
    }
    h.published
        .fetch_max(horizon, Ordering::AcqRel)
        .max(horizon)
}

fn not_available() -> ! {
    UserError::new(
        Condition::NotPreloaded,
        "hlculid_horizon() needs the hlculid 0.4.0 library preloaded",
    )
    .detail("The horizon's slots live in shared memory, which the library allocates when the server starts with it in shared_preload_libraries.")
    .hint("Add hlculid to shared_preload_libraries and restart the server (after an upgrade of the files, restart it once).")
    .raise()
}

/// The checks of a reader's call: a primary (ids are made there), READ COMMITTED (the read that
/// follows takes its own snapshot).
fn check_reader() {
    // SAFETY: plain reads of the backend's state.
    if unsafe { pg_sys::RecoveryInProgress() } {
        UserError::new(
            Condition::HorizonOnStandby,
            "hlculid_horizon() cannot be used during recovery",
        )
        .detail("A standby makes no ids; the horizon belongs to the primary that makes them.")
        .hint("On a standby, read below hlculid_watermark(): the hlculid_horizons rows replicated from the primary vouch for the events below them.")
        .raise();
    }
    // SAFETY: XactIsoLevel is the backend's setting, read on its thread.
    if unsafe { pg_sys::XactIsoLevel } >= pg_sys::XACT_REPEATABLE_READ as i32 {
        UserError::new(
            Condition::HorizonInSnapshotTransaction,
            "hlculid_horizon() cannot be used in a REPEATABLE READ or SERIALIZABLE transaction",
        )
        .detail("Its snapshot was taken before the horizon: a transaction that commits in between holds ids below the horizon that the snapshot cannot see.")
        .hint("Take the horizon before BEGIN, in its own statement, and read below it in the transaction.")
        .raise();
    }
}

fn as_id(h: u64) -> Hlculid {
    Hlculid(Id::from_u128(u128::from(h) << 64))
}

/// SQL `hlculid_horizon()`.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon() -> Hlculid {
    check_reader();
    as_id(compute())
}

/// The bigint form of a horizon: every bigint id of a clock value below `h` is below it.
pub fn bigint_bound(h: u64) -> Option<i64> {
    let ms = h >> 16;
    let counter = (h & 0xFFFF).min(2048);
    (ms < 1 << 42).then_some(((ms << 21) | (counter << 10)) as i64)
}

/// SQL `hlculid_horizon_bigint()`: the horizon for bigint ids (the same clock).
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_bigint() -> i64 {
    check_reader();
    bigint_bound(compute()).unwrap_or_else(|| {
        UserError::new(
            Condition::TimeOutOfRange,
            "the horizon is past the range of bigint ids",
        )
        .raise()
    })
}

/// SQL `hlculid_horizon_catch_up()`: moves an idle clock up to the wall clock, then returns the
/// horizon (what `hlculid_publish_horizon()` writes). No isolation check: the row it writes
/// commits after the horizon was taken, so it vouches only for what committed before.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_catch_up() -> Hlculid {
    // SAFETY: a plain read of the backend's state.
    if unsafe { pg_sys::RecoveryInProgress() } {
        check_reader();
    }
    // The value taken is never an id: no transaction holds it, and a horizon above it is true.
    crate::server_clock::tick_unused();
    as_id(compute())
}

/// SQL `hlculid_horizon_holds()`: what holds the horizon back: each running transaction that
/// made or may make ids (its pid), and each prepared transaction (its xid), with the lowest id
/// it may have made.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_holds() -> TableIterator<
    'static,
    (
        name!(pid, Option<i32>),
        name!(transaction, Option<i64>),
        name!(holds_at, Hlculid),
    ),
> {
    let h = header().unwrap_or_else(|| not_available());
    load_prepared(h);
    let mut rows = Vec::new();
    for s in slots(h) {
        let v = s.lowest.load(Ordering::Acquire);
        if v != 0 {
            rows.push((Some(s.pid.load(Ordering::Relaxed)), None, as_id(v)));
        }
    }
    for (xid, lowest) in live_holds(h) {
        rows.push((None, Some(i64::from(xid)), as_id(lowest)));
    }
    TableIterator::new(rows)
}

#[cfg(test)]
mod unit {
    use super::bigint_bound;

    #[test]
    fn the_bigint_bound_sits_between_the_ids_below_and_above_the_horizon() {
        let ms = 1_700_000_000_000u64;
        let big = |ms: u64, c: u64| ((ms << 21) | (c << 10) | 1023) as i64;
        let h = (ms << 16) | 5;
        let b = bigint_bound(h).unwrap();
        assert!(big(ms, 4) < b && b <= big(ms, 5) - 1023);
        // a counter past what a bigint holds: the next millisecond's first id is the bound
        let b = bigint_bound((ms << 16) | 3000).unwrap();
        assert!(big(ms, 2047) < b && b == big(ms + 1, 0) - 1023);
    }
}
