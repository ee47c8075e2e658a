//! The conformance fixtures the clients and the server are checked against are what the crate
//! makes today: `tests/data/clock_scenario.json` (the crate's [`Generator`] over a scripted clock,
//! `fixtures/clock_scenario.rs`) and `tests/data/mask_vectors.json` (the crate's `Mask`,
//! `fixtures/mask_vectors.rs`). Each test regenerates its file and compares it whole. If a change
//! is meant, write the files (every client then has to follow):
//!
//! ```sh
//! HLCULID_BLESS=1 cargo test -q -p hlculid-core --test fixtures
//! ```
//!
//! [`Generator`]: hlculid_core::Generator

#[path = "fixtures/clock_scenario.rs"]
mod clock_scenario;
#[path = "fixtures/mask_vectors.rs"]
mod mask_vectors;

/// Compares `tests/data/NAME` with what the crate makes today, or writes it under HLCULID_BLESS=1.
fn check(name: &str, today: &str) -> String {
    let path = format!("{}/../tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("HLCULID_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, today).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if checked_in != today {
        let first = checked_in
            .lines()
            .zip(today.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(checked_in.lines().count().min(today.lines().count()));
        panic!(
            "the crate no longer makes the checked-in tests/data/{name}; first difference at line {}:\n\
             file:  {}\ncrate: {}\nIf the change is meant: HLCULID_BLESS=1 cargo test -q -p hlculid-core --test fixtures",
            first + 1,
            checked_in.lines().nth(first).unwrap_or("<end>"),
            today.lines().nth(first).unwrap_or("<end>"),
        );
    }
    checked_in
}

#[test]
fn the_clock_scenario_file_is_what_the_crate_makes() {
    let text = check("clock_scenario.json", &clock_scenario::document());
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert!(doc["steps"].as_array().expect("steps").len() > 50);
}

#[test]
fn the_mask_vectors_file_is_what_the_crate_makes() {
    let text = check("mask_vectors.json", &mask_vectors::document());
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert!(doc["cases"].as_array().expect("cases").len() > 200);
}
