//! `serde` support (feature `serde`): the canonical string in human-readable formats (JSON,
//! TOML, YAML), the 16 raw bytes in binary ones (bincode, postcard, CBOR). Input accepts every
//! text form the server accepts, and bytes as a byte string or a sequence of 16 numbers.

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

    proptest! {
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
