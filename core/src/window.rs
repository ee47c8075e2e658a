//! Time windows on ids: which milliseconds a range of times covers (so `id <@ tstzrange` is
//! exactly `id >= first id AND id <= last id`), and the fraction of a column's histogram that
//! lies in a window, interpolating inside buckets on the ids' time, as the planner's built-in
//! estimators do for numbers.

use crate::layout::{Id, MAX_MS};

/// One end of a range of times, in Unix microseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// No bound, or an infinite one on this side (`-infinity` below, `infinity` above).
    Open,
    /// The time itself is in the range.
    Inclusive(i64),
    /// The time itself is not.
    Exclusive(i64),
    /// An infinite bound on the wrong side (`infinity` below, `-infinity` above): nothing.
    Empty,
}

/// The first and last millisecond an id can have for its time to lie in the range, or `None`
/// when none can (an empty range, or one outside the ids' time range). An id's time is the start
/// of its millisecond.
pub fn ms_window(lower: End, upper: End) -> Option<(u64, u64)> {
    let first = match lower {
        End::Open => 0,
        End::Empty => return None,
        // the first millisecond whose start is at or after the bound
        End::Inclusive(us) => div_ceil(us, 1000),
        // ... strictly after it
        End::Exclusive(us) => us.div_euclid(1000) + 1,
    };
    let last = match upper {
        End::Open => MAX_MS as i64,
        End::Empty => return None,
        // the last millisecond whose start is at or before the bound
        End::Inclusive(us) => us.div_euclid(1000),
        // ... strictly before it
        End::Exclusive(us) => div_ceil(us, 1000) - 1,
    };
    let (first, last) = (first.max(0), last.min(MAX_MS as i64));
    (first <= last).then_some((first as u64, last as u64))
}

