//! The clock scenario the clients are checked against (`tests/data/clock_scenario.json`): the
//! crate's own [`Generator`] driven through a scripted wall clock, a simulated sleep (a wait at
//! the run-ahead bound moves the scripted clock on by the ms waited) and a seeded random source
//! (splitmix64), and every id and refusal it gives recorded beside the step that gave it. The
//! Python and Node clients replay the same steps with the same sources and must give the same
//! ids, id by id, and the same refusals (`tests/clients/test_generators.py`, `node_clock.js`).
//!
//! `cargo run -q -p hlculid-core --example clock_scenario` prints the file; the test regenerates
//! it and fails on any difference, so the file always holds what the crate does today.
//!
//! Steps (one JSON object each, run in order; the scripted clock carries across generators):
//! - `{"op": "new", "publisher": P, "max_skew_ms": S, "seed": N}`: a new generator; its random
//!   bits are the low 48 bits of splitmix64 seeded with N, one draw per 128-bit id.
//! - `{"op": "clock", "ms": T}`: the wall clock reads T from now on (0: before the epoch).
//! - `{"op": "generate", "n": N}` / `{"op": "generate_bigint", "n": N}`: N single calls.
//! - `{"op": "horizon"}`, `{"op": "observe", "id": "32 hex digits"}`.
//!
//! Each step's `expect`: `ids` (canonical strings or decimal bigint ids; for more than 16 ids,
//! `count`, `first`, `last` and `sha256`, the hex SHA-256 of the ids joined by "\n"), `error`
//! (the crate's [`Error`] variant; `ahead_ms` or `publisher` with it; a failed `generate` step
//! stops there, its ids those made before), and `now`, the scripted clock after the step.

use hlculid_core::{Error, Generator, Id};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const T: u64 = 1_780_000_000_000;
/// 2110-01-01T00:00:00Z: past the last millisecond a bigint id holds.
const Y2110: u64 = 4_417_977_600_000;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hex(logical: u64, publisher: u16, random: u64) -> String {
    format!(
        "{:032x}",
        Id::from_logical(logical, publisher, random).to_u128()
    )
}

fn clock(ms: u64) -> Value {
    json!({"op": "clock", "ms": ms})
}
fn generate(n: u64) -> Value {
    json!({"op": "generate", "n": n})
}
fn bigint(n: u64) -> Value {
    json!({"op": "generate_bigint", "n": n})
}
fn observe(id: String) -> Value {
    json!({"op": "observe", "id": id})
}
fn new(publisher: u16, max_skew_ms: u64, seed: u64) -> Value {
    json!({"op": "new", "publisher": publisher, "max_skew_ms": max_skew_ms, "seed": seed})
}

fn steps() -> Vec<Value> {
    let ms = |m: u64| m << 16;
    vec![
        new(42, 500, 1),
        clock(T),
        generate(3),
        bigint(2),
        // more than 65,536 ids in one millisecond: the counter carries into T + 2
        clock(T + 1),
        generate(70_000),
        // a counter of 2048 or more does not fit a bigint id: the next millisecond
        bigint(3),
        generate(2),
        clock(T + 2),
        generate(2),
        clock(T + 1_000),
        generate(2),
        // a backward step of 6 s: ids go on from the last one, without a wait
        clock(T - 5_000),
        generate(5),
        bigint(2),
        json!({"op": "horizon"}),
        clock(T + 999),
        generate(2),
        clock(T + 1_001),
        generate(2),
        // observes: behind the clock, exactly at the bound, one ms beyond it, a random uuid, a
        // time centuries ahead
        observe(hex(ms(T), 1, 0)),
        generate(1),
        observe(hex(ms(T + 1_001 + 500) | 7, 1, 0)),
        generate(2),
        observe(hex(ms(T + 1_001 + 501), 1, 0)),
        observe("6e9f0e1c5b3a4d2e9f8a1b2c3d4e5f60".into()),
        observe(hex(ms(T + 1_001 + 200) | 0x4123, 0x8abc, 0x1234)),
        observe("f7a1b2c3d4e50000000100000000abcd".into()),
        generate(2),
        // small backward steps (ignored up to 10 ms) and larger ones (the bound counts from the
        // clock before the step)
        clock(T + 2_000),
        generate(300),
        clock(T + 1_950),
        generate(3),
        clock(T + 2_001),
        generate(300),
        clock(T + 1_995),
        generate(5),
        clock(T + 2_003),
        bigint(5),
        generate(5),
        // the run-ahead bound: 2 ms; a frozen clock and bursts of several milliseconds' counters
        new(7, 2, 2),
        clock(T + 10_000),
        generate(200_000),
        // the clock reads T + 10,001 after the waits: 2 ms ahead is observed (and anchors the
        // bound), 3 ms is refused
        observe(hex(ms(T + 10_003) | 0xF000, 1, 0)),
        observe(hex(ms(T + 10_004), 1, 0)),
        generate(70_000),
        clock(T + 9_900),
        generate(200_000),
        bigint(3_000),
        // a step back of 20 ms: the bound counts from the clock before it, so a burst goes on
        // unpaced; a step back of 10 ms is no step: the burst waits for the wall clock
        new(8, 2, 5),
        clock(T + 40_000),
        generate(1),
        clock(T + 40_020),
        generate(1),
        clock(T + 40_000),
        generate(140_000),
        clock(T + 40_100),
        generate(1),
        clock(T + 40_090),
        generate(140_000),
        // wall clocks an id cannot hold
        clock(0),
        generate(1),
        bigint(1),
        observe(hex(ms(T + 20_000), 1, 0)),
        observe(hex(ms(T), 1, 0)),
        clock(1 << 48),
        generate(1),
        clock(T + 20_000),
        generate(1),
        // a publisher a bigint id cannot hold: refused, nothing taken
        new(1024, 500, 3),
        clock(T + 30_000),
        bigint(1),
        generate(2),
        // the ends of the ranges
        new(5, 500, 4),
        clock(Y2110),
        generate(1),
        bigint(1),
        generate(1),
        clock(0xFFFF_FF00_0000),
        generate(1),
        observe(hex(ms(0xFFFF_FF00_0000), 1, 0)),
        clock(0xFFFF_FEFF_FFFF),
        generate(1),
        generate(1),
    ]
}

