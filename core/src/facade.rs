//! The UUIDv47 v4 facade of an id's UUIDv7 form: a real RFC 9562 version 4 uuid for APIs that
//! accept nothing else, made exactly as UUIDv47 (github.com/stateless-me/uuidv47) makes it from a
//! UUIDv7, so a service that already speaks UUIDv47 reads it with the same key.
//!
//! ```text
//! UUIDv7 form (uuidv7.rs):  [ms 48][ver 7][counter >> 4 (12)][var 10][counter & 0xF, publisher 16, random >> 6 (42)]
//! v4 facade:                [ms XOR mask48][ver 4][the same 12 bits ][var 10][the same 62 bits                       ]
//!   m      = [byte6 & 0x0F, byte7, byte8 & 0x3F, bytes 9..15]   (10 bytes: the 74 bits kept as they are)
//!   mask48 = SipHash-2-4(K, m) & 0xFFFFFFFFFFFF                  (the key and number as in mask.rs)
//! ```
//!
//! Decoding reads the same 74 bits, rebuilds `mask48`, takes the time back and sets version 7.
//! The key is the mask's key: UUIDv47's key as 32 hex digits (its `uuid47.key` setting without
//! the colon, or its 16-byte `bytea` form) is the same 16 bytes. Its SipHash messages start with
//! a byte of 0x00 to 0x0F, so they never meet the Feistel masks' (which start with 0x80 or 0x3F).
//!
//! # What the facade hides, and what it does not
//!
//! Only the time is masked. The 74 bits around it are shown as they are, and in an id they are
//! not random: they are the **counter and the publisher** (and 42 random bits). So the facade
//! hides when an id was made, but shows which publisher made it, and the counter lets a reader
//! tell ids of one busy millisecond apart and order them. Where the id's fields must not show at
//! all, use [`Mask::mask`](crate::mask::Mask::mask) (not a valid uuid of any version) instead.
//! Like the UUIDv7 form, the facade drops the id's 6 lowest random bits: the id read back has them
//! 0 (see `uuidv7.rs` for when that loses nothing).

use crate::layout::Id;
use crate::mask::Mask;
use crate::uuidv7::{NotUuidv7, Variant};
use std::fmt;

/// The low 48 bits: the time field's mask.
const MASK48: u64 = (1 << 48) - 1;

/// 16 bytes that are not an RFC 9562 version 4 uuid, so no v4 facade: their version and variant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NotV4Facade {
    /// The version field (the high nibble of byte 6), 0 to 15.
    pub version: u8,
    pub variant: Variant,
}

impl fmt::Display for NotV4Facade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a v4 facade (an RFC 9562 version 4 uuid): version field {}, {}",
            self.version,
            self.variant.name()
        )
    }
}

impl std::error::Error for NotV4Facade {}

impl Mask {
    /// `mask48` of UUIDv47: SipHash-2-4 of the 74 bits a v7 uuid and its facade share.
    #[inline]
    fn facade_mask48(&self, u: &[u8; 16]) -> u64 {
        let m = [
            u[6] & 0x0F,
            u[7],
            u[8] & 0x3F,
            u[9],
            u[10],
            u[11],
            u[12],
            u[13],
            u[14],
            u[15],
        ];
        self.siphash(&m) & MASK48
    }

    /// UUIDv47's encode: any 16 bytes (a UUIDv7) to their v4 facade: the first 48 bits XOR
    /// `mask48`, version 4, the RFC 9562 variant.
    #[inline]
    pub fn uuidv47_encode(&self, v7: [u8; 16]) -> [u8; 16] {
        self.uuidv47_swap(v7, 4)
    }

    /// UUIDv47's decode: a v4 facade to its UUIDv7 (version 7, the RFC 9562 variant). Like
    /// UUIDv47's, it checks nothing: see [`from_v4_facade`](Mask::from_v4_facade).
    #[inline]
    pub fn uuidv47_decode(&self, v4: [u8; 16]) -> [u8; 16] {
        self.uuidv47_swap(v4, 7)
    }

    fn uuidv47_swap(&self, mut u: [u8; 16], version: u8) -> [u8; 16] {
        let mask = self.facade_mask48(&u).to_be_bytes();
        for (b, m) in u[..6].iter_mut().zip(&mask[2..]) {
            *b ^= m;
        }
        u[6] = (u[6] & 0x0F) | version << 4;
        u[8] = (u[8] & 0x3F) | 0x80;
        u
    }

    /// The v4 facade of an id: UUIDv47's encode of its UUIDv7 form. A valid RFC 9562 version 4
    /// uuid whose time is masked; its other bits show the id's counter and publisher.
    #[inline]
    pub fn to_v4_facade(&self, id: Id) -> [u8; 16] {
        self.uuidv47_encode(id.to_uuidv7_bytes())
    }

    /// The id a v4 facade stands for under this key: time, counter and publisher exactly (for a
    /// facade of this key), the 6 lowest random bits 0. Anything but a version 4 uuid of the
    /// RFC 9562 variant is an error (a masked value, an id, a v7 uuid passed by mistake); a
    /// facade made with another key gives an id with another time.
    #[inline]
    pub fn from_v4_facade(&self, facade: [u8; 16]) -> Result<Id, NotV4Facade> {
        if facade[6] >> 4 != 4 || facade[8] >> 6 != 0b10 {
            return Err(NotV4Facade {
                version: facade[6] >> 4,
                variant: Variant::of(&facade),
            });
        }
        // decode sets version 7 and the variant: from_uuidv7_bytes cannot refuse it
        Id::from_uuidv7_bytes(self.uuidv47_decode(facade))
            .map_err(|NotUuidv7 { version, variant }| NotV4Facade { version, variant })
    }
}

