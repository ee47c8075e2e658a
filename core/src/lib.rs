//! HLC-ULID ids: 128 bits, `[48-bit Unix ms][16-bit hybrid logical clock counter][16-bit
//! publisher][48 random bits]`, big-endian, so that byte order, numeric order and event order
//! are one order. This crate is the pure core of the hlculid PostgreSQL extension, and the
//! client library for applications that make or read ids themselves: the server and the
//! applications share this code, so they cannot drift apart.
//!
//! - [`Id`]: parse every text form ([`FromStr`](std::str::FromStr)), print the canonical one
//!   ([`Display`](std::fmt::Display)), read fields, build from fields, order, per-ms bounds.
//! - [`Generator`]: a thread-safe hybrid logical clock for one publisher, the server's
//!   algorithm, with an optional durable high-water mark.
//! - [`Mask`]: a keyed, reversible mask of ids shown outside (a 128-bit id as a uuid, a bigint
//!   id as a positive bigint) that hides their time, order, counter and publisher; and, with
//!   the same key, UUIDv47's v4 facade of the UUIDv7 form (the time masked, a valid v4 uuid).
//! - Feature `serde`: [`Id`] as the canonical string (JSON) or 16 bytes (binary formats).
//! - Feature `postgres`: [`Id`] as a `tokio-postgres`/`postgres` parameter and column, binary,
//!   for `hlculid` and `uuid` columns.
//! - Feature `consumer`: `consumer::Consumer`, a named consumer of an hlculid table with
//!   tokio-postgres (the wait/consume loop, retries and dead letters, stop, lag).
//! - Feature `sqlx`: [`Id`] as a sqlx PostgreSQL parameter, column and `FromRow` field
//!   (`hlculid`, `uuid`, `hlculid[]`), [`BigId`] as `bigint`.
//! - Feature `diesel`: the SQL type `diesel::Hlculid` for `table!`, [`Id`] as a model field
//!   (`Queryable`, `Insertable`) and bound value, [`BigId`] as `BigInt`.
//!
//! ```
//! use hlculid_core::{Generator, Id};
//!
//! let ids = Generator::new(10);
//! let id = ids.generate().unwrap();
//! let text = id.to_string(); // 12-4-4-12 hex, as the server prints it
//! assert_eq!(text.parse::<Id>().unwrap(), id);
//! assert_eq!(id.publisher(), 10);
//! ```

pub mod bigint;
pub mod binary;
pub mod clock;
#[cfg(any(feature = "postgres", feature = "sqlx", feature = "diesel"))]
mod column;
#[cfg(feature = "consumer")]
pub mod consumer;
#[cfg(feature = "diesel")]
pub mod diesel;
pub mod facade;
pub mod generator;
pub mod layout;
pub mod mark;
pub mod mask;
#[cfg(feature = "postgres")]
mod postgres;
pub mod random;
#[cfg(feature = "serde")]
mod serde_impl;
#[cfg(feature = "sqlx")]
mod sqlx;
pub mod text;
pub mod time;
pub mod uuidv7;
pub mod window;

/// The mark's protocol, under its 0.4 name.
#[deprecated(since = "0.5.0", note = "renamed `hlculid_core::mark`")]
pub mod durable {
    pub use crate::mark::{DurableClock, MarkStore, Refusal};
}

/// The mark file, under its 0.4 name.
#[deprecated(since = "0.5.0", note = "renamed `hlculid_core::mark::file`")]
pub mod persist {
    pub use crate::mark::file::*;
}

pub use bigint::BigId;
pub use generator::{Builder, Error, Generator};
pub use layout::{Field, Id, Parts};
pub use mask::Mask;
