//! Keyed, reversible masks for ids shown outside: a pseudorandom permutation of the whole 128-bit
//! id (shown as a uuid), and one of the positive 63-bit range (bigint ids). Without the key a
//! masked value reveals neither the time, the order, the counter nor the publisher of its id;
//! with the key it turns back into exactly that id, so lookups stay on the primary key.
//!
//! ```
//! use hlculid_core::mask::Mask;
//! use hlculid_core::Id;
//!
//! let mask: Mask = "000102030405060708090a0b0c0d0e0f".parse().unwrap();
//! let id: Id = "017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap();
//! let shown = mask.mask(id); // 16 bytes, printed as a uuid
//! assert_ne!(shown, id.to_bytes());
//! assert_eq!(mask.unmask(shown), id);
//!
//! let big = mask.mask_bigint(3_732_930_560_000_003_114).unwrap();
//! assert!(big > 0);
//! assert_eq!(mask.unmask_bigint(big), Ok(3_732_930_560_000_003_114));
//! ```
//!
//! # Construction
//!
//! A balanced Feistel network of 8 rounds whose round function is SipHash-2-4 keyed with the
//! 16-byte mask key. Luby and Rackoff showed that 4 rounds of a pseudorandom function give a
//! strong pseudorandom permutation; 8 leave a margin. SipHash-2-4 is a pseudorandom function
//! designed for short inputs, and the `siphasher` crate is its reference-checked Rust version.
//!
//! This is the interoperability specification: the Python and Node clients implement it from
//! this text, and `tests/data/mask_vectors.json` (made by `core/tests/fixtures/mask_vectors.rs`)
//! holds the values all three must give.
//!
//! ```text
//! key K          16 bytes. SipHash keys k0 = K[0..8], k1 = K[8..16], each read little-endian
//!                (the SipHash paper's convention: its test key is the bytes 00 01 .. 0f, written
//!                "000102030405060708090a0b0c0d0e0f" in hex).
//! SipHash(m)     SipHash-2-4 of the message bytes m under K, as the 64-bit number the reference
//!                code returns (its 8 output bytes read little-endian).
//!
//! 128-bit mask   (an id: its 16 bytes, big-endian, the id's sort order)
//!   L0 = bytes 0..8 as a big-endian u64, R0 = bytes 8..16 as a big-endian u64
//!   for i = 0, 1, ..., 7:
//!     F(i, h) = SipHash([0x80, i, h as 8 big-endian bytes])          (a 10-byte message)
//!     L(i+1) = R(i);  R(i+1) = L(i) XOR F(i, R(i))
//!   masked = L8 as 8 big-endian bytes || R8 as 8 big-endian bytes    (shown as a uuid)
//! unmask: for i = 7, 6, ..., 0:  R(i) = L(i+1);  L(i) = R(i+1) XOR F(i, L(i+1))
//!
//! 63-bit mask    (a bigint x, 1 <= x <= 2^63 - 1)
//!   P(y), a permutation of 64-bit values y:
//!     L0 = y >> 32, R0 = y & 0xFFFFFFFF
//!     for i = 0, 1, ..., 7:
//!       G(i, h) = SipHash([0x3F, i, h as 4 big-endian bytes]) & 0xFFFFFFFF   (a 6-byte message)
//!       L(i+1) = R(i);  R(i+1) = L(i) XOR G(i, R(i))
//!     P(y) = L8 << 32 | R8
//!   z = P(x - 1); while z > 2^63 - 2: z = P(z)        (cycle walking)
//!   masked = z + 1
//! unmask: the same with the inverse of P (rounds 7 down to 0, as above) in place of P.
//! ```
//!
//! The first message byte separates the two forms (`0x80` for 128 bits, `0x3F` for 63), so one
//! key serves both without their round functions ever meeting; the second is the round.
//!
//! # Why cycle walking
//!
//! A bigint id is positive, and so must its masked value be (`bigint` columns, Java `long`,
//! JSON readers that take a sign as a different kind of value). `x - 1` maps the ids 1 to
//! 2^63 - 1 onto 0 to 2^63 - 2; the 64-bit permutation `P` sends about half of those outside
//! that range, and applying `P` again until the value is back inside gives a permutation of the
//! range itself (Black and Rogaway, "Ciphers with arbitrary finite domains", 2002): following
//! `P`'s cycle from a value in the range must come back into the range, at worst at the value
//! itself. Two applications of `P` on average; unmasking walks the same cycle backwards.
//!
//! # What a mask hides, and what it does not
//!
//! Without the key, masked values look like uniform random values that never repeat: consecutive
//! ids give unrelated masked values, and none of the id's fields can be read from one. It is not
//! encryption of a secret: the id it stands for is no secret to the server, every party that
//! holds the key can unmask every value, anything revealed around a value (its row count, a
//! created-at column, response times) is not hidden by it, and the same id always gives the same
//! masked value (a mask is a permutation, not a randomized encryption). The 63-bit form's halves
//! are 32 bits wide, a smaller margin than the 128-bit form's: keep it for bigint keys, and use
//! the 128-bit form where both are possible. The number of walks depends on the value, so the
//! time a 63-bit mask takes varies a little with it.
//!
//! Where only a valid RFC 9562 uuid passes, the same key also makes UUIDv47's v4 facade of the
//! id's UUIDv7 form ([`Mask::to_v4_facade`], `facade.rs`), which masks the time alone.

