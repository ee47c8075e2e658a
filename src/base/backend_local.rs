//! State private to one backend, and its random stream.

use crate::base::errors::{Condition, UserError};
use hlculid_core::random::RandomSource;
use pgrx::prelude::*;
use std::cell::UnsafeCell;

/// State private to this backend. A backend runs SQL functions on one thread only, so a static
/// is enough, and unlike a thread-local in a shared library it costs no lookup per call.
pub struct BackendLocal<T>(UnsafeCell<T>);
// SAFETY: the value is only reached through `with`, whose contract (one thread, no re-entry)
// every caller upholds; so no two references to it exist at once.
unsafe impl<T> Sync for BackendLocal<T> {}

impl<T> BackendLocal<T> {
    pub const fn new(v: T) -> Self {
        BackendLocal(UnsafeCell::new(v))
    }

    /// Runs `f` on the value.
    ///
    /// # Safety
    /// Call only on the backend's main thread (where PostgreSQL runs SQL functions), and never
    /// from inside `f` of another `with` on the same value: either would make two `&mut` to it.
    #[inline]
    pub unsafe fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller guarantees this is the only reference for the duration of `f`.
        f(unsafe { &mut *self.0.get() })
    }
}

/// This process's random stream, with the pid it was seeded in: a process forked from one
/// that already had a stream (never the case for backends today) seeds its own.
static RANDOM: BackendLocal<Option<(i32, RandomSource)>> = BackendLocal::new(None);

/// 48 random bits, if this process's stream is already seeded.
#[inline]
pub fn random48_ready() -> Option<u64> {
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

/// 48 random bits, seeding this process's stream from the OS the first time.
pub fn random48() -> u64 {
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
