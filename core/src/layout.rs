//! The 128-bit layout: `[48-bit Unix ms][16-bit counter][16-bit publisher][48-bit random]`,
//! stored big-endian so that byte order, numeric order and sort order are one order.

use std::fmt;

/// Largest millisecond the 48-bit time field can hold (year 10889).
pub const MAX_MS: u64 = (1 << 48) - 1;
/// Largest value of the 16-bit counter and publisher fields.
pub const MAX_U16: u32 = 0xFFFF;
/// Largest value of the 48-bit random field.
pub const MAX_RANDOM: u64 = (1 << 48) - 1;

/// One id: 16 bytes, big-endian.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Id(pub [u8; 16]);

/// The four fields of an id, as plain numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub ms: u64,
    pub counter: u32,
    pub publisher: u32,
    pub random: u64,
}

/// Which field of [`Parts`] was out of its range.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Timestamp,
    Counter,
    Publisher,
    Random,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Timestamp => "timestamp",
            Field::Counter => "counter",
            Field::Publisher => "publisher",
            Field::Random => "random",
        }
    }

    /// The accepted range, for error messages.
    pub fn range(self) -> &'static str {
        match self {
            Field::Timestamp => "1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00",
            Field::Counter | Field::Publisher => "0 to 65535",
            Field::Random => "0 to 281474976710655",
        }
    }
}

impl Id {
    pub const MIN: Id = Id([0; 16]);
    pub const MAX: Id = Id([0xFF; 16]);

    #[inline]
    pub fn from_u128(v: u128) -> Id {
        Id(v.to_be_bytes())
    }

    #[inline]
    pub fn to_u128(self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// The high 64 bits, `(ms << 16) | counter`: the hybrid logical clock value of the id.
    #[inline]
    pub fn logical(self) -> u64 {
        (self.to_u128() >> 64) as u64
    }

    /// Builds an id from a logical clock value `(ms << 16) | counter`, a publisher and 48 random bits.
    #[inline]
    pub fn from_logical(logical: u64, publisher: u16, random: u64) -> Id {
        let low = ((publisher as u64) << 48) | (random & MAX_RANDOM);
        Id::from_u128(((logical as u128) << 64) | low as u128)
    }

    /// Builds an id from its fields, refusing any field outside its width.
    pub fn from_parts(p: Parts) -> Result<Id, Field> {
        if p.ms > MAX_MS {
            return Err(Field::Timestamp);
        }
        if p.counter > MAX_U16 {
            return Err(Field::Counter);
        }
        if p.publisher > MAX_U16 {
            return Err(Field::Publisher);
        }
        if p.random > MAX_RANDOM {
            return Err(Field::Random);
        }
        Ok(Id::from_logical(
            (p.ms << 16) | p.counter as u64,
            p.publisher as u16,
            p.random,
        ))
    }

    #[inline]
    pub fn ms(self) -> u64 {
        self.logical() >> 16
    }

    #[inline]
    pub fn counter(self) -> u32 {
        (self.logical() & 0xFFFF) as u32
    }

    #[inline]
    pub fn publisher(self) -> u32 {
        u16::from_be_bytes([self.0[8], self.0[9]]) as u32
    }

    #[inline]
    pub fn random(self) -> u64 {
        (self.to_u128() as u64) & MAX_RANDOM
    }

    pub fn parts(self) -> Parts {
        Parts {
            ms: self.ms(),
            counter: self.counter(),
            publisher: self.publisher(),
            random: self.random(),
        }
    }

    /// The smallest id of millisecond `ms`.
    pub fn min_of_ms(ms: u64) -> Option<Id> {
        (ms <= MAX_MS).then(|| Id::from_u128((ms as u128) << 80))
    }

    /// The largest id of millisecond `ms`.
    pub fn max_of_ms(ms: u64) -> Option<Id> {
        (ms <= MAX_MS).then(|| Id::from_u128(((ms as u128) << 80) | ((1u128 << 80) - 1)))
    }
}

impl Id {
    /// The 26-character Crockford base32 ULID of the same 128 bits.
    pub fn to_ulid(self) -> String {
        crate::text::ulid_string(self)
    }

    /// The 8-4-4-4-12 uuid form of the same 128 bits (what a `uuid` column shows).
    pub fn to_uuid_string(self) -> String {
        crate::text::uuid_string(self)
    }

    /// The id of the same 16 bytes, as stored in a `uuid` column or sent by drivers.
    #[inline]
    pub fn from_bytes(bytes: [u8; 16]) -> Id {
        Id(bytes)
    }

    #[inline]
    pub fn to_bytes(self) -> [u8; 16] {
        self.0
    }
}

impl std::str::FromStr for Id {
    type Err = crate::text::ParseError;

