//! Generating bigint ids from the server's one clock (the same values, bound, mark and observe as
//! 128-bit ids): `hlculid_generate_bigint()` and `hlculid_generate_bigint_n()`. Their type, fields
//! and conversions are src/types/bigint.rs.

use crate::base::backend_local::BackendLocal;
use crate::base::errors::{Condition, UserError};
use crate::base::process;
use crate::base::settings;
use crate::clock::durable;
use crate::clock::shared;
use crate::generate::take;
use crate::horizon::slots;
use crate::types::bigint::FORM;
use hlculid_core::bigint::{self, BigId};
use hlculid_core::clock::nth_value;
use hlculid_core::clock::{ClockError, Tick};
use pgrx::prelude::*;

/// The server's publisher id, which must fit a bigint id's 10 bits.
fn publisher() -> u32 {
    shared::clock(); // without the preload, that (55000) is what to fix first
    let (publisher, _) = settings::publisher();
    let publisher = u32::from(publisher);
    if publisher > bigint::MAX_PUBLISHER {
        UserError::new(
            Condition::PublisherTooWide,
            format!("publisher id {publisher} does not fit a bigint id"),
        )
        .detail("A bigint id holds a publisher id of 0 to 1023 (10 bits).")
        .hint("Set hlculid.publisher_id to a value from 0 to 1023 in postgresql.conf and restart the server (a derived publisher id does not fit: set one).")
        .raise();
    }
    publisher
}

/// The bigint id of a clock value, or the 22008 error past 2109.
fn to_bigint(logical: u64, publisher: u32) -> i64 {
    match BigId::from_logical(logical, publisher) {
        Ok(b) => b.to_i64(),
        Err(_) => UserError::new(
            Condition::TimeOutOfRange,
            "the clock is past the last millisecond a bigint id can hold",
        )
        .detail(FORM.range)
        .hint("Use 128-bit ids (hlculid_generate()), which run until 10889.")
        .raise(),
    }
}

/// A clock result the fast path took but could not finish with, for the slow path to use.
static PENDING: BackendLocal<Option<(u64, Result<Tick, ClockError>)>> = BackendLocal::new(None);

/// SQL `hlculid_generate_bigint()`: the next bigint id of this server, greater than every bigint
/// id it returned before, and ordered with its 128-bit ids (through `hlculid_from_bigint`).
///
/// Hand-written under the symbol pgrx would give its wrapper (the catalog is unchanged), for the
/// reason `hlculid_generate()` is: pgrx's per-call guard costs as much as the clock. The common
/// case (preloaded, a publisher that fits, a value within the reservation and the bound, no clock
/// step, a time before 2109) is one atomic step and returns the bigint by value; nothing in it can
/// raise or panic. Everything else goes to the guarded [`hlculid_generate_bigint_slow`]. `extern
/// "C"`: should that promise break, Rust aborts rather than unwind into PostgreSQL's C frames.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo`, as for any V1 function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_generate_bigint_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    if process::preloaded() && slots::hold_fast() {
        let publisher = settings::publisher_fast().map_or(u32::MAX, u32::from);
        if publisher <= bigint::MAX_PUBLISHER {
            let (now, first) = shared::clock_preloaded().tick_batch_reading(
                durable::now_ms,
                1,
                bigint::COUNTER_VALUES,
            );
            if let Ok(t) = first {
                if t.backward_step_ms.is_none() {
                    if let Ok(b) = BigId::from_logical(t.logical, publisher) {
                        return pg_sys::Datum::from(b.to_i64());
                    }
                }
            }
            // SAFETY: the backend's thread; the closure only stores.
            unsafe { PENDING.with(|p| *p = Some((now, first))) };
        }
    }
    // SAFETY: pgrx's guarded wrapper of the slow path, called with our own valid fcinfo; it
    // reports errors by longjmp, which passes this frame (it holds nothing to drop).
    unsafe { hlculid_generate_bigint_slow_wrapper(fcinfo) }
}

v1_function_info!(pg_finfo_hlculid_generate_bigint_wrapper);

/// The guarded path of `hlculid_generate_bigint()`: finishes what the fast path started.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn hlculid_generate_bigint_slow() -> i64 {
    let publisher = publisher();
    // SAFETY: the backend's thread; the closure only takes.
    let t = match unsafe { PENDING.with(|p| p.take()) } {
        Some((now, first)) => durable::settle_batch(first, now, bigint::COUNTER_VALUES),
        None => take::take_batch(1, bigint::COUNTER_VALUES),
    };
    to_bigint(t.logical, publisher)
}

extension_sql!(
    r#"
CREATE  FUNCTION "hlculid_generate_bigint"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_bigint_wrapper';
"#,
    name = "hlculid_generate_bigint",
);

/// `n` bigint ids (1 to `MAX_BATCH`, the one batch limit, which the clock enforces) from one
/// step of the clock, increasing.
#[pg_extern(volatile, parallel_restricted, strict)]
fn hlculid_generate_bigint_n(n: i32) -> Vec<i64> {
    let publisher = publisher();
    let first =
        take::take_batch_for("hlculid_generate_bigint_n", n, bigint::COUNTER_VALUES).logical;
    (0..n as u64)
        .map(|i| to_bigint(nth_value(first, i, bigint::COUNTER_VALUES), publisher))
        .collect()
}
