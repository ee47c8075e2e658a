//! A deterministic fuzz pass over the text parser and the binary decoder: a million inputs per
//! target (`HLCULID_FUZZ_CASES` to change), most of them near-misses of valid input (one byte
//! changed, inserted or removed; wrong lengths; non-ASCII), the rest random bytes. No input may
//! panic or be accepted unless it is one of the accepted forms of the value it decodes to.

use hlculid_core::text::{self, ulid_string};
use hlculid_core::{binary, Id};
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};

fn cases() -> u64 {
    std::env::var("HLCULID_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn forms(id: Id) -> [String; 4] {
    let c = text::canonical_string(id);
    [
        c.clone(),
        c.replace('-', ""),
        text::uuid_string(id),
        ulid_string(id),
    ]
}

const ALPHABET: &[u8] =
    b"0123456789abcdefABCDEFghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ-_ {}\x00\xff\xc3\xa9";

fn mutate(rng: &mut StdRng, mut s: Vec<u8>) -> Vec<u8> {
    let edits = 1 + rng.next_u32() % 3;
    for _ in 0..edits {
        let r = rng.next_u32() as usize;
        let byte = if r.is_multiple_of(4) {
            rng.next_u32() as u8
        } else {
            ALPHABET[r / 4 % ALPHABET.len()]
        };
        match r % 3 {
            0 if !s.is_empty() => {
                let i = rng.next_u32() as usize % s.len();
                s[i] = byte;
            }
            1 => {
                let i = rng.next_u32() as usize % (s.len() + 1);
                s.insert(i, byte);
            }
            _ if !s.is_empty() => {
                let i = rng.next_u32() as usize % s.len();
                s.remove(i);
            }
            _ => s.push(byte),
        }
    }
    s
}

#[test]
fn text_parser_accepts_only_valid_forms() {
    let mut rng = StdRng::seed_from_u64(0x4C5C_0001);
    let (mut accepted, mut rejected) = (0u64, 0u64);
    for i in 0..cases() {
        let input: Vec<u8> = if i % 8 == 0 {
            let len = rng.next_u32() as usize % 48;
            (0..len).map(|_| rng.next_u32() as u8).collect()
        } else {
            let mut v = [0u8; 16];
            rng.fill_bytes(&mut v);
            let base = forms(Id(v))[(rng.next_u32() % 4) as usize]
                .clone()
                .into_bytes();
            mutate(&mut rng, base)
        };
        match text::parse(&input) {
            Ok(id) => {
                accepted += 1;
                let up = String::from_utf8(input.clone())
                    .expect("accepted input is ASCII")
                    .to_ascii_uppercase();
                assert!(
                    forms(id).iter().any(|f| f.to_ascii_uppercase() == up),
                    "accepted {:?} as {id}",
                    String::from_utf8_lossy(&input)
                );
            }
            Err(e) => {
                rejected += 1;
                // the error describes this input: its length, or the first wrong character
                // (put right, parsing gets past it)
                match e {
                    text::ParseError::Empty => assert!(input.is_empty()),
                    text::ParseError::Length(n) => {
                        assert_eq!(n, input.len());
                        assert!(![35, 32, 36, 26].contains(&n));
                    }
                    text::ParseError::Character { at, .. }
                    | text::ParseError::Separator { at, .. } => {
                        let mut fixed = input.clone();
                        fixed[at] = if matches!(e, text::ParseError::Separator { .. }) {
                            b'-'
                        } else {
                            b'0'
                        };
                        match text::parse(&fixed) {
                            Ok(_)
                            | Err(text::ParseError::UlidOverflow)
                            | Err(text::ParseError::RandomUuid) => {}
                            Err(text::ParseError::Character { at: next, .. })
                            | Err(text::ParseError::Separator { at: next, .. }) => {
                                assert!(
                                    next > at,
                                    "{e:?} then {next} in {:?}",
                                    String::from_utf8_lossy(&input)
                                )
                            }
                            Err(other) => panic!("{e:?}, then {other:?}"),
                        }
                    }
                    text::ParseError::UlidOverflow => {
                        assert!(input.len() == 26 && !(b'0'..=b'7').contains(&input[0]))
                    }
                    // the uuid spelling of a random uuid: the same digits unhyphenated read as one
                    text::ParseError::RandomUuid => {
                        assert_eq!(input.len(), 36);
                        let bare: Vec<u8> = input.iter().copied().filter(|&b| b != b'-').collect();
                        assert!(text::is_random_uuid(text::parse(&bare).unwrap()));
                    }
                }
            }
        }
    }
    // Mutations sometimes land on another valid value (a hex digit for a hex digit); most fail.
    assert!(
        accepted > 0 && rejected > accepted,
        "{accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn binary_decoder_accepts_exactly_16_bytes() {
    let mut rng = StdRng::seed_from_u64(0x4C5C_0002);
    for _ in 0..cases() {
        let len = match rng.next_u32() % 4 {
            0 => 16,
            _ => rng.next_u32() as usize % 40,
        };
        let mut buf = vec![0u8; len];
        rng.fill_bytes(&mut buf);
        match binary::decode(&buf) {
            Ok(id) => {
                assert_eq!(len, 16);
                // the bytes in order: the uuid form's hex digits are the input's
                let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(id.to_uuid_string().replace('-', ""), hex);
                assert_eq!(&binary::encode(id)[..], &buf[..], "round trip");
            }
            Err(got) => {
                assert_ne!(len, 16);
                assert_eq!(got, len);
            }
        }
    }
}
