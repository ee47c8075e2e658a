#![doc = include_str!("README.md")]

pub mod backend_local;
pub mod errors;
pub mod pg_c;
pub mod process;
pub mod read_guard;
pub mod schema_pin;
pub mod settings;