use siphasher::sip::SipHasher24;
use std::fmt;
use std::str::FromStr;

use crate::layout::Id;

/// Feistel rounds of both masks.
pub const ROUNDS: u8 = 8;
/// First message byte of the 128-bit mask's round function.
pub const TAG_128: u8 = 0x80;
/// First message byte of the 63-bit mask's round function.
pub const TAG_63: u8 = 0x3F;
/// Largest value of the 63-bit domain after `x - 1`: 2^63 - 2.
const TOP_63: u64 = (i64::MAX - 1) as u64;

/// A mask key: 16 bytes, kept as SipHash-2-4 state. `Debug` never shows it.
#[derive(Clone)]
pub struct Mask {
    sip: SipHasher24,
}

/// Why a text is not a mask key. `Display` gives a sentence for an error DETAIL; neither it nor
/// the variant ever holds the text itself, which is a secret (a near-miss is close to a key).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// Not 32 characters: how many there are.
    Length(usize),
    /// The character at this offset (0-based, in characters) is not a hex digit.
    Character { at: usize },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KeyError::Length(n) => write!(
                f,
                "A mask key is 32 hex digits (16 bytes); the text given has {n} characters."
            ),
            KeyError::Character { at } => write!(
                f,
                "A mask key is 32 hex digits (16 bytes); character {} of the text given is not one.",
                at + 1
            ),
        }
    }
}

impl std::error::Error for KeyError {}

/// A bigint that the 63-bit mask does not take: zero or negative (the caller's SQLSTATE is
/// 22003, numeric value out of range). `Display` gives a sentence for an error DETAIL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NotPositive(pub i64);

impl fmt::Display for NotPositive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "The bigint masks map 1 to 9223372036854775807 onto themselves; {} is outside that range.",
            self.0
        )
    }
}

impl std::error::Error for NotPositive {}

impl fmt::Debug for Mask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Mask { key: <hidden> }")
    }
}

/// [`Mask::from_hex`].
impl FromStr for Mask {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Mask, KeyError> {
        Mask::from_hex(s)
    }
}

impl Mask {
    /// The mask of a 16-byte key. Any 16 bytes are a key; draw them from a cryptographically
    /// secure source (`openssl rand -hex 16`, `gen_random_bytes(16)`, `secrets.token_hex(16)`).
    pub fn new(key: [u8; 16]) -> Mask {
        Mask {
            sip: SipHasher24::new_with_key(&key),
        }
    }

    /// The mask of a key written as 32 hex digits, in either case, and nothing else (no prefix,
    /// white space or separators). The error says what is wrong with the text's shape, never
    /// what it holds.
    pub fn from_hex(text: &str) -> Result<Mask, KeyError> {
        let n = text.chars().count();
        if n != 32 {
            return Err(KeyError::Length(n));
        }
        let mut key = [0u8; 16];
        for (at, c) in text.chars().enumerate() {
            let digit = c.to_digit(16).ok_or(KeyError::Character { at })? as u8;
            key[at / 2] |= digit << if at % 2 == 0 { 4 } else { 0 };
        }
        Ok(Mask::new(key))
    }

