//! `hlculid_clock_recover()`: the way out when the high-water mark file was damaged (or lost with
//! a new data directory). Superuser only.

use crate::base::errors::{Condition, UserError};
use crate::base::settings;
use crate::clock::durable::{self, now_ms};
use crate::types::datum::Hlculid;
use crate::types::timestamps::ms_to_ts;
use pgrx::prelude::*;

/// Afterwards every id this server issues sorts after `floor`, the largest id known to have been
/// issued (NULL when none was). Writes a new mark and returns it. A floor further ahead of the
/// wall clock than `hlculid.max_clock_skew` is refused: a foreign value (a random uuid cast in,
/// an id from a server with a broken clock) would move this server's clock into the future.
#[pg_extern(volatile, parallel_unsafe)]
fn hlculid_clock_recover(floor: Option<Hlculid>) -> TimestampWithTimeZone {
    recover(floor, false)
}

/// The same, with `allow_future => true` for a floor that really lies ahead: this server's
/// own ids from a time its clock ran ahead.
#[pg_extern(volatile, parallel_unsafe, name = "hlculid_clock_recover")]
fn hlculid_clock_recover_allowing(
    floor: Option<Hlculid>,
    allow_future: Option<bool>,
) -> TimestampWithTimeZone {
    recover(floor, allow_future.unwrap_or(false))
}

fn recover(floor: Option<Hlculid>, allow_future: bool) -> TimestampWithTimeZone {
    // SAFETY: superuser() reads the current role's attributes; a backend always has one here.
    if !unsafe { pg_sys::superuser() } {
        UserError::new(
            Condition::NotSuperuser,
            "permission denied to recover hlculid's clock",
        )
        .detail("Only a superuser may set the floor of the server's clock.")
        .raise();
    }
    let skew = settings::max_clock_skew_ms();
    let ahead_ms = floor.map_or(0, |f| f.0.ms().saturating_sub(now_ms()));
    if ahead_ms > skew && !allow_future {
        UserError::new(
            Condition::InvalidParameter,
            format!(
                "hlculid_clock_recover floor {} is {ahead_ms} ms ahead of the local clock",
                floor.map_or_else(String::new, |f| f.0.to_string())
            ),
        )
        .detail(format!("A floor further ahead than hlculid.max_clock_skew ({skew} ms) would move this server's clock into the future; it is most likely a value this server did not issue (a random uuid cast to hlculid, an id from a server with a wrong clock). The clock was left unchanged."))
        .hint("Take the largest id at or below now() + hlculid.max_clock_skew (see \"Recovering the clock\" in hlculid's docs/troubleshooting.md), or, if this server really issued that id, call hlculid_clock_recover(id, allow_future => true).")
        .raise();
    }
    let mark = durable::recover(floor.map_or(0, |f| f.0.logical()));
    ms_to_ts(mark >> 16)
}

// Checked in the function too; revoked so that \df+ and has_function_privilege say so.
extension_sql!(
    r#"
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid) FROM PUBLIC;
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid, boolean) FROM PUBLIC;
"#,
    name = "hlculid_clock_recover_revoke",
    requires = [hlculid_clock_recover, hlculid_clock_recover_allowing],
);
