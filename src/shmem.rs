//! The server's one clock in shared memory, and the durable high-water mark behind it.
//!
//! Every backend advances the same [`SharedClock`] lock-free. The clock never issues a value
//! above the mark already persisted in `$PGDATA/hlculid.hwm`; the background writer keeps that
//! mark a window ahead, and a backend that reaches it (writer down, a burst past the window, an
//! observe further ahead) extends it itself under `PERSIST_LOCK` before going on. At startup,
//! and after a crash, the clock resumes from the file, so every new id sorts after every id
//! issued before, whatever the wall clock did meanwhile.

use crate::errors::UserError;
use hlculid_core::clock::SharedClock;
use hlculid_core::persist;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How far ahead of the wall clock (or of the logical clock, when that runs ahead) the
/// persisted mark is kept. After a crash the clock may resume up to this much ahead.
pub const RESERVE_WINDOW_MS: u64 = 1000;

#[repr(transparent)]
pub struct ClockShmem(SharedClock);
// SAFETY: only atomics, no pointers; valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for ClockShmem {}

static CLOCK: PgAtomic<ClockShmem> = unsafe { PgAtomic::new(c"hlculid_clock") };
/// Serialises writes of the mark file (the value itself is unused).
static PERSIST_LOCK: PgLwLock<bool> = unsafe { PgLwLock::new(c"hlculid_persist") };
/// Set in the postmaster while preloading; forked backends inherit it.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// Sets up the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
// pgrx's `pg_shmem_init!` expands to `cfg(feature = "pg13")`/`"pg14"` branches, features this
// crate no longer declares (it supports 15-18 only).
#[allow(unexpected_cfgs)]
pub fn init() {
    pg_shmem_init!(CLOCK = ClockShmem(SharedClock::resume(load_mark())));
    pg_shmem_init!(PERSIST_LOCK = false);
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

fn data_dir() -> PathBuf {
    unsafe {
        PathBuf::from(
            CStr::from_ptr(pg_sys::DataDir)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// Runs in the postmaster whenever shared memory is (re)created.
fn load_mark() -> u64 {
    match persist::load(&data_dir()) {
        Ok(mark) => mark.unwrap_or(0),
        Err(e) => {
            warning!(
                "hlculid: could not read high-water mark file \"{}\": {e}; ids issued after this start may sort before earlier ones if the clock went back",
                persist::FILE_NAME
            );
            0
        }
    }
}

/// The shared clock, or the 55000 error that names the missing setting.
#[inline]
pub fn clock() -> &'static SharedClock {
    if !preloaded() {
        UserError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "hlculid must be loaded via \"shared_preload_libraries\" to generate ids",
        )
        .detail("The clock behind hlculid_generate() lives in shared memory, which only a preloaded library can allocate. The type, operators and extractors work without it.")
        .hint("Add hlculid to shared_preload_libraries in postgresql.conf and restart the server.")
        .raise();
    }
    &CLOCK.get().0
}

/// The shared clock, for callers that checked [`preloaded`] themselves (the fast path, which
/// must not raise).
#[inline]
pub fn clock_preloaded() -> &'static SharedClock {
    &CLOCK.get().0
}

/// The real-time clock in Unix milliseconds (read on every call, never `now()`).
#[inline]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Persists a mark covering at least `needed` (plus a window) and publishes it to the clock.
/// A backend calls this when the clock refuses to go past the current mark; the writer calls
/// it ahead of time.
pub fn reserve(needed: u64, now_ms: u64) {
    let clock = clock();
    let result = {
        let _writing = PERSIST_LOCK.exclusive();
        if clock.stats().reserved >= needed {
            return; // another process got there first
        }
        let mark = clock.reservation_for(needed, now_ms, RESERVE_WINDOW_MS);
        persist::store(&data_dir(), mark).map(|()| clock.set_reserved(mark))
    };
    if let Err(e) = result {
        UserError::new(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!(
                "could not write hlculid high-water mark file \"{}\": {e}",
                persist::FILE_NAME
            ),
        )
        .detail("No id is issued until its high-water mark is on disk, so that ids stay increasing across restarts.")
        .raise();
    }
}

/// The writer's periodic step: persist a new mark if less than half a window is left.
pub fn refresh() {
    let now = now_ms();
    if let Some(needed) = clock().refresh_due(now, RESERVE_WINDOW_MS) {
        reserve(needed, now);
    }
}
