//! `hlculid_generate_at()`: ids for a given time, for backfills. The shared clock is not touched.

use crate::base::backend_local::{random48, BackendLocal};
use crate::clock::durable;
use crate::clock::shared;
use crate::types::datum::Hlculid;
use crate::types::timestamps::ts_to_ms;
use hlculid_core::clock::Backfill;
use hlculid_core::mark::Refusal;
use hlculid_core::Id;
use pgrx::prelude::*;

static BACKFILL: BackendLocal<Backfill> = BackendLocal::new(Backfill::new());

/// Consecutive calls of one backend for the same millisecond give increasing ids (the counter
/// counts up, carrying into the next millisecond when full). A call for another millisecond in
/// between starts over at counter 0, so ids of a millisecond made in separate runs are ordered by
/// their random bits only (remembering every millisecond ever backfilled would cost unbounded
/// memory). The state is this backend's: PARALLEL RESTRICTED, so a parallel worker never makes
/// ids beside the leader's from a state of its own.
#[pg_extern(volatile, parallel_restricted, strict)]
fn hlculid_generate_at(ts: TimestampWithTimeZone) -> Hlculid {
    shared::clock(); // same prerequisite as hlculid_generate(): the publisher id is a preload setting
    let ms = ts_to_ms(ts);
    // SAFETY: the backend's thread; the closure only steps the backfill clock.
    let logical = unsafe { BACKFILL.with(|b| b.next(ms)) };
    let Some(logical) = logical else {
        durable::raise(Refusal::Exhausted, None)
    };
    Hlculid(Id::from_logical(
        logical,
        crate::generate::publisher().0,
        random48(),
    ))
}
