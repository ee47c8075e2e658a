//! Acting as a table's owner. The helpers that write a user's table (creating partitions moves
//! rows out of the default partition, dropping partitions, the backfill's updates) run that
//! table's code: its triggers, index expressions, defaults, constraints, rules. Run by a
//! superuser (a pg_cron job) on a table another role owns, that code would run as the superuser.
//! So, as VACUUM, ANALYZE, REINDEX, CLUSTER and REFRESH MATERIALIZED VIEW do since CVE-2022-1552,
//! the work runs as the table's owner inside a security-restricted operation (no `SET ROLE`, no
//! temporary tables, no session state left behind), and only a caller who may already act as
//! that owner (the owner, a member of its role, a superuser) may ask for it. docs/security.md.
//!
//! The PL/pgSQL bodies (sql/src/partitions.sql) are `*_as_owner` functions that refuse to run
//! anywhere but inside [`as_owner`]; the entry points users call are the Rust functions here.

use crate::base::errors::{Condition, UserError};
use crate::types::datum::Hlculid;
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;

/// The owner of `rel`, or an error naming it when it is gone.
fn owner_of(rel: pg_sys::Oid) -> pg_sys::Oid {
    Spi::get_one_with_args::<pg_sys::Oid>(
        "SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1",
        &[rel.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_else(|| UserError::relation_missing(rel))
}

/// The name of `rel` as `regclass` prints it, for messages.
fn display(rel: pg_sys::Oid) -> String {
    Spi::get_one_with_args::<String>(
        "SELECT $1::pg_catalog.regclass::pg_catalog.text",
        &[rel.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_else(|| u32::from(rel).to_string())
}

/// What the owner's code could leave in the caller's session that a security-restricted
/// operation does not refuse and a GUC nest level does not undo: open cursors (counted before
/// and after), and objects in the session's temporary schema that the caller does not own. A
/// domain `pg_temp.text` is found before `pg_catalog.text` by every later statement of a session
/// whose path does not name pg_temp: its CHECK would run as the caller. (A session-level advisory
/// lock it takes stays with the session, as after PostgreSQL's own maintenance commands: it
/// cannot be told from the transaction-level ones Citus' DDL takes, and it can delay, not run.)
const HELD: &str = "SELECT pg_catalog.count(*) FROM pg_catalog.pg_cursors";
const FOREIGN_TEMP_OBJECTS: &str = "SELECT pg_catalog.count(*) FROM ( \
     SELECT t.typnamespace AS ns, t.typowner AS own FROM pg_catalog.pg_type t \
     UNION ALL SELECT p.pronamespace, p.proowner FROM pg_catalog.pg_proc p \
     UNION ALL SELECT o.oprnamespace, o.oprowner FROM pg_catalog.pg_operator o \
     UNION ALL SELECT c.relnamespace, c.relowner FROM pg_catalog.pg_class c \
     UNION ALL SELECT c.collnamespace, c.collowner FROM pg_catalog.pg_collation c \
     UNION ALL SELECT c.connamespace, c.conowner FROM pg_catalog.pg_conversion c \
     UNION ALL SELECT c.cfgnamespace, c.cfgowner FROM pg_catalog.pg_ts_config c \
     UNION ALL SELECT d.dictnamespace, d.dictowner FROM pg_catalog.pg_ts_dict d \
     UNION ALL SELECT s.stxnamespace, s.stxowner FROM pg_catalog.pg_statistic_ext s \
     UNION ALL SELECT f.opfnamespace, f.opfowner FROM pg_catalog.pg_opfamily f \
     UNION ALL SELECT c.opcnamespace, c.opcowner FROM pg_catalog.pg_opclass c) o \
     WHERE o.ns OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema() \
       AND o.own OPERATOR(pg_catalog.<>) $1";

fn held() -> i64 {
    match Spi::get_one::<i64>(HELD) {
        Ok(Some(cursors)) => cursors,
        _ => UserError::new(
            Condition::Internal,
            "hlculid: cannot count the open cursors",
        )
        .raise(),
    }
}

/// Runs `f` as the owner of `rel` in a security-restricted operation, after checking that the
/// caller may act as that owner (42501 otherwise, naming `function`). An error inside `f` aborts
/// the (sub)transaction, which restores the caller's user and context itself. So does the error
/// raised when the owner's code left something behind (see [`HELD`]), which undoes it too.
pub fn as_owner<R>(rel: pg_sys::Oid, function: &str, f: impl FnOnce() -> R) -> R {
    let owner = owner_of(rel);
    let (mut user, mut context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: reads this backend's current user and security context into locals.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut context) };
    // SAFETY: a catalog lookup of role membership (superusers hold every role's privileges).
    if !unsafe { pg_sys::has_privs_of_role(user, owner) } {
        UserError::new(
            Condition::NotTableOwner,
            format!("must be owner of table {}", display(rel)),
        )
        .detail(format!(
            "{function} runs the table's triggers, defaults, constraints and index expressions as the table's owner."
        ))
        .hint("Run it as the table's owner, a member of that role, or a superuser.")
        .raise()
    }
    // SAFETY: as PostgreSQL's maintenance commands switch to a table's owner (REFRESH MATERIALIZED
    // VIEW, VACUUM): the user and context, then a GUC nest level of its own whose search_path is
    // the safe one (PostgreSQL 17's RestrictSearchPath, spelled out for 15 and 16). All of it is
    // undone below, and by the (sub)transaction's abort if `f` raises.
    let nest = unsafe {
        pg_sys::SetUserIdAndSecContext(
            owner,
            context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
        let nest = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"search_path".as_ptr(),
            c"pg_catalog, pg_temp".as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        nest
    };
    let before = held();
    let result = f();
    // SAFETY: every setting the owner's code changed (SET, SET LOCAL, set_config, of search_path or
    // anything else) is thrown away with the nest level, so none outlives the switch in the
    // caller's session or transaction; then back to the caller's user and context, saved above.
    unsafe {
        pg_sys::AtEOXact_GUC(false, nest);
        pg_sys::SetUserIdAndSecContext(user, context);
    }
    let after = held();
    let foreign = Spi::get_one_with_args::<i64>(FOREIGN_TEMP_OBJECTS, &[user.into()])
        .ok()
        .flatten()
        .unwrap_or(0);
    if after > before || foreign > 0 {
        UserError::new(
            Condition::NotTableOwner,
            format!(
                "the code of table {} left {} in this session",
                display(rel),
                if foreign > 0 {
                    "objects in its temporary schema"
                } else {
                    "an open cursor"
                }
            ),
        )
        .detail(format!(
            "{function} ran the table's triggers, defaults, constraints and index expressions as its owner; what they leave in the caller's session would be used by the caller's later statements."
        ))
        .hint("Look at the table's triggers and the functions of its defaults, constraints and index expressions.")
        .raise()
    }
    result
}

/// `hlculid_acting_as_owner(rel)`: true inside [`as_owner`] for `rel` (the current user is its
/// owner, in a security-restricted operation). The `*_as_owner` bodies refuse to run otherwise.
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_acting_as_owner(rel: pg_sys::Oid) -> bool {
    // SAFETY: reads this backend's current user and security state.
    let (user, restricted) =
        unsafe { (pg_sys::GetUserId(), pg_sys::InSecurityRestrictedOperation()) };
    restricted && owner_of(rel) == user
}

/// Rows of a set-returning query, their first column of type `T`.
fn collect<T: FromDatum + IntoDatum>(query: &str, args: &[DatumWithOid]) -> Vec<T> {
    Spi::connect(|client| {
        client
            .select(query, None, args)
            .map(|rows| rows.filter_map(|r| r.get::<T>(1).ok().flatten()).collect())
    })
    .unwrap_or_else(|e| UserError::new(Condition::Internal, format!("hlculid: {e}")).raise())
}

#[pg_extern(volatile, strict, sql = false)]
fn hlculid_create_partitions(
    parent: pg_sys::Oid,
    from_ts: TimestampWithTimeZone,
    to_ts: TimestampWithTimeZone,
    every: Interval,
) -> SetOfIterator<'static, pg_sys::Oid> {
    let made = as_owner(parent, "hlculid_create_partitions", || {
        collect::<pg_sys::Oid>(
            "SELECT p::pg_catalog.oid FROM pg_catalog.hlculid_create_partitions_as_owner(\
             $1::pg_catalog.regclass, $2, $3, $4) p",
            &[parent.into(), from_ts.into(), to_ts.into(), every.into()],
        )
    });
    SetOfIterator::new(made)
}

#[pg_extern(volatile, strict, sql = false)]
fn hlculid_drop_partitions(
    parent: pg_sys::Oid,
    older_than: TimestampWithTimeZone,
    detach_only: bool,
) -> SetOfIterator<'static, String> {
    let gone = as_owner(parent, "hlculid_drop_partitions", || {
        collect::<String>(
            "SELECT p FROM pg_catalog.hlculid_drop_partitions_as_owner(\
             $1::pg_catalog.regclass, $2, $3) p",
            &[parent.into(), older_than.into(), detach_only.into()],
        )
    });
    SetOfIterator::new(gone)
}

/// `hlculid_backfill_update(tbl, id_column, tableoids, ctids, ids)`: one batch of
/// `hlculid_backfill`, as the table's owner: each row found by (tableoid, ctid) whose id is still
/// NULL gets its id. Returns how many rows it filled. (The ctids come as text: pgrx has no `tid[]`.)
#[pg_extern(volatile, strict, sql = false)]
fn hlculid_backfill_update(
    tbl: pg_sys::Oid,
    id_column: &str,
    tableoids: Array<'_, pg_sys::Oid>,
    ctids: Array<'_, String>,
    ids: Array<'_, Hlculid>,
) -> i64 {
    let rv: Vec<Option<pg_sys::Oid>> = tableoids.iter().collect();
    let cv: Vec<Option<String>> = ctids.iter().collect();
    let iv: Vec<Option<Hlculid>> = ids.iter().collect();
    as_owner(tbl, "hlculid_backfill", || {
        // The table's and the column's names quoted by PostgreSQL (format's %s of a regclass
        // qualifies and quotes, %I quotes), under the switch's pinned path, so the name is
        // qualified whatever the caller's path was: nothing of the caller's text reaches the
        // query unquoted. The name as it is now (other sessions' catalog changes taken in
        // first: a rename of the schema moves it).
        // SAFETY: what any new lock does: reads the invalidation queue.
        unsafe { pg_sys::AcceptInvalidationMessages() };
        let update = Spi::get_one_with_args::<String>(
            "SELECT pg_catalog.format('WITH f AS (UPDATE %s t SET %I = u.id \
             FROM (SELECT * FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2::pg_catalog.tid[]), pg_catalog.unnest($3)) u(r, c, id) ORDER BY 1, 2) u \
             WHERE t.tableoid OPERATOR(pg_catalog.=) u.r AND t.ctid OPERATOR(pg_catalog.=) u.c \
             AND t.%I IS NULL RETURNING 1) SELECT pg_catalog.count(*) FROM f', \
             $1::pg_catalog.regclass, $2, $2)",
            &[tbl.into(), id_column.into()],
        )
        .ok()
        .flatten()
        .unwrap_or_else(|| UserError::new(Condition::Internal, "hlculid_backfill_update: no query").raise());
        // run only if the name still gives the table when parsed (a schema's owner could put
        // another relation in its place meanwhile: src/base/read_guard.rs)
        crate::base::read_guard::arm(
            tbl,
            std::ffi::CString::new(update.as_str()).unwrap_or_default(),
        );
        let filled = Spi::connect_mut(|client| {
            client
                .update(&update, None, &[rv.into(), cv.into(), iv.into()])?
                .first()
                .get_one::<i64>()
        })
        .unwrap_or_else(|e| UserError::new(Condition::Internal, format!("hlculid: {e}")).raise());
        crate::base::read_guard::disarm();
        filled.unwrap_or(0)
    })
}
