//! Looking inside the server's clock: `hlculid_clock()` and `hlculid_clock_bound()`.

use crate::base::settings;
use crate::clock::durable::now_ms;
use crate::clock::shared;
use crate::types::timestamps::ms_to_ts;
use hlculid_core::clock::wall_in_range;
use pgrx::prelude::*;

/// The state of this server's clock (its columns are those of 0.2.0: views on it survive).
#[pg_extern(volatile, parallel_safe)]
#[allow(clippy::type_complexity)]
fn hlculid_clock() -> TableIterator<
    'static,
    (
        name!(wall_time, Option<TimestampWithTimeZone>),
        name!(logical_time, TimestampWithTimeZone),
        name!(counter, i32),
        name!(drift_ms, Option<i64>),
        name!(publisher, i32),
        name!(publisher_source, String),
        name!(backward_jumps, i64),
        name!(overflows, i64),
        name!(observes, i64),
        name!(high_water_mark, TimestampWithTimeZone),
        name!(high_water_mark_state, String),
    ),
> {
    let s = shared::clock().stats();
    let now = now_ms();
    let (publisher, source) = settings::publisher_shown();
    let logical_ms = s.logical >> 16;
    // NULL while the system clock reads a time an id cannot hold
    let now = wall_in_range(now).then_some(now);
    TableIterator::once((
        now.map(ms_to_ts),
        ms_to_ts(logical_ms),
        (s.logical & 0xFFFF) as i32,
        now.map(|now| logical_ms as i64 - now as i64),
        publisher as i32,
        source.describe().to_string(),
        s.backward_jumps as i64,
        s.overflows as i64,
        s.observes as i64,
        ms_to_ts(s.reserved >> 16),
        match shared::mark_damage() {
            None => "ok".to_string(),
            Some(d) => format!("damaged: {}", d.describe()),
        },
    ))
}

/// The run-ahead bound: how far generation may push the clock beyond the wall clock (or beyond
/// where a restart, an observe, a recovery or a backward step put it), how far it has, and how
/// often generation waited at it.
#[pg_extern(volatile, parallel_safe)]
#[allow(clippy::type_complexity)]
fn hlculid_clock_bound() -> TableIterator<
    'static,
    (
        name!(max_run_ahead_ms, i64),
        name!(run_ahead_ms, i64),
        name!(anchor_time, Option<TimestampWithTimeZone>),
        name!(waits, i64),
    ),
> {
    let s = shared::clock().stats();
    let now = now_ms();
    let anchor_ms = s.anchor >> 16;
    let base_ms = if wall_in_range(now) {
        anchor_ms.max(now)
    } else {
        anchor_ms
    };
    TableIterator::once((
        s.max_run_ahead_ms as i64,
        ((s.logical >> 16) as i64 - base_ms as i64).max(0),
        // NULL until something anchors the clock (a new cluster's first start)
        (anchor_ms > 0).then(|| ms_to_ts(anchor_ms)),
        s.waits as i64,
    ))
}
