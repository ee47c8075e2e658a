//! The horizon: an id below which every id of this server's clock that will ever be visible
//! already is. The SQL entry points `hlculid_horizon()`, `hlculid_horizon_bigint()`,
//! `hlculid_horizon_catch_up()`, `hlculid_horizon_holds()` and `hlculid_horizon_holds_since()`, over the backends' slots
//! (src/horizon/slots.rs) and the prepared transactions' holds (src/horizon/prepared/mod.rs).
//!
//! A reader loads the clock, then scans the slots, then the holds:
//! `H = min(clock + 1, every slot, every hold)`, exclusive. H only goes up (a shared
//! `fetch_max`), and exact holds keep it so across restarts, crashes and a promotion.

use crate::base::errors::{Condition, UserError};
use crate::clock::shared;
use crate::horizon::prepared;
use crate::horizon::read_committed;
use crate::horizon::slots;
use crate::types::datum::Hlculid;
use hlculid_core::{BigId, Id};
use pgrx::prelude::*;

/// The horizon as a clock value (exclusive): no running or prepared transaction has taken a
/// value below it.
pub fn compute() -> u64 {
    if !slots::available() {
        not_available();
    }
    let mut horizon = shared::clock().current() + 1;
    for (_, lowest) in slots::held() {
        horizon = horizon.min(lowest);
    }
    // After the slots: a prepared transaction's hold is made before its slot is cleared.
    for (_, lowest, _) in prepared::live() {
        horizon = horizon.min(lowest);
    }
    slots::publish(horizon)
}

fn not_available() -> ! {
    UserError::new(
        Condition::NotPreloaded,
        "hlculid_horizon() needs the hlculid 0.4.0 library preloaded",
    )
    .detail("The horizon's slots live in shared memory, which the library allocates when the server starts with it in shared_preload_libraries.")
    .hint("Add hlculid to shared_preload_libraries and restart the server (after an upgrade of the files, restart it once).")
    .raise()
}

/// The checks of a call that takes the horizon: a primary (ids are made there), and the one READ
/// COMMITTED rule (src/horizon/read_committed.rs: the read that follows takes its own snapshot),
/// naming `caller`.
fn check_reader(caller: &str) {
    // SAFETY: plain reads of the backend's state.
    if unsafe { pg_sys::RecoveryInProgress() } {
        UserError::new(
            Condition::HorizonOnStandby,
            "hlculid_horizon() cannot be used during recovery",
        )
        .detail("A standby makes no ids; the horizon belongs to the primary that makes them.")
        .hint("On a standby, read below hlculid_watermark(): the hlculid.hlculid_horizons rows replicated from the primary vouch for the events below them.")
        .raise();
    }
    read_committed::require(Some(caller));
}

fn as_id(h: u64) -> Hlculid {
    Hlculid(Id::from_u128(u128::from(h) << 64))
}

/// SQL `hlculid_horizon()`.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon() -> Hlculid {
    check_reader("hlculid_horizon");
    as_id(compute())
}

/// SQL `hlculid_horizon_bigint()`: the horizon for bigint ids (the same clock).
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_bigint() -> i64 {
    check_reader("hlculid_horizon_bigint");
    BigId::horizon_bound(compute())
        .map(BigId::to_i64)
        .unwrap_or_else(|| {
            UserError::new(
                Condition::TimeOutOfRange,
                "the horizon is past the range of bigint ids",
            )
            .raise()
        })
}

/// SQL `hlculid_horizon_catch_up()`: moves an idle clock up to the wall clock, then returns the
/// horizon (what `hlculid_publish_horizon()` writes). The reader's checks: what it returns is a
/// horizon a caller may read below.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_catch_up() -> Hlculid {
    check_reader("hlculid_horizon_catch_up");
    // The value taken is never an id: no transaction holds it, and a horizon above it is true.
    crate::clock::durable::tick_unused();
    as_id(compute())
}

/// SQL `hlculid_horizon_holds()`: what holds the horizon back: each running transaction that
/// made or may make ids (its pid), and each prepared transaction (its xid), with the lowest id
/// it may have made.
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_holds() -> TableIterator<
    'static,
    (
        name!(pid, Option<i32>),
        name!(transaction, Option<i64>),
        name!(holds_at, Hlculid),
    ),
> {
    if !slots::available() {
        not_available();
    }
    let mut rows: Vec<_> = slots::held()
        .map(|(pid, v)| (Some(pid), None, as_id(v)))
        .collect();
    for (full_xid, lowest, _) in prepared::live() {
        rows.push((None, Some(xid32(full_xid)), as_id(lowest)));
    }
    TableIterator::new(rows)
}

/// The 32-bit xid, as pg_prepared_xacts shows it.
fn xid32(full_xid: u64) -> i64 {
    i64::from(full_xid as u32)
}

/// A slot's or a hold's time (0: unknown) as a timestamptz.
fn since_ts(since: i64) -> Option<TimestampWithTimeZone> {
    (since != 0)
        .then(|| TimestampWithTimeZone::try_from(since).ok())
        .flatten()
}

/// SQL `hlculid_horizon_holds_since()`: [`hlculid_horizon_holds`]'s rows with `since`, when the
/// holder's transaction made its first id (NULL for a prepared transaction reloaded at a start,
/// whose time was not kept): what the holders view measures `lag` from. A new function beside the
/// old one, so that a 0.5.0 catalog running this library keeps the shape it declared.
// the row's names are part of the signature pgrx reads: no type alias
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_restricted)]
fn hlculid_horizon_holds_since() -> TableIterator<
    'static,
    (
        name!(pid, Option<i32>),
        name!(transaction, Option<i64>),
        name!(holds_at, Hlculid),
        name!(since, Option<TimestampWithTimeZone>),
    ),
> {
    if !slots::available() {
        not_available();
    }
    let mut rows: Vec<_> = slots::held_since()
        .map(|h| (Some(h.pid), None, as_id(h.lowest), since_ts(h.since)))
        .collect();
    for (full_xid, lowest, since) in prepared::live() {
        rows.push((None, Some(xid32(full_xid)), as_id(lowest), since_ts(since)));
    }
    TableIterator::new(rows)
}
