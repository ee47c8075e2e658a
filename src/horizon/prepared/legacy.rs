//! 0.4.0 kept a floor file instead of holds (`hlculid.horizon`): when it is there, the first
//! reader after the start holds every prepared transaction without a hold at that floor, gives
//! each a state file, and removes the floor file.

use super::table::{self, Header};
use super::{files, xids};
use crate::base::errors::{Condition, UserError};
use pgrx::prelude::*;
use std::sync::atomic::Ordering;

/// 0.4.0 to 0.5.0 with prepared transactions pending: those without a hold of their own hold
/// at 0.4.0's persisted floor (every horizon it returned was at or below their ids), each gets a
/// state file, and the floor file goes. Never during recovery; an error is raised, never read as
/// "none", and nothing is latched until it succeeded.
pub(super) fn carry_over(h: &'static Header) {
    // SAFETY: a plain read of the shared recovery state.
    if h.legacy.load(Ordering::Acquire) == 0 || unsafe { pg_sys::RecoveryInProgress() } {
        return;
    }
    let floor = files::legacy_floor();
    let xids: Vec<i64> = Spi::connect(|client| {
        client
            .select(
                "SELECT p.transaction::pg_catalog.text::pg_catalog.int8 \
                 FROM pg_catalog.pg_prepared_xacts p",
                None,
                &[],
            )
            .map(|rows| {
                rows.filter_map(|r| r.get::<i64>(1).ok().flatten())
                    .collect()
            })
    })
    .unwrap_or_else(|e| {
        UserError::new(
            Condition::Internal,
            format!("hlculid could not list the prepared transactions: {e}"),
        )
        .raise()
    });
    // SAFETY: reads the shared next-xid counter under its lock.
    let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value;
    let held: Vec<u64> = table::holds(h)
        .iter()
        .map(|e| e.full_xid.load(Ordering::Acquire))
        .collect();
    for xid in xids {
        let full = xids::widen(next, xid as u32);
        if !held.contains(&full) {
            table::put(full, floor, 0);
            files::write_file(full, floor);
        }
    }
    files::remove_legacy_floor();
    h.legacy.store(0, Ordering::Release);
}