    /// SipHash-2-4 of a message under the key (the UUIDv47 facade's mask, facade.rs).
    #[inline]
    pub(crate) fn siphash(&self, message: &[u8]) -> u64 {
        self.sip.hash(message)
    }

    /// F(i, h): the 128-bit mask's round function.
    #[inline]
    fn round128(&self, round: u8, half: u64) -> u64 {
        let h = half.to_be_bytes();
        self.sip.hash(&[
            TAG_128, round, h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
        ])
    }

    /// G(i, h): the 63-bit mask's round function, truncated to 32 bits.
    #[inline]
    fn round63(&self, round: u8, half: u32) -> u32 {
        let h = half.to_be_bytes();
        self.sip.hash(&[TAG_63, round, h[0], h[1], h[2], h[3]]) as u32
    }

    /// The masked value of an id's 128 bits (big-endian: `0` is the smallest id). A permutation
    /// of all 2^128 values.
    #[inline]
    pub fn mask_u128(&self, v: u128) -> u128 {
        let (mut l, mut r) = ((v >> 64) as u64, v as u64);
        for i in 0..ROUNDS {
            (l, r) = (r, l ^ self.round128(i, r));
        }
        (u128::from(l) << 64) | u128::from(r)
    }

    /// The inverse of [`mask_u128`](Mask::mask_u128).
    #[inline]
    pub fn unmask_u128(&self, v: u128) -> u128 {
        let (mut l, mut r) = ((v >> 64) as u64, v as u64);
        for i in (0..ROUNDS).rev() {
            (l, r) = (r ^ self.round128(i, l), l);
        }
        (u128::from(l) << 64) | u128::from(r)
    }

    /// The masked form of an id: 16 bytes, shown as a uuid. Its version and variant bits are
    /// whatever the permutation gives: it is no valid uuid of any version.
    #[inline]
    pub fn mask(&self, id: Id) -> [u8; 16] {
        self.mask_u128(id.to_u128()).to_be_bytes()
    }

    /// The id a masked value stands for under this key. Every 16 bytes unmask to some id: a
    /// value masked with another key gives an unrelated id, not an error.
    #[inline]
    pub fn unmask(&self, masked: [u8; 16]) -> Id {
        Id::from_u128(self.unmask_u128(u128::from_be_bytes(masked)))
    }

    /// P: the 64-bit Feistel permutation under the 63-bit mask.
    #[inline]
    fn permute64(&self, v: u64) -> u64 {
        let (mut l, mut r) = ((v >> 32) as u32, v as u32);
        for i in 0..ROUNDS {
            (l, r) = (r, l ^ self.round63(i, r));
        }
        (u64::from(l) << 32) | u64::from(r)
    }

    /// The inverse of P.
    #[inline]
    fn unpermute64(&self, v: u64) -> u64 {
        let (mut l, mut r) = ((v >> 32) as u32, v as u32);
        for i in (0..ROUNDS).rev() {
            (l, r) = (r ^ self.round63(i, l), l);
        }
        (u64::from(l) << 32) | u64::from(r)
    }

    /// The masked form of a positive bigint (a bigint id): positive too, a permutation of 1 to
    /// 9223372036854775807. Zero and negative values are an error.
    #[inline]
    pub fn mask_bigint(&self, v: i64) -> Result<i64, NotPositive> {
        let y = Self::domain(v)?;
        let mut z = self.permute64(y);
        while z > TOP_63 {
            z = self.permute64(z);
        }
        Ok(z as i64 + 1)
    }

    /// The inverse of [`mask_bigint`](Mask::mask_bigint): every positive bigint unmasks to a
    /// positive bigint (a value masked with another key to an unrelated one).
    #[inline]
    pub fn unmask_bigint(&self, v: i64) -> Result<i64, NotPositive> {
        let y = Self::domain(v)?;
        let mut z = self.unpermute64(y);
        while z > TOP_63 {
            z = self.unpermute64(z);
        }
        Ok(z as i64 + 1)
    }

    /// x - 1 for x in 1 to 2^63 - 1.
    #[inline]
    fn domain(v: i64) -> Result<u64, NotPositive> {
        if v < 1 {
            Err(NotPositive(v))
        } else {
            Ok(v as u64 - 1)
        }
    }
}

