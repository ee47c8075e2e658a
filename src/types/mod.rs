#![doc = include_str!("README.md")]

pub mod bigint;
pub mod datum;
pub mod extract;
pub mod io;
pub mod mask;
pub mod ops;
pub mod ops_uuid;
pub mod record;
pub mod timestamps;
pub mod uuidv7;
pub mod window;
