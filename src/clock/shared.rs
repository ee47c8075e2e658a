//! The server's one clock in shared memory, and what was wrong with its high-water mark file
//! when the server started.
//!
//! The clock resumes from `$PGDATA/hlculid.hwm` at startup and after a crash, so every new id
//! sorts after every id issued before, whatever the wall clock did meanwhile. A mark file that
//! exists but cannot be read or makes no sense leaves the clock without a floor: the server then
//! issues no ids at all (every tick needs a reservation, and the mark store refuses) until a
//! superuser gives the clock a floor with `hlculid_clock_recover`: ids from an untrustworthy
//! clock could sort before earlier ones, silently.

use crate::base::errors::{Condition, UserError};
use crate::base::process;
use crate::base::settings;
use hlculid_core::clock::SharedClock;
use hlculid_core::mark::file as mark_file;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic};
use std::cell::UnsafeCell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

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
/// Serialises writes of the mark file: see [`MarkWriting`].
// SAFETY: the name is unique to this extension's shared memory.
pub static MARK_WRITING: PgAtomic<MarkWriting> = unsafe { PgAtomic::new(c"hlculid_mark_writing") };

/// Who is writing the mark file, and where the others wait for it.
///
/// Not an LWLock: a process waiting for an LWLock holds interrupts off, so while the writer's
/// fsync stalls (a slow or hung disk) every backend queued behind it would ignore query cancel,
/// statement_timeout and pg_terminate_backend. Here a waiter sleeps on a condition variable,
/// which checks for interrupts each time it wakes: a cancelled waiter leaves at once, having
/// taken nothing (the clock takes values only after a mark covering them is durable, so the
/// durable mark is exactly as safe as before). The writer itself is in its write or fsync and
/// cannot be interrupted either way.
///
/// The holder never raises or waits while it holds the flag (the write is plain file I/O that
/// returns its error), and releases it on unwind too ([`MarkWriteGuard`]); a process that dies
/// holding it (killed) makes the postmaster reinitialise shared memory, clearing it.
#[repr(C)]
pub struct MarkWriting {
    /// The pid of the process writing the mark, or 0.
    holder: AtomicI32,
    /// Broadcast when the holder lets go.
    cv: UnsafeCell<pg_sys::ConditionVariable>,
}
// SAFETY: an atomic and a ConditionVariable, which PostgreSQL keeps in shared memory (a
// spinlock and proc numbers, no pointers); the cell is only handed to PostgreSQL's functions.
unsafe impl PGRXSharedMemory for MarkWriting {}

impl MarkWriting {
    fn new() -> Self {
        let mut cv = std::mem::MaybeUninit::<pg_sys::ConditionVariable>::zeroed();
        // SAFETY: initialises the local in place (a spinlock and an empty wait list); it is
        // moved into shared memory before any process can use it.
        unsafe { pg_sys::ConditionVariableInit(cv.as_mut_ptr()) };
        MarkWriting {
            holder: AtomicI32::new(0),
            // SAFETY: initialised just above.
            cv: UnsafeCell::new(unsafe { cv.assume_init() }),
        }
    }

    /// Waits, interruptibly, until this process holds the flag.
    pub fn lock(&'static self) -> MarkWriteGuard {
        // SAFETY: MyProcPid is set at process start.
        let me = unsafe { pg_sys::MyProcPid };
        let mut slept = false;
        while self
            .holder
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            slept = true;
            // SAFETY: the condition variable is in shared memory; the first call only prepares
            // to sleep (the loop tests again before sleeping: no wakeup is lost); a later one
            // waits on the latch and then runs CHECK_FOR_INTERRUPTS, which raises a cancel.
            // The timeout rechecks the flag once a second regardless.
            unsafe {
                pg_sys::ConditionVariableTimedSleep(self.cv.get(), 1000, pg_sys::PG_WAIT_EXTENSION);
            }
        }
        if slept {
            // SAFETY: leaves the wait list this process joined above.
            unsafe { pg_sys::ConditionVariableCancelSleep() };
        }
        MarkWriteGuard(self)
    }
}

/// Holding the mark-writing flag; dropping it lets the next writer in.
pub struct MarkWriteGuard(&'static MarkWriting);

impl Drop for MarkWriteGuard {
    fn drop(&mut self) {
        self.0.holder.store(0, Ordering::Release);
        // SAFETY: the condition variable is in shared memory; broadcasting never raises.
        unsafe { pg_sys::ConditionVariableBroadcast(self.0.cv.get()) };
    }
}
/// Sets up the shared memory; `_PG_init` calls it during `shared_preload_libraries` only.
// pgrx's `pg_shmem_init!` expands to `cfg(feature = "pg13")`/`"pg14"` branches, features this
// crate no longer declares (it supports 15-18 only).
#[allow(unexpected_cfgs)]
pub fn init() {
    pg_shmem_init!(CLOCK = load_clock());
    pg_shmem_init!(MARK_WRITING = MarkWriting::new());
    process::set_preloaded();
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
    let (mark, damage) = match mark_file::load(&process::data_dir()) {
        Ok(mark) => (mark.unwrap_or(0), 0),
        Err(e) => {
            let damage = match e {
                mark_file::LoadError::Io(_) => MarkDamage::Unreadable,
                mark_file::LoadError::Corrupt(_) => MarkDamage::Corrupt,
            };
            warning!(
                "hlculid: the high-water mark file \"{}\" is {}: {e}; no ids are issued until a superuser runs hlculid_clock_recover()",
                mark_file::FILE_NAME,
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
    if !process::preloaded() {
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

/// PostgreSQL's protocol for an add-in's own shared memory, from a `shmem_startup_hook`: under
/// AddinShmemInitLock (MainLWLockArray[21]), ShmemInitStruct returns the region of that name,
/// allocated once per shared memory segment. `init` fills a new one (zeroed first); the region is
/// aligned to 64 bytes (it asks for 64 more: request `size + 64`). Returns its start.
///
/// # Safety
/// Called from a shmem_startup_hook (the postmaster, or a backend of EXEC_BACKEND builds).
pub unsafe fn add_in_region(name: &CStr, size: usize, init: impl FnOnce(*mut u8)) -> *mut u8 {
    // SAFETY: as the caller promises; the lock and the allocator are PostgreSQL's, used as its
    // own add-ins do.
    unsafe {
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let p = pg_sys::ShmemInitStruct(name.as_ptr(), size + 64, &mut found).cast::<u8>();
        // ShmemInitStruct aligns to a cache line on every supported platform; be sure.
        let p = p.add(p.align_offset(64));
        if !found {
            std::ptr::write_bytes(p, 0, size);
            init(p);
        }
        pg_sys::LWLockRelease(init_lock);
        p
    }
}
