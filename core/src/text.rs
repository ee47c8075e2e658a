//! Text codecs. Output is the canonical `TTTTTTTTTTTT-CCCC-PPPP-RRRRRRRRRRRR` (upper-case hex,
//! 35 characters, text order = value order) or the 26-character Crockford base32 ULID form.
//! Input accepts, in any letter case: the canonical form, 32 bare hex digits, the 8-4-4-4-12
//! form `uuid` prints, and the ULID form. Nothing else: no braces, no white space, no partial
//! values, no Crockford aliases (I, L, O, U).

use crate::layout::Id;
use std::fmt;

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Length of the canonical form.
pub const CANONICAL_LEN: usize = 35;
/// Length of the ULID form.
pub const ULID_LEN: usize = 26;

/// Where the 32 hex digits of a form with hyphens at `hyphens` sit, in order.
const fn digit_positions<const N: usize>(hyphens: [usize; N]) -> [usize; 32] {
    let mut out = [0; 32];
    let (mut at, mut i) = (0, 0);
    while i < 32 {
        let mut is_hyphen = false;
        let mut h = 0;
        while h < N {
            is_hyphen |= hyphens[h] == at;
            h += 1;
        }
        if !is_hyphen {
            out[i] = at;
            i += 1;
        }
        at += 1;
    }
    out
}

const CANONICAL_HYPHENS: [usize; 3] = [12, 17, 22];
const UUID_HYPHENS: [usize; 4] = [8, 13, 18, 23];
const CANONICAL_DIGITS: [usize; 32] = digit_positions(CANONICAL_HYPHENS);
const UUID_DIGITS: [usize; 32] = digit_positions(UUID_HYPHENS);
const PLAIN_DIGITS: [usize; 32] = digit_positions([]);

/// Hex digit values by byte; 0xFF for anything else.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => 0xFF,
        };
        i += 1;
    }
    t
};

/// Why a string is not an hlculid. `Display` gives a sentence for an error DETAIL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    Empty,
    /// No accepted form has this many bytes.
    Length(usize),
    /// A byte that is not a digit of the form, at this byte offset.
    Character {
        at: usize,
        form: Form,
    },
    /// A hyphen missing or misplaced in a form that needs them.
    Separator {
        at: usize,
        form: Form,
    },
    /// A ULID whose value exceeds 128 bits (first character above 7).
    UlidOverflow,
    /// Text in the 8-4-4-4-12 uuid form of a random uuid (version 4 with the RFC 9562 variant):
    /// its bytes would read as a time centuries ahead (the uuid cast refuses the same values).
    RandomUuid,
}

/// The accepted text forms.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Form {
    Canonical,
    Hex,
    Uuid,
    Ulid,
}

impl Form {
    fn describe(self) -> &'static str {
        match self {
            Form::Canonical => "the 12-4-4-12 hex form",
            Form::Hex => "the 32-digit hex form",
            Form::Uuid => "the 8-4-4-4-12 uuid form",
            Form::Ulid => "the 26-character ULID form",
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ParseError::Empty => write!(f, "The input is empty."),
            ParseError::Length(n) => write!(
                f,
                "The input has {n} characters; accepted forms have 35, 32, 36 or 26."
            ),
            ParseError::Character { at, form } => write!(
                f,
                "Character {} is not valid in {}.",
                at + 1,
                form.describe()
            ),
            ParseError::Separator { at, form } => write!(
                f,
                "Character {} should be a hyphen in {}.",
                at + 1,
                form.describe()
            ),
            ParseError::UlidOverflow => write!(f, "The ULID value exceeds 128 bits."),
            ParseError::RandomUuid => write!(
                f,
                "It is a random uuid (version 4 with the RFC 9562 variant), whose bytes would read as a time centuries ahead."
            ),
        }
    }
}

impl std::error::Error for ParseError {}

#[inline]
fn crockford_value(b: u8) -> Option<u8> {
    let up = b.to_ascii_uppercase();
    match up {
        b'0'..=b'9' => Some(up - b'0'),
        b'A'..=b'H' => Some(up - b'A' + 10),
        b'J' | b'K' => Some(up - b'J' + 18),
        b'M' | b'N' => Some(up - b'M' + 20),
        b'P'..=b'T' => Some(up - b'P' + 22),
        b'V'..=b'Z' => Some(up - b'V' + 27),
        _ => None,
    }
}