fn div_ceil(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

/// The first and last id of a window of milliseconds; for no window, a pair that no id lies
/// between (the largest id, then the smallest), so `id >= first AND id <= last` is false.
pub fn id_bounds(window: Option<(u64, u64)>) -> (Id, Id) {
    match window {
        Some((first, last)) => (
            Id::min_of_ms(first).unwrap_or(Id::MAX),
            Id::max_of_ms(last).unwrap_or(Id::MAX),
        ),
        None => (Id::MAX, Id::MIN),
    }
}

/// Where an id lies on the time axis, in milliseconds: its millisecond, plus its counter as a
/// fraction, so that ids of one busy millisecond spread over it.
pub fn position(id: Id) -> f64 {
    id.ms() as f64 + f64::from(id.counter()) / 65536.0
}

/// The fraction of a histogram (its bounds as [`position`]s, in order) below `x`, interpolating
/// linearly inside the bucket that holds `x`.
pub fn fraction_below(bounds: &[f64], x: f64) -> f64 {
    let n = bounds.len();
    if n < 2 || x <= bounds[0] {
        return 0.0;
    }
    if x >= bounds[n - 1] {
        return 1.0;
    }
    // the bucket [bounds[i], bounds[i + 1]) holding x
    let i = bounds.partition_point(|b| *b <= x) - 1;
    let width = bounds[i + 1] - bounds[i];
    let inside = if width > 0.0 {
        (x - bounds[i]) / width
    } else {
        0.5
    };
    ((i as f64 + inside) / (n - 1) as f64).clamp(0.0, 1.0)
}

/// The fraction of a histogram in a window of milliseconds (first to last, both included).
pub fn fraction_in(bounds: &[f64], window: Option<(u64, u64)>) -> f64 {
    match window {
        Some((first, last)) => (fraction_below(bounds, last as f64 + 1.0)
            - fraction_below(bounds, first as f64))
        .max(0.0),
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: i64 = 1000;

    #[test]
    fn inclusive_and_exclusive_ends_on_and_between_milliseconds() {
        use End::*;
        // [10 ms, 20 ms): ms 10 to 19
        assert_eq!(
            ms_window(Inclusive(10 * MS), Exclusive(20 * MS)),
            Some((10, 19))
        );
        // (10 ms, 20 ms]: ms 11 to 20
        assert_eq!(
            ms_window(Exclusive(10 * MS), Inclusive(20 * MS)),
            Some((11, 20))
        );
        // between milliseconds: [10.5 ms, 20.5 ms) holds the ids of ms 11 to 20
        assert_eq!(
            ms_window(Inclusive(10_500), Exclusive(20_500)),
            Some((11, 20))
        );
        assert_eq!(
            ms_window(Exclusive(10_500), Inclusive(20_500)),
            Some((11, 20))
        );
        // a window inside one millisecond holds no id's time, unless it holds its start
        assert_eq!(ms_window(Inclusive(10_100), Inclusive(10_900)), None);
        assert_eq!(
            ms_window(Inclusive(10_000), Inclusive(10_000)),
            Some((10, 10))
        );
        assert_eq!(ms_window(Inclusive(10_000), Exclusive(10_000)), None);
    }

    #[test]
    fn open_infinite_and_out_of_range_ends() {
        use End::*;
        assert_eq!(ms_window(Open, Open), Some((0, MAX_MS)));
        assert_eq!(ms_window(Empty, Open), None);
        assert_eq!(ms_window(Open, Empty), None);
        // before 1970 clamps to the first id; an upper end before 1970 holds nothing
        assert_eq!(
            ms_window(Inclusive(-5 * MS), Exclusive(3 * MS)),
            Some((0, 2))
        );
        assert_eq!(ms_window(Open, Exclusive(-1)), None);
        assert_eq!(ms_window(Open, Inclusive(0)), Some((0, 0)));
        // past the last millisecond
        let end = MAX_MS as i64 * MS;
        assert_eq!(ms_window(Inclusive(end + MS), Open), None);
        assert_eq!(
            ms_window(Inclusive(end), Inclusive(i64::MAX - 1)),
            Some((MAX_MS, MAX_MS))
        );
        assert_eq!(id_bounds(None), (Id::MAX, Id::MIN));
    }

    #[test]
    fn histogram_fractions_interpolate_inside_buckets() {
        let b = [0.0, 10.0, 20.0, 40.0];
        assert_eq!(fraction_below(&b, -1.0), 0.0);
        assert_eq!(fraction_below(&b, 5.0), 0.5 / 3.0);
        assert_eq!(fraction_below(&b, 30.0), 2.5 / 3.0);
        assert_eq!(fraction_below(&b, 40.0), 1.0);
        // a window of one ms in the first bucket: a tenth of a third
        let f = fraction_in(&b, Some((3, 3)));
        assert!((f - 1.0 / 30.0).abs() < 1e-12, "{f}");
        assert_eq!(fraction_in(&b, None), 0.0);
        assert_eq!(fraction_in(&[], Some((1, 2))), 0.0);
        // equal bounds (one busy millisecond) do not divide by zero
        assert!(fraction_below(&[1.0, 1.0, 2.0], 1.0).is_finite());
    }

    proptest! {
        #[test]
        fn an_id_is_in_the_window_exactly_when_its_time_is_in_the_range(
            ms in 0u64..10_000, lo in -2_000i64..12_000_000, len in 0i64..5_000_000,
            lo_incl: bool, hi_incl: bool,
        ) {
            let hi = lo + len;
            let lower = if lo_incl { End::Inclusive(lo) } else { End::Exclusive(lo) };
            let upper = if hi_incl { End::Inclusive(hi) } else { End::Exclusive(hi) };
            let t = ms as i64 * 1000;
            let in_range = (if lo_incl { t >= lo } else { t > lo }) && (if hi_incl { t <= hi } else { t < hi });
            let (first, last) = id_bounds(ms_window(lower, upper));
            let id = Id::from_logical(ms << 16 | 7, 3, 5);
            prop_assert_eq!(id >= first && id <= last, in_range);
        }

        #[test]
        fn fractions_are_monotonic_and_add_up(
            mut b in proptest::collection::vec(0.0f64..1e6, 2..50), x in 0.0f64..1e6, y in 0.0f64..1e6,
        ) {
            b.sort_by(|a, c| a.partial_cmp(c).unwrap());
            let (x, y) = (x.min(y), x.max(y));
            prop_assert!(fraction_below(&b, x) <= fraction_below(&b, y));
            prop_assert!((0.0..=1.0).contains(&fraction_below(&b, x)));
        }
    }
}
