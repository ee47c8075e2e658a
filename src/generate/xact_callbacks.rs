//! The library's transaction callbacks, registered in the postmaster while preloading (every
//! backend inherits them): the horizon's slot (src/horizon/slots.rs) and the transaction's id
//! group (src/generate/tx.rs) end with their transaction, and the waiters of src/horizon/wait.rs
//! wake. Only a flag check and two atomic reads for transactions that made no ids.
//!
//! The slot is released by a resource-release callback, not at `XACT_EVENT_COMMIT`: transaction
//! callbacks run last-registered-first, so with `citus` before `hlculid` in
//! `shared_preload_libraries` a commit-event release came before Citus' `COMMIT PREPARED` round
//! trip to the workers, and readers passed ids the workers did not show yet. The top-level
//! resource owner is released after every transaction callback, whatever the load order.

use crate::generate::tx;
use crate::horizon::{slots, wait};
use pgrx::prelude::*;

#[pg_guard]
unsafe extern "C-unwind" fn on_xact_event(
    event: pg_sys::XactEvent::Type,
    _arg: *mut core::ffi::c_void,
) {
    slots::end_of_transaction(event);
    tx::end_of_transaction(event);
}

#[pg_guard]
unsafe extern "C-unwind" fn on_resource_release(
    phase: pg_sys::ResourceReleasePhase::Type,
    is_commit: bool,
    is_top_level: bool,
    _arg: *mut core::ffi::c_void,
) {
    // before the locks go: which tables the committed transaction wrote (its ROW EXCLUSIVE locks)
    if is_top_level
        && is_commit
        && phase == pg_sys::ResourceReleasePhase::RESOURCE_RELEASE_BEFORE_LOCKS
    {
        wait::table_written();
    }
    if is_top_level && phase == pg_sys::ResourceReleasePhase::RESOURCE_RELEASE_AFTER_LOCKS {
        wait::transaction_ended(slots::after_transaction(), is_commit);
    }
}

/// `_PG_init` calls it during `shared_preload_libraries` only.
pub fn register() {
    // SAFETY: registers callbacks for the life of the server (the lists live in the postmaster's
    // TopMemoryContext, inherited by every backend it forks).
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact_event), std::ptr::null_mut());
        pg_sys::RegisterResourceReleaseCallback(Some(on_resource_release), std::ptr::null_mut());
    }
}
