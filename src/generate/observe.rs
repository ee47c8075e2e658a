//! `hlculid_observe()`: the HLC receive rule.

use crate::clock::durable;
use crate::types::datum::Hlculid;
use pgrx::prelude::*;

/// Every id generated here afterwards sorts after `remote`. An id at or below the server's own
/// clock changes nothing and is always accepted; one above it is refused (22023, clock
/// unchanged) when it lies further ahead of the wall clock than `hlculid.max_clock_skew`.
#[pg_extern(volatile, parallel_safe, strict)]
fn hlculid_observe(remote: Hlculid) {
    durable::observe(remote.0);
}
