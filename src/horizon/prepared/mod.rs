//! Prepared transactions' holds on the horizon. A prepared transaction outlives its backend, its
//! slot (src/horizon/slots.rs), a restart, a crash and a failover; its hold must too, exactly:
//! the lowest clock value it may have taken, whatever the wall clock did and whoever asks first.
//!
//! At `PRE_PREPARE` the transaction's lowest value becomes
//! 1. a hold in shared memory, keyed by its FullTransactionId;
//! 2. a state file `pg_hlculid/prepared.<xid>` in the data directory, fsync'd before PREPARE
//!    completes, as PostgreSQL keeps `pg_twophase/`: a restart or a crash reloads it (in the
//!    postmaster, before anyone can ask), and base backups copy it;
//! 3. a WAL record of hlculid's resource manager ([`RMGR_ID`]), flushed with the PREPARE record
//!    that follows it: crash recovery and every standby replay it into the same hold and file, so
//!    a standby promoted with the primary's transactions still prepared holds the horizon for them.
//!
//! Each hold also keeps when its transaction made its first id (the slot's time), for the holders'
//! `lag`; a hold reloaded from its file at a start has none (0), and the view falls back on the
//! time of the PREPARE.
//!
//! A hold ends when its transaction is no longer in progress (COMMIT or ROLLBACK PREPARED, on
//! whichever server): a reader that finds it so clears it and its file under the exclusive lock,
//! never during recovery. FullTransactionIds make a hold older than the xid horizon count as
//! ended, so no reused 32-bit xid can revive it.
//!
//! 0.4.0 kept a floor file instead (`hlculid.horizon`): when it is there, the first reader after
//! the start holds every prepared transaction without a hold at that floor, gives each a state
//! file, and removes the floor file.

use crate::base::errors::{Condition, UserError};
use crate::clock::shared;
use hlculid_core::mark::file as mark_file;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgLwLock};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// hlculid's custom WAL resource manager id. Every server that replays WAL written by a server
/// with hlculid preloaded needs it preloaded too (docs/uninstall.md says how to stop using it).
pub const RMGR_ID: u8 = 173;
/// The one record kind: (full xid, lowest value, since) of a transaction being prepared; 0.5.0
/// wrote the first two fields only, and reads the first two of this one.
const XLOG_HOLD: u8 = 0x10;
/// The directory of the state files, in the data directory.
const DIR: &str = "pg_hlculid";
/// 0.4.0's floor file (the largest horizon returned), read once to carry its holds over.
const LEGACY_FLOOR_FILE: &str = "hlculid.horizon";

/// A hold as readers see it: (full xid, lowest value, since: a TimestampTz, 0 when unknown).
pub type HoldValue = (u64, u64, i64);

#[repr(C)]
#[derive(Clone, Copy)]
struct Record {
    full_xid: u64,
    lowest: u64,
    since: i64,
}

/// 0.5.0's record: the first two fields.
const RECORD_0_5_LEN: usize = 16;

/// A hold: a prepared transaction's FullTransactionId (0: free), the lowest value it may have
/// taken, and when it made its first id (a TimestampTz, 0: unknown).
#[repr(C)]
struct Hold {
    full_xid: AtomicU64,
    lowest: AtomicU64,
    since: AtomicI64,
}

