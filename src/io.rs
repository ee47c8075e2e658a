//! Text and binary I/O, and the casts that move the same 16 bytes between types
//! (`uuid`, `bytea`). Parsing and formatting are the core's; this module only adapts them.

use crate::datum::Hlculid;
use crate::errors::{Condition, UserError};
use core::ffi::CStr;
use hlculid_core::{binary, text};
use pgrx::prelude::*;
use pgrx::{Internal, StringInfo};

const FORMS_HINT: &str =
    "Write an hlculid as 12-4-4-12 hex (017FC21C5E7A-0000-000A-AAA111111111), \
32 hex digits, the 8-4-4-4-12 uuid form, or a 26-character ULID.";

#[pg_extern(immutable, parallel_safe, strict, requires = ["hlculid_shell"])]
fn hlculid_in(input: &CStr, fcinfo: pg_sys::FunctionCallInfo) -> Option<Hlculid> {
    match text::parse(input.to_bytes()) {
        Ok(id) => Some(Hlculid(id)),
        Err(e) => {
            UserError::new(
                Condition::InvalidText,
                format!(
                    "invalid input syntax for type hlculid: \"{}\"",
                    String::from_utf8_lossy(input.to_bytes())
                ),
            )
            .detail(e.to_string())
            .hint(FORMS_HINT)
            .raise_or_save(fcinfo, c"hlculid_in");
            None
        }
    }
}

#[pg_extern(immutable, parallel_safe, strict, requires = ["hlculid_shell"])]
fn hlculid_out(v: Hlculid) -> &'static CStr {
    let mut sb = StringInfo::with_capacity(text::CANONICAL_LEN as i32 + 1);
    sb.push_bytes(&text::canonical(v.0));
    // SAFETY: the buffer is palloc'd in the call's memory context, which PostgreSQL frees; the
    // canonical text has no NUL inside.
    unsafe { sb.leak_cstr() }
}

/// Binary input: exactly the 16 raw bytes, as `uuid_recv` reads them.
#[pg_extern(immutable, parallel_safe, strict, requires = ["hlculid_shell"])]
fn hlculid_recv(mut internal: Internal) -> Hlculid {
    // SAFETY: a receive function's argument is the message's StringInfo.
    let buf = match unsafe { internal.get_mut::<pg_sys::StringInfoData>() } {
        Some(b) => b,
        None => UserError::new(Condition::Internal, "hlculid_recv called without a buffer").raise(),
    };
    let remaining = (buf.len - buf.cursor).max(0);
    // SAFETY: data[cursor..len] is the unread part of the message buffer.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            buf.data.add(buf.cursor as usize).cast::<u8>(),
            remaining as usize,
        )
    };
    match binary::decode(bytes) {
        Ok(id) => {
            buf.cursor += 16;
            Hlculid(id)
        }
        Err(got) => UserError::new(
            Condition::InvalidBinary,
            "invalid binary data for type hlculid",
        )
        .detail(format!("Expected 16 bytes, got {got}."))
        .raise(),
    }
}

/// Binary output: the 16 raw bytes (the same wire format as `uuid`).
#[pg_extern(immutable, parallel_safe, strict, requires = ["hlculid_shell"])]
fn hlculid_send(v: Hlculid) -> Vec<u8> {
    binary::encode(v.0).to_vec()
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_to_bytea(v: Hlculid) -> Vec<u8> {
    v.0 .0.to_vec()
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_from_bytea(b: &[u8]) -> Hlculid {
    match binary::decode(b) {
        Ok(id) => Hlculid(id),
        Err(got) => UserError::new(
            Condition::InvalidBinary,
            "invalid byte length for type hlculid",
        )
        .detail(format!("Expected 16 bytes, got {got}."))
        .raise(),
    }
}

/// The 26-character Crockford base32 ULID form.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_to_ulid(v: Hlculid) -> String {
    text::ulid_string(v.0)
}

extension_sql!(
    r#"
-- Same length, alignment and byte order as uuid: the casts are free and keep order.
-- uuid -> hlculid is implicit so `id = some_uuid` still uses an index on id; the other
-- direction is assignment-only, so comparisons never become ambiguous.
CREATE CAST (uuid AS hlculid) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (hlculid AS uuid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (hlculid AS bytea) WITH FUNCTION hlculid_to_bytea(hlculid);
CREATE CAST (bytea AS hlculid) WITH FUNCTION hlculid_from_bytea(bytea);
-- String-typed parameters (pgjdbc's setString, ORMs) insert and update: assignment casts through
-- the input function, so every text form and every error is the input function's. Not implicit,
-- so `id = some_text` stays an error rather than a guess.
CREATE CAST (text AS hlculid) WITH INOUT AS ASSIGNMENT;
CREATE CAST (varchar AS hlculid) WITH INOUT AS ASSIGNMENT;
"#,
    name = "hlculid_io_casts",
    requires = ["hlculid_type", hlculid_to_bytea, hlculid_from_bytea],
);