#[cfg(test)]
// Literals are grouped like the id's fields (12-4-4-12 hex digits).
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn uuid(s: &str) -> [u8; 16] {
        u128::from_str_radix(&s.replace('-', ""), 16)
            .unwrap()
            .to_be_bytes()
    }

    /// UUIDv47's README key `{k0 = 0x0123456789abcdef, k1 = 0xfedcba9876543210}`, as 16 bytes
    /// (each half little-endian, as SipHash reads them).
    fn readme_key() -> Mask {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
        key[8..].copy_from_slice(&0xfedc_ba98_7654_3210u64.to_le_bytes());
        assert_eq!(
            Mask::new(key).uuidv47_encode([0; 16]),
            Mask::from_hex("efcdab89674523011032547698badcfe")
                .unwrap()
                .uuidv47_encode([0; 16])
        );
        Mask::new(key)
    }

    /// UUIDv47 vectors: the v7 uuids and facades of the Go port n2p5/uuid47 (uuid47_test.go,
    /// `TestExactCCompatibility`, made with the C header by its c_validation/test_vectors_gen.c),
    /// under the README's key; the second is the README's quick-start uuid.
    const UUIDV47_VECTORS: [(&str, &str); 5] = [
        (
            "018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f",
            "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f",
        ),
        (
            "00000000-0000-7000-8000-000000000000",
            "22d97126-9609-4000-8000-000000000000",
        ),
        (
            "00000000-007b-7aaa-8123-456789abcdef",
            "b108050e-46b6-4aaa-8123-456789abcdef",
        ),
        (
            "00000010-007b-7aad-9032-547698badcfe",
            "bc75bd50-97ef-4aad-9032-547698badcfe",
        ),
        (
            "00000020-007b-7aa4-a301-6745ab89efcd",
            "a3e09c87-bf85-4aa4-a301-6745ab89efcd",
        ),
    ];

    #[test]
    fn uuidv47_vectors_encode_and_decode() {
        let m = readme_key();
        for (v7, v4) in UUIDV47_VECTORS {
            assert_eq!(m.uuidv47_encode(uuid(v7)), uuid(v4), "{v7}");
            assert_eq!(m.uuidv47_decode(uuid(v4)), uuid(v7), "{v4}");
            // every v7 uuid is an id's UUIDv7 form: the facade of that id is UUIDv47's
            let id = Id::from_uuidv7_bytes(uuid(v7)).unwrap();
            assert_eq!(m.to_v4_facade(id), uuid(v4));
            assert_eq!(m.from_v4_facade(uuid(v4)), Ok(id));
        }
    }

    #[test]
    fn the_facade_masks_the_time_and_shows_the_rest() {
        let m = Mask::from_hex("000102030405060708090a0b0c0d0e0f").unwrap();
        let id: Id = "017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap();
        let f = m.to_v4_facade(id);
        let v7 = id.to_uuidv7_bytes();
        assert_eq!((f[6] >> 4, f[8] >> 6), (4, 0b10));
        assert_ne!(f[..6], v7[..6]);
        // all but the time and the version nibble: the same bits
        assert_eq!(f[6] & 0x0F, v7[6] & 0x0F);
        assert_eq!(f[7..], v7[7..]);
        let back = m.from_v4_facade(f).unwrap();
        assert_eq!(back, Id::from_u128(id.to_u128() & !0x3F));
        // another key: another time, the same counter and publisher
        let other = Mask::from_hex("00000000000000000000000000000000").unwrap();
        let wrong = other.from_v4_facade(f).unwrap();
        assert_ne!(wrong.ms(), id.ms());
        assert_eq!((wrong.counter(), wrong.publisher()), (1, 10));
    }

    #[test]
    fn only_a_version_4_uuid_is_a_facade() {
        let m = Mask::from_hex("000102030405060708090a0b0c0d0e0f").unwrap();
        let id: Id = "017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap();
        for (bytes, version, variant) in [
            (id.to_uuidv7_bytes(), 7, Variant::Rfc9562),
            (id.to_bytes(), 0, Variant::Ncs),
            ([0xFF; 16], 15, Variant::Reserved),
            (
                uuid("00000000-0000-4000-c000-000000000000"),
                4,
                Variant::Microsoft,
            ),
        ] {
            assert_eq!(
                m.from_v4_facade(bytes),
                Err(NotV4Facade { version, variant })
            );
        }
        assert_eq!(
            NotV4Facade {
                version: 7,
                variant: Variant::Rfc9562
            }
            .to_string(),
            "not a v4 facade (an RFC 9562 version 4 uuid): version field 7, the RFC 9562 variant"
        );
    }

    proptest! {
        #[test]
        fn facades_round_trip_to_the_v7_form(v: u128, key: [u8; 16]) {
            let m = Mask::new(key);
            let id = Id::from_u128(v);
            let f = m.to_v4_facade(id);
            prop_assert_eq!((f[6] >> 4, f[8] >> 6), (4, 0b10));
            prop_assert_eq!(m.from_v4_facade(f), Ok(Id::from_u128(v & !0x3F)));
            prop_assert_eq!(m.uuidv47_decode(f), id.to_uuidv7_bytes());
        }
    }
}
