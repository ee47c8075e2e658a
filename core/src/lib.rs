//! The pure-Rust core of hlculid: no PostgreSQL in here, so all of it is tested with plain
//! `cargo test`. The extension crate wraps these pieces for SQL.

pub mod binary;
pub mod clock;
pub mod layout;
pub mod persist;
pub mod random;
pub mod text;
pub mod time;

pub use layout::{Field, Id, Parts};
