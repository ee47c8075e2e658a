//! The server's one clock in shared memory, and the durable high-water mark behind it.
//!
//! Every backend advances the same [`SharedClock`] lock-free. The clock never issues a value
//! above the mark already persisted in `$PGDATA/hlculid.hwm`; the background writer keeps that
//! mark a window ahead, and a backend that reaches it (writer down, a burst past the window, an
//! observe further ahead) extends it itself under `PERSIST_LOCK` before going on. At startup,
//! and after a crash, the clock resumes from the file, so every new id sorts after every id
//! issued before, whatever the wall clock did meanwhile.
//!
//! A mark file that exists but cannot be read or makes no sense leaves the clock without a floor.
//! The server then issues no ids at all (every tick needs a reservation, and `reserve` refuses)
//! until a superuser gives the clock a floor with `hlculid_clock_recover`: ids from an
//! untrustworthy clock could sort before earlier ones, silently.

use crate::errors::{Condition, UserError};
use hlculid_core::clock::SharedClock;
use hlculid_core::persist;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The writer keeps the persisted mark between half a window and one and a half windows ahead
/// of the wall clock (or of the logical clock, when that runs ahead), so after a crash the clock
/// may resume up to 1.5 windows ahead.
pub const RESERVE_WINDOW_MS: u64 = 1000;

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
static PERSIST_LOCK: PgLwLock<bool> = unsafe { PgLwLock::new(c"hlculid_persist") };
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

fn data_dir() -> PathBuf {
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
    ClockShmem {
        clock: SharedClock::resume(mark),
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

fn raise_damaged(damage: MarkDamage) -> ! {
    // Describe the file as it is now: the operator may be looking at it.
    let now = match persist::load(&data_dir()) {
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
        persist::FILE_NAME,
        damage.describe()
    ))
    .hint("Find the largest hlculid stored in this cluster and, as a superuser, run SELECT hlculid_clock_recover(that_id); see \"Recovering the clock\" in hlculid's README.")
    .raise()
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

/// The real-time clock in Unix milliseconds (read on every call, never `now()`). A reading
/// before the Unix epoch comes back as 0, which the clock refuses as an unset clock.
#[inline]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The 22008 error of a wall clock an id cannot hold, with what it reads.
pub fn raise_wall_clock_out_of_range() -> ! {
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
        crate::extract::TS_RANGE_DETAIL
    ))
    .hint("Correct the system clock. The high-water mark was left as it was, so ids continue above every earlier one once the clock is back in range.")
    .raise()
}

/// Persists a mark covering at least `needed` (plus a window) and publishes it to the clock.
/// A backend calls this when the clock refuses to go past the current mark, and raises 58030
/// when the mark cannot be written: no id is issued until it can.
pub fn reserve(needed: u64, now_ms: u64) {
    if let Err(e) = try_reserve(needed, now_ms) {
        raise_write_error(e);
    }
}

fn try_reserve(needed: u64, now_ms: u64) -> std::io::Result<()> {
    let clock = clock();
    if let Some(damage) = mark_damage() {
        raise_damaged(damage);
    }
    let _writing = PERSIST_LOCK.exclusive();
    if clock.stats().reserved >= needed {
        return Ok(()); // another process got there first
    }
    let mark = clock.reservation_for(needed, now_ms, RESERVE_WINDOW_MS);
    persist::store(&data_dir(), mark)?;
    clock.set_reserved(mark);
    Ok(())
}

fn raise_write_error(e: std::io::Error) -> ! {
    UserError::new(
        Condition::MarkWriteFailed,
        format!(
            "could not write hlculid high-water mark file \"{}\": {e}",
            persist::FILE_NAME
        ),
    )
    .detail("No id is issued until its high-water mark is on disk, so that ids stay increasing across restarts.")
    .hint("Free space in the data directory, or make it writable again; generation resumes by itself.")
    .raise()
}

/// The writer's periodic step: persist a new mark if less than half a window is left. A failed
/// write is returned, not raised: the writer keeps trying, and backends raise it themselves.
pub fn refresh() -> std::io::Result<()> {
    if mark_damage().is_some() {
        return Ok(()); // nothing is issued until a recovery, which writes the mark itself
    }
    let now = now_ms();
    match clock().refresh_due(now, RESERVE_WINDOW_MS) {
        Some(needed) => try_reserve(needed, now),
        None => Ok(()),
    }
}

/// `hlculid_clock_recover`: gives the clock a floor (the largest id known to have been issued, if
/// any), makes a mark above it and the wall clock durable, and clears the damage. Afterwards every
/// id sorts after `floor`. Callers check privileges.
pub fn recover(floor: u64) -> u64 {
    let clock = clock();
    let now = now_ms();
    let _writing = PERSIST_LOCK.exclusive();
    let mark = clock.reservation_for(floor, now, RESERVE_WINDOW_MS);
    if let Err(e) = persist::store(&data_dir(), mark) {
        raise_write_error(e);
    }
    clock.raise_floor(floor);
    clock.set_reserved(mark);
    CLOCK.get().damage.store(0, Ordering::Release);
    mark
}
