//! A table's schema's name pinned for the rest of the transaction (0.6.0). The helpers that run
//! DDL as a table's owner (the partition helpers, the backfill) name the table, its partitions
//! and the tables they create in SQL text, and utility statements look names up while they
//! run, where no parse-analysis check (`read_guard`) sees them. A schema's owner who renamed the
//! schema and put one of her own under its name in between would have them act on her
//! relations, running her code (a domain's check, a trigger, a view) as the table's owner.
//! PostgreSQL's `ALTER SCHEMA .. RENAME` updates the schema's `pg_namespace` row (and from 15
//! to 16 also takes ACCESS EXCLUSIVE on the schema first): `hlculid_pin_schema` takes the lock a
//! table's creation there takes, then locks that row (as `SELECT .. FOR KEY SHARE` would), so a
//! rename waits for the caller's transaction to end and no other schema can take the name
//! meanwhile. Relations in the schema keep their names too: renaming one takes its owner, and
//! dropping one (which a schema's owner may) takes a lock the helpers hold on theirs.

use crate::base::errors::{Condition, UserError};
use pgrx::prelude::*;

/// SQL `hlculid_pin_schema(tbl)`: until the transaction ends, `tbl`'s schema keeps its name. For
/// the table's owner (or a member of its role), or of a table it is a partition of, only, in a
/// transaction that may write: the pin
/// delays the schema owner's renames, as a table's owner may delay DDL on her table. Then takes
/// in other sessions' catalog changes, the rename that the pin waited for included, so that a
/// name formatted next is current.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_pin_schema(tbl: pg_sys::Oid) {
    // SAFETY: the syscache row is read and released at once; the slot and the catalog are
    // closed before returning; the locks are the transaction's, as after SELECT FOR KEY SHARE
    // and CREATE TABLE. Errors unwind through pgrx.
    unsafe {
        pg_sys::PreventCommandIfReadOnly(c"hlculid_pin_schema()".as_ptr());
        let class = pg_sys::SearchSysCache1(
            pg_sys::SysCacheIdentifier::RELOID as i32,
            pg_sys::Datum::from(tbl),
        );
        if class.is_null() {
            UserError::relation_missing(tbl);
        }
        let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_class>(class);
        let (nsp, owner) = ((*form).relnamespace, (*form).relowner);
        pg_sys::ReleaseSysCache(class);
        if !pg_sys::has_privs_of_role(pg_sys::GetUserId(), owner) && !parent_owned(tbl) {
            let name = std::ffi::CStr::from_ptr(pg_sys::get_rel_name(tbl));
            UserError::new(
                Condition::NotTableOwner,
                format!("must be owner of table {}", name.to_string_lossy()),
            )
            .detail("hlculid_pin_schema delays renames of the table's schema; only the table's owner may.")
            .raise()
        }
        pg_sys::LockDatabaseObject(
            pg_sys::NamespaceRelationId,
            nsp,
            0,
            pg_sys::AccessShareLock as _,
        );
        let row = pg_sys::SearchSysCache1(
            pg_sys::SysCacheIdentifier::NAMESPACEOID as i32,
            pg_sys::Datum::from(nsp),
        );
        if row.is_null() {
            UserError::relation_missing(tbl);
        }
        let mut tid = (*row).t_self;
        pg_sys::ReleaseSysCache(row);
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
        // TM_SelfModified: this transaction changed the row (renamed it): already its own
        let locked =
            result == pg_sys::TM_Result::TM_Ok || result == pg_sys::TM_Result::TM_SelfModified;
        if locked {
            // the transaction that wrote this version may have committed without having sent
            // its catalog invalidations yet (a commit marks itself done first): wait until it
            // let go of its locks, which it does after sending them (the seventh review)
            let mut free = false;
            let tuple = pg_sys::ExecFetchSlotHeapTuple(slot, false, &mut free);
            // a frozen row's is no transaction to wait for (its raw xmin may be 2^31 old,
            // whose status is gone: the ninth review)
            let xmin = pg_sys::submodules::htup::HeapTupleHeaderGetXmin((*tuple).t_data);
            if pg_sys::TransactionIdIsNormal(xmin)
                && !pg_sys::TransactionIdIsCurrentTransactionId(xmin)
            {
                pg_sys::XactLockTableWait(
                    xmin,
                    catalog,
                    &mut (*tuple).t_self,
                    pg_sys::XLTW_Oper::XLTW_Lock,
                );
            }
            if free {
                pg_sys::heap_freetuple(tuple);
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::table_close(catalog, pg_sys::NoLock as _);
        if !locked {
            UserError::relation_missing(tbl);
        }
        pg_sys::AcceptInvalidationMessages();
    }
}

/// Whether `tbl` is a partition of a table the current role owns (or is a member of its owner's
/// role): the partition helpers, acting as the partitioned table's owner, pin the schemas of
/// its partitions too, which another role may own.
fn parent_owned(tbl: pg_sys::Oid) -> bool {
    // SAFETY: lookups by OID; the ancestors' list is read at once (palloc'd in the call's
    // context), each ancestor's row read and released.
    unsafe {
        if !pg_sys::get_rel_relispartition(tbl) {
            return false;
        }
        let ancestors = crate::base::pg_c::get_partition_ancestors(tbl);
        let n = if ancestors.is_null() {
            0
        } else {
            (*ancestors).length
        };
        (0..n as usize).any(|i| {
            let parent = (*(*ancestors).elements.add(i)).oid_value;
            let class = pg_sys::SearchSysCache1(
                pg_sys::SysCacheIdentifier::RELOID as i32,
                pg_sys::Datum::from(parent),
            );
            if class.is_null() {
                return false;
            }
            let owner =
                (*pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_class>(class)).relowner;
            pg_sys::ReleaseSysCache(class);
            pg_sys::has_privs_of_role(pg_sys::GetUserId(), owner)
        })
    }
}
