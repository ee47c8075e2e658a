//! Text codecs. Output is the canonical `TTTTTTTTTTTT-CCCC-PPPP-RRRRRRRRRRRR` (upper-case hex,
//! 35 characters, text order = value order) or the 26-character Crockford base32 ULID form.
//! Input accepts, in any letter case: the canonical form, 32 bare hex digits, the 8-4-4-4-12
//! form `uuid` prints, and the ULID form. Nothing else: no braces, no white space, no partial
//! values, no Crockford aliases (I, L, O, U).

use crate::layout::Id;
use std::fmt;

const HEX: &[u8; 16] = b"0123456789ABCDEF";
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Length of the canonical form.
pub const CANONICAL_LEN: usize = 35;
/// Length of the ULID form.
pub const ULID_LEN: usize = 26;

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
        }
    }
}

impl std::error::Error for ParseError {}

#[inline]
fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

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

/// Reads 32 hex digits from `s`, skipping the hyphen positions `hyphens` (which must hold '-').
fn parse_hex(s: &[u8], hyphens: &[usize], form: Form) -> Result<Id, ParseError> {
    let mut v: u128 = 0;
    for (at, &b) in s.iter().enumerate() {
        if hyphens.contains(&at) {
            if b != b'-' {
                return Err(ParseError::Separator { at, form });
            }
            continue;
        }
        let d = hex_value(b).ok_or(ParseError::Character { at, form })?;
        v = (v << 4) | d as u128;
    }
    Ok(Id::from_u128(v))
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
        CANONICAL_LEN => parse_hex(s, &[12, 17, 22], Form::Canonical),
        32 => parse_hex(s, &[], Form::Hex),
        36 => parse_hex(s, &[8, 13, 18, 23], Form::Uuid),
        ULID_LEN => parse_ulid(s),
        n => Err(ParseError::Length(n)),
    }
}

/// The canonical form, as bytes (ASCII).
pub fn canonical(id: Id) -> [u8; CANONICAL_LEN] {
    let mut out = [b'-'; CANONICAL_LEN];
    let mut nibbles = id.0.iter().flat_map(|b| [b >> 4, b & 0xF]);
    for (i, slot) in out.iter_mut().enumerate() {
        if matches!(i, 12 | 17 | 22) {
            continue;
        }
        *slot = HEX[nibbles.next().unwrap_or(0) as usize];
    }
    out
}

pub fn canonical_string(id: Id) -> String {
    // canonical() yields ASCII only.
    canonical(id).iter().map(|&b| b as char).collect()
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

/// The 8-4-4-4-12 lower-case form `uuid` prints for the same bytes.
pub fn uuid_string(id: Id) -> String {
    let h: String = id.0.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
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
            prop_assert_eq!(parse(c.as_bytes()), Ok(id));
            prop_assert_eq!(parse(c.to_ascii_lowercase().as_bytes()), Ok(id));
            prop_assert_eq!(parse(c.replace('-', "").as_bytes()), Ok(id));
            prop_assert_eq!(parse(uuid_string(id).as_bytes()), Ok(id));
            prop_assert_eq!(parse(uuid_string(id).to_ascii_uppercase().as_bytes()), Ok(id));
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
