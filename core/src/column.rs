//! What every driver integration (features `postgres`, `sqlx`, `diesel`) does with a column
//! value it has read: the 16 bytes of an `hlculid`/`uuid`, or the `int8` of a bigint id, checked
//! once here so that the three report the same errors.

use crate::bigint::BigId;
use crate::layout::Id;
use std::error::Error;

/// The error type all three drivers take from a decoder.
pub(crate) type DecodeError = Box<dyn Error + Send + Sync>;

/// An id from a binary `hlculid` or `uuid` value.
pub(crate) fn id_from_binary(raw: &[u8]) -> Result<Id, DecodeError> {
    crate::binary::decode(raw).map_err(|n| format!("an hlculid is 16 bytes, got {n}").into())
}

/// A bigint id from a `bigint` value: any but a negative one.
pub(crate) fn bigid_from_i64(v: i64) -> Result<BigId, DecodeError> {
    BigId::from_i64(v).map_err(|_| format!("bigint {v} is not a bigint id: it is negative").into())
}
