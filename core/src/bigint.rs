//! The 64-bit layout: `[0][42-bit Unix ms][11-bit counter][10-bit publisher]`, a positive
//! `bigint` (Java `long`) that sorts by (time, counter, publisher) like the 128-bit id, with the
//! same milliseconds. It is made from the same clock as 128-bit ids (a clock value whose counter
//! does not fit in 11 bits is skipped: the batch moves to the next millisecond), so the two
//! widths from one server are ordered against each other.

use crate::layout::{Field, Id};
use std::fmt;
use std::str::FromStr;

/// Counter values a millisecond: 2048 bigint ids a millisecond per publisher.
pub const COUNTER_VALUES: u64 = 1 << 11;
/// Largest publisher a bigint id holds (10 bits).
pub const MAX_PUBLISHER: u32 = (1 << 10) - 1;
/// Largest millisecond a bigint id holds (42 bits): 2109-05-15 07:35:11.103 UTC.
pub const MAX_MS: u64 = (1 << 42) - 1;

/// One bigint id. Always positive (bit 63 is zero).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BigId(i64);

/// Why a value or a set of fields is not a bigint id.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BigIdError {
    /// A negative bigint: bit 63 of an id is zero.
    Negative,
    /// A field does not fit: its name and the range it must be in.
    OutOfRange(Field),
}

impl BigIdError {
    /// The range of the field that does not fit, for messages.
    pub fn range(self) -> &'static str {
        match self {
            BigIdError::Negative => "0 to 9223372036854775807",
            BigIdError::OutOfRange(Field::Timestamp) => {
                "1970-01-01 00:00:00+00 to 2109-05-15 07:35:11.103+00"
            }
            BigIdError::OutOfRange(Field::Counter) => "0 to 2047",
            BigIdError::OutOfRange(Field::Publisher) => "0 to 1023",
            BigIdError::OutOfRange(Field::Random) => "0 (a bigint id has no random bits)",
        }
    }
}

impl BigId {
    /// The bigint as stored; `Negative` for a value with bit 63 set.
    pub fn from_i64(v: i64) -> Result<BigId, BigIdError> {
        if v < 0 {
            Err(BigIdError::Negative)
        } else {
            Ok(BigId(v))
        }
    }

    pub fn to_i64(self) -> i64 {
        self.0
    }

    /// From fields; each must fit (ms 42 bits, counter 11, publisher 10).
    pub fn from_fields(ms: u64, counter: u64, publisher: u32) -> Result<BigId, BigIdError> {
        if ms > MAX_MS {
            return Err(BigIdError::OutOfRange(Field::Timestamp));
        }
        if counter >= COUNTER_VALUES {
            return Err(BigIdError::OutOfRange(Field::Counter));
        }
        if publisher > MAX_PUBLISHER {
            return Err(BigIdError::OutOfRange(Field::Publisher));
        }
        Ok(BigId(
            ((ms << 21) | (counter << 10) | u64::from(publisher)) as i64,
        ))
    }

    /// From a clock value (`ms << 16 | counter`) and a publisher.
    pub fn from_logical(logical: u64, publisher: u32) -> Result<BigId, BigIdError> {
        BigId::from_fields(logical >> 16, logical & 0xFFFF, publisher)
    }

    pub fn ms(self) -> u64 {
        (self.0 as u64) >> 21
    }

    pub fn counter(self) -> u32 {
        ((self.0 as u64 >> 10) & (COUNTER_VALUES - 1)) as u32
    }

    pub fn publisher(self) -> u32 {
        (self.0 as u64 & u64::from(MAX_PUBLISHER)) as u32
    }

    /// The clock value it was made from.
    pub fn logical(self) -> u64 {
        self.ms() << 16 | u64::from(self.counter())
    }

