//! Time windows the planner understands: `id <@ tstzrange`. The operator's restriction estimator
//! reads the column's histogram and interpolates inside buckets on the ids' time (the built-in
//! inequality estimators cannot: they interpolate only for types they know, so a window narrower
//! than a bucket comes out as one row). Its planner support function turns it into index
//! conditions on the key, `id >= hlculid_range_min(r) AND id <= hlculid_range_max(r)`, exact, so
//! btree and BRIN indexes on the id serve it and no row is checked twice.
//!
//! This module holds the SQL functions and their declarations; the estimator is `estimate`, the
//! support function `support`.

mod estimate;
mod support;

use crate::types::datum::Hlculid;
use hlculid_core::time::PG_EPOCH_OFFSET_US;
use hlculid_core::window::{self, End};
use pgrx::datum::{Range, RangeBound};
use pgrx::prelude::*;

/// One end of a range of times as core's [`End`]; infinite timestamps count as open on their
/// own side and as nothing on the other.
fn end(b: &RangeBound<TimestampWithTimeZone>, lower: bool) -> End {
    let (t, inclusive) = match b {
        RangeBound::Infinite => return End::Open,
        RangeBound::Inclusive(t) => (*t, true),
        RangeBound::Exclusive(t) => (*t, false),
    };
    let us: i64 = t.into();
    match (us, lower) {
        (i64::MAX, true) | (i64::MIN, false) => End::Empty,
        (i64::MAX, false) | (i64::MIN, true) => End::Open,
        _ => {
            let unix = us.saturating_add(PG_EPOCH_OFFSET_US);
            if inclusive {
                End::Inclusive(unix)
            } else {
                End::Exclusive(unix)
            }
        }
    }
}

/// The milliseconds whose ids lie in the range (`None`: no id does).
pub(super) fn ms_window(r: &Range<TimestampWithTimeZone>) -> Option<(u64, u64)> {
    let (lower, upper) = r.as_ref()?;
    window::ms_window(end(lower, true), end(upper, false))
}

/// True when the id's time lies in the range (each bound's inclusivity respected; empty and
/// unbounded ranges handled). The SQL function behind `<@`.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_in_range(id: Hlculid, range: Range<TimestampWithTimeZone>) -> bool {
    ms_window(&range).is_some_and(|(first, last)| (first..=last).contains(&id.0.ms()))
}

/// `range @> id`: [`hlculid_in_range`] with its arguments the other way round, the commutator of
/// `<@`, planned the same way (estimator and index conditions).
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_range_contains(range: Range<TimestampWithTimeZone>, id: Hlculid) -> bool {
    hlculid_in_range(id, range)
}

/// The smallest id whose time lies in the range (the largest id when none does).
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_range_min(range: Range<TimestampWithTimeZone>) -> Hlculid {
    Hlculid(window::id_bounds(ms_window(&range)).0)
}

/// The largest id whose time lies in the range (the smallest id when none does).
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_range_max(range: Range<TimestampWithTimeZone>) -> Hlculid {
    Hlculid(window::id_bounds(ms_window(&range)).1)
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_in_range_sel(internal, oid, internal, integer) RETURNS float8
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_sel';
CREATE FUNCTION hlculid_in_range_support(internal) RETURNS internal
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_support';
CREATE FUNCTION hlculid_in_range(id hlculid, range tstzrange) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT hlculid_in_range_support
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_wrapper';
CREATE OPERATOR <@ (
    LEFTARG = hlculid,
    RIGHTARG = tstzrange,
    FUNCTION = hlculid_in_range,
    RESTRICT = hlculid_in_range_sel,
    JOIN = contjoinsel
);
"#,
    name = "hlculid_window",
    requires = ["hlculid_type", hlculid_range_min, hlculid_range_max],
);

// `tstzrange @> id` (0.5.0): in its own source, which the upgrade script includes too.
extension_sql_file!(
    "../../../sql/src/range_contains.sql",
    name = "hlculid_range_contains",
    requires = ["hlculid_window"],
);
