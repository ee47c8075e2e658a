//! The server's one clock in shared memory, and what was wrong with its high-water mark file
//! when the server started.
//!
//! The clock resumes from `$PGDATA/hlculid.hwm` at startup and after a crash, so every new id
//! sorts after every id issued before, whatever the wall clock did meanwhile. A mark file that
//! exists but cannot be read or makes no sense leaves the clock without a floor: the server then
//! issues no ids at all (every tick needs a reservation, and the mark store refuses) until a
//! superuser gives the clock a floor with `hlculid_clock_recover`: ids from an untrustworthy
//! clock could sort before earlier ones, silently.

use crate::errors::{Condition, UserError};
use crate::settings;
use hlculid_core::clock::SharedClock;
use hlculid_core::persist;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

#[repr(C)]
pub struct ClockShmem {
    clock: SharedClock,
    /// What was wrong with the mark file at start ([`MarkDamage`] as u32; 0: nothing).
    damage: AtomicU32,
}
// SAFETY: only atomics, no pointers; valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for ClockShmem {}

// SAFETY: the name is unique to this extension's shared memory.
static CLOCK: PgAtomic<ClockShmem> = unsafe { PgAtomic::new(c"hlculid_clock") };
/// Serialises writes of the mark file (the value itself is unused).
// SAFETY: the name is unique to this extension's LWLock tranche.
pub static PERSIST_LOCK: PgLwLock<bool> = unsafe { PgLwLock::new(c"hlculid_persist") };
/// Set in the postmaster while preloading; forked backends inherit it.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// Sets up the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
// pgrx's `pg_shmem_init!` expands to `cfg(feature = "pg13")`/`"pg14"` branches, features this
// crate no longer declares (it supports 15-18 only).
#[allow(unexpected_cfgs)]
pub fn init() {
    pg_shmem_init!(CLOCK = load_clock());
    pg_shmem_init!(PERSIST_LOCK = false);
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

pub fn data_dir() -> PathBuf {
    // SAFETY: DataDir is a NUL-terminated path set at startup and never freed.
    unsafe {
        PathBuf::from(
            CStr::from_ptr(pg_sys::DataDir)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// What can be wrong with the mark file when the server starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum MarkDamage {
    /// It exists but could not be read (permissions, a directory in its place, an I/O error).
    Unreadable = 1,
    /// It was read but is not a mark (truncated, wrong size, garbage).
    Corrupt = 2,
}

impl MarkDamage {
    pub fn describe(self) -> &'static str {
        match self {
            MarkDamage::Unreadable => "unreadable at server start",
            MarkDamage::Corrupt => "corrupt at server start",
        }
    }
}

/// Runs in the postmaster whenever shared memory is (re)created. A missing file is a first
/// start; one that cannot be trusted leaves the clock at zero with nothing reserved, and marked.
fn load_clock() -> ClockShmem {
    let (mark, damage) = match persist::load(&data_dir()) {
        Ok(mark) => (mark.unwrap_or(0), 0),
        Err(e) => {
            let damage = match e {
                persist::LoadError::Io(_) => MarkDamage::Unreadable,
                persist::LoadError::Corrupt(_) => MarkDamage::Corrupt,
            };
            warning!(
                "hlculid: the high-water mark file \"{}\" is {}: {e}; no ids are issued until a superuser runs hlculid_clock_recover()",
                persist::FILE_NAME,
                damage.describe()
            );
            (0, damage as u32)
        }
    };
    let clock = SharedClock::resume(mark);
    clock.set_max_run_ahead(settings::max_clock_skew_ms());
    ClockShmem {
        clock,
        damage: AtomicU32::new(damage),
    }
}

/// What was wrong with the mark file at start, until a recovery.
pub fn mark_damage() -> Option<MarkDamage> {
    match CLOCK.get().damage.load(Ordering::Acquire) {
        0 => None,
        1 => Some(MarkDamage::Unreadable),
        _ => Some(MarkDamage::Corrupt),
    }
}

/// A recovery made a trustworthy mark durable.
pub fn clear_damage() {
    CLOCK.get().damage.store(0, Ordering::Release);
}

/// The shared clock, or the 55000 error that names the missing setting.
#[inline]
pub fn clock() -> &'static SharedClock {
    if !preloaded() {
        UserError::new(
            Condition::NotPreloaded,
            "hlculid must be loaded via \"shared_preload_libraries\" to generate ids",
        )
        .detail("The clock behind hlculid_generate() lives in shared memory, which only a preloaded library can allocate. The type, operators and extractors work without it.")
        .hint("Add hlculid to shared_preload_libraries in postgresql.conf and restart the server.")
        .raise();
    }
    &CLOCK.get().clock
}

/// The shared clock, for callers that checked [`preloaded`] themselves (the fast path, which
/// must not raise).
#[inline]
pub fn clock_preloaded() -> &'static SharedClock {
    &CLOCK.get().clock
}
