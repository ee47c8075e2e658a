//! The RFC 9562 UUIDv7 form of an id, for the systems that accept only real uuids: API
//! validators, PostgreSQL 18's `uuid_extract_timestamp`/`uuid_extract_version`, TimescaleDB's
//! UUIDv7 partitioning. An id's own bytes are no valid uuid (its version nibble is the top of the
//! counter, its variant bits the top of the publisher).
//!
//! ```text
//! UUIDv7:  [48-bit unix_ts_ms][ver 4 = 7][rand_a 12][var 2 = 0b10][rand_b 62]
//! holds:   [ms               ][         ][counter >> 4][          ][counter & 0xF, publisher 16, random >> 6]
//! ```
//!
//! The 6 lowest random bits are dropped (the version and variant take their room), so the form
//! keeps the order of ids (`a < b` gives `to(a) <= to(b)`, equal only for ids that differ in
//! those 6 bits alone, which one server never issues: its ids differ in time or counter) and
//! reads back time, counter and publisher exactly. Read the other way, every UUIDv7 (made by
//! anything: PostgreSQL 18's `uuidv7()`, the `uuid` crate, npm `uuid`) is an id, in the same
//! order: existing v7 keys migrate without reordering.

use crate::layout::Id;
use std::fmt;

/// The 4-bit version field of a UUIDv7.
const VERSION: u128 = 7;
/// The 2-bit RFC 9562 variant.
const VARIANT: u128 = 0b10;
/// Random bits of an id that the v7 form cannot hold.
const DROPPED: u32 = 6;
/// The 62 bits of `rand_b`.
const RAND_B: u128 = (1 << 62) - 1;

/// The variant field of a uuid (the top bits of byte 8), for messages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `0xx`: NCS backward compatibility (the nil uuid, and an id whose publisher is below 32768).
    Ncs,
    /// `10x`: RFC 9562 (and RFC 4122).
    Rfc9562,
    /// `110`: Microsoft backward compatibility.
    Microsoft,
    /// `111`: reserved (the max uuid).
    Reserved,
}

impl Variant {
    pub fn of(bytes: &[u8; 16]) -> Variant {
        match bytes[8] >> 5 {
            0..=3 => Variant::Ncs,
            4 | 5 => Variant::Rfc9562,
            6 => Variant::Microsoft,
            _ => Variant::Reserved,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Variant::Ncs => "the NCS variant",
            Variant::Rfc9562 => "the RFC 9562 variant",
            Variant::Microsoft => "the Microsoft variant",
            Variant::Reserved => "the reserved variant",
        }
    }
}

/// 16 bytes that are not an RFC 9562 version 7 uuid: what their version and variant fields hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NotUuidv7 {
    /// The version field (the high nibble of byte 6), 0 to 15.
    pub version: u8,
    pub variant: Variant,
}

impl fmt::Display for NotUuidv7 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not an RFC 9562 version 7 uuid: version field {}, {}",
            self.version,
            self.variant.name()
        )
    }
}

impl std::error::Error for NotUuidv7 {}

/// Whether 16 bytes are an RFC 9562 version 7 uuid: version field 7, variant bits `10`.
#[inline]
pub fn is_uuidv7(bytes: &[u8; 16]) -> bool {
    bytes[6] >> 4 == VERSION as u8 && bytes[8] >> 6 == VARIANT as u8
}

impl Id {
    /// The RFC 9562 version 7 uuid of this id: the same millisecond, version 7, the counter's
    /// top 12 bits in `rand_a`, the variant, then the counter's low 4 bits, the publisher and the
    /// top 42 random bits in `rand_b`. Keeps the order of ids; drops the 6 lowest random bits.
    ///
    /// ```
    /// use hlculid_core::Id;
    ///
    /// let id: Id = "017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap();
    /// let v7 = id.to_uuidv7_bytes();
    /// assert_eq!(v7[6] >> 4, 7); // version 7
    /// assert_eq!(v7[8] >> 6, 0b10); // RFC 9562 variant
    /// let back = Id::from_uuidv7_bytes(v7).unwrap();
    /// assert_eq!((back.ms(), back.counter(), back.publisher()), (id.ms(), 1, 10));
    /// assert_eq!(back.random(), id.random() & !0x3F);
    /// ```
    #[inline]
    pub fn to_uuidv7_bytes(self) -> [u8; 16] {
        let v = self.to_u128();
        // counter, publisher and the random bits kept: 16 + 16 + 42 = 74 bits
        let rest = (v & ((1 << 80) - 1)) >> DROPPED;
        let u =
            (v >> 80) << 80 | VERSION << 76 | (rest >> 62) << 64 | VARIANT << 62 | (rest & RAND_B);
        u.to_be_bytes()
    }