/// Reads the 32 hex digits of a form: a branch-free pass over the digits' known positions, and
/// only when something is wrong, [`hex_error`] for the first fault in reading order.
#[inline]
fn parse_hex(
    s: &[u8],
    digits: &[usize; 32],
    hyphens: &[usize],
    form: Form,
) -> Result<Id, ParseError> {
    let mut out = [0u8; 16];
    let mut bad = 0u8;
    for (i, byte) in out.iter_mut().enumerate() {
        let hi = HEX_VALUE[s[digits[2 * i]] as usize];
        let lo = HEX_VALUE[s[digits[2 * i + 1]] as usize];
        bad |= hi | lo;
        *byte = (hi << 4) | (lo & 0xF);
    }
    for &at in hyphens {
        bad |= u8::from(s[at] != b'-') << 7;
    }
    if bad & 0xF0 != 0 {
        return Err(hex_error(s, hyphens, form));
    }
    Ok(Id(out))
}

/// The first fault of a hex form, in reading order.
#[cold]
fn hex_error(s: &[u8], hyphens: &[usize], form: Form) -> ParseError {
    for (at, &b) in s.iter().enumerate() {
        if hyphens.contains(&at) {
            if b != b'-' {
                return ParseError::Separator { at, form };
            }
        } else if HEX_VALUE[b as usize] == 0xFF {
            return ParseError::Character { at, form };
        }
    }
    unreachable!("hex_error is called only for input with a fault")
}

fn parse_ulid(s: &[u8]) -> Result<Id, ParseError> {
    let mut v: u128 = 0;
    for (at, &b) in s.iter().enumerate() {
        let d = crockford_value(b).ok_or(ParseError::Character {
            at,
            form: Form::Ulid,
        })?;
        if at == 0 && d > 7 {
            return Err(ParseError::UlidOverflow);
        }
        v = (v << 5) | d as u128;
    }
    Ok(Id::from_u128(v))
}

/// Parses any accepted form. Works on bytes, so non-UTF-8 and non-ASCII input is simply rejected.
pub fn parse(s: &[u8]) -> Result<Id, ParseError> {
    match s.len() {
        0 => Err(ParseError::Empty),
        CANONICAL_LEN => parse_hex(s, &CANONICAL_DIGITS, &CANONICAL_HYPHENS, Form::Canonical),
        32 => parse_hex(s, &PLAIN_DIGITS, &[], Form::Hex),
        36 => match parse_hex(s, &UUID_DIGITS, &UUID_HYPHENS, Form::Uuid)? {
            id if is_random_uuid(id) => Err(ParseError::RandomUuid),
            id => Ok(id),
        },
        ULID_LEN => parse_ulid(s),
        n => Err(ParseError::Length(n)),
    }
}

/// Writes the id's 32 hex digits at `digits` of a buffer pre-filled with hyphens.
#[inline]
fn write_hex<const N: usize>(id: Id, digits: &[usize; 32], hex: &[u8; 16]) -> [u8; N] {
    let mut out = [b'-'; N];
    for (i, &b) in id.0.iter().enumerate() {
        out[digits[2 * i]] = hex[(b >> 4) as usize];
        out[digits[2 * i + 1]] = hex[(b & 0xF) as usize];
    }
    out
}

/// Upper-case hex of the 4 bytes of `x` (big-endian), 8 ASCII digits in one u64, computed
/// across all eight lanes at once rather than by table lookups.
#[inline(always)]
fn hex8(x: u32) -> [u8; 8] {
    let x = u64::from(x);
    // Spread the nibbles one per byte, most significant first once written big-endian.
    let x = ((x & 0xFFFF_0000) << 16) | (x & 0xFFFF);
    let x = ((x & 0x0000_FF00_0000_FF00) << 8) | (x & 0x0000_00FF_0000_00FF);
    let x = ((x & 0x00F0_00F0_00F0_00F0) << 4) | (x & 0x000F_000F_000F_000F);
    // Lanes holding 10..15 get the gap between '9' and 'A' added.
    let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    (x + 0x3030_3030_3030_3030 + letters * 7).to_be_bytes()
}

/// The canonical form, as bytes (ASCII): 6, 2, 2 and 6 bytes of hex between hyphens.
#[inline]
pub fn canonical(id: Id) -> [u8; CANONICAL_LEN] {
    let v = id.to_u128();
    let d = [
        hex8((v >> 96) as u32),
        hex8((v >> 64) as u32),
        hex8((v >> 32) as u32),
        hex8(v as u32),
    ];
    // 32 digits, then hyphens after digits 12, 16 and 20.
    let mut out = [b'-'; CANONICAL_LEN];
    out[0..8].copy_from_slice(&d[0]);
    out[8..12].copy_from_slice(&d[1][0..4]);
    out[13..17].copy_from_slice(&d[1][4..8]);
    out[18..22].copy_from_slice(&d[2][0..4]);
    out[23..27].copy_from_slice(&d[2][4..8]);
    out[27..35].copy_from_slice(&d[3]);
    out
}

