//! The one transaction callback of the library, registered in the postmaster while preloading
//! (every backend inherits it): the horizon's slot (src/horizon_slots.rs) and the transaction's id
//! group (src/tx.rs) end with their transaction. Only a flag check for transactions that made
//! no ids.

use crate::{horizon_slots, tx};
use pgrx::prelude::*;

#[pg_guard]
unsafe extern "C-unwind" fn on_xact_event(
    event: pg_sys::XactEvent::Type,
    _arg: *mut core::ffi::c_void,
) {
    horizon_slots::end_of_transaction(event);
    tx::end_of_transaction(event);
}

/// `_PG_init` calls it during `shared_preload_libraries` only.
pub fn register() {
    // SAFETY: registers a callback for the life of the server (the list lives in the
    // postmaster's TopMemoryContext, inherited by every backend it forks).
    unsafe { pg_sys::RegisterXactCallback(Some(on_xact_event), std::ptr::null_mut()) };
}
