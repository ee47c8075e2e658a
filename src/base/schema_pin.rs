//! A schema's name pinned for the rest of the transaction (0.6.0). The helpers that run DDL as
//! a table's owner (the partition helpers, the backfill) name the table, its partitions and the
//! tables they create in SQL text, and utility statements look names up while they run, where
//! no parse-analysis check (`read_guard`) sees them. A schema's owner who renamed the schema
//! and put one of her own under its name in between would have them act on her relations,
//! running her code (a domain's check, a trigger) as the table's owner. PostgreSQL's
//! `ALTER SCHEMA .. RENAME` takes no lock, but it updates the schema's `pg_namespace` row:
//! `hlculid_pin_schema` locks that row (as `SELECT .. FOR KEY SHARE` would), so a rename waits
//! for the caller's transaction to end, and no other schema can take the name meanwhile.
//! Relations in the schema keep their names too: renaming one takes its owner, and dropping one
//! (which a schema's owner may) takes a lock the helpers hold on theirs.

use crate::base::errors::{Condition, UserError};
use pgrx::prelude::*;

/// SQL `hlculid_pin_schema(nsp)`: until the transaction ends, the schema keeps its name. Needs
/// USAGE on it (a name the caller may use; holding it is like holding a lock on a table read).
/// Then takes in other sessions' catalog changes, so that a name formatted next is current.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_pin_schema(nsp: pg_sys::Oid) {
    // SAFETY: the syscache lookup is released at once, after copying the row's TID; the slot
    // and the catalog are closed before returning; the catalog's RowShareLock and the row's
    // lock are the transaction's, as after SELECT FOR KEY SHARE. Errors unwind through pgrx.
    unsafe {
        let tuple = pg_sys::SearchSysCache1(
            pg_sys::SysCacheIdentifier::NAMESPACEOID as i32,
            pg_sys::Datum::from(nsp),
        );
        if tuple.is_null() {
            missing(nsp);
        }
        let mut tid = (*tuple).t_self;
        pg_sys::ReleaseSysCache(tuple);
        if !may_use(nsp) {
            let name = std::ffi::CStr::from_ptr(pg_sys::get_namespace_name(nsp));
            UserError::new(
                Condition::NotTableOwner,
                format!("permission denied for schema {}", name.to_string_lossy()),
            )
            .raise()
        }
        // first the lock a table's creation in the schema takes: PostgreSQL 15's rename takes
        // ACCESS EXCLUSIVE on the schema before it updates the row, so a rename begun first
        // is waited for here, not deadlocked with at the helper's next CREATE TABLE
        pg_sys::LockDatabaseObject(
            pg_sys::NamespaceRelationId,
            nsp,
            0,
            pg_sys::AccessShareLock as _,
        );
        let catalog = pg_sys::table_open(pg_sys::NamespaceRelationId, pg_sys::RowShareLock as _);
        let slot = pg_sys::table_slot_create(catalog, std::ptr::null_mut());
        let mut failure: pg_sys::TM_FailureData = std::mem::zeroed();
        // the row's newest version (a rename committed since the cache was read), waiting for
        // a rename in progress
        let result = pg_sys::table_tuple_lock(
            catalog,
            &mut tid,
            pg_sys::GetLatestSnapshot(),
            slot,
            pg_sys::GetCurrentCommandId(true),
            pg_sys::LockTupleMode::LockTupleKeyShare,
            pg_sys::LockWaitPolicy::LockWaitBlock,
            (pg_sys::TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS
                | pg_sys::TUPLE_LOCK_FLAG_FIND_LAST_VERSION) as u8,
            &mut failure,
        );
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::table_close(catalog, pg_sys::NoLock as _);
        // TM_SelfModified: this transaction changed the row (renamed it): already its own
        if result != pg_sys::TM_Result::TM_Ok && result != pg_sys::TM_Result::TM_SelfModified {
            missing(nsp);
        }
        pg_sys::AcceptInvalidationMessages();
    }
}

fn missing(nsp: pg_sys::Oid) -> ! {
    UserError::new(
        Condition::UndefinedSchema,
        format!("schema with OID {} does not exist", u32::from(nsp)),
    )
    .raise()
}

/// Whether the current role has USAGE on the schema.
fn may_use(nsp: pg_sys::Oid) -> bool {
    // SAFETY: an ACL check by OID, for a schema that exists (checked before).
    unsafe {
        #[cfg(feature = "pg15")]
        let r = pg_sys::pg_namespace_aclcheck(nsp, pg_sys::GetUserId(), pg_sys::ACL_USAGE as _);
        #[cfg(not(feature = "pg15"))]
        let r = pg_sys::object_aclcheck(
            pg_sys::NamespaceRelationId,
            nsp,
            pg_sys::GetUserId(),
            pg_sys::ACL_USAGE as _,
        );
        r == pg_sys::AclResult::ACLCHECK_OK
    }
}
