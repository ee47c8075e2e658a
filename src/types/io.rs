//! Text and binary I/O, and the casts that move the same 16 bytes between types
//! (`uuid`, `bytea`). Parsing and formatting are the core's; this module only adapts them.

use crate::base::errors::{Condition, UserError};
use crate::base::pg_c::alloc_no_raise;
use crate::types::datum::Hlculid;
use core::ffi::CStr;
use hlculid_core::{binary, text, Id};
use pgrx::prelude::*;
use pgrx::{Internal, StringInfo};

const FORMS_HINT: &str =
    "Write an hlculid as 12-4-4-12 hex (017FC21C5E7A-0000-000A-AAA111111111), \
32 hex digits, the 8-4-4-4-12 uuid form, or a 26-character ULID.";

#[pg_extern(immutable, parallel_safe, strict, requires = ["hlculid_shell"])]
fn hlculid_in(input: &CStr, fcinfo: pg_sys::FunctionCallInfo) -> Option<Hlculid> {
    match text::parse(input.to_bytes()) {
        Ok(id) => Some(Hlculid(id)),
        // the refusal the uuid cast makes, for the same values in the uuid's text (22023)
        Err(text::ParseError::RandomUuid) => {
            UserError::new(
                Condition::RandomUuid,
                format!(
                    "cannot read a random uuid (version 4) as type hlculid: \"{}\"",
                    String::from_utf8_lossy(input.to_bytes())
                ),
            )
            .detail(text::ParseError::RandomUuid.to_string())
            .hint("Use hlculid_generate() for new ids. To keep a random uuid's bytes on purpose, convert through bytea: uuid_send(value::uuid)::hlculid.")
            .raise_or_save(fcinfo, c"hlculid_in");
            None
        }
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

/// Text output: the canonical form.
///
/// Hand-written V1, like `uuid_out`: pgrx's per-call wrapper cost more than the formatting, and
/// text output is what every client, `COPY` and `pg_dump` pay per id. The common case (memory
/// available) cannot raise or panic; otherwise the guarded [`hlculid_out_slow`] allocates the
/// pgrx way and raises out-of-memory as PostgreSQL does. Exported under the name pgrx gave it
/// in 0.1.x, which released catalogs name. `extern "C"`: should the no-panic promise ever
/// break, Rust aborts rather than unwinding into PostgreSQL's frames.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null hlculid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_out_wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one hlculid argument: a pointer to its 16 bytes.
    let id = unsafe { arg_id(fcinfo) };
    let len = text::CANONICAL_LEN;
    // SAFETY: CurrentMemoryContext is the call's context; with NO_OOM the request returns NULL
    // instead of raising.
    let p = unsafe { alloc_no_raise(len + 1) };
    if p.is_null() {
        // SAFETY: pgrx's guarded wrapper, called with our own valid fcinfo; it reports errors by
        // longjmp, which passes this frame (it holds nothing to drop).
        return unsafe { hlculid_out_slow_wrapper(fcinfo) };
    }
    // SAFETY: p is a fresh allocation of len + 1 bytes.
    unsafe {
        p.cast::<[u8; text::CANONICAL_LEN]>()
            .write_unaligned(text::canonical(id));
        p.add(len).write(0);
    }
    pg_sys::Datum::from(p)
}

v1_function_info!(pg_finfo_hlculid_out_wrapper);

/// The guarded path of `hlculid_out`, taken only when the fast path could not allocate.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_out_slow(v: Hlculid) -> &'static CStr {
    let mut sb = StringInfo::with_capacity(text::CANONICAL_LEN as i32 + 1);
    sb.push_bytes(&text::canonical(v.0));
    // SAFETY: the buffer is palloc'd in the call's memory context, which PostgreSQL frees; the
    // canonical text has no NUL inside.
    unsafe { sb.leak_cstr() }
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_out(v hlculid) RETURNS cstring
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_out_wrapper';
"#,
    name = "hlculid_out",
    requires = ["hlculid_shell"],
);

