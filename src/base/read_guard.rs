//! The readers' guard against a table's name meaning another relation by the time their query
//! is parsed (0.6.0's third review). A reader builds its query from the table's OID
//! (`format('%s', rel)`) and PL/pgSQL's `EXECUTE` parses it: between the two, a schema's owner
//! who renames that schema and puts a view or table of the same name in its place makes the
//! query read hers, running her code as the reader (measured: within milliseconds, a superuser's
//! `hlculid_read` ran it). No lock stops a schema's rename, so the check is on what was parsed:
//! `hlculid_expect_reads(rel, query)` arms it for the query's text, and the parse-analysis hook,
//! given that text, raises unless every relation the query names is the table or one of the
//! catalogs' or hlculid's own (schemas only superusers own). The hook runs after analysis,
//! before rewriting, planning or execution: nothing of the relation's has run. Armed per backend,
//! disarmed by the next arming or at the transaction's end.

use crate::base::errors::{Condition, UserError};
use pgrx::prelude::*;
use std::cell::RefCell;
use std::ffi::{CStr, CString};

/// The query text armed and the table it may read.
struct Armed {
    query: CString,
    relation: pg_sys::Oid,
}

thread_local! {
    static ARMED: RefCell<Option<Armed>> = const { RefCell::new(None) };
}

static mut PREVIOUS: pg_sys::post_parse_analyze_hook_type = None;
static mut INSTALLED: bool = false;

/// SQL `hlculid_expect_reads(rel, query)`: the next parse of `query` in this transaction raises
/// unless every relation it names is `rel` or one of pg_catalog's or hlculid's. NULL disarms,
/// and takes in other sessions' catalog changes, so that a name formatted next is current (a
/// long-running caller, as the backfill, between its statements).
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_expect_reads(rel: Option<pg_sys::Oid>, query: Option<&str>) {
    match (rel, query.and_then(|q| CString::new(q).ok())) {
        (Some(relation), Some(query)) => arm(relation, query),
        _ => {
            disarm();
            // SAFETY: what any new lock does: reads the invalidation queue.
            unsafe { pg_sys::AcceptInvalidationMessages() };
        }
    }
}

/// SQL `hlculid_read_lock(rel)`: ACCESS SHARE on the table until the transaction ends, the lock
/// its read takes, taken before the reader checks the table's columns (0.6.0, the ninth review):
/// checked first and locked only when the read's query was parsed, the table's owner could
/// change the id column's type in between to one of hers with a cast, which the read then
/// called as the reader. ALTER TABLE waits for this lock. For a role that may read the table or
/// a column of it (which may hold the same lock by reading); then whether it still exists.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_read_lock(rel: pg_sys::Oid) {
    // SAFETY: ACL checks of a relation by OID (one that names none is PostgreSQL's own 42P01),
    // then a lock by OID, as the parser's own; the relkind read from the catalog cache after it.
    unsafe {
        let user = pg_sys::GetUserId();
        let select = pg_sys::ACL_SELECT as pg_sys::AclMode;
        let allowed = pg_sys::pg_class_aclcheck(rel, user, select)
            == pg_sys::AclResult::ACLCHECK_OK
            || pg_sys::pg_attribute_aclcheck_all(
                rel,
                user,
                select,
                pg_sys::AclMaskHow::ACLMASK_ANY,
            ) == pg_sys::AclResult::ACLCHECK_OK;
        if !allowed {
            let name = std::ffi::CStr::from_ptr(pg_sys::get_rel_name(rel));
            UserError::new(
                Condition::NotTableOwner,
                format!("permission denied for table {}", name.to_string_lossy()),
            )
            .raise()
        }
        pg_sys::LockRelationOid(rel, pg_sys::AccessShareLock as _);
        if pg_sys::get_rel_relkind(rel) == 0 {
            UserError::relation_missing(rel)
        }
    }
}

/// Arms the check for `query` (the waits' re-checks, built in Rust, as the readers' SQL does).
pub fn arm(relation: pg_sys::Oid, query: CString) {
    install();
    ARMED.with(|a| *a.borrow_mut() = Some(Armed { query, relation }));
}

