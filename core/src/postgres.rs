//! `postgres-types` support (feature `postgres`), for `tokio-postgres` and `postgres`: an [`Id`]
//! is a parameter or a column of type `hlculid` (matched by name, since its OID differs per
//! database) or `uuid`, always in binary: the 16 bytes, as the server sends them. A [`BigId`] is
//! a parameter or a column of type `bigint` (`int8`); a negative value read is an error.

use crate::bigint::BigId;
use crate::layout::Id;
use bytes::BytesMut;
use postgres_types::{FromSql, IsNull, ToSql, Type};
use std::error::Error;

fn accepts(ty: &Type) -> bool {
    *ty == Type::UUID || ty.name() == "hlculid"
}

impl ToSql for Id {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        accepts(ty)
    }

    postgres_types::to_sql_checked!();
}

impl<'a> FromSql<'a> for Id {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Id, Box<dyn Error + Sync + Send>> {
        crate::column::id_from_binary(raw)
    }

    fn accepts(ty: &Type) -> bool {
        accepts(ty)
    }
}

impl ToSql for BigId {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.to_i64().to_be_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT8
    }

    postgres_types::to_sql_checked!();
}

impl<'a> FromSql<'a> for BigId {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<BigId, Box<dyn Error + Sync + Send>> {
        let bytes: [u8; 8] = raw
            .try_into()
            .map_err(|_| format!("a bigint is 8 bytes, got {}", raw.len()))?;
        crate::column::bigid_from_i64(i64::from_be_bytes(bytes))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT8
    }
}
