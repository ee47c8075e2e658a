//! The crate's parser against the shared list of text forms (tests/data/text_forms.json), which
//! the server, the Python client and the Node client are tested against too: all four accept
//! exactly the same strings, and read the accepted ones as the same values.

use hlculid_core::{text, Id};
use serde_json::Value;

fn cases(kind: &str) -> Vec<(String, Value)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/text_forms.json");
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}")),
    )
    .expect("text_forms.json is JSON");
    let list = doc[kind].as_array().expect("a list of cases");
    assert!(list.len() > 10, "{kind}: {} cases", list.len());
    list.iter()
        .map(|c| (c["input"].as_str().expect("input").to_string(), c.clone()))
        .collect()
}

#[test]
fn accepted_forms_read_as_their_canonical_value() {
    for (input, case) in cases("accepted") {
        let want = case["canonical"].as_str().expect("canonical");
        match text::parse(input.as_bytes()) {
            Ok(id) => assert_eq!(text::canonical_string(id), want, "{input:?}"),
            Err(e) => panic!("{input:?} ({}) refused: {e}", case["why"]),
        }
        // FromStr is the same parser
        assert_eq!(
            input.parse::<Id>().map(|id| id.to_string()),
            Ok(want.to_string())
        );
    }
}

#[test]
fn rejected_forms_are_errors() {
    for (input, case) in cases("rejected") {
        if let Ok(id) = text::parse(input.as_bytes()) {
            panic!("{input:?} ({}) accepted as {id}", case["why"]);
        }
        assert!(input.parse::<Id>().is_err(), "{input:?}");
    }
}