/// The id in argument 0 of a call.
///
/// # Safety
/// `fcinfo` is a valid call whose argument 0 is a non-null hlculid.
pub(crate) unsafe fn arg_id(fcinfo: pg_sys::FunctionCallInfo) -> Id {
    // SAFETY: as the caller promises; an hlculid datum points at its 16 bytes (char alignment).
    unsafe {
        let datum = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0);
        Id(datum.cast_mut_ptr::<[u8; 16]>().read_unaligned())
    }
}

/// A `bytea` or `text` value holding `data`, in the call's memory context, or NULL when memory
/// is short.
///
/// # Safety
/// Called inside a function call of a backend (CurrentMemoryContext is valid).
unsafe fn varlena_no_raise(data: &[u8]) -> *mut u8 {
    let size = pg_sys::VARHDRSZ + data.len();
    // SAFETY: as the caller promises.
    let p = unsafe { alloc_no_raise(size) };
    if !p.is_null() {
        // SAFETY: p is a fresh, maximally aligned allocation of a 4-byte varlena header and
        // data.len() bytes; data is a short slice (a value's bytes), far below the varlena limit.
        unsafe {
            pgrx::set_varsize_4b(p.cast(), size as i32);
            std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(pg_sys::VARHDRSZ), data.len());
        }
    }
    p
}

/// Binary input: exactly the 16 raw bytes, as `uuid_recv` reads them. Hand-written V1 like
/// [`hlculid_out_wrapper`] (binary `COPY FROM` and driver parameters pay it per id); anything
/// but a 16-byte field, or short memory, goes to the guarded [`hlculid_recv_slow`].
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` whose argument is the
/// message's `StringInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_recv_wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: a receive function's argument is a pointer to the message's StringInfoData
    // (checked for NULL below).
    let buf = unsafe {
        pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0).cast_mut_ptr::<pg_sys::StringInfoData>()
    };
    // SAFETY: buf, when not NULL, is a valid StringInfo whose data[cursor..len] is unread.
    unsafe {
        if !buf.is_null() && (*buf).len - (*buf).cursor == 16 {
            let p = alloc_no_raise(16);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(
                    (*buf).data.add((*buf).cursor as usize).cast(),
                    p,
                    16,
                );
                (*buf).cursor += 16;
                return pg_sys::Datum::from(p);
            }
        }
        // The errors (and their messages) are the guarded path's.
        hlculid_recv_slow_wrapper(fcinfo)
    }
}

v1_function_info!(pg_finfo_hlculid_recv_wrapper);

/// The guarded path of `hlculid_recv`: wrong lengths raise 22P03 here.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_recv_slow(mut internal: Internal) -> Hlculid {
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

/// Binary output: the 16 raw bytes (the same wire format as `uuid`), as a `bytea`. Hand-written
/// V1 like [`hlculid_out_wrapper`].
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null hlculid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_send_wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one hlculid argument.
    let id = unsafe { arg_id(fcinfo) };
    // SAFETY: inside a function call.
    let p = unsafe { varlena_no_raise(&binary::encode(id)) };
    if p.is_null() {
        // SAFETY: as in hlculid_out_wrapper.
        return unsafe { hlculid_send_slow_wrapper(fcinfo) };
    }
    pg_sys::Datum::from(p)
}

v1_function_info!(pg_finfo_hlculid_send_wrapper);

/// The guarded path of `hlculid_send`, taken only when the fast path could not allocate.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_send_slow(v: Hlculid) -> Vec<u8> {
    binary::encode(v.0).to_vec()
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_recv("internal" internal) RETURNS hlculid
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_recv_wrapper';
CREATE FUNCTION hlculid_send(v hlculid) RETURNS bytea
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_send_wrapper';
"#,
    name = "hlculid_binary_io",
    requires = ["hlculid_shell"],
);

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

