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
//!
//! A utility hook sees COMMIT and ROLLBACK PREPARED: the backend that runs one holds none of the
//! prepared transaction's locks, so its end wakes every waiter (src/horizon/wait.rs).

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
        wait::transaction_ended(slots::after_transaction());
    }
}

static mut PREV_UTILITY: pg_sys::ProcessUtility_hook_type = None;

#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn on_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const core::ffi::c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // SAFETY: the statement PostgreSQL hands the hook; a TransactionStmt when its tag says so.
    unsafe {
        let node = (*pstmt).utilityStmt;
        if !node.is_null() && (*node).type_ == pg_sys::NodeTag::T_TransactionStmt {
            let kind = (*node.cast::<pg_sys::TransactionStmt>()).kind;
            if kind == pg_sys::TransactionStmtKind::TRANS_STMT_COMMIT_PREPARED
                || kind == pg_sys::TransactionStmtKind::TRANS_STMT_ROLLBACK_PREPARED
            {
                wait::wake_everyone_at_end();
            }
        }
        match PREV_UTILITY {
            Some(prev) => prev(
                pstmt,
                query_string,
                read_only_tree,
                context,
                params,
                query_env,
                dest,
                qc,
            ),
            None => pg_sys::standard_ProcessUtility(
                pstmt,
                query_string,
                read_only_tree,
                context,
                params,
                query_env,
                dest,
                qc,
            ),
        }
    }
}

/// `_PG_init` calls it during `shared_preload_libraries` only.
pub fn register() {
    // SAFETY: registers callbacks for the life of the server (the lists live in the postmaster's
    // TopMemoryContext, inherited by every backend it forks); the utility hook chained as every
    // extension chains it, once, in the postmaster.
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact_event), std::ptr::null_mut());
        pg_sys::RegisterResourceReleaseCallback(Some(on_resource_release), std::ptr::null_mut());
        PREV_UTILITY = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(on_utility);
    }
}
