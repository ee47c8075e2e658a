//! `serde` support (feature `serde`): the canonical string in human-readable formats (JSON,
//! TOML, YAML), the 16 raw bytes in binary ones (bincode, postcard, CBOR). Input accepts every
//! text form the server accepts, and bytes as a byte string or a sequence of 16 numbers.
//!
//! A [`BigId`] is its decimal string in human-readable formats and an `i64` in binary ones.
//! Input in a human-readable format is the decimal string only: a JSON number is refused, even
//! an exact one. Every id made after 1970-02-19 is above 2^53, so a producer that parsed or built
//! the id as a double (JavaScript, and many JSON libraries by default) has already rounded it to
//! another valid-looking id; refusing numbers turns that silent corruption into an error at the
//! first consumer, and the string is what every client of this project writes.

use crate::bigint::BigId;
use crate::layout::Id;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::fmt;

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&crate::text::canonical_string(*self))
        } else {
            serializer.serialize_bytes(&self.0)
        }
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an hlculid: a string in one of its text forms, or 16 bytes")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
        v.parse()
            .map_err(|e| E::custom(format_args!("invalid hlculid {v:?}: {e}")))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Id, E> {
        crate::binary::decode(v).map_err(|n| E::invalid_length(n, &"16 bytes"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Id, A::Error> {
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(i, &"16 bytes"))?;
        }
        if seq.next_element::<u8>()?.is_some() {
            return Err(de::Error::invalid_length(17, &"16 bytes"));
        }
        Ok(Id(bytes))
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(IdVisitor)
        } else {
            deserializer.deserialize_bytes(IdVisitor)
        }
    }
}

impl Serialize for BigId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            serializer.serialize_i64(self.to_i64())
        }
    }
}

struct BigIdVisitor;

