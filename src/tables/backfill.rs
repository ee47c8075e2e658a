//! Converting existing tables: `hlculid_backfill` (PL/pgSQL kept in one source file,
//! sql/src/backfill.sql, which the install script takes from here and the upgrade scripts from
//! their templates) and `hlculid_backfill_ids`, the ids of one of its batches.

use crate::base::backend_local::random48;
use crate::base::errors::{Condition, UserError};
use crate::types::datum::Hlculid;
use crate::types::extract::part_out_of_range;
use crate::types::timestamps::ts_to_ms;
use hlculid_core::clock::backfill_batch;
use hlculid_core::{Field, Id};
use pgrx::prelude::*;
use std::collections::HashMap;

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

extension_sql_file!(
    "../../sql/src/backfill.sql",
    name = "hlculid_backfill",
    requires = [
        "hlculid_type",
        hlculid_backfill_ids,
        base::read_guard::hlculid_expect_reads,
        base::schema_pin::hlculid_pin_schema
    ],
);
