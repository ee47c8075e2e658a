//! The mask vectors the clients are checked against (`tests/data/mask_vectors.json`): the
//! crate's own [`Mask`] under a few keys, applied to 128-bit ids of every shape and to bigints at
//! the ends of their range, both ways. The Python and Node clients implement the construction
//! from the specification in `core/src/mask.rs` and must give the same values
//! (`tests/clients/test_masks.py`, `node_mask.js`).
//!
//! `cargo run -q -p hlculid-core --example mask_vectors` prints the file; the crate's test
//! `core/tests/mask_vectors.rs` (and `test_masks.py`) regenerates it and fails on any
//! difference, so the file always holds what the crate does today.
//!
//! One case a line, each with its key (32 hex digits):
//! - `{"kind": "id", "value": V, "masked": M, "unmasked": U}`: V an id (canonical 12-4-4-12),
//!   M its masked form (a lower-case 8-4-4-4-12 uuid), U the id that V's 16 bytes unmask to when
//!   read as a masked uuid (the inverse on the same extremes).
//! - `{"kind": "bigint", ...}`: the same for a bigint (decimal strings: JavaScript's numbers
//!   hold integers exactly only up to 2^53).
//! - `{"kind": "id_run" | "bigint_run", "first": V, "count": N, "sha256": H}`: the N consecutive
//!   values from V, masked, printed as above and joined by "\n"; H is the hex SHA-256.
//! - `{"kind": "v4_facade", "value": V, "facade": F, "back": B}`: F the UUIDv47 v4 facade of
//!   the id V's UUIDv7 form (`facade.rs`), B the id F reads back as (V with its 6 lowest bits 0).
//!   Also under UUIDv47's README key, for ids whose UUIDv7 form is one of the v7 uuids of the
//!   UUIDv47 vectors (their facades are those vectors' v4 uuids).
//! - `{"kind": "bad_key", "text": T, "error": "Length" | "Character", "n" | "at": K}`: a text
//!   that is not a key, and why (the crate's [`KeyError`]).
//! - `{"kind": "bad_bigint", "value": V, "error": "NotPositive"}`: a bigint no mask takes.

use hlculid_core::mask::{KeyError, Mask};
use hlculid_core::{Id, Parts};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The SipHash paper's key, the all-zero and all-one keys, and the AES-128 test key of FIPS 197
/// appendix A.1 (a key that looks random).
const KEYS: [&str; 4] = [
    "000102030405060708090a0b0c0d0e0f",
    "00000000000000000000000000000000",
    "ffffffffffffffffffffffffffffffff",
    "2b7e151628aed2a6abf7158809cf4f3c",
];

/// UUIDv47's README key `{k0 = 0x0123456789abcdef, k1 = 0xfedcba9876543210}` as 16 bytes, and
/// the v7 uuids of its vectors (core/src/facade.rs checks their facades).
const UUIDV47_KEY: &str = "efcdab89674523011032547698badcfe";
const UUIDV47_V7: [&str; 5] = [
    "018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f",
    "00000000-0000-7000-8000-000000000000",
    "00000000-007b-7aaa-8123-456789abcdef",
    "00000010-007b-7aad-9032-547698badcfe",
    "00000020-007b-7aa4-a301-6745ab89efcd",
];
const MAX_MS: u64 = (1 << 48) - 1;
const MAX_RANDOM: u64 = (1 << 48) - 1;
/// A present-day id and a present-day bigint id (from `tests/data/clock_scenario.json`).
const NOW_ID: u128 = 0x019E_7044_8800_0000_002A_2DEC_8902_5CC1;
const NOW_BIGINT: i64 = 3_732_930_560_000_003_114;
const RUN: u64 = 10_000;

fn uuid_text(b: [u8; 16]) -> String {
    Id::from_bytes(b).to_uuid_string()
}