/// The canonical form as `&str`, in a buffer the caller provides.
#[inline]
pub fn canonical_str(id: Id, buf: &mut [u8; CANONICAL_LEN]) -> &str {
    *buf = canonical(id);
    // SAFETY: canonical() writes only hex digits and hyphens, which are ASCII.
    unsafe { std::str::from_utf8_unchecked(buf) }
}

pub fn canonical_string(id: Id) -> String {
    canonical_str(id, &mut [0; CANONICAL_LEN]).to_string()
}

/// The 26-character Crockford base32 ULID form (upper case).
pub fn ulid(id: Id) -> [u8; ULID_LEN] {
    let v = id.to_u128();
    let mut out = [0u8; ULID_LEN];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (ULID_LEN - 1 - i);
        *slot = CROCKFORD[((v >> shift) & 0x1F) as usize];
    }
    out
}

pub fn ulid_string(id: Id) -> String {
    ulid(id).iter().map(|&b| b as char).collect()
}

/// Whether these 16 bytes are a random uuid: RFC 9562 version 4 (the high nibble of byte 6)
/// with the RFC variant (the top two bits of byte 8 are 10), what `gen_random_uuid()` makes.
/// Read as an hlculid such a value has a counter of 0x4000-0x4FFF and a publisher of
/// 32768-49151; its time field is random, mostly centuries ahead. PostgreSQL's `uuid` cast to
/// `hlculid` refuses these values; text and binary input read any 128-bit value.
#[inline]
pub const fn is_random_uuid(id: Id) -> bool {
    id.0[6] >> 4 == 4 && id.0[8] >> 6 == 0b10
}

/// The 8-4-4-4-12 lower-case form `uuid` prints for the same bytes.
pub fn uuid_string(id: Id) -> String {
    let out: [u8; 36] = write_hex(id, &UUID_DIGITS, b"0123456789abcdef");
    std::str::from_utf8(&out)
        .expect("hex digits and hyphens are ASCII")
        .to_string()
}