pub fn disarm() {
    ARMED.with(|a| *a.borrow_mut() = None);
}

/// Installs the hook in this backend, once (the library may not be preloaded).
fn install() {
    // SAFETY: a backend has one thread; the hook chain is PostgreSQL's own global, saved and
    // extended once, as every extension that hooks parse analysis does; the transaction
    // callback is registered once with no argument.
    unsafe {
        if INSTALLED {
            return;
        }
        INSTALLED = true;
        PREVIOUS = pg_sys::post_parse_analyze_hook;
        pg_sys::post_parse_analyze_hook = Some(after_analysis);
        pg_sys::RegisterXactCallback(Some(at_transaction_end), std::ptr::null_mut());
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn at_transaction_end(
    event: pg_sys::XactEvent::Type,
    _arg: *mut core::ffi::c_void,
) {
    if matches!(
        event,
        pg_sys::XactEvent::XACT_EVENT_COMMIT
            | pg_sys::XactEvent::XACT_EVENT_ABORT
            | pg_sys::XactEvent::XACT_EVENT_PARALLEL_COMMIT
            | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT
            | pg_sys::XactEvent::XACT_EVENT_PREPARE
    ) {
        ARMED.with(|a| *a.borrow_mut() = None);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn after_analysis(
    pstate: *mut pg_sys::ParseState,
    query: *mut pg_sys::Query,
    jstate: *mut pg_sys::JumbleState,
) {
    // SAFETY: the hook's arguments as PostgreSQL passes them (valid for the call); the previous
    // hook is called as PostgreSQL would; the relation list is a fresh list of OID cells.
    unsafe {
        if let Some(previous) = PREVIOUS {
            // another extension's hook (pg_stat_statements) may raise: across the boundary
            pg_sys::ffi::pg_guard_ffi_boundary(|| previous(pstate, query, jstate));
        }
        if pstate.is_null() || query.is_null() || (*pstate).p_sourcetext.is_null() {
            return;
        }
        let Some(relation) = ARMED.with(|a| {
            a.borrow()
                .as_ref()
                .filter(|a| a.query.as_c_str() == CStr::from_ptr((*pstate).p_sourcetext))
                .map(|a| a.relation)
        }) else {
            return;
        };
        let mut rels: *mut pg_sys::List = std::ptr::null_mut();
        let mut items: *mut pg_sys::List = std::ptr::null_mut();
        let mut row_security = false;
        // a CREATE TABLE .. AS (the partition helpers' move out of the default partition): a
        // utility statement whose query is analysed with it, but which the dependencies of a
        // utility statement leave out
        let mut analysed = query as *mut pg_sys::Node;
        if (*query).commandType == pg_sys::CmdType::CMD_UTILITY
            && pgrx::is_a((*query).utilityStmt, pg_sys::NodeTag::T_CreateTableAsStmt)
        {
            analysed = (*((*query).utilityStmt as *mut pg_sys::CreateTableAsStmt)).query;
        }
        // every relation the query names, at every level (views not yet expanded)
        pg_sys::extract_query_dependencies(analysed, &mut rels, &mut items, &mut row_security);
        let ours = [
            pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE),
            pg_sys::get_namespace_oid(c"hlculid".as_ptr(), true),
        ];
        let n = if rels.is_null() { 0 } else { (*rels).length };
        for i in 0..n as usize {
            let oid = (*(*rels).elements.add(i)).oid_value;
            if oid != relation && !ours.contains(&pg_sys::get_rel_namespace(oid)) {
                disarm();
                UserError::new(
                    Condition::UndefinedTable,
                    "the table to read is no longer the relation its name gives",
                )
                .detail(
                    "Its name now gives another relation: the table's schema was renamed, and \
                     another relation put in its place, after the table was named.",
                )
                .hint("Read again: the name is taken anew from the table.")
                .raise()
            }
        }
    }
}
