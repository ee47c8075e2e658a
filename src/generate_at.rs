//! `hlculid_generate_at()`: ids for a given time, for backfills. The shared clock is not touched.

use crate::backend_local::{random48, BackendLocal};
use crate::datum::Hlculid;
use crate::errors::{Condition, UserError};
use crate::extract::{part_out_of_range, ts_to_ms};
use crate::server_clock;
use crate::{settings, shmem};
use hlculid_core::clock::{backfill_batch, Backfill};
use hlculid_core::durable::Refusal;
use hlculid_core::{Field, Id};
use pgrx::prelude::*;
use std::collections::HashMap;

static BACKFILL: BackendLocal<Backfill> = BackendLocal::new(Backfill::new());

/// Consecutive calls of one backend for the same millisecond give increasing ids (the counter
/// counts up, carrying into the next millisecond when full). A call for another millisecond in
/// between starts over at counter 0, so ids of a millisecond made in separate runs are ordered by
/// their random bits only (remembering every millisecond ever backfilled would cost unbounded
/// memory). The state is this backend's: PARALLEL RESTRICTED, so a parallel worker never makes
/// ids beside the leader's from a state of its own.
#[pg_extern(volatile, parallel_restricted, strict)]
fn hlculid_generate_at(ts: TimestampWithTimeZone) -> Hlculid {
    shmem::clock(); // same prerequisite as hlculid_generate(): the publisher id is a preload setting
    let ms = ts_to_ms(ts);
    // SAFETY: the backend's thread; the closure only steps the backfill clock.
    let logical = unsafe { BACKFILL.with(|b| b.next(ms)) };
    let Some(logical) = logical else {
        server_clock::raise(Refusal::Exhausted, None)
    };
    Hlculid(Id::from_logical(
        logical,
        settings::publisher().0,
        random48(),
    ))
}

/// `hlculid_backfill_ids(ts, publisher, held)`: the ids of one batch of a backfill, in order, for times in
/// ascending order, of the given publisher. The values follow the clock's send rule
/// ([`hlculid_core::clock::backfill_batch`]): increasing, each in its own time's millisecond
/// unless a full counter carried, and above `held`'s largest id of this publisher in each
/// millisecond they land in (the ids already in the table; others are ignored). Nothing is
/// remembered between calls and the shared clock is not touched: a caller that must not repeat
/// ids across calls passes what earlier calls gave in `held`.
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_backfill_ids(
    ts: Array<'_, TimestampWithTimeZone>,
    publisher: i32,
    held: default!(Array<'_, Hlculid>, "'{}'"),
) -> SetOfIterator<'static, Hlculid> {
    let publisher = u16::try_from(publisher)
        .unwrap_or_else(|_| part_out_of_range(Field::Publisher, publisher.to_string()));
    let mut ms = Vec::with_capacity(ts.len());
    for t in ts.iter() {
        let Some(t) = t else {
            UserError::new(
                Condition::InvalidParameter,
                "the times of hlculid_backfill_ids must not be null",
            )
            .raise()
        };
        let m = ts_to_ms(t);
        if ms.last().is_some_and(|&prev| m < prev) {
            UserError::new(
                Condition::InvalidParameter,
                "the times of hlculid_backfill_ids must be in ascending order",
            )
            .raise()
        }
        ms.push(m);
    }
    // the largest held value of each millisecond, of this publisher
    let mut top: HashMap<u64, u64> = HashMap::new();
    for id in held.iter().flatten() {
        if id.0.publisher() == u32::from(publisher) {
            let l = id.0.logical();
            let e = top.entry(l >> 16).or_insert(l);
            *e = (*e).max(l);
        }
    }
    let Some(values) = backfill_batch(&ms, |m| top.get(&m).copied()) else {
        UserError::new(
            Condition::TimeOutOfRange,
            "hlculid_backfill ran out of ids at the end of hlculid's time range",
        )
        .detail("The counter of the last millisecond, 10889-08-02 05:31:50.655+00, is full.")
        .raise()
    };
    // a set, not an array: an array's element type is looked up by name, through the caller's
    // search_path (the backfill runs with pg_catalog's only)
    SetOfIterator::new(
        values
            .into_iter()
            .map(move |l| Hlculid(Id::from_logical(l, publisher, random48()))),
    )
}