fn ids() -> Vec<Id> {
    let mut v = vec![
        Id::MIN,
        Id::MAX,
        Id::from_u128(1),
        Id::from_u128(u128::MAX - 1),
        Id::from_u128(1 << 64),
        Id::from_u128((1 << 64) - 1),
        Id::from_u128(1 << 127),
        Id::from_u128((1 << 127) - 1),
    ];
    // every field at both ends, in every combination
    for ms in [0, MAX_MS] {
        for counter in [0, 0xFFFF] {
            for publisher in [0, 0xFFFF] {
                for random in [0, MAX_RANDOM] {
                    let p = Parts {
                        ms,
                        counter,
                        publisher,
                        random,
                    };
                    v.push(Id::from_parts(p).unwrap());
                }
            }
        }
    }
    // the design's example id, and runs of consecutive ids in the random bits, the counter and
    // the millisecond
    v.push("017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap());
    v.extend((0..4).map(|k| Id::from_u128(NOW_ID + k)));
    v.extend((0..4).map(|k| Id::from_u128(NOW_ID + (k << 64))));
    v.extend((0..4).map(|k| Id::from_u128(NOW_ID + (k << 80))));
    v
}

fn bigints() -> Vec<i64> {
    let mut v: Vec<i64> = (1..=4).chain((0..4).map(|k| i64::MAX - k)).collect();
    v.extend([1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, 1 << 62]);
    v.extend((0..8).map(|k| NOW_BIGINT + k));
    v
}

fn facade_case(key: &str, m: &Mask, id: Id) -> Value {
    let facade = m.to_v4_facade(id);
    json!({
        "key": key, "kind": "v4_facade", "value": id.to_string(),
        "facade": uuid_text(facade),
        "back": m.from_v4_facade(facade).unwrap().to_string(),
    })
}

fn sha256(lines: &[String]) -> String {
    Sha256::digest(lines.join("\n").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The whole file, as printed.
pub fn document() -> String {
    let mut cases: Vec<Value> = Vec::new();
    for key in KEYS {
        let m = Mask::from_hex(key).unwrap();
        for id in ids() {
            cases.push(json!({
                "key": key, "kind": "id", "value": id.to_string(),
                "masked": uuid_text(m.mask(id)),
                "unmasked": m.unmask(id.to_bytes()).to_string(),
            }));
        }
        for id in ids() {
            cases.push(facade_case(key, &m, id));
        }
        for b in bigints() {
            cases.push(json!({
                "key": key, "kind": "bigint", "value": b.to_string(),
                "masked": m.mask_bigint(b).unwrap().to_string(),
                "unmasked": m.unmask_bigint(b).unwrap().to_string(),
            }));
        }
    }
    let m = Mask::from_hex(UUIDV47_KEY).unwrap();
    for v7 in UUIDV47_V7 {
        let v7 = u128::from_str_radix(&v7.replace('-', ""), 16).unwrap();
        let id = Id::from_uuidv7_bytes(v7.to_be_bytes()).unwrap();
        cases.push(facade_case(UUIDV47_KEY, &m, id));
    }
    let m = Mask::from_hex(KEYS[3]).unwrap();
    let run: Vec<String> = (0..u128::from(RUN))
        .map(|k| uuid_text(m.mask(Id::from_u128(NOW_ID + k))))
        .collect();
    cases.push(json!({
        "key": KEYS[3], "kind": "id_run", "first": Id::from_u128(NOW_ID).to_string(),
        "count": RUN, "sha256": sha256(&run),
    }));
    let run: Vec<String> = (0..RUN as i64)
        .map(|k| m.mask_bigint(NOW_BIGINT + k).unwrap().to_string())
        .collect();
    cases.push(json!({
        "key": KEYS[3], "kind": "bigint_run", "first": NOW_BIGINT.to_string(),
        "count": RUN, "sha256": sha256(&run),
    }));
    for text in [
        "",
        "000102030405060708090a0b0c0d0e0",
        "000102030405060708090a0b0c0d0e0f0",
        "0x0102030405060708090a0b0c0d0e0f",
        "000102030405060708090a0b0c0d0e0g",
        " 00102030405060708090a0b0c0d0e0f",
        "00010203-0405-0607-0809-0a0b0c0d",
        "000102030405060708090a0b0c0d0e0\u{e9}",
    ] {
        let mut case = json!({"kind": "bad_key", "text": text});
        match Mask::from_hex(text).unwrap_err() {
            KeyError::Length(n) => {
                case["error"] = json!("Length");
                case["n"] = json!(n);
            }
            KeyError::Character { at } => {
                case["error"] = json!("Character");
                case["at"] = json!(at);
            }
        }
        cases.push(case);
    }
    for v in [0, -1, i64::MIN] {
        let m = Mask::from_hex(KEYS[0]).unwrap();
        assert!(m.mask_bigint(v).is_err() && m.unmask_bigint(v).is_err());
        cases.push(json!({"kind": "bad_bigint", "value": v.to_string(), "error": "NotPositive"}));
    }

    let about = json!(
        "Made by core/examples/mask_vectors.rs from the crate's Mask; do not edit: \
         core/tests/mask_vectors.rs and tests/clients/test_masks.py regenerate it and fail on a \
         difference. The Python and Node clients check every case."
    );
    // one case a line: small diffs when the crate's behaviour changes
    let mut out = format!("{{\n  \"about\": {about},\n  \"cases\": [\n");
    let n = cases.len();
    for (i, c) in cases.iter().enumerate() {
        out += &format!("    {c}{}\n", if i + 1 < n { "," } else { "" });
    }
    out += "  ]\n}\n";
    out
}

#[allow(dead_code)] // the test includes this file for `document` alone
fn main() {
    print!("{}", document());
}
