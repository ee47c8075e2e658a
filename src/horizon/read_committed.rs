//! The one READ COMMITTED rule of the functions that take a horizon or a watermark and of the
//! readers that take one. A REPEATABLE READ or SERIALIZABLE transaction reads one snapshot, taken
//! at its first statement, which may predate the bound: a row committed in between below the
//! bound is not in it, and a cursor that moves past it loses it for good. One check, called by
//! the Rust functions directly (src/horizon/server.rs) and by the PL/pgSQL ones through
//! `hlculid_require_read_committed` (sql/src/readers.sql, sql/src/cluster.sql). READ UNCOMMITTED
//! passes: PostgreSQL runs it as READ COMMITTED, each statement with its own snapshot.

use crate::base::errors::{Condition, UserError};
use pgrx::prelude::*;

/// 0A000 naming the function `caller` (`hlculid_horizon`, written `hlculid_horizon()` in the
/// message) when the transaction uses one snapshot throughout (PostgreSQL's
/// `IsolationUsesXactSnapshot()`: REPEATABLE READ or SERIALIZABLE).
pub fn require(caller: Option<&str>) {
    // SAFETY: XactIsoLevel is the backend's setting, read on its thread.
    if unsafe { pg_sys::XactIsoLevel } < pg_sys::XACT_REPEATABLE_READ as i32 {
        return;
    }
    let what = caller.map_or_else(|| "this function".to_string(), |c| format!("{c}()"));
    UserError::new(
        Condition::HorizonInSnapshotTransaction,
        format!("{what} cannot be used in a REPEATABLE READ or SERIALIZABLE transaction"),
    )
    .detail("The transaction reads one snapshot, taken at its first statement: a transaction that commits after it with ids below the horizon or watermark is not in it, and a read below that bound would pass its rows for good.")
    .hint("Take the horizon or watermark before BEGIN, in its own statement, and read below it in the transaction; or read at READ COMMITTED.")
    .raise()
}

/// SQL `hlculid_require_read_committed(caller)`: [`require`], for the PL/pgSQL readers and for a
/// reader of the user's own (NULL: the message says "this function").
#[pg_extern(volatile, parallel_safe)]
fn hlculid_require_read_committed(caller: Option<&str>) {
    require(caller);
}