    /// Every text form the server accepts: canonical 12-4-4-12 hex, 32 hex digits, the
    /// 8-4-4-4-12 uuid form, or a 26-character ULID; any case.
    fn from_str(s: &str) -> Result<Id, Self::Err> {
        crate::text::parse(s.as_bytes())
    }
}

impl From<[u8; 16]> for Id {
    fn from(bytes: [u8; 16]) -> Id {
        Id(bytes)
    }
}

impl From<Id> for [u8; 16] {
    fn from(id: Id) -> [u8; 16] {
        id.0
    }
}

impl From<u128> for Id {
    fn from(v: u128) -> Id {
        Id::from_u128(v)
    }
}

impl From<Id> for u128 {
    fn from(id: Id) -> u128 {
        id.to_u128()
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::text::canonical_str(
            *self,
            &mut [0; crate::text::CANONICAL_LEN],
        ))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::text::canonical_str(
            *self,
            &mut [0; crate::text::CANONICAL_LEN],
        ))
    }
}

#[cfg(test)]
// Literals are grouped like the id's fields (12-4-4-12 hex digits).
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn design_example_fields() {
        // 017FC21C5E7A-0001-000A-AAA333333333
        let id = Id::from_u128(0x017FC21C5E7A_0001_000A_AAA333333333);
        assert_eq!(id.ms(), 0x017FC21C5E7A);
        assert_eq!(id.counter(), 1);
        assert_eq!(id.publisher(), 10);
        assert_eq!(id.random(), 0xAAA333333333);
    }

    #[test]
    fn from_parts_rejects_each_field() {
        let ok = Parts {
            ms: MAX_MS,
            counter: MAX_U16,
            publisher: MAX_U16,
            random: MAX_RANDOM,
        };
        assert_eq!(Id::from_parts(ok), Ok(Id::MAX));
        assert_eq!(
            Id::from_parts(Parts {
                ms: MAX_MS + 1,
                ..ok
            }),
            Err(Field::Timestamp)
        );
        assert_eq!(
            Id::from_parts(Parts {
                counter: 0x10000,
                ..ok
            }),
            Err(Field::Counter)
        );
        assert_eq!(
            Id::from_parts(Parts {
                publisher: 0x10000,
                ..ok
            }),
            Err(Field::Publisher)
        );
        assert_eq!(
            Id::from_parts(Parts {
                random: MAX_RANDOM + 1,
                ..ok
            }),
            Err(Field::Random)
        );
    }

    #[test]
    fn ms_bounds() {
        assert_eq!(Id::min_of_ms(0), Some(Id::MIN));
        assert_eq!(Id::max_of_ms(MAX_MS), Some(Id::MAX));
        assert_eq!(Id::min_of_ms(MAX_MS + 1), None);
        assert_eq!(Id::max_of_ms(MAX_MS + 1), None);
        let lo = Id::min_of_ms(5).unwrap();
        let hi = Id::max_of_ms(5).unwrap();
        assert_eq!(
            lo.parts(),
            Parts {
                ms: 5,
                counter: 0,
                publisher: 0,
                random: 0
            }
        );
        assert_eq!(
            hi.parts(),
            Parts {
                ms: 5,
                counter: 0xFFFF,
                publisher: 0xFFFF,
                random: MAX_RANDOM
            }
        );
        assert!(Id::max_of_ms(4).unwrap() < lo);
        assert!(hi < Id::min_of_ms(6).unwrap());
    }

    proptest! {
        #[test]
        fn parts_round_trip(ms in 0..=MAX_MS, counter in 0..=MAX_U16, publisher in 0..=MAX_U16, random in 0..=MAX_RANDOM) {
            let p = Parts { ms, counter, publisher, random };
            let id = Id::from_parts(p).unwrap();
            prop_assert_eq!(id.parts(), p);
            prop_assert!(Id::min_of_ms(ms).unwrap() <= id);
            prop_assert!(id <= Id::max_of_ms(ms).unwrap());
        }

        #[test]
        fn byte_order_is_numeric_order(a: u128, b: u128) {
            prop_assert_eq!(Id::from_u128(a).cmp(&Id::from_u128(b)), a.cmp(&b));
        }

        #[test]
        fn order_is_field_order(a: u128, b: u128) {
            let (x, y) = (Id::from_u128(a).parts(), Id::from_u128(b).parts());
            let fx = (x.ms, x.counter, x.publisher, x.random);
            let fy = (y.ms, y.counter, y.publisher, y.random);
            prop_assert_eq!(Id::from_u128(a).cmp(&Id::from_u128(b)), fx.cmp(&fy));
        }
    }
}