#[cfg(test)]
// Literals are grouped like the id's fields (12-4-4-12 hex digits).
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A1: &str = "017FC21C5E7A-0000-000A-AAA111111111";

    #[test]
    fn canonical_example() {
        let id = parse(A1.as_bytes()).unwrap();
        assert_eq!(id.to_u128(), 0x017FC21C5E7A_0000_000A_AAA111111111);
        assert_eq!(canonical_string(id), A1);
    }

    #[test]
    fn every_form_of_one_value() {
        let id = parse(A1.as_bytes()).unwrap();
        for s in [
            A1.to_ascii_lowercase(),
            "017FC21C5E7A0000000AAAA111111111".to_string(),
            "017fc21c-5e7a-0000-000a-aaa111111111".to_string(),
            ulid_string(id),
            ulid_string(id).to_ascii_lowercase(),
        ] {
            assert_eq!(parse(s.as_bytes()), Ok(id), "{s}");
        }
    }

    #[test]
    fn ulid_known_value() {
        // From the ULID spec: 01ARZ3NDEKTSV4RRFFQ69G5FAV
        let id = parse(b"01ARZ3NDEKTSV4RRFFQ69G5FAV").unwrap();
        assert_eq!(ulid_string(id), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
        assert_eq!(id.ms(), 1469922850259);
        assert_eq!(ulid_string(Id::MAX), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
        assert_eq!(ulid_string(Id::MIN), "00000000000000000000000000");
    }

    #[test]
    fn rejects_malformed() {
        use ParseError::*;
        let cases: &[(&[u8], ParseError)] = &[
            (b"", Empty),
            (b"0", Length(1)),
            (b"017FC21C5E7A-0000-000A-AAA11111111", Length(34)),
            (
                b"017FC21C5E7A-0000-000A-AAA1111111111",
                Separator {
                    at: 8,
                    form: Form::Uuid,
                },
            ),
            (
                b"017FC21C5E7A-0000-000A-AAA111111111 ",
                Separator {
                    at: 8,
                    form: Form::Uuid,
                },
            ),
            (
                b" 017FC21C5E7A-0000-000A-AAA111111111",
                Character {
                    at: 0,
                    form: Form::Uuid,
                },
            ),
            (b"017FC21C5E7A0000000AAAA1111111111", Length(33)),
            (
                b"017FC21C5E7A00000-000A-AAA111111111",
                Separator {
                    at: 12,
                    form: Form::Canonical,
                },
            ),
            (
                b"017FC21C5E7A-0000_000A-AAA111111111",
                Separator {
                    at: 17,
                    form: Form::Canonical,
                },
            ),
            (
                b"017FC21C5E7A-0000-000A+AAA111111111",
                Separator {
                    at: 22,
                    form: Form::Canonical,
                },
            ),
            (
                b"017FC21C5E7G-0000-000A-AAA111111111",
                Character {
                    at: 11,
                    form: Form::Canonical,
                },
            ),
            (
                b"017FC21C5E7A-0000-000A-AAA11111111-",
                Character {
                    at: 34,
                    form: Form::Canonical,
                },
            ),
            (
                b"017FC21C5E7A0000000AAAA11111111Z",
                Character {
                    at: 31,
                    form: Form::Hex,
                },
            ),
            (
                b"017FC21C5E7A0000000AAAA11111111-",
                Character {
                    at: 31,
                    form: Form::Hex,
                },
            ),
            (
                b"017fc21c-5e7a-0000-000a-aaa11111111g",
                Character {
                    at: 35,
                    form: Form::Uuid,
                },
            ),
            (
                b"017fc21c5e7a-0000-000a-aaa111111111-",
                Separator {
                    at: 8,
                    form: Form::Uuid,
                },
            ),
            (
                b"{17fc21c-5e7a-0000-000a-aaa11111111}",
                Character {
                    at: 0,
                    form: Form::Uuid,
                },
            ),
            (
                b"01ARZ3NDEKTSV4RRFFQ69G5FAU",
                Character {
                    at: 25,
                    form: Form::Ulid,
                },
            ),
            (
                b"01ARZ3NDEKTSV4RRFFQ69G5FAI",
                Character {
                    at: 25,
                    form: Form::Ulid,
                },
            ),
            (
                b"01ARZ3NDEKTSV4RRFFQ69G5FAL",
                Character {
                    at: 25,
                    form: Form::Ulid,
                },
            ),
            (
                b"01ARZ3NDEKTSV4RRFFQ69G5FAO",
                Character {
                    at: 25,
                    form: Form::Ulid,
                },
            ),
            (
                b"01ARZ3NDEKTSV4RRFFQ69G5FA-",
                Character {
                    at: 25,
                    form: Form::Ulid,
                },
            ),
            (b"80000000000000000000000000", UlidOverflow),
            (b"ZZZZZZZZZZZZZZZZZZZZZZZZZZ", UlidOverflow),
        ];
        for (s, want) in cases {
            assert_eq!(parse(s), Err(*want), "{}", String::from_utf8_lossy(s));
        }
        // Non-ASCII: 'é' is two bytes, so the length matches the 35-byte form but a byte is bad.
        let s = "017FC21C5E7A-0000-000A-AAA1111111é".as_bytes();
        assert_eq!(s.len(), 35);
        assert!(matches!(parse(s), Err(Character { .. })));
        let fullwidth = "０１７FC21C5E7A0000000AAAA111111".as_bytes();
        assert!(parse(fullwidth).is_err());
    }

    #[test]
    fn random_uuids_are_version_4_with_the_rfc_variant() {
        let id = |s: &str| match parse(s.as_bytes()) {
            // the uuid spelling of a random uuid is refused; its bytes, for the check below
            Err(ParseError::RandomUuid) => parse(s.replace('-', "").as_bytes()).unwrap(),
            r => r.unwrap(),
        };
        // gen_random_uuid() output, and the edges of the version nibble and the variant bits
        for random in [
            "8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203",
            "00000000-0000-4000-8000-000000000000",
            "ffffffff-ffff-4fff-bfff-ffffffffffff",
        ] {
            assert!(is_random_uuid(id(random)));
            assert_eq!(parse(random.as_bytes()), Err(ParseError::RandomUuid));
            assert_eq!(
                parse(random.to_ascii_uppercase().as_bytes()),
                Err(ParseError::RandomUuid)
            );
        }
        for other in [
            "8f3c1f0e-6b1d-3a2b-9c3d-5e6f70819203", // version 3
            "8f3c1f0e-6b1d-5a2b-9c3d-5e6f70819203", // version 5
            "018f3c1f-0e6b-7d4a-9c3d-5e6f70819203", // version 7
            "8f3c1f0e-6b1d-4a2b-7c3d-5e6f70819203", // variant 0 (NCS)
            "8f3c1f0e-6b1d-4a2b-cc3d-5e6f70819203", // variant 110 (Microsoft)
            "017FC21C5E7A-4000-7FFF-AAA111111111",  // counter 0x4000, publisher 32767
            "017FC21C5E7A-3FFF-8000-AAA111111111",  // publisher 32768, counter 0x3FFF
            "017FC21C5E7A-5000-8000-AAA111111111",  // publisher 32768, counter 0x5000
            "017FC21C5E7A-4000-C000-AAA111111111",  // counter 0x4000, publisher 49152
        ] {
            assert!(!is_random_uuid(id(other)), "{other}");
        }
        // as an hlculid: exactly counter 0x4000-0x4FFF with publisher 32768-49151
        for (counter, publisher) in [(0x4000u16, 0x8000u16), (0x4FFF, 0xBFFF), (0x4ABC, 0x9000)] {
            let mut b = [0u8; 16];
            b[6..8].copy_from_slice(&counter.to_be_bytes());
            b[8..10].copy_from_slice(&publisher.to_be_bytes());
            assert!(is_random_uuid(Id(b)), "{counter:x} {publisher:x}");
        }
    }

    #[test]
    fn error_details_are_sentences() {
        for e in [
            ParseError::Empty,
            ParseError::Length(3),
            ParseError::Character {
                at: 0,
                form: Form::Ulid,
            },
            ParseError::Separator {
                at: 12,
                form: Form::Canonical,
            },
            ParseError::UlidOverflow,
            ParseError::RandomUuid,
        ] {
            let s = e.to_string();
            assert!(
                s.ends_with('.') && s.chars().next().unwrap().is_uppercase(),
                "{s}"
            );
        }
    }

    proptest! {
        #[test]
        fn every_form_round_trips(v: u128) {
            let id = Id::from_u128(v);
            let c = canonical_string(id);
            prop_assert_eq!(c.replace('-', ""), format!("{:032X}", id.to_u128()));
            prop_assert_eq!([&c[12..13], &c[17..18], &c[22..23]], ["-", "-", "-"]);
            prop_assert_eq!(parse(c.as_bytes()), Ok(id));
            prop_assert_eq!(parse(c.to_ascii_lowercase().as_bytes()), Ok(id));
            prop_assert_eq!(parse(c.replace('-', "").as_bytes()), Ok(id));
            // the uuid spelling reads every id but a random uuid's bytes, which it refuses
            let via_uuid = if is_random_uuid(id) { Err(ParseError::RandomUuid) } else { Ok(id) };
            prop_assert_eq!(parse(uuid_string(id).as_bytes()), via_uuid);
            prop_assert_eq!(parse(uuid_string(id).to_ascii_uppercase().as_bytes()), via_uuid);
            let u = ulid_string(id);
            prop_assert_eq!(parse(u.as_bytes()), Ok(id));
            prop_assert_eq!(parse(u.to_ascii_lowercase().as_bytes()), Ok(id));
        }

        #[test]
        fn text_order_is_value_order(a: u128, b: u128) {
            let (x, y) = (Id::from_u128(a), Id::from_u128(b));
            prop_assert_eq!(canonical_string(x).cmp(&canonical_string(y)), a.cmp(&b));
            prop_assert_eq!(ulid_string(x).cmp(&ulid_string(y)), a.cmp(&b));
            prop_assert_eq!(uuid_string(x).cmp(&uuid_string(y)), a.cmp(&b));
        }

        #[test]
        fn arbitrary_bytes_never_panic(s in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(id) = parse(&s) {
                // Anything accepted is one of the forms of the value it decodes to.
                let forms = [
                    canonical_string(id),
                    canonical_string(id).replace('-', ""),
                    uuid_string(id),
                    ulid_string(id),
                ];
                let up = String::from_utf8(s.clone()).unwrap().to_ascii_uppercase();
                prop_assert!(forms.iter().any(|f| f.to_ascii_uppercase() == up));
            }
        }

        #[test]
        fn one_bad_byte_is_rejected(v: u128, pos in 0usize..35, bad in prop::sample::select(vec![b'g', b'G', b' ', b'\0', 0xC3, b'-', b'+', b'z'])) {
            let mut s = canonical(Id::from_u128(v));
            if s[pos] != bad {
                s[pos] = bad;
                prop_assert!(parse(&s).is_err());
            }
        }
    }
}