fn error_json(e: &Error, out: &mut Map<String, Value>) {
    let name = match e {
        Error::WallClockOutOfRange => "WallClockOutOfRange",
        Error::Exhausted => "Exhausted",
        Error::TooFarAhead { ahead_ms } => {
            out.insert("ahead_ms".into(), json!(ahead_ms));
            "TooFarAhead"
        }
        Error::RandomUuid => "RandomUuid",
        Error::PublisherTooWideForBigint { publisher } => {
            out.insert("publisher".into(), json!(publisher));
            "PublisherTooWideForBigint"
        }
        Error::BigintTimeOutOfRange => "BigintTimeOutOfRange",
        other => panic!("the scenario cannot give {other:?}"),
    };
    out.insert("error".into(), json!(name));
}

fn ids_json(ids: &[String], out: &mut Map<String, Value>) {
    if ids.len() <= 16 {
        out.insert("ids".into(), json!(ids));
    } else {
        let digest = Sha256::digest(ids.join("\n").as_bytes());
        let sha: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        out.insert("count".into(), json!(ids.len()));
        out.insert("first".into(), json!(ids[0]));
        out.insert("last".into(), json!(ids[ids.len() - 1]));
        out.insert("sha256".into(), json!(sha));
    }
}

fn main() {
    let now = Arc::new(AtomicU64::new(0));
    let mut gen: Option<Generator> = None;
    let mut out = Vec::new();
    for step in steps() {
        let op = step["op"].as_str().unwrap();
        let mut expect = Map::new();
        match op {
            "new" => {
                let (read, wait) = (now.clone(), now.clone());
                let mut state = step["seed"].as_u64().unwrap();
                gen = Some(
                    Generator::builder(step["publisher"].as_u64().unwrap() as u16)
                        .max_skew(Duration::from_millis(step["max_skew_ms"].as_u64().unwrap()))
                        .clock(move || read.load(Ordering::SeqCst))
                        .sleep(move |ms| {
                            wait.fetch_add(ms, Ordering::SeqCst);
                        })
                        .random(move || splitmix64(&mut state))
                        .build()
                        .unwrap(),
                );
            }
            "clock" => now.store(step["ms"].as_u64().unwrap(), Ordering::SeqCst),
            "generate" | "generate_bigint" => {
                let g = gen.as_ref().unwrap();
                let mut ids = Vec::new();
                for _ in 0..step["n"].as_u64().unwrap() {
                    let made = if op == "generate" {
                        g.generate().map(|id| id.to_string())
                    } else {
                        g.generate_bigint().map(|b| b.to_string())
                    };
                    match made {
                        Ok(id) => ids.push(id),
                        Err(e) => {
                            error_json(&e, &mut expect);
                            break;
                        }
                    }
                }
                ids_json(&ids, &mut expect);
            }
            "horizon" => match gen.as_ref().unwrap().horizon() {
                Ok(h) => ids_json(&[h.to_string()], &mut expect),
                Err(e) => error_json(&e, &mut expect),
            },
            "observe" => {
                let id =
                    Id::from_u128(u128::from_str_radix(step["id"].as_str().unwrap(), 16).unwrap());
                match gen.as_ref().unwrap().observe(id) {
                    Ok(()) => {
                        expect.insert("ok".into(), json!(true));
                    }
                    Err(e) => error_json(&e, &mut expect),
                }
            }
            _ => unreachable!(),
        }
        expect.insert("now".into(), json!(now.load(Ordering::SeqCst)));
        let mut s = step.as_object().unwrap().clone();
        if op != "new" && op != "clock" {
            s.insert("expect".into(), Value::Object(expect));
        }
        out.push(Value::Object(s));
    }
    let doc = json!({
        "about": "Made by core/examples/clock_scenario.rs from the crate's Generator; do not edit: \
                  tests/clients/test_generators.py regenerates it and fails on a difference. \
                  The Python and Node clients replay it id by id.",
        "steps": out,
    });
    // one step a line: small diffs when the crate's behaviour changes
    println!("{{\n  \"about\": {},\n  \"steps\": [", doc["about"]);
    let n = out.len();
    for (i, s) in out.iter().enumerate() {
        println!("    {}{}", s, if i + 1 < n { "," } else { "" });
    }
    println!("  ]\n}}");
}