    /// The id a version 7 uuid stands for: exact time, counter and publisher for the form
    /// [`to_uuidv7_bytes`](Id::to_uuidv7_bytes) makes, random bits with the 6 lowest zero. Any
    /// RFC 9562 v7 uuid is accepted, and v7 uuids keep their order as ids; every other uuid is
    /// an error.
    #[inline]
    pub fn from_uuidv7_bytes(bytes: [u8; 16]) -> Result<Id, NotUuidv7> {
        if !is_uuidv7(&bytes) {
            return Err(NotUuidv7 {
                version: bytes[6] >> 4,
                variant: Variant::of(&bytes),
            });
        }
        let u = u128::from_be_bytes(bytes);
        let rest = ((u >> 64) & 0xFFF) << 62 | (u & RAND_B);
        Ok(Id::from_u128((u >> 80) << 80 | rest << DROPPED))
    }
}

#[cfg(test)]
// Literals are grouped like the fields they fill.
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use crate::layout::{Parts, MAX_MS, MAX_RANDOM};
    use proptest::prelude::*;

    /// Reads any spelling, a random uuid's uuid spelling included (the text input refuses that
    /// one; its bytes are what these tests need).
    fn id(s: &str) -> Id {
        s.parse()
            .unwrap_or_else(|_| s.replace('-', "").parse().unwrap())
    }

    fn bits(bytes: [u8; 16]) -> u128 {
        u128::from_be_bytes(bytes)
    }

    /// The layout written out field by field, independently of the shifts above.
    #[test]
    fn known_values() {
        let cases = [
            // ms 0x017FC21C5E7A, counter 0x0001, publisher 0x000A, random 0xAAA333333333
            (
                "017FC21C5E7A-0001-000A-AAA333333333",
                "017fc21c-5e7a-7000-8400-2aaa8ccccccc",
            ),
            // counter 0xABCD: 0xABC in rand_a, 0xD at the top of rand_b (after the variant)
            (
                "000000000001-ABCD-1234-FFFFFFFFFFFF",
                "00000000-0001-7abc-b448-d3ffffffffff",
            ),
            (
                "000000000000-0000-0000-000000000000",
                "00000000-0000-7000-8000-000000000000",
            ),
            (
                "FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF",
                "ffffffff-ffff-7fff-bfff-ffffffffffff",
            ),
        ];
        for (from, want) in cases {
            let got = crate::text::uuid_string(Id(id(from).to_uuidv7_bytes()));
            assert_eq!(got, want, "{from}");
        }
        // and field by field: counter 0xABCD, publisher 0x1234, random all ones
        let u = bits(id("000000000001-ABCD-1234-FFFFFFFFFFFF").to_uuidv7_bytes());
        assert_eq!(u >> 80, 1, "unix_ts_ms");
        assert_eq!((u >> 76) & 0xF, 7, "ver");
        assert_eq!((u >> 64) & 0xFFF, 0xABC, "rand_a");
        assert_eq!((u >> 62) & 0b11, 0b10, "var");
        assert_eq!((u >> 58) & 0xF, 0xD, "counter's low bits");
        assert_eq!((u >> 42) & 0xFFFF, 0x1234, "publisher");
        assert_eq!(u & ((1 << 42) - 1), (1 << 42) - 1, "top 42 random bits");
    }

    #[test]
    fn other_versions_and_variants_are_refused() {
        for (u, version, variant) in [
            ("00000000-0000-0000-0000-000000000000", 0, Variant::Ncs),
            (
                "ffffffff-ffff-ffff-ffff-ffffffffffff",
                15,
                Variant::Reserved,
            ),
            ("8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203", 4, Variant::Rfc9562),
            ("8f3c1f0e-6b1d-1a2b-9c3d-5e6f70819203", 1, Variant::Rfc9562),
            ("8f3c1f0e-6b1d-6a2b-9c3d-5e6f70819203", 6, Variant::Rfc9562),
            ("8f3c1f0e-6b1d-8a2b-9c3d-5e6f70819203", 8, Variant::Rfc9562),
            ("018f3c1f-0e6b-7d4a-7c3d-5e6f70819203", 7, Variant::Ncs),
            (
                "018f3c1f-0e6b-7d4a-cc3d-5e6f70819203",
                7,
                Variant::Microsoft,
            ),
            ("018f3c1f-0e6b-7d4a-ec3d-5e6f70819203", 7, Variant::Reserved),
            // an id's own bytes (publisher 10: variant bits 00)
            ("017fc21c-5e7a-0001-000a-aaa333333333", 0, Variant::Ncs),
        ] {
            let err = NotUuidv7 { version, variant };
            assert_eq!(Id::from_uuidv7_bytes(id(u).0), Err(err), "{u}");
        }
        // both RFC variant encodings (10 then 0 or 1) are accepted
        for u in [
            "018f3c1f-0e6b-7d4a-8c3d-5e6f70819203",
            "018f3c1f-0e6b-7d4a-bc3d-5e6f70819203",
        ] {
            assert!(Id::from_uuidv7_bytes(id(u).0).is_ok(), "{u}");
        }
    }

    #[test]
    fn the_uuid_crate_reads_version_7_and_the_rfc_variant() {
        for s in [
            "000000000000-0000-0000-000000000000",
            "017FC21C5E7A-0001-000A-AAA333333333",
            "FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ] {
            let i = id(s);
            let u = uuid::Uuid::from_bytes(i.to_uuidv7_bytes());
            assert_eq!(u.get_version_num(), 7, "{s}");
            assert_eq!(u.get_variant(), uuid::Variant::RFC4122, "{s}");
            let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
            assert_eq!(secs * 1000 + u64::from(nanos) / 1_000_000, i.ms(), "{s}");
        }
    }

    fn any_id() -> impl Strategy<Value = Id> {
        (0..=MAX_MS, 0..=0xFFFFu32, 0..=0xFFFFu32, 0..=MAX_RANDOM).prop_map(
            |(ms, counter, publisher, random)| {
                Id::from_parts(Parts {
                    ms,
                    counter,
                    publisher,
                    random,
                })
                .unwrap()
            },
        )
    }

    /// Ids that differ only in a few low fields, so equal prefixes (and ties) come up often.
    fn close_ids() -> impl Strategy<Value = (Id, Id)> {
        (any_id(), any::<u128>(), 0..=80u32).prop_map(|(a, noise, width)| {
            let mask = if width == 0 {
                0
            } else {
                u128::MAX >> (128 - width)
            };
            (a, Id::from_u128(a.to_u128() ^ (noise & mask)))
        })
    }

    fn any_uuidv7() -> impl Strategy<Value = [u8; 16]> {
        any::<u128>().prop_map(|r| {
            let u = (r & !(0xF << 76) & !(0b11 << 62)) | VERSION << 76 | VARIANT << 62;
            u.to_be_bytes()
        })
    }

    proptest! {
        #[test]
        fn to_uuidv7_keeps_the_order_of_ids((a, b) in close_ids()) {
            let (x, y) = (a.to_uuidv7_bytes(), b.to_uuidv7_bytes());
            prop_assert!(is_uuidv7(&x) && is_uuidv7(&y));
            // a < b gives to(a) <= to(b), equal exactly when only the dropped bits differ
            prop_assert_eq!(x.cmp(&y), (a.to_u128() >> DROPPED).cmp(&(b.to_u128() >> DROPPED)));
            prop_assert!(a.cmp(&b) != std::cmp::Ordering::Less || x <= y);
        }

        #[test]
        fn to_uuidv7_keeps_the_order_of_any_ids(a in any_id(), b in any_id()) {
            prop_assert_eq!(
                a.to_uuidv7_bytes().cmp(&b.to_uuidv7_bytes()),
                (a.to_u128() >> DROPPED).cmp(&(b.to_u128() >> DROPPED))
            );
        }

        #[test]
        fn round_trip_keeps_time_counter_publisher(a in any_id()) {
            let v7 = a.to_uuidv7_bytes();
            let back = Id::from_uuidv7_bytes(v7).unwrap();
            prop_assert_eq!(back.ms(), a.ms());
            prop_assert_eq!(back.counter(), a.counter());
            prop_assert_eq!(back.publisher(), a.publisher());
            prop_assert_eq!(back.random(), a.random() & !((1 << DROPPED) - 1));
            // the uuid made again from the id read back is the same uuid
            prop_assert_eq!(back.to_uuidv7_bytes(), v7);
        }

        #[test]
        fn from_uuidv7_keeps_the_order_of_any_v7(a in any_uuidv7(), b in any_uuidv7()) {
            let (x, y) = (Id::from_uuidv7_bytes(a).unwrap(), Id::from_uuidv7_bytes(b).unwrap());
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            // same millisecond as uuid_extract_timestamp reads, and the v7 value made again
            prop_assert_eq!(x.ms() as u128, u128::from_be_bytes(a) >> 80);
            prop_assert_eq!(x.to_uuidv7_bytes(), a);
        }

        #[test]
        fn from_uuidv7_refuses_every_other_version_and_variant(r in any::<u128>()) {
            let bytes = r.to_be_bytes();
            let want_ok = (r >> 76) & 0xF == 7 && (r >> 62) & 0b11 == 0b10;
            prop_assert_eq!(Id::from_uuidv7_bytes(bytes).is_ok(), want_ok);
            if let Err(e) = Id::from_uuidv7_bytes(bytes) {
                prop_assert_eq!(e.version as u128, (r >> 76) & 0xF);
            }
        }
    }

    #[test]
    fn generated_ids_and_v7_uuids_keep_their_order() {
        let ids = crate::Generator::new(10);
        let ours: Vec<Id> = (0..10_000).map(|_| ids.generate().unwrap()).collect();
        let v7: Vec<[u8; 16]> = ours.iter().map(|i| i.to_uuidv7_bytes()).collect();
        assert!(
            v7.windows(2).all(|w| w[0] < w[1]),
            "one generator's ids stay distinct and ordered"
        );
        // the uuid crate's own v7 values (monotonic in one process) read as increasing ids
        let theirs: Vec<uuid::Uuid> = (0..10_000).map(|_| uuid::Uuid::now_v7()).collect();
        let read: Vec<Id> = theirs
            .iter()
            .map(|u| Id::from_uuidv7_bytes(*u.as_bytes()).unwrap())
            .collect();
        assert!(theirs.windows(2).all(|w| w[0] < w[1]));
        assert!(read.windows(2).all(|w| w[0] < w[1]));
    }
}