/// SQL `hlculid_to_ulid(id)`: the 26-character Crockford base32 ULID form. Hand-written V1 for
/// the same reason as [`hlculid_out_wrapper`], under the same 0.1.x name.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null hlculid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_to_ulid_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one hlculid argument.
    let id = unsafe { arg_id(fcinfo) };
    // SAFETY: inside a function call.
    let p = unsafe { varlena_no_raise(&text::ulid(id)) };
    if p.is_null() {
        // SAFETY: as in hlculid_out_wrapper.
        return unsafe { hlculid_to_ulid_slow_wrapper(fcinfo) };
    }
    pg_sys::Datum::from(p)
}

v1_function_info!(pg_finfo_hlculid_to_ulid_wrapper);

/// The guarded path of `hlculid_to_ulid`, taken only when the fast path could not allocate.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_to_ulid_slow(v: Hlculid) -> String {
    text::ulid_string(v.0)
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_to_ulid(v hlculid) RETURNS text
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_to_ulid_wrapper';
"#,
    name = "hlculid_to_ulid",
    requires = ["hlculid_type"],
);

/// `uuid` -> `hlculid`, the cast: the same 16 bytes (the argument itself is returned, as
/// `varchar`'s length coercion returns a value that fits), except a random uuid, which the
/// guarded [`hlculid_from_uuid_slow`] refuses. Hand-written V1 so that the check is all the cast
/// costs; `extern "C"` as in [`hlculid_out_wrapper`].
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo` holding one non-null uuid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_from_uuid_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the function is STRICT with one uuid argument: a pointer to its 16 bytes, the
    // layout of an hlculid (char alignment).
    let (datum, id) = unsafe {
        let datum = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0);
        (datum, Id(datum.cast_mut_ptr::<[u8; 16]>().read_unaligned()))
    };
    if !text::is_random_uuid(id) {
        return datum;
    }
    // SAFETY: as in hlculid_out_wrapper; the guarded path raises the error.
    unsafe { hlculid_from_uuid_slow_wrapper(fcinfo) }
}

v1_function_info!(pg_finfo_hlculid_from_uuid_wrapper);

/// The guarded path of `hlculid_from_uuid`, taken only for a random uuid: raises 22023 (a value
/// of the wrong kind for a cast, as PostgreSQL's `jsonb` casts report one).
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_from_uuid_slow(u: pgrx::Uuid) -> Hlculid {
    let id = Id(*u.as_bytes());
    UserError::new(
        Condition::RandomUuid,
        "cannot cast a random uuid (version 4) to type hlculid",
    )
    .detail(format!(
        "uuid {} has version 4 and the RFC 9562 variant, the marks of a random uuid; \
read as an hlculid it would carry the time {}.",
        text::uuid_string(id),
        utc_text(id.ms())
    ))
    .hint("Use hlculid_generate() for new ids.")
    .raise()
}

/// A Unix millisecond as `YYYY-MM-DD HH:MM:SS.mmm+00` (UTC), for error details. Days to civil
/// date by Howard Hinnant's `civil_from_days`.
fn utc_text(ms: u64) -> String {
    let (days, rem) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:03}+00",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_from_uuid(u uuid) RETURNS hlculid
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_from_uuid_wrapper';
"#,
    name = "hlculid_from_uuid",
    requires = ["hlculid_type"],
);

extension_sql!(
    r#"
-- Same length, alignment and byte order as uuid: the casts keep order and cost (almost) nothing.
-- Both are assignment-only (since 0.4.0): an implicit uuid -> hlculid cast turned queries on
-- plain uuid columns (max(u), coalesce, UNION) into hlculid ones. `id = some_uuid` keeps using an
-- index on id through the cross-type operators (src/types/ops_uuid.rs). uuid -> hlculid refuses a
-- random (version 4) uuid, whose bytes would read as a time centuries ahead.
CREATE CAST (uuid AS hlculid) WITH FUNCTION hlculid_from_uuid(uuid) AS ASSIGNMENT;
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
    requires = [
        "hlculid_type",
        "hlculid_from_uuid",
        hlculid_to_bytea,
        hlculid_from_bytea
    ],
);