    /// The smallest bigint id of clock value `logical` or later (a counter past what a bigint
    /// holds moves to the next millisecond's first): every bigint id of a clock value below
    /// `logical` sorts below it. What a horizon (an exclusive clock value) is for bigint ids;
    /// `None` past the bigint range.
    pub fn horizon_bound(logical: u64) -> Option<BigId> {
        let (ms, counter) = (logical >> 16, logical & 0xFFFF);
        if counter >= COUNTER_VALUES {
            BigId::min_of_ms(ms + 1).ok()
        } else {
            BigId::from_fields(ms, counter, 0).ok()
        }
    }

    /// The smallest and largest bigint id of a millisecond, for time-window queries.
    pub fn min_of_ms(ms: u64) -> Result<BigId, BigIdError> {
        BigId::from_fields(ms, 0, 0)
    }

    pub fn max_of_ms(ms: u64) -> Result<BigId, BigIdError> {
        BigId::from_fields(ms, COUNTER_VALUES - 1, MAX_PUBLISHER)
    }

    /// The 128-bit id with the same time, counter and publisher, and random bits 0: it sorts
    /// among the server's 128-bit ids where this id's clock value lies.
    pub fn to_id(self) -> Id {
        Id::from_logical(self.logical(), self.publisher() as u16, 0)
    }

    /// The bigint id with the 128-bit id's time, counter and publisher (its random bits are
    /// dropped); an error when a field does not fit the narrower layout.
    pub fn from_id(id: Id) -> Result<BigId, BigIdError> {
        BigId::from_fields(id.ms(), u64::from(id.counter()), id.publisher())
    }
}

/// The decimal form, as PostgreSQL prints a `bigint` (and as JSON carries a bigint id: a string,
/// since doubles, JavaScript's numbers, hold integers exactly only up to 2^53).
impl fmt::Display for BigId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Why a string is not a bigint id's decimal form. `Display` gives a sentence.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ParseBigIdError {
    Empty,
    /// A byte that is not an ASCII digit, at this byte offset (signs, white space, `_`, `0x`,
    /// non-ASCII digits).
    Character {
        at: usize,
    },
    /// A zero before other digits: the form is canonical, one string per id, so that ids kept
    /// as strings (JavaScript, JSON) are equal exactly when their strings are.
    LeadingZero,
    /// A minus sign before digits: an id is never negative.
    Negative,
    /// More than 9223372036854775807.
    TooLarge,
}

impl fmt::Display for ParseBigIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseBigIdError::Empty => f.write_str("A bigint id cannot be empty."),
            ParseBigIdError::Character { at } => write!(
                f,
                "A bigint id is written in decimal digits only; byte {at} is not one."
            ),
            ParseBigIdError::LeadingZero => {
                f.write_str("A bigint id is written without leading zeros.")
            }
            ParseBigIdError::Negative => f.write_str("A bigint id is never negative."),
            ParseBigIdError::TooLarge => f.write_str("A bigint id is at most 9223372036854775807."),
        }
    }
}

impl std::error::Error for ParseBigIdError {}

/// Exactly the canonical decimal form: ASCII digits, no sign, no white space, no leading zero.
impl FromStr for BigId {
    type Err = ParseBigIdError;

