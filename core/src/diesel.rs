//! diesel support (feature `diesel`), PostgreSQL: the SQL type [`Hlculid`] for `table!`
//! columns of type `hlculid` (its OID is looked up by name, once per connection), and [`Id`] as
//! a model field and bound value of `Hlculid` or `diesel::sql_types::Uuid` columns, in binary
//! (the 16 bytes). A [`BigId`] is a `BigInt` field; a negative value read is an error.
//!
//! ```ignore
//! diesel::table! {
//!     events (id) {
//!         id -> hlculid_core::diesel::Hlculid,
//!         body -> Text,
//!     }
//! }
//! ```

use crate::bigint::BigId;
use crate::layout::Id;
use ::diesel::deserialize::{self, FromSql, FromSqlRow};
use ::diesel::expression::AsExpression;
use ::diesel::pg::{Pg, PgValue};
use ::diesel::query_builder::QueryId;
use ::diesel::serialize::{self, IsNull, Output, ToSql};
use ::diesel::sql_types::{BigInt, SqlType, Uuid};
use std::io::Write;

/// The extension's `hlculid` type, for `table!` (`id -> hlculid_core::diesel::Hlculid`).
#[derive(SqlType, QueryId, Debug, Clone, Copy, Default)]
#[diesel(postgres_type(name = "hlculid"))]
pub struct Hlculid;

// `Id` and `BigId` are defined in the crate's core, which knows nothing of diesel, so the
// `AsExpression` and `FromSqlRow` impls are derived here through a proxy: diesel's derives write
// them for the wrapped type with `foreign_derive`, as diesel does for `uuid::Uuid`.
#[derive(AsExpression, FromSqlRow)]
#[diesel(foreign_derive)]
#[diesel(sql_type = Hlculid)]
#[diesel(sql_type = Uuid)]
#[allow(dead_code)]
struct IdProxy(Id);

#[derive(AsExpression, FromSqlRow)]
#[diesel(foreign_derive)]
#[diesel(sql_type = BigInt)]
#[allow(dead_code)]
struct BigIdProxy(BigId);

// The same 16 bytes for both column types.
fn write(id: &Id, out: &mut Output<'_, '_, Pg>) -> serialize::Result {
    out.write_all(&id.0)?;
    Ok(IsNull::No)
}

impl ToSql<Hlculid, Pg> for Id {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        write(self, out)
    }
}

impl FromSql<Hlculid, Pg> for Id {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Id> {
        crate::column::id_from_binary(value.as_bytes())
    }
}

impl ToSql<Uuid, Pg> for Id {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        write(self, out)
    }
}

impl FromSql<Uuid, Pg> for Id {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Id> {
        crate::column::id_from_binary(value.as_bytes())
    }
}

impl ToSql<BigInt, Pg> for BigId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(&self.to_i64().to_be_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<BigInt, Pg> for BigId {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<BigId> {
        crate::column::bigid_from_i64(<i64 as FromSql<BigInt, Pg>>::from_sql(value)?)
    }
}
