//! Reading the fields of an id and building ids from fields or times: the extractors,
//! `hlculid_from_parts`, and the per-millisecond bounds used for time-range index scans (the
//! time conversions themselves are [`crate::types::timestamps`]').

use crate::base::errors::{Condition, UserError};
use crate::types::datum::Hlculid;
use crate::types::record;
use crate::types::timestamps::{self, ms_to_ts, ts_to_ms};
use hlculid_core::time::unix_ms_to_pg_us;
use hlculid_core::{Field, Id, Parts};
use pgrx::prelude::*;

/// `bound` (`Id::min_of_ms` or `Id::max_of_ms`) of the millisecond containing `ts`.
fn ms_bound(ts: TimestampWithTimeZone, bound: fn(u64) -> Option<Id>) -> Hlculid {
    Hlculid(timestamps::with_ms(ts, &timestamps::HLCULID, bound))
}

/// The embedded time, to the millisecond.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_ts(id: Hlculid) -> TimestampWithTimeZone {
    ms_to_ts(id.0.ms())
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_counter(id: Hlculid) -> i32 {
    id.0.counter() as i32
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_publisher(id: Hlculid) -> i32 {
    id.0.publisher() as i32
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_random(id: Hlculid) -> i64 {
    id.0.random() as i64
}

/// 22003 for a field of an id given out of its range, showing the value given.
pub(crate) fn part_out_of_range(field: Field, shown: String) -> ! {
    UserError::new(
        Condition::FieldOutOfRange,
        format!("hlculid {} {shown} is out of range", field.name()),
    )
    .detail(format!(
        "The {} field must be between {}.",
        field.name(),
        field.range().replacen(" to ", " and ", 1)
    ))
    .raise()
}

fn u_part(v: i64, field: Field) -> u64 {
    u64::try_from(v).unwrap_or_else(|_| part_out_of_range(field, v.to_string()))
}

/// Builds an id from its fields. The time is truncated to the millisecond.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_from_parts(
    ts: TimestampWithTimeZone,
    counter: i32,
    publisher: i32,
    random: i64,
) -> Hlculid {
    let ms = ts_to_ms(ts);
    let parts = Parts {
        ms,
        counter: u_part(counter.into(), Field::Counter) as u32,
        publisher: u_part(publisher.into(), Field::Publisher) as u32,
        random: u_part(random, Field::Random),
    };
    match Id::from_parts(parts) {
        Ok(id) => Hlculid(id),
        Err(field) => {
            let shown = match field {
                Field::Timestamp => format!("\"{ts}\""),
                Field::Counter => counter.to_string(),
                Field::Publisher => publisher.to_string(),
                Field::Random => random.to_string(),
            };
            part_out_of_range(field, shown)
        }
    }
}

/// The smallest id of the millisecond containing `ts`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_min(ts: TimestampWithTimeZone) -> Hlculid {
    ms_bound(ts, Id::min_of_ms)
}

/// The largest id of the millisecond containing `ts`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_max(ts: TimestampWithTimeZone) -> Hlculid {
    ms_bound(ts, Id::max_of_ms)
}

/// The fields of `hlculid_decode` (ts, counter, publisher, random): their widths in the record.
const DECODE_WIDTHS: [usize; 4] = [8, 4, 4, 8];

fn decode_values(id: Id) -> [i64; 4] {
    [
        unix_ms_to_pg_us(id.ms()), // every 48-bit millisecond is a valid timestamptz
        i64::from(id.counter()),
        i64::from(id.publisher()),
        id.random() as i64,
    ]
}

/// SQL `hlculid_decode(id)`: every field of an id as one record (ts, counter, publisher,
/// random), at the cost of about one extractor call.
///
/// Hand-written V1 (a SQL body returning `record` is never inlined, and ran the SQL-function
/// executor on every row): after the first call of a call site, one allocation and a copy of the
/// call site's record template ([`crate::types::record`]); nothing here can raise or panic. The first
/// call, and a call short of memory, go to the guarded [`hlculid_decode_slow`]. `extern "C"`: as
/// in [`crate::types::io::hlculid_out_wrapper`].
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null hlculid,
/// for the signature below.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_decode_fast(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one hlculid argument.
    let values = decode_values(unsafe { crate::types::io::arg_id(fcinfo) });
    // SAFETY: the result is the record of DECODE_WIDTHS the SQL signature declares.
    match unsafe { record::fast(fcinfo, &values, &DECODE_WIDTHS) } {
        Some(d) => d,
        // SAFETY: a guarded function called with our own valid fcinfo; it reports errors by
        // longjmp, which passes this frame (it holds nothing to drop).
        None => unsafe { hlculid_decode_slow(fcinfo) },
    }
}

v1_function_info!(pg_finfo_hlculid_decode_fast);

/// The guarded path of `hlculid_decode`: makes the call site's record template.
#[pg_guard]
unsafe extern "C-unwind" fn hlculid_decode_slow(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: as for hlculid_decode_fast.
    unsafe {
        let values = decode_values(crate::types::io::arg_id(fcinfo));
        record::form(fcinfo, &values, &DECODE_WIDTHS)
    }
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_decode(id hlculid,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4, OUT random int8)
RETURNS record
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_decode_fast';

CREATE CAST (hlculid AS timestamptz) WITH FUNCTION hlculid_ts(hlculid);
"#,
    name = "hlculid_decode",
    requires = ["hlculid_type", hlculid_ts],
);
