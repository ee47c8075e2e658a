//! sqlx support (feature `sqlx`), PostgreSQL: an [`Id`] is a parameter, a column and a
//! `FromRow` field of type `hlculid` (matched by name: its OID differs per database, and sqlx
//! looks it up once per connection) or `uuid`, sent in binary as the 16 bytes and read from the
//! binary or the text form; `Vec<Id>` binds as `hlculid[]`. A [`BigId`] is a `bigint` (`int8`);
//! a negative value read is an error.

use crate::bigint::BigId;
use crate::layout::Id;
use ::sqlx::encode::IsNull;
use ::sqlx::error::BoxDynError;
use ::sqlx::postgres::types::Oid;
use ::sqlx::postgres::{
    PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueFormat, PgValueRef, Postgres,
};
use ::sqlx::{Decode, Encode, Type};

/// `uuid` and `uuid[]` have fixed OIDs (pg_type.dat).
const UUID: Oid = Oid(2950);
const UUID_ARRAY: Oid = Oid(2951);

impl Type<Postgres> for Id {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("hlculid")
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        ty.oid() == Some(UUID) || *ty == Self::type_info()
    }
}

impl PgHasArrayType for Id {
    fn array_type_info() -> PgTypeInfo {
        PgTypeInfo::array_of("hlculid")
    }

    fn array_compatible(ty: &PgTypeInfo) -> bool {
        ty.oid() == Some(UUID_ARRAY) || *ty == Self::array_type_info()
    }
}

impl Encode<'_, Postgres> for Id {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        buf.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn size_hint(&self) -> usize {
        16
    }
}

impl Decode<'_, Postgres> for Id {
    fn decode(value: PgValueRef<'_>) -> Result<Id, BoxDynError> {
        match value.format() {
            PgValueFormat::Binary => crate::column::id_from_binary(value.as_bytes()?),
            // every form the server prints: the canonical one (hlculid), 8-4-4-4-12 (uuid)
            PgValueFormat::Text => Ok(value.as_str()?.parse::<Id>()?),
        }
    }
}

impl Type<Postgres> for BigId {
    fn type_info() -> PgTypeInfo {
        <i64 as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <i64 as Type<Postgres>>::compatible(ty)
    }
}

impl PgHasArrayType for BigId {
    fn array_type_info() -> PgTypeInfo {
        <i64 as PgHasArrayType>::array_type_info()
    }
}

impl Encode<'_, Postgres> for BigId {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<Postgres>>::encode(self.to_i64(), buf)
    }

    fn size_hint(&self) -> usize {
        8
    }
}

impl Decode<'_, Postgres> for BigId {
    fn decode(value: PgValueRef<'_>) -> Result<BigId, BoxDynError> {
        crate::column::bigid_from_i64(<i64 as Decode<Postgres>>::decode(value)?)
    }
}