#[cfg(test)]
// Literals are grouped like the id's fields (12-4-4-12 hex digits).
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use crate::layout::{Parts, MAX_MS, MAX_RANDOM, MAX_U16};
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{RngCore, SeedableRng};

    const PAPER_KEY: &str = "000102030405060708090a0b0c0d0e0f";

    fn paper() -> Mask {
        PAPER_KEY.parse().unwrap()
    }

    /// SipHash-2-4 of the messages 00, 00 01, ..., 00 01 .. 3e under the key 00 01 .. 0f: the
    /// first 16 of the 64 outputs of the reference implementation's `vectors.h` (its
    /// `vectors_sip64`, each read little-endian), the 15-byte one also printed in the paper's
    /// appendix A.
    pub(crate) const SIPHASH_VECTORS: [u64; 16] = [
        0x726fdb47dd0e0e31,
        0x74f839c593dc67fd,
        0x0d6c8009d9a94f5a,
        0x85676696d7fb7e2d,
        0xcf2794e0277187b7,
        0x18765564cd99a68d,
        0xcbc9466e58fee3ce,
        0xab0200f58b01d137,
        0x93f5f5799a932462,
        0x9e0082df0ba9e4b0,
        0x7a5dbbc594ddb9f3,
        0xf4b32f46226bada7,
        0x751e8fbc860ee5fb,
        0x14ea5627c0843d90,
        0xf723ca908e7af2ee,
        0xa129ca6149be45e5,
    ];

    #[test]
    fn siphash_gives_the_reference_vectors_under_the_key_as_parsed() {
        let m = paper();
        let msg: Vec<u8> = (0..16).collect();
        for (len, want) in SIPHASH_VECTORS.iter().enumerate() {
            assert_eq!(m.sip.hash(&msg[..len]), *want, "message of {len} bytes");
        }
        // the paper's appendix A: the 15-byte message 00 .. 0e
        assert_eq!(m.sip.hash(&msg[..15]), 0xa129ca6149be45e5);
        // more whole 8-byte words: entries 16, 62 and 63 of the 64
        let msg: Vec<u8> = (0..64).collect();
        for (len, want) in [
            (16, 0x3f2acc7f57c29bdb),
            (62, 0xe51b38608ef25f57),
            (63, 0x958a324ceb064572),
        ] {
            assert_eq!(m.sip.hash(&msg[..len]), want, "message of {len} bytes");
        }
    }

    #[test]
    fn round_functions_are_the_documented_messages() {
        let m = paper();
        let h = 0x0123_4567_89AB_CDEFu64;
        let mut msg = vec![0x80, 5];
        msg.extend_from_slice(&h.to_be_bytes());
        assert_eq!(m.round128(5, h), m.sip.hash(&msg));
        let msg = [0x3F, 7, 0x89, 0xAB, 0xCD, 0xEF];
        assert_eq!(m.round63(7, 0x89AB_CDEF), m.sip.hash(&msg) as u32);
    }

    #[test]
    fn keys_parse_from_32_hex_digits_in_either_case_only() {
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let want = Mask::new(key).mask_u128(12345);
        for text in [PAPER_KEY, "000102030405060708090A0B0C0D0E0F"] {
            assert_eq!(Mask::from_hex(text).unwrap().mask_u128(12345), want);
        }
        let bad = [
            ("", KeyError::Length(0)),
            ("00010203", KeyError::Length(8)),
            ("000102030405060708090a0b0c0d0e0f00", KeyError::Length(34)),
            (
                "0x0102030405060708090a0b0c0d0e0f",
                KeyError::Character { at: 1 },
            ),
            (
                " 00102030405060708090a0b0c0d0e0f",
                KeyError::Character { at: 0 },
            ),
            (
                "000102030405060708090a0b0c0d0e0g",
                KeyError::Character { at: 31 },
            ),
            (
                "00010203-0405-0607-0809-0a0b0c0d",
                KeyError::Character { at: 8 },
            ),
            // a non-ASCII character counts as one character, and is not a digit
            ("é00102030405060708090a0b0c0d0e0", KeyError::Length(31)),
            (
                "é000102030405060708090a0b0c0d0e0",
                KeyError::Character { at: 0 },
            ),
            (
                "٠00102030405060708090a0b0c0d0e0f",
                KeyError::Character { at: 0 },
            ),
        ];
        for (text, err) in bad {
            assert_eq!(Mask::from_hex(text).unwrap_err(), err, "{text:?}");
        }
    }

    #[test]
    fn errors_and_debug_never_show_the_key() {
        let secret = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5z";
        let e = Mask::from_hex(secret).unwrap_err();
        for shown in [e.to_string(), format!("{e:?}")] {
            assert!(!shown.contains("5e5e"), "{shown}");
        }
        assert_eq!(
            e.to_string(),
            "A mask key is 32 hex digits (16 bytes); character 32 of the text given is not one."
        );
        let e = Mask::from_hex(&secret[..31]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "A mask key is 32 hex digits (16 bytes); the text given has 31 characters."
        );
        let m = Mask::new([0x5e; 16]);
        let shown = format!("{m:?}");
        assert_eq!(shown, "Mask { key: <hidden> }");
        assert!(!shown.contains("94"), "the key as a number: {shown}");
    }

    /// Ids of every shape: the ends of every field, alone and together.
    fn extreme_ids() -> Vec<Id> {
        let mut v = vec![
            Id::MIN,
            Id::MAX,
            Id::from_u128(1),
            Id::from_u128(u128::MAX - 1),
        ];
        for ms in [0, 1, 1_780_000_000_000, MAX_MS - 1, MAX_MS] {
            for counter in [0, 1, MAX_U16] {
                for publisher in [0, 1, 1023, MAX_U16] {
                    for random in [0, 1, MAX_RANDOM] {
                        v.push(
                            Id::from_parts(Parts {
                                ms,
                                counter,
                                publisher,
                                random,
                            })
                            .unwrap(),
                        );
                    }
                }
            }
        }
        for bit in 0..128 {
            v.push(Id::from_u128(1 << bit));
            v.push(Id::from_u128(!(1 << bit)));
        }
        v
    }

    #[test]
    fn every_shape_of_id_round_trips_and_no_two_collide() {
        let m = paper();
        let ids = extreme_ids();
        let mut seen = std::collections::HashSet::new();
        for &id in &ids {
            let masked = m.mask(id);
            assert_eq!(m.unmask(masked), id);
            assert_eq!(m.unmask_u128(m.mask_u128(id.to_u128())), id.to_u128());
            assert_eq!(m.mask_u128(m.unmask_u128(id.to_u128())), id.to_u128());
            seen.insert((id, masked));
        }
        let distinct_ids: std::collections::HashSet<_> = ids.iter().collect();
        let distinct_masked: std::collections::HashSet<_> = seen.iter().map(|p| p.1).collect();
        assert_eq!(distinct_masked.len(), distinct_ids.len());
    }

    /// A million ids round trip: consecutive runs from the ends of the range and from a present
    /// day millisecond, and random ones.
    #[test]
    fn a_million_ids_round_trip() {
        let m = Mask::new(*b"hlculid mask key");
        let mut rng = StdRng::seed_from_u64(34);
        let now = (1_780_000_000_000u128 << 80) | (42 << 48);
        let starts = [0, u128::MAX - 99_999, now];
        for start in starts {
            for k in 0..100_000u128 {
                let v = start.wrapping_add(k);
                assert_eq!(m.unmask_u128(m.mask_u128(v)), v);
            }
        }
        for _ in 0..700_000 {
            let v = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            assert_eq!(m.unmask_u128(m.mask_u128(v)), v);
            assert_eq!(m.mask_u128(m.unmask_u128(v)), v);
        }
    }

    #[test]
    fn a_wrong_key_unmasks_to_another_id() {
        let right = paper();
        let mut key: [u8; 16] = std::array::from_fn(|i| i as u8);
        for byte in 0..16 {
            for bit in 0..8 {
                key[byte] ^= 1 << bit;
                let wrong = Mask::new(key);
                key[byte] ^= 1 << bit;
                for id in [
                    Id::MIN,
                    Id::MAX,
                    Id::from_u128(0x017FC21C5E7A_0001_000A_AAA333333333),
                ] {
                    let masked = right.mask(id);
                    assert_ne!(wrong.unmask(masked), id);
                    assert_ne!(wrong.mask(id), masked);
                    let b = right.mask_bigint(i64::MAX).unwrap();
                    assert_ne!(wrong.unmask_bigint(b), Ok(i64::MAX));
                }
            }
        }
    }

    #[test]
    fn the_two_forms_and_the_rounds_are_separated() {
        let m = paper();
        // the same half under the two tags and under two rounds gives unrelated outputs
        assert_ne!(m.round128(0, 7) as u32, m.round63(0, 7));
        assert_ne!(m.round128(0, 7), m.round128(1, 7));
        assert_ne!(m.round63(0, 7), m.round63(1, 7));
    }

    #[test]
    fn bigint_extremes_round_trip_and_stay_positive() {
        let m = paper();
        let mut values = vec![
            1,
            2,
            3,
            i64::MAX,
            i64::MAX - 1,
            i64::MAX - 2,
            1 << 62,
            1 << 32,
        ];
        values.extend((1..=10_000).chain(i64::MAX - 10_000..=i64::MAX));
        // present-day bigint ids of one publisher
        values.extend((0..10_000).map(|k| 3_732_930_560_000_003_114 + k * 1024));
        let mut masked = std::collections::HashSet::new();
        for &v in &values {
            let x = m.mask_bigint(v).unwrap();
            assert!(x >= 1, "{v} masks to {x}");
            assert_eq!(m.unmask_bigint(x), Ok(v));
            let y = m.unmask_bigint(v).unwrap();
            assert!(y >= 1);
            assert_eq!(m.mask_bigint(y), Ok(v));
            masked.insert(x);
        }
        let distinct: std::collections::HashSet<_> = values.iter().collect();
        assert_eq!(masked.len(), distinct.len());
        for v in [0, -1, -2, i64::MIN, i64::MIN + 1] {
            assert_eq!(m.mask_bigint(v), Err(NotPositive(v)));
            assert_eq!(m.unmask_bigint(v), Err(NotPositive(v)));
        }
        assert_eq!(
            NotPositive(0).to_string(),
            "The bigint masks map 1 to 9223372036854775807 onto themselves; 0 is outside that range."
        );
    }

    /// The 63-bit form on a domain small enough to check whole: the cycle walk is a
    /// permutation when the range is a small part of the 64-bit values.
    #[test]
    fn the_64_bit_permutation_inverts_and_the_walk_lands_in_range() {
        let m = paper();
        let mut rng = StdRng::seed_from_u64(63);
        let mut walks = 0u64;
        let n = 200_000;
        for _ in 0..n {
            let v = rng.next_u64();
            assert_eq!(m.unpermute64(m.permute64(v)), v);
            let x = (v >> 1).max(1) as i64;
            let mut z = m.permute64(x as u64 - 1);
            walks += 1;
            while z > TOP_63 {
                z = m.permute64(z);
                walks += 1;
            }
            assert_eq!(m.mask_bigint(x), Ok(z as i64 + 1));
        }
        // about two applications of P per value: half of all 64-bit values are in range
        let mean = walks as f64 / n as f64;
        assert!((1.9..2.1).contains(&mean), "{mean}");
    }

    /// Spearman's rank correlation of masked values with their ids (which are in order).
    fn spearman<T: Ord + Copy>(masked: &[T]) -> f64 {
        let n = masked.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| masked[i]);
        let mut d2: u128 = 0;
        for (rank, &i) in order.iter().enumerate() {
            let d = rank.abs_diff(i) as u128;
            d2 += d * d;
        }
        let n = n as f64;
        1.0 - 6.0 * d2 as f64 / (n * (n * n - 1.0))
    }

    /// The average length of the common prefix, in bits, of neighbouring values.
    fn mean_common_prefix(values: &[u128]) -> f64 {
        let total: u64 = values
            .windows(2)
            .map(|w| u64::from((w[0] ^ w[1]).leading_zeros()))
            .sum();
        total as f64 / (values.len() - 1) as f64
    }

    #[test]
    fn consecutive_ids_give_uncorrelated_masked_values() {
        let m = Mask::new(*b"0123456789abcdef");
        let n = 100_000u128;
        let start = (1_780_000_000_000u128 << 80) | (7 << 48) | 0xABCDEF;
        // consecutive in every field a generator moves: the random bits, the counter, the time
        for (seed, step) in [(1u64, 1u128), (2, 1 << 64), (3, 1 << 80)] {
            let masked: Vec<u128> = (0..n).map(|k| m.mask_u128(start + k * step)).collect();
            let rho = spearman(&masked);
            assert!(rho.abs() < 0.01, "step {step:#x}: rho {rho}");
            // no longer common prefixes between neighbours than uniform random values have
            // (1 bit on average: a bit agrees with probability 1/2)
            let mut rng = StdRng::seed_from_u64(seed);
            let random: Vec<u128> = (0..n)
                .map(|_| (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()))
                .collect();
            let (got, uniform) = (mean_common_prefix(&masked), mean_common_prefix(&random));
            assert!(
                (got - uniform).abs() < 0.05,
                "step {step:#x}: {got} vs {uniform}"
            );
            assert!((got - 1.0).abs() < 0.05, "step {step:#x}: {got}");
        }
        // the bigint form: consecutive present-day bigint ids
        let first = 3_732_930_560_000_003_114i64;
        let masked: Vec<i64> = (0..n as i64)
            .map(|k| m.mask_bigint(first + k).unwrap())
            .collect();
        let rho = spearman(&masked);
        assert!(rho.abs() < 0.01, "bigint: rho {rho}");
        // 63-bit values: shift so that the common prefix counts from bit 62
        let wide: Vec<u128> = masked.iter().map(|&v| (v as u128) << 65).collect();
        let got = mean_common_prefix(&wide);
        assert!((got - 1.0).abs() < 0.05, "bigint: {got}");
    }

    /// Strict avalanche: flipping any one bit of an id flips each bit of its masked value half
    /// the time, so no field of the id shows through any part of the masked value.
    #[test]
    fn every_input_bit_moves_every_output_bit_half_the_time() {
        let m = paper();
        let mut rng = StdRng::seed_from_u64(128);
        let samples = 3_000;
        let mut flips = vec![[0u32; 128]; 128];
        for _ in 0..samples {
            let v = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            let base = m.mask_u128(v);
            for (bit, row) in flips.iter_mut().enumerate() {
                let d = base ^ m.mask_u128(v ^ (1 << bit));
                for (out, count) in row.iter_mut().enumerate() {
                    *count += (d >> out) as u32 & 1;
                }
            }
        }
        for (bit, row) in flips.iter().enumerate() {
            for (out, &count) in row.iter().enumerate() {
                let p = f64::from(count) / f64::from(samples);
                // 6 standard deviations of a fair coin over 3,000 draws
                assert!((p - 0.5).abs() < 0.055, "in {bit} -> out {out}: {p}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn ids_round_trip(v: u128, key: [u8; 16]) {
            let m = Mask::new(key);
            let id = Id::from_u128(v);
            prop_assert_eq!(m.unmask(m.mask(id)), id);
            prop_assert_eq!(m.mask_u128(m.unmask_u128(v)), v);
        }

        #[test]
        fn ids_of_every_field_shape_round_trip(
            ms in prop_oneof![Just(0u64), Just(MAX_MS), 0..=MAX_MS],
            counter in prop_oneof![Just(0u32), Just(MAX_U16), 0..=MAX_U16],
            publisher in prop_oneof![Just(0u32), Just(MAX_U16), 0..=MAX_U16],
            random in prop_oneof![Just(0u64), Just(MAX_RANDOM), 0..=MAX_RANDOM],
            key: [u8; 16],
        ) {
            let m = Mask::new(key);
            let id = Id::from_parts(Parts { ms, counter, publisher, random }).unwrap();
            prop_assert_eq!(m.unmask(m.mask(id)), id);
        }

        #[test]
        fn bigints_round_trip_and_stay_positive(v in 1..=i64::MAX, key: [u8; 16]) {
            let m = Mask::new(key);
            let x = m.mask_bigint(v).unwrap();
            prop_assert!(x >= 1);
            prop_assert_eq!(m.unmask_bigint(x), Ok(v));
            let y = m.unmask_bigint(v).unwrap();
            prop_assert!(y >= 1);
            prop_assert_eq!(m.mask_bigint(y), Ok(v));
        }

        #[test]
        fn any_text_of_another_shape_is_refused(s in "\\PC{0,40}") {
            let r = Mask::from_hex(&s);
            let hex = s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
            prop_assert_eq!(r.is_ok(), hex);
        }
    }
}
