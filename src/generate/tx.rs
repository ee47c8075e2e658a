//! Transaction-grouped ids (Gink's muid; the outbox pattern): `hlculid_generate_tx()`,
//! `hlculid_tx(id)` and `hlculid_tx_offset(id)`.
//!
//! The first call in a transaction takes one value `(ms, counter)` of the server's clock; every
//! call in that transaction returns it with the server's publisher and, in the last 48 bits, 16
//! random bits drawn once per transaction and a 32-bit offset counting from 1. A clock value is
//! never issued twice, so the ids of one transaction are unique and sort together, in the order
//! they were made, without relying on the random bits; `hlculid_tx(id)` (offset 0) names the
//! transaction itself.
//!
//! The state is this backend's: it is dropped when the transaction commits, aborts or is
//! prepared (the library's xact callback, src/generate/xact_callbacks.rs), never at a subtransaction's end.
//! A savepoint rolled back keeps the group and the count, so no offset is issued twice and the
//! offsets only go up. PARALLEL RESTRICTED: a parallel worker has no state of its own to add to
//! the leader's group.

use crate::base::backend_local::{random48, BackendLocal};
use crate::base::errors::{Condition, UserError};
use crate::base::settings;
use crate::generate::take;
use crate::types::datum::Hlculid;
use hlculid_core::Id;
use pgrx::prelude::*;

/// The group of the current transaction: its clock value, publisher, random bits, last offset.
#[derive(Copy, Clone)]
struct Group {
    logical: u64,
    publisher: u16,
    random16: u64,
    last_offset: u32,
}

static GROUP: BackendLocal<Option<Group>> = BackendLocal::new(None);
/// Drops the group at the end of the top-level transaction (src/generate/xact_callbacks.rs). Never raises: it
/// only stores.
pub fn end_of_transaction(event: pg_sys::XactEvent::Type) {
    use pg_sys::XactEvent::*;
    if matches!(
        event,
        XACT_EVENT_COMMIT
            | XACT_EVENT_PARALLEL_COMMIT
            | XACT_EVENT_ABORT
            | XACT_EVENT_PARALLEL_ABORT
            | XACT_EVENT_PREPARE
    ) {
        // SAFETY: xact callbacks run on the backend's thread, never inside GROUP.with (no
        // function of this module can raise while it holds the state).
        unsafe { GROUP.with(|g| *g = None) };
    }
}

/// The 48 bits after the publisher: 16 random bits, then the offset.
fn low48(random16: u64, offset: u32) -> u64 {
    (random16 << 32) | u64::from(offset)
}

/// SQL `hlculid_generate_tx()`: the next id of the current transaction's group.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_generate_tx() -> Hlculid {
    // SAFETY: the backend's thread; the closure only copies.
    let group = unsafe { GROUP.with(|g| *g) };
    let mut group = match group {
        Some(g) => g,
        // Taking the value may wait or raise, so it happens outside GROUP.with; an error leaves
        // the transaction without a group and the clock untouched.
        None => Group {
            logical: take::take(1).logical,
            publisher: settings::publisher().0,
            random16: random48() & 0xFFFF,
            last_offset: 0,
        },
    };
    if group.last_offset == u32::MAX {
        UserError::new(
            Condition::TxTooManyIds,
            format!(
                "hlculid_generate_tx cannot make more than {} ids in one transaction",
                u32::MAX
            ),
        )
        .detail("The ids of a transaction share one clock value and count a 32-bit offset.")
        .hint("Commit, and continue in a new transaction: its ids form a group of their own.")
        .raise();
    }
    group.last_offset += 1;
    // SAFETY: the backend's thread; the closure only stores.
    unsafe { GROUP.with(|g| *g = Some(group)) };
    Hlculid(Id::from_logical(
        group.logical,
        group.publisher,
        low48(group.random16, group.last_offset),
    ))
}

/// SQL `hlculid_tx(id)`: the id with its offset (the low 32 bits) set to 0, which names the
/// transaction of an id made by `hlculid_generate_tx()`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_tx(id: Hlculid) -> Hlculid {
    Hlculid(Id::from_u128(id.0.to_u128() & !u128::from(u32::MAX)))
}

/// SQL `hlculid_tx_offset(id)`: the low 32 bits as a number, the offset of an id made by
/// `hlculid_generate_tx()` (1 for the transaction's first id).
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_tx_offset(id: Hlculid) -> i64 {
    (id.0.to_u128() & u128::from(u32::MAX)) as i64
}

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use super::GROUP;
    use pgrx::prelude::*;

    /// Moves the current transaction's group to `last` ids made.
    fn set_last_offset(last: u32) {
        // SAFETY: the test's backend thread; the closure only stores.
        unsafe {
            GROUP.with(|g| {
                if let Some(g) = g.as_mut() {
                    g.last_offset = last;
                }
            })
        };
    }

    #[pg_test]
    fn the_last_offset_of_a_transaction_is_u32_max() {
        Spi::run("SELECT hlculid_generate_tx()").unwrap();
        set_last_offset(u32::MAX - 1);
        let offset = Spi::get_one::<i64>("SELECT hlculid_tx_offset(hlculid_generate_tx())")
            .unwrap()
            .unwrap();
        assert_eq!(offset, i64::from(u32::MAX));
    }

    #[pg_test(
        error = "hlculid_generate_tx cannot make more than 4294967295 ids in one transaction"
    )]
    fn more_than_u32_max_ids_in_a_transaction_is_an_error() {
        Spi::run("SELECT hlculid_generate_tx()").unwrap();
        set_last_offset(u32::MAX);
        Spi::run("SELECT hlculid_generate_tx()").unwrap();
    }

    #[pg_test]
    fn the_error_is_program_limit_exceeded_and_the_group_stays() {
        Spi::run(
            "CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $$
             BEGIN EXECUTE q; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$",
        )
        .unwrap();
        let tx = Spi::get_one::<String>("SELECT hlculid_tx(hlculid_generate_tx())::text")
            .unwrap()
            .unwrap();
        set_last_offset(u32::MAX);
        let state =
            Spi::get_one::<String>("SELECT pg_temp.sqlstate_of('SELECT hlculid_generate_tx()')")
                .unwrap();
        assert_eq!(state.as_deref(), Some("54000"));
        // the failed call (in a subtransaction) left the group as it was
        set_last_offset(7);
        let (same_tx, offset) = Spi::get_two::<String, i64>(
            "SELECT hlculid_tx(i)::text, hlculid_tx_offset(i) FROM hlculid_generate_tx() i",
        )
        .unwrap();
        assert_eq!(same_tx.as_deref(), Some(tx.as_str()));
        assert_eq!(offset, Some(8));
    }
}
