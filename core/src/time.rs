//! Conversions between PostgreSQL `timestamptz` (microseconds since 2000-01-01 UTC, with
//! `i64::MIN`/`i64::MAX` as -infinity/infinity) and the id's 48-bit Unix milliseconds.

use crate::layout::MAX_MS;

/// Microseconds from the Unix epoch to the PostgreSQL epoch (2000-01-01).
pub const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeError {
    /// `infinity` or `-infinity`.
    Infinite,
    /// Before 1970-01-01 or after the last millisecond of the 48-bit range.
    OutOfRange,
}

/// The Unix millisecond that contains the given `timestamptz` (sub-millisecond digits are
/// truncated toward the start of the millisecond, so the result never lies after the input).
pub fn pg_us_to_unix_ms(us: i64) -> Result<u64, TimeError> {
    if us == i64::MIN || us == i64::MAX {
        return Err(TimeError::Infinite);
    }
    let unix_us = us as i128 + PG_EPOCH_OFFSET_US as i128;
    if unix_us < 0 {
        return Err(TimeError::OutOfRange);
    }
    let ms = (unix_us / 1000) as u128;
    if ms > MAX_MS as u128 {
        return Err(TimeError::OutOfRange);
    }
    Ok(ms as u64)
}

/// The `timestamptz` of a Unix millisecond. Every 48-bit millisecond fits (year 10889 is far
/// inside PostgreSQL's range).
pub fn unix_ms_to_pg_us(ms: u64) -> i64 {
    debug_assert!(ms <= MAX_MS);
    (ms.min(MAX_MS) as i64) * 1000 - PG_EPOCH_OFFSET_US
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_points() {
        assert_eq!(pg_us_to_unix_ms(-PG_EPOCH_OFFSET_US), Ok(0));
        assert_eq!(
            pg_us_to_unix_ms(-PG_EPOCH_OFFSET_US - 1),
            Err(TimeError::OutOfRange)
        );
        assert_eq!(pg_us_to_unix_ms(0), Ok(946_684_800_000));
        assert_eq!(pg_us_to_unix_ms(999), Ok(946_684_800_000));
        assert_eq!(pg_us_to_unix_ms(1000), Ok(946_684_800_001));
        assert_eq!(pg_us_to_unix_ms(i64::MAX), Err(TimeError::Infinite));
        assert_eq!(pg_us_to_unix_ms(i64::MIN), Err(TimeError::Infinite));
        let last = unix_ms_to_pg_us(MAX_MS);
        assert_eq!(pg_us_to_unix_ms(last + 999), Ok(MAX_MS));
        assert_eq!(pg_us_to_unix_ms(last + 1000), Err(TimeError::OutOfRange));
        assert_eq!(pg_us_to_unix_ms(i64::MAX - 1), Err(TimeError::OutOfRange));
        // 2022-03-25 17:25:13.466 UTC, the design example.
        assert_eq!(unix_ms_to_pg_us(0x017FC21C5E7A), 701_544_313_466_000);
    }

    proptest! {
        #[test]
        fn ms_round_trip(ms in 0..=MAX_MS) {
            prop_assert_eq!(pg_us_to_unix_ms(unix_ms_to_pg_us(ms)), Ok(ms));
        }

        #[test]
        fn truncates_within_the_ms(ms in 0..=MAX_MS, sub in 0i64..1000) {
            prop_assert_eq!(pg_us_to_unix_ms(unix_ms_to_pg_us(ms) + sub), Ok(ms));
        }
    }
}