impl<'de> Visitor<'de> for BigIdVisitor {
    type Value = BigId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a bigint id as a decimal string (not a number: JavaScript and other \
             double-based parsers round ids above 2^53)",
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<BigId, E> {
        v.parse()
            .map_err(|e| E::custom(format_args!("invalid bigint id {v:?}: {e}")))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<BigId, E> {
        BigId::from_i64(v).map_err(|_| E::custom(format_args!("invalid bigint id {v}: negative")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<BigId, E> {
        i64::try_from(v)
            .map_err(|_| E::custom(format_args!("invalid bigint id {v}: above 2^63 - 1")))
            .and_then(|v| self.visit_i64(v))
    }
}

impl<'de> Deserialize<'de> for BigId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<BigId, D::Error> {
        if deserializer.is_human_readable() {
            // A string only: serde_json reports a number as "invalid type: integer", followed
            // by `expecting`, which says why.
            deserializer.deserialize_str(BigIdVisitor)
        } else {
            deserializer.deserialize_i64(BigIdVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Event {
        id: Id,
        n: u32,
    }

    #[test]
    fn json_is_the_canonical_string_and_reads_every_form() {
        let id: Id = "017FC21C5E7A-0000-000A-AAA111111111".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"017FC21C5E7A-0000-000A-AAA111111111\""
        );
        for form in [
            id.to_string(),
            id.to_uuid_string(),
            id.to_ulid(),
            format!("{:032x}", id.to_u128()),
        ] {
            let back: Id = serde_json::from_str(&format!("\"{form}\"")).unwrap();
            assert_eq!(back, id);
        }
        let err = serde_json::from_str::<Id>("\"017FC21C5E7A\"").unwrap_err();
        assert!(err.to_string().contains("invalid hlculid"), "{err}");
    }

    #[test]
    fn postcard_is_the_16_bytes() {
        let id = Id::from_u128(0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10);
        let bytes = postcard::to_allocvec(&id).unwrap();
        assert_eq!(bytes[0], 16); // length prefix
        assert_eq!(&bytes[1..], &id.0);
        let short = postcard::to_allocvec(&[1u8; 15][..]).unwrap();
        assert!(postcard::from_bytes::<Id>(&short).is_err());
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Row {
        id: BigId,
        n: u32,
    }

    #[test]
    fn bigint_json_is_the_decimal_string_and_refuses_numbers() {
        let id = BigId::from_fields(1_700_000_000_000, 5, 42).unwrap();
        let json = serde_json::to_string(&Row { id, n: 1 }).unwrap();
        assert_eq!(json, format!("{{\"id\":\"{}\",\"n\":1}}", id.to_i64()));
        assert_eq!(
            serde_json::from_str::<Row>(&json).unwrap(),
            Row { id, n: 1 }
        );
        // An exact number is refused too: the error names the reason.
        let number = format!("{{\"id\":{},\"n\":1}}", id.to_i64());
        let err = serde_json::from_str::<Row>(&number)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("invalid type: integer") && err.contains("2^53"),
            "{err}"
        );
        // What a double-based producer sends for it, which is another id, is refused as well.
        let rounded = format!("{{\"id\":{:.1},\"n\":1}}", id.to_i64() as f64);
        assert!(serde_json::from_str::<Row>(&rounded).is_err());
        let err = serde_json::from_str::<BigId>("\"-5\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("invalid bigint id \"-5\": A bigint id is never negative."),
            "{err}"
        );
    }

    #[test]
    fn bigint_json_reads_exactly_the_shared_decimal_forms() {
        // tests/data/bigint_forms.json: the Python and Node clients are tested against it too.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/bigint_forms.json"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let accepted = doc["accepted"].as_array().unwrap();
        let rejected = doc["rejected"].as_array().unwrap();
        assert!(accepted.len() >= 3 && rejected.len() >= 10);
        for case in accepted {
            let input = case["input"].as_str().unwrap();
            let id: BigId = serde_json::from_value(case["input"].clone()).unwrap();
            let fields = (u64::from(id.counter()), u64::from(id.publisher()));
            assert_eq!(Some(id.ms()), case["ms"].as_u64(), "{input:?}");
            assert_eq!(
                (Some(fields.0), Some(fields.1)),
                (case["counter"].as_u64(), case["publisher"].as_u64())
            );
            assert_eq!(id.to_string(), input);
            assert_eq!(input.parse::<BigId>().unwrap(), id);
        }
        for case in rejected {
            let input = case["input"].as_str().unwrap();
            assert!(input.parse::<BigId>().is_err(), "{input:?} accepted");
            assert!(serde_json::from_value::<BigId>(case["input"].clone()).is_err());
        }
    }

    #[test]
    fn bigint_postcard_is_the_i64() {
        let id = BigId::from_i64(i64::MAX).unwrap();
        let bytes = postcard::to_allocvec(&id).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&i64::MAX).unwrap());
        assert_eq!(postcard::from_bytes::<BigId>(&bytes).unwrap(), id);
        let negative = postcard::to_allocvec(&-1i64).unwrap();
        assert!(postcard::from_bytes::<BigId>(&negative).is_err());
    }

    proptest! {
        #[test]
        fn bigint_round_trips_in_json_and_postcard(v in 0..=i64::MAX, n: u32) {
            let r = Row { id: BigId::from_i64(v).unwrap(), n };
            let json = serde_json::to_string(&r).unwrap();
            prop_assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), Row { id: BigId::from_i64(v).unwrap(), n });
            let bin = postcard::to_allocvec(&r).unwrap();
            prop_assert_eq!(postcard::from_bytes::<Row>(&bin).unwrap(), Row { id: BigId::from_i64(v).unwrap(), n });
        }

        #[test]
        fn round_trips_in_json_and_postcard(v: u128, n: u32) {
            let e = Event { id: Id::from_u128(v), n };
            let json = serde_json::to_string(&e).unwrap();
            prop_assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), Event { id: Id::from_u128(v), n });
            let bin = postcard::to_allocvec(&e).unwrap();
            prop_assert_eq!(postcard::from_bytes::<Event>(&bin).unwrap(), Event { id: Id::from_u128(v), n });
        }
    }
}
