//! The mask vectors the clients are checked against (`tests/data/mask_vectors.json`) are what
//! the crate's [`Mask`](hlculid_core::Mask) gives today: the file is regenerated from
//! `core/examples/mask_vectors.rs` and compared whole. If a change is meant, write the example's
//! output to the file (`cargo run -q -p hlculid-core --example mask_vectors >
//! tests/data/mask_vectors.json`): every client then has to follow.

#[path = "../examples/mask_vectors.rs"]
mod vectors;

#[test]
fn the_vectors_file_is_what_the_crate_makes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/mask_vectors.json"
    );
    let checked_in = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let today = vectors::document();
    if checked_in != today {
        let first = checked_in
            .lines()
            .zip(today.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(checked_in.lines().count().min(today.lines().count()));
        panic!(
            "the crate's Mask no longer gives the checked-in vectors; first difference at line {}:\n\
             file:  {}\ncrate: {}",
            first + 1,
            checked_in.lines().nth(first).unwrap_or("<end>"),
            today.lines().nth(first).unwrap_or("<end>"),
        );
    }
    let doc: serde_json::Value = serde_json::from_str(&checked_in).expect("JSON");
    assert!(doc["cases"].as_array().expect("cases").len() > 200);
}
