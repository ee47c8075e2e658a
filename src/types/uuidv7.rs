//! The RFC 9562 UUIDv7 form of an id (`hlculid_to_uuidv7`, `hlculid_from_uuidv7`), for what
//! accepts only real uuids: validators, `uuid_extract_timestamp`, TimescaleDB. The mapping is the
//! core's (`hlculid_core::uuidv7`); this module adapts it and reports a uuid of another kind.

use crate::base::errors::{Condition, UserError};
use crate::types::datum::Hlculid;
use hlculid_core::text::uuid_string;
use hlculid_core::uuidv7::{NotUuidv7, Variant};
use hlculid_core::Id;
use pgrx::prelude::*;

/// The RFC 9562 version 7 uuid of an id: same millisecond, counter and publisher, the top 42
/// random bits; keeps the order of ids.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_to_uuidv7(id: Hlculid) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(id.0.to_uuidv7_bytes())
}

/// The id a version 7 uuid stands for (any v7 uuid, in the same order); 22023 for another uuid.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_from_uuidv7(u: pgrx::Uuid) -> Hlculid {
    let bytes = *u.as_bytes();
    match Id::from_uuidv7_bytes(bytes) {
        Ok(id) => Hlculid(id),
        Err(e) => not_uuidv7(bytes, e),
    }
}

fn not_uuidv7(bytes: [u8; 16], e: NotUuidv7) -> ! {
    let err = UserError::new(
        Condition::NotUuidv7,
        format!(
            "uuid {} is not an RFC 9562 version 7 uuid",
            uuid_string(Id(bytes))
        ),
    )
    .detail(format!(
        "Its version field is {} and it has {}; hlculid_from_uuidv7 reads version 7 uuids with \
the RFC 9562 variant, as hlculid_to_uuidv7 and uuidv7() make them.",
        e.version,
        e.variant.name()
    ));
    // An id's own bytes (a publisher below 32768) have this variant: a uuid column filled by the
    // cast holds such values, and the cast reads them back.
    if e.variant == Variant::Ncs {
        err.hint(
            "If the value holds an hlculid's own bytes, convert it with a cast: value::hlculid.",
        )
        .raise()
    }
    err.raise()
}
