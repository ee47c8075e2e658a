//! The prepared transactions' holds in shared memory: one per possible prepared transaction
//! (`max_prepared_transactions`), keyed by its FullTransactionId, under one LWLock; reloaded from
//! their files (src/horizon/prepared/files.rs) when shared memory is made.

use super::{files, xids};
use crate::base::errors::{Condition, UserError};
use crate::clock::shared;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgLwLock};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// A hold as readers see it: (full xid, lowest value, since: a TimestampTz, 0 when unknown).
pub type HoldValue = (u64, u64, i64);

/// A hold: a prepared transaction's FullTransactionId (0: free), the lowest value it may have
/// taken, and when it made its first id (a TimestampTz, 0: unknown).
#[repr(C)]
pub(super) struct Hold {
    pub(super) full_xid: AtomicU64,
    lowest: AtomicU64,
    since: AtomicI64,
}

#[repr(C)]
pub(super) struct Header {
    /// Holds in use (a reader skips the lock while there are none).
    in_use: AtomicU32,
    /// 1 while 0.4.0's floor file may still have prepared transactions to carry over.
    pub(super) legacy: AtomicU32,
    nholds: usize,
}

static SHARED: AtomicPtr<Header> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises changes of the holds; readers take it shared while they scan them.
// SAFETY: the name is unique to this extension's LWLock tranches.
static LOCK: PgLwLock<bool> = unsafe { PgLwLock::new(c"hlculid_horizon_holds") };

static mut PREV_REQUEST: Option<unsafe extern "C-unwind" fn()> = None;
static mut PREV_STARTUP: Option<unsafe extern "C-unwind" fn()> = None;

fn size(nholds: usize) -> usize {
    std::mem::size_of::<Header>() + nholds * std::mem::size_of::<Hold>()
}

pub(super) fn max_holds() -> usize {
    // SAFETY: set from postgresql.conf before shmem_request_hook runs, constant afterwards.
    unsafe { crate::base::pg_c::max_prepared_xacts.max(0) as usize }
}

/// Registers the shared memory (`mod.rs`'s `init`, while preloading).
#[allow(unexpected_cfgs)]
pub(super) fn init() {
    pg_shmem_init!(LOCK = false);
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
        pg_sys::RequestAddinShmemSpace(size(max_holds()) + 64);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn startup() {
    let mut fresh = false;
    // SAFETY: the hook chain, then the region (shared::add_in_region's protocol), from the hook.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        let nholds = max_holds();
        let p = shared::add_in_region(c"hlculid_prepared_holds", size(nholds), |p| {
            (*p.cast::<Header>()).nholds = nholds;
            fresh = true;
        });
        SHARED.store(p.cast(), Ordering::Release);
    }
    // A start or a crash restart: the postmaster, alone, before recovery and before any
    // backend, reloads every hold that was made durable.
    if fresh {
        load_files();
    }
}

pub(super) fn header() -> Option<&'static Header> {
    // SAFETY: set once per shared memory segment by `startup` (in the postmaster, inherited by
    // every process); the region lives as long as the segment.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

pub(super) fn holds(h: &'static Header) -> &'static [Hold] {
    // SAFETY: `size` put `nholds` holds right after the header, inside the region.
    unsafe {
        let base = (h as *const Header)
            .cast::<u8>()
            .add(std::mem::size_of::<Header>());
        std::slice::from_raw_parts(base.cast::<Hold>(), h.nholds)
    }
}

/// In the postmaster, alone, at a start or a crash restart: every hold made durable.
fn load_files() {
    let Some(h) = header() else { return };
    for (full_xid, lowest) in files::read_files() {
        if !insert(h, full_xid, lowest, 0) {
            log!("hlculid: no room for the horizon hold of transaction {full_xid} (more hold files than max_prepared_transactions)");
        }
    }
    h.legacy
        .store(u32::from(files::legacy_floor_exists()), Ordering::Release);
}

/// Puts a hold in shared memory (the lower value wins for a transaction already held), making
/// room from holds of transactions that ended first. When every hold is taken by a prepared
/// transaction still in progress, max_prepared_transactions (the number of holds) are prepared:
/// PostgreSQL's own error, which it would raise a moment later, after this PRE_PREPARE.
pub(super) fn put(full_xid: u64, lowest: u64, since: i64) {
    let Some(h) = header() else { return };
    let _lock = LOCK.exclusive();
    if insert(h, full_xid, lowest, since) {
        return;
    }
    reclaim(h);
    if !insert(h, full_xid, lowest, since) {
        UserError::new(
            Condition::PreparedTransactionsFull,
            "maximum number of prepared transactions reached",
        )
        .hint(format!(
            // PostgreSQL's own hint, which quotes the setting's name from 17 on
            "Increase {} (currently {}).",
            if cfg!(any(feature = "pg15", feature = "pg16")) {
                "max_prepared_transactions"
            } else {
                "\"max_prepared_transactions\""
            },
            holds(h).len()
        ))
        .raise()
    }
}

/// Clears the holds (and files) of transactions that ended; the caller holds the lock
/// exclusively.
pub(super) fn reclaim(h: &'static Header) {
    for e in holds(h) {
        let x = e.full_xid.load(Ordering::Relaxed);
        if x != 0 && xids::ended(x) {
            files::remove_file(x);
            e.full_xid.store(0, Ordering::Release);
            h.in_use.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// [`put`]'s work, the caller holding the lock (or being the postmaster, alone at start); false
/// when there is no room.
pub(super) fn insert(h: &'static Header, full_xid: u64, lowest: u64, since: i64) -> bool {
    let holds = holds(h);
    if let Some(e) = holds
        .iter()
        .find(|e| e.full_xid.load(Ordering::Relaxed) == full_xid)
    {
        e.lowest.fetch_min(lowest, Ordering::AcqRel);
        // the earlier known time wins, as the lower value does
        let _ = e
            .since
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                (since != 0 && (old == 0 || since < old)).then_some(since)
            });
        return true;
    }
    match holds
        .iter()
        .find(|e| e.full_xid.load(Ordering::Relaxed) == 0)
    {
        Some(e) => {
            h.in_use.fetch_add(1, Ordering::AcqRel);
            e.lowest.store(lowest, Ordering::Relaxed);
            e.since.store(since, Ordering::Relaxed);
            e.full_xid.store(full_xid, Ordering::Release);
            true
        }
        None => false,
    }
}

/// [`super::live`]'s scan of the holds, once 0.4.0's floor is carried over.
pub(super) fn live(h: &'static Header) -> Vec<HoldValue> {
    if h.in_use.load(Ordering::Acquire) == 0 {
        return Vec::new();
    }
    let mut live = Vec::new();
    let mut any_ended = false;
    {
        let _lock = LOCK.share();
        for e in holds(h) {
            let x = e.full_xid.load(Ordering::Acquire);
            if x == 0 {
                continue;
            }
            if xids::in_progress(x) {
                live.push((
                    x,
                    e.lowest.load(Ordering::Relaxed),
                    e.since.load(Ordering::Relaxed),
                ));
            } else {
                any_ended = true;
            }
        }
    }
    // SAFETY: a plain read of the shared recovery state.
    if any_ended && !unsafe { pg_sys::RecoveryInProgress() } {
        let _lock = LOCK.exclusive();
        reclaim(h);
    }
    live
}
