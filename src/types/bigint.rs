//! bigint ids: `[0][42-bit Unix ms][11-bit counter][10-bit publisher]`, their fields and bounds,
//! and the conversions between the two widths (src/generate/bigint.rs makes them from the server's
//! clock). No function here overloads a 128-bit name on `bigint`, so `hlculid_ts('...')` with an
//! untyped literal keeps resolving.

use crate::base::errors::{Condition, UserError};
use crate::types::datum::Hlculid;
use crate::types::record;
use crate::types::timestamps::{self, ms_to_ts, Form};
use hlculid_core::bigint::{BigId, BigIdError};
use hlculid_core::time::unix_ms_to_pg_us;
use hlculid_core::Field;
use pgrx::prelude::*;

pub const FORM: Form = Form {
    name: "a bigint id",
    subject: "A bigint id",
    range: "bigint ids run from 1970-01-01 00:00:00+00 to 2109-05-15 07:35:11.103+00.",
};

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
