//! bigint ids: `[0][42-bit Unix ms][11-bit counter][10-bit publisher]` from the server's one
//! clock (the same values, bound, mark and observe as 128-bit ids), their fields and bounds, and
//! the conversions between the two widths. No function here overloads a 128-bit name on
//! `bigint`, so `hlculid_ts('...')` with an untyped literal keeps resolving.

use crate::base::backend_local::BackendLocal;
use crate::base::errors::{Condition, UserError};
use crate::base::settings;
use crate::clock::durable;
use crate::clock::shared;
use crate::horizon::slots;
use crate::types::datum::Hlculid;
use crate::types::record;
use crate::types::timestamps::{self, ms_to_ts, Form};
use hlculid_core::bigint::{self, BigId, BigIdError};
use hlculid_core::clock::nth_value;
use hlculid_core::clock::{ClockError, Tick};
use hlculid_core::time::unix_ms_to_pg_us;
use hlculid_core::Field;
use pgrx::prelude::*;

const FORM: Form = Form {
    name: "a bigint id",
    subject: "A bigint id",
    range: "bigint ids run from 1970-01-01 00:00:00+00 to 2109-05-15 07:35:11.103+00.",
};

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
    if shared::preloaded() && slots::hold_fast() {
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
        None => durable::take_batch(1, bigint::COUNTER_VALUES),
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
        durable::take_batch_for("hlculid_generate_bigint_n", n, bigint::COUNTER_VALUES).logical;
    (0..n as u64)
        .map(|i| to_bigint(nth_value(first, i, bigint::COUNTER_VALUES), publisher))
        .collect()
}

fn big(v: i64) -> BigId {
    BigId::from_i64(v)
        .unwrap_or_else(|_| out_of_range(v, "A bigint id is never negative (its top bit is zero)."))
}

/// 22003 for a bigint that is no bigint id (or masked bigint id), saying why in `detail`.
pub fn out_of_range(v: i64, detail: &str) -> ! {
    UserError::new(
        Condition::FieldOutOfRange,
        format!("bigint id {v} is out of range"),
    )
    .detail(detail)
    .raise()
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_bigint_ts(id: i64) -> TimestampWithTimeZone {
    ms_to_ts(big(id).ms())
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_bigint_counter(id: i64) -> i32 {
    big(id).counter() as i32
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_bigint_publisher(id: i64) -> i32 {
    big(id).publisher() as i32
}

fn bound(ts: TimestampWithTimeZone, f: fn(u64) -> Result<BigId, BigIdError>) -> i64 {
    timestamps::with_ms(ts, &FORM, |ms| f(ms).ok()).to_i64()
}

/// The smallest bigint id of the millisecond containing `ts`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_bigint_min(ts: TimestampWithTimeZone) -> i64 {
    bound(ts, BigId::min_of_ms)
}

/// The largest bigint id of the millisecond containing `ts`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_bigint_max(ts: TimestampWithTimeZone) -> i64 {
    bound(ts, BigId::max_of_ms)
}

/// The 128-bit id with the bigint id's time, counter and publisher, random bits 0.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_from_bigint(id: i64) -> Hlculid {
    Hlculid(big(id).to_id())
}

/// The bigint id with the 128-bit id's time, counter and publisher (its random bits are
/// dropped); 22003 when one does not fit.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_to_bigint(id: Hlculid) -> i64 {
    match BigId::from_id(id.0) {
        Ok(b) => b.to_i64(),
        Err(e) => {
            let (field, value) = match e {
                BigIdError::OutOfRange(Field::Timestamp) => {
                    ("timestamp", format!("\"{}\"", ms_to_ts(id.0.ms())))
                }
                BigIdError::OutOfRange(Field::Counter) => ("counter", id.0.counter().to_string()),
                _ => ("publisher", id.0.publisher().to_string()),
            };
            UserError::new(
                Condition::FieldOutOfRange,
                format!(
                    "hlculid {} does not fit a bigint id: its {field} {value} is out of range",
                    id.0
                ),
            )
            .detail(format!(
                "A bigint id's {field} must be between {}.",
                e.range().replacen(" to ", " and ", 1)
            ))
            .raise()
        }
    }
}

/// The fields of `hlculid_bigint_decode` (ts, counter, publisher): their widths in the record.
const DECODE_WIDTHS: [usize; 3] = [8, 4, 4];

fn decode_values(b: BigId) -> [i64; 3] {
    [
        unix_ms_to_pg_us(b.ms()), // every 42-bit millisecond is a valid timestamptz
        i64::from(b.counter()),
        i64::from(b.publisher()),
    ]
}

/// SQL `hlculid_bigint_decode(id)`: every field of a bigint id as one record. Hand-written V1
/// like [`crate::types::extract::hlculid_decode_fast`]; a negative id (22003) goes to the guarded path,
/// which raises what `hlculid_bigint_ts` raises.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null bigint,
/// for the signature below.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_bigint_decode_fast(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one bigint (by value) argument.
    let v = unsafe { pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0) }.value() as i64;
    if let Ok(b) = BigId::from_i64(v) {
        // SAFETY: the result is the record of DECODE_WIDTHS the SQL signature declares.
        if let Some(d) = unsafe { record::fast(fcinfo, &decode_values(b), &DECODE_WIDTHS) } {
            return d;
        }
    }
    // SAFETY: as in hlculid_decode_fast.
    unsafe { hlculid_bigint_decode_slow(fcinfo) }
}

v1_function_info!(pg_finfo_hlculid_bigint_decode_fast);

/// The guarded path of `hlculid_bigint_decode`: the errors, and the call site's record template.
#[pg_guard]
unsafe extern "C-unwind" fn hlculid_bigint_decode_slow(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: as for hlculid_bigint_decode_fast.
    unsafe {
        let v = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0).value() as i64;
        record::form(fcinfo, &decode_values(big(v)), &DECODE_WIDTHS)
    }
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_bigint_decode(id bigint,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4)
RETURNS record
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_bigint_decode_fast';
"#,
    name = "hlculid_bigint_decode",
);