    fn from_str(s: &str) -> Result<BigId, ParseBigIdError> {
        let digits = match s.as_bytes() {
            [] => return Err(ParseBigIdError::Empty),
            [b'-', rest @ ..] if !rest.is_empty() && rest.iter().all(u8::is_ascii_digit) => {
                return Err(ParseBigIdError::Negative)
            }
            d => d,
        };
        if let Some(at) = digits.iter().position(|b| !b.is_ascii_digit()) {
            return Err(ParseBigIdError::Character { at });
        }
        if digits.len() > 1 && digits[0] == b'0' {
            return Err(ParseBigIdError::LeadingZero);
        }
        let mut v: i64 = 0;
        for &b in digits {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(b - b'0')))
                .ok_or(ParseBigIdError::TooLarge)?;
        }
        Ok(BigId(v))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_horizon_bound_sits_between_the_ids_below_and_above_the_horizon() {
        let ms = 1_700_000_000_000u64;
        let big = |ms: u64, c: u64| BigId::from_fields(ms, c, MAX_PUBLISHER).unwrap().to_i64();
        let b = BigId::horizon_bound((ms << 16) | 5).unwrap().to_i64();
        assert!(big(ms, 4) < b && b <= big(ms, 5) - 1023);
        // a counter past what a bigint holds: the next millisecond's first id is the bound
        let b = BigId::horizon_bound((ms << 16) | 3000).unwrap().to_i64();
        assert!(big(ms, 2047) < b && b == big(ms + 1, 0) - 1023);
        assert_eq!(BigId::horizon_bound(((MAX_MS + 1) << 16) | 1), None);
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fields_round_trip_at_the_edges() {
        for (ms, c, p) in [(0, 0, 0), (MAX_MS, 2047, 1023), (1_700_000_000_000, 5, 42)] {
            let b = BigId::from_fields(ms, c, p).unwrap();
            assert!(b.to_i64() >= 0);
            assert_eq!((b.ms(), u64::from(b.counter()), b.publisher()), (ms, c, p));
        }
        assert_eq!(
            BigId::from_fields(MAX_MS, 2047, 1023).unwrap().to_i64(),
            i64::MAX
        );
    }

    #[test]
    fn out_of_range_fields_are_named() {
        use BigIdError::OutOfRange;
        assert_eq!(
            BigId::from_fields(MAX_MS + 1, 0, 0),
            Err(OutOfRange(Field::Timestamp))
        );
        assert_eq!(
            BigId::from_fields(0, 2048, 0),
            Err(OutOfRange(Field::Counter))
        );
        assert_eq!(
            BigId::from_fields(0, 0, 1024),
            Err(OutOfRange(Field::Publisher))
        );
        assert_eq!(BigId::from_i64(-1), Err(BigIdError::Negative));
        // 2109-05-15 07:35:11.103 UTC is the last millisecond
        assert_eq!(MAX_MS, 4_398_046_511_103);
    }

    #[test]
    fn decimal_form_is_canonical_and_strict() {
        let max = BigId::from_fields(MAX_MS, 2047, 1023).unwrap();
        assert_eq!(max.to_string(), "9223372036854775807");
        assert_eq!("9223372036854775807".parse(), Ok(max));
        assert_eq!("0".parse(), Ok(BigId(0)));
        use ParseBigIdError::*;
        for (input, err) in [
            ("", Empty),
            ("9223372036854775808", TooLarge),
            ("99999999999999999999999", TooLarge),
            ("-1", Negative),
            ("-0", Negative),
            ("007", LeadingZero),
            ("00", LeadingZero),
            ("+1", Character { at: 0 }),
            (" 1", Character { at: 0 }),
            ("1 ", Character { at: 1 }),
            ("1_000", Character { at: 1 }),
            ("0x10", Character { at: 1 }),
            ("1e3", Character { at: 1 }),
            ("-", Character { at: 0 }),
            ("\u{0661}", Character { at: 0 }), // ARABIC-INDIC DIGIT ONE
        ] {
            assert_eq!(input.parse::<BigId>(), Err(err), "{input:?}");
        }
    }

    proptest! {
        #[test]
        fn decimal_round_trips(v in 0..=i64::MAX) {
            let b = BigId::from_i64(v).unwrap();
            prop_assert_eq!(b.to_string(), v.to_string());
            prop_assert_eq!(b.to_string().parse::<BigId>(), Ok(b));
        }

        #[test]
        fn order_is_the_order_of_time_counter_publisher(
            a in (0..=MAX_MS, 0..COUNTER_VALUES, 0..=MAX_PUBLISHER),
            b in (0..=MAX_MS, 0..COUNTER_VALUES, 0..=MAX_PUBLISHER),
        ) {
            let x = BigId::from_fields(a.0, a.1, a.2).unwrap();
            let y = BigId::from_fields(b.0, b.1, b.2).unwrap();
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            // and the 128-bit ids they map to sort the same way, and map back
            prop_assert_eq!(x.to_id().cmp(&y.to_id()), a.cmp(&b));
            prop_assert_eq!(BigId::from_id(x.to_id()), Ok(x));
        }
    }
}