#[repr(C)]
struct Header {
    /// Holds in use (a reader skips the lock while there are none).
    in_use: AtomicU32,
    /// 1 while 0.4.0's floor file may still have prepared transactions to carry over.
    legacy: AtomicU32,
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

fn max_holds() -> usize {
    // SAFETY: set from postgresql.conf before shmem_request_hook runs, constant afterwards.
    unsafe { crate::base::pg_c::max_prepared_xacts.max(0) as usize }
}

/// Registers the shared memory and the resource manager; `_PG_init` calls it while preloading.
#[allow(unexpected_cfgs)]
pub fn init() {
    pg_shmem_init!(LOCK = false);
    // SAFETY: _PG_init of a preloaded library runs once in the postmaster, before any hook is
    // called; chaining the previous hooks is what every extension does. The resource manager's
    // table lives for the life of the process (leaked), as RegisterCustomRmgr requires.
    unsafe {
        PREV_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request);
        PREV_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(startup);
        let rmgr = Box::leak(Box::new(pg_sys::RmgrData {
            rm_name: c"hlculid".as_ptr(),
            rm_redo: Some(redo),
            rm_desc: Some(desc),
            rm_identify: Some(identify),
            rm_startup: None,
            rm_cleanup: None,
            rm_mask: None,
            rm_decode: None,
        }));
        pg_sys::RegisterCustomRmgr(RMGR_ID, rmgr);
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

fn header() -> Option<&'static Header> {
    // SAFETY: set once per shared memory segment by `startup` (in the postmaster, inherited by
    // every process); the region lives as long as the segment.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

fn holds(h: &'static Header) -> &'static [Hold] {
    // SAFETY: `size` put `nholds` holds right after the header, inside the region.
    unsafe {
        let base = (h as *const Header)
            .cast::<u8>()
            .add(std::mem::size_of::<Header>());
        std::slice::from_raw_parts(base.cast::<Hold>(), h.nholds)
    }
}

fn dir() -> PathBuf {
    shared::data_dir().join(DIR)
}

fn file_name(full_xid: u64) -> String {
    format!("prepared.{full_xid:016X}")
}

/// The holds' files, as (full xid, lowest); damaged or foreign files are skipped with a LOG line
/// (a damaged file is one a crash interrupted before its PREPARE completed: its transaction
/// never prepared).
fn read_files() -> Vec<(u64, u64)> {
    let Ok(entries) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(xid) = name
            .strip_prefix("prepared.")
            .and_then(|x| u64::from_str_radix(x, 16).ok())
        else {
            continue;
        };
        match mark_file::load_named(&dir(), &name) {
            Ok(Some(lowest)) => found.push((xid, lowest)),
            other => {
                log!("hlculid: skipping the prepared-transaction hold file \"{name}\": {other:?}")
            }
        }
    }
    found
}

/// In the postmaster, alone, at a start or a crash restart: every hold made durable.
fn load_files() {
    let Some(h) = header() else { return };
    for (full_xid, lowest) in read_files() {
        if !insert(h, full_xid, lowest, 0) {
            log!("hlculid: no room for the horizon hold of transaction {full_xid} (more hold files than max_prepared_transactions)");
        }
    }
    let legacy = shared::data_dir().join(LEGACY_FLOOR_FILE).exists();
    h.legacy.store(u32::from(legacy), Ordering::Release);
}

/// Makes a hold durable: its state file, fsync'd. Raises on failure (the PREPARE fails with it:
/// a hold that would not survive a restart is a row a reader could miss).
fn write_file(full_xid: u64, lowest: u64) {
    let d = dir();
    let result = std::fs::create_dir_all(&d)
        .and_then(|()| mark_file::store_named(&d, &file_name(full_xid), lowest));
    if let Err(e) = result {
        UserError::new(
            Condition::MarkWriteFailed,
            format!(
                "hlculid could not write the horizon hold of the transaction being prepared: {e}"
            ),
        )
        .detail(format!("The file is {}.", d.join(file_name(full_xid)).display()))
        .hint("Free space or fix the permissions of the data directory, then prepare the transaction again.")
        .raise();
    }
}

fn remove_file(full_xid: u64) {
    let _ = std::fs::remove_file(dir().join(file_name(full_xid)));
}

/// Puts a hold in shared memory (the lower value wins for a transaction already held), making
/// room from holds of transactions that ended first. When every hold is taken by a prepared
/// transaction still in progress, max_prepared_transactions (the number of holds) are prepared:
/// PostgreSQL's own error, which it would raise a moment later, after this PRE_PREPARE.
fn put(full_xid: u64, lowest: u64, since: i64) {
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
fn reclaim(h: &'static Header) {
    for e in holds(h) {
        let x = e.full_xid.load(Ordering::Relaxed);
        if x != 0 && ended(x) {
            remove_file(x);
            e.full_xid.store(0, Ordering::Release);
            h.in_use.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// [`put`]'s work, the caller holding the lock (or being the postmaster, alone at start); false
/// when there is no room.
fn insert(h: &'static Header, full_xid: u64, lowest: u64, since: i64) -> bool {
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

/// At `PRE_PREPARE` of a transaction that may have taken values from `lowest` on, since the
/// TimestampTz `since`: its hold, made
/// durable and logged before the PREPARE completes. A transaction without an xid wrote nothing,
/// so nothing of it can become visible: no hold. With `max_prepared_transactions = 0` nothing is
/// done: PostgreSQL refuses the PREPARE itself right after, with its own message.
pub fn take(lowest: u64, since: i64) {
    if max_holds() == 0 {
        return;
    }
    // SAFETY: inside the transaction being prepared, which is still running.
    let full_xid = unsafe { pg_sys::GetTopFullTransactionIdIfAny() }.value;
    if full_xid == 0 {
        return;
    }
    put(full_xid, lowest, since);
    write_file(full_xid, lowest);
    let rec = Record {
        full_xid,
        lowest,
        since,
    };
    // SAFETY: a WAL record of our registered resource manager, from a normal backend inside its
    // transaction; XLogInsert copies the registered data before returning. The PREPARE record
    // that follows is flushed before PREPARE returns, and this one with it.
    unsafe {
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(
            (&raw const rec).cast_mut().cast(),
            std::mem::size_of::<Record>() as _,
        );
        pg_sys::XLogInsert(RMGR_ID, XLOG_HOLD);
    }
}

/// The record of `record`, when it is one of ours (0.5.0's shorter record: `since` 0).
///
/// # Safety
/// `record` is the decoded record the startup process passes to a resource manager.
unsafe fn decode(record: *mut pg_sys::XLogReaderState) -> Option<Record> {
    // SAFETY: as the caller promises; main_data holds main_data_len bytes.
    unsafe {
        let r = (*record).record;
        if r.is_null()
            || (*r).header.xl_info & pg_sys::XLR_RMGR_INFO_MASK as u8 != XLOG_HOLD
            || ((*r).main_data_len as usize) < RECORD_0_5_LEN
        {
            return None;
        }
        let p = (*r).main_data.cast::<u8>();
        let since = if (*r).main_data_len as usize >= std::mem::size_of::<Record>() {
            std::ptr::read_unaligned(p.add(RECORD_0_5_LEN).cast::<i64>())
        } else {
            0
        };
        Some(Record {
            full_xid: std::ptr::read_unaligned(p.cast::<u64>()),
            lowest: std::ptr::read_unaligned(p.add(8).cast::<u64>()),
            since,
        })
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: called by the startup process with a decoded record of this resource manager.
    if let Some(rec) = unsafe { decode(record) } {
        put(rec.full_xid, rec.lowest, rec.since);
        write_file(rec.full_xid, rec.lowest);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn desc(buf: pg_sys::StringInfo, record: *mut pg_sys::XLogReaderState) {
    // SAFETY: as for redo; appends to the caller's buffer.
    unsafe {
        if let Some(rec) = decode(record) {
            let text = CString::new(format!(
                "full xid {} lowest {:016X} since {}",
                rec.full_xid, rec.lowest, rec.since
            ))
            .unwrap_or_default();
            pg_sys::appendStringInfoString(buf, text.as_ptr());
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const core::ffi::c_char {
    if info & pg_sys::XLR_RMGR_INFO_MASK as u8 == XLOG_HOLD {
        c"HOLD".as_ptr()
    } else {
        std::ptr::null()
    }
}

/// Whether the transaction is older than any xid still in progress, from the next xid:
/// `Some(true)` it ended long ago, `None` it is recent enough to ask about. An xid not assigned
/// here yet (`>= next`) counts as not ended: nothing says it did.
fn by_age(full_xid: u64) -> Option<bool> {
    // SAFETY: reads the shared next-xid counter under its lock, as any backend does.
    let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value;
    if full_xid >= next {
        Some(false)
    } else if next - full_xid >= 1 << 31 {
        Some(true)
    } else {
        None
    }
}

/// True while the transaction may still commit (a prepared transaction is, until COMMIT or
/// ROLLBACK PREPARED). Readers use it: the proc array, not the commit log, says when a commit
/// is visible.
fn in_progress(full_xid: u64) -> bool {
    match by_age(full_xid) {
        Some(ended) => !ended,
        // SAFETY: a shared-memory lookup of the proc array, as any backend does.
        None => unsafe {
            pg_sys::TransactionIdIsInProgress(pg_sys::TransactionId::from_inner(full_xid as u32))
        },
    }
}

/// True when the transaction has ended for good. During recovery (replay makes holds; no reader
/// runs) the commit log says so, as replay writes it; otherwise [`in_progress`].
fn ended(full_xid: u64) -> bool {
    // SAFETY: a plain read of the shared recovery state.
    if !unsafe { pg_sys::RecoveryInProgress() } {
        return !in_progress(full_xid);
    }
    by_age(full_xid).unwrap_or_else(|| {
        let xid = pg_sys::TransactionId::from_inner(full_xid as u32);
        // SAFETY: reads the commit log, as replay maintains it.
        unsafe { pg_sys::TransactionIdDidCommit(xid) || pg_sys::TransactionIdDidAbort(xid) }
    })
}

/// Whether any hold is in use (ended ones count until a reader clears them): one atomic read.
pub fn any() -> bool {
    header().is_some_and(|h| h.in_use.load(Ordering::Acquire) != 0)
}

/// The holds of prepared transactions still in progress: (full xid, lowest value, since). Holds of
/// ended transactions are cleared here, with their files (not during recovery: the standby's
/// holds stay until the transactions' ends are replayed and a reader of the promoted server, or
/// replay needing room, clears them).
pub fn live() -> Vec<HoldValue> {
    let Some(h) = header() else {
        return Vec::new();
    };
    carry_over_legacy(h);
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
            if in_progress(x) {
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

/// 0.4.0 to 0.5.0 with prepared transactions pending: those without a hold of their own hold
/// at 0.4.0's persisted floor (every horizon it returned was at or below their ids), each gets a
/// state file, and the floor file goes. Never during recovery; an error is raised, never read as
/// "none", and nothing is latched until it succeeded.
fn carry_over_legacy(h: &'static Header) {
    // SAFETY: a plain read of the shared recovery state.
    if h.legacy.load(Ordering::Acquire) == 0 || unsafe { pg_sys::RecoveryInProgress() } {
        return;
    }
    let floor_file = shared::data_dir().join(LEGACY_FLOOR_FILE);
    let floor = mark_file::load_named(&shared::data_dir(), LEGACY_FLOOR_FILE)
        .ok()
        .flatten()
        .unwrap_or(1)
        .max(1);
    let xids: Vec<i64> = Spi::connect(|client| {
        client
            .select(
                "SELECT p.transaction::pg_catalog.text::pg_catalog.int8 \
                 FROM pg_catalog.pg_prepared_xacts p",
                None,
                &[],
            )
            .map(|rows| {
                rows.filter_map(|r| r.get::<i64>(1).ok().flatten())
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
    // SAFETY: reads the shared next-xid counter under its lock.
    let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value;
    let held: Vec<u64> = holds(h)
        .iter()
        .map(|e| e.full_xid.load(Ordering::Acquire))
        .collect();
    for xid in xids {
        let full = widen(next, xid as u32);
        if !held.contains(&full) {
            put(full, floor, 0);
            write_file(full, floor);
        }
    }
    let _ = std::fs::remove_file(floor_file);
    h.legacy.store(0, Ordering::Release);
}

/// The FullTransactionId of a 32-bit xid not newer than `next` (what PostgreSQL's
/// FullTransactionIdFromAllowableAt does).
fn widen(next: u64, xid: u32) -> u64 {
    let epoch = next >> 32;
    if xid > next as u32 && epoch > 0 {
        ((epoch - 1) << 32) | u64::from(xid)
    } else {
        (epoch << 32) | u64::from(xid)
    }
}

#[cfg(test)]
mod unit {
    use super::widen;

    #[test]
    fn an_xid_is_widened_into_the_epoch_it_was_assigned_in() {
        let next = (3u64 << 32) | 1000;
        assert_eq!(widen(next, 999), (3 << 32) | 999);
        assert_eq!(widen(next, 1000), (3 << 32) | 1000);
        assert_eq!(widen(next, 4_000_000_000), (2 << 32) | 4_000_000_000);
        assert_eq!(widen(500, 400), 400);
    }
}
