//! timestamptz and an id's Unix millisecond, both ways, and the one error (22008) for a time an
//! id form cannot hold: every module that takes or shows an id's time goes through here.

use crate::base::errors::{Condition, UserError};
use hlculid_core::time::{pg_us_to_unix_ms, unix_ms_to_pg_us, TimeError};
use pgrx::prelude::*;

/// An id form's time range, as errors name it.
pub struct Form {
    /// "type hlculid", "a bigint id": what the message says the time is out of range for.
    pub name: &'static str,
    /// "An hlculid", "A bigint id": the subject of the infinite-time detail.
    pub subject: &'static str,
    /// The detail for a finite time outside the range.
    pub range: &'static str,
}

pub const HLCULID: Form = Form {
    name: "type hlculid",
    subject: "An hlculid",
    range: "hlculid timestamps run from 1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00.",
};

/// `f` of the Unix millisecond of `ts`, or 22008 naming `form`'s range when `ts` is infinite,
/// outside the millisecond range, or `f` finds it outside the form's own (`None`).
pub fn with_ms<T>(ts: TimestampWithTimeZone, form: &Form, f: impl FnOnce(u64) -> Option<T>) -> T {
    match pg_us_to_unix_ms(ts.into()).and_then(|ms| f(ms).ok_or(TimeError::OutOfRange)) {
        Ok(v) => v,
        Err(e) => UserError::new(
            Condition::TimeOutOfRange,
            format!("timestamp out of range for {}: \"{ts}\"", form.name),
        )
        .detail(match e {
            TimeError::Infinite => format!("{} cannot hold an infinite timestamp.", form.subject),
            TimeError::OutOfRange => form.range.to_string(),
        })
        .raise(),
    }
}

/// The Unix millisecond of a timestamptz an hlculid can hold, or 22008.
pub fn ts_to_ms(ts: TimestampWithTimeZone) -> u64 {
    with_ms(ts, &HLCULID, Some)
}

/// The timestamptz of an id's millisecond.
pub fn ms_to_ts(ms: u64) -> TimestampWithTimeZone {
    match TimestampWithTimeZone::try_from(unix_ms_to_pg_us(ms)) {
        Ok(ts) => ts,
        // Every 48-bit millisecond lies inside PostgreSQL's range.
        Err(_) => UserError::new(
            Condition::Internal,
            "hlculid millisecond outside the timestamptz range",
        )
        .raise(),
    }
}
