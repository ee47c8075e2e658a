#![doc = include_str!("README.md")]

pub mod durable;
pub mod introspect;
pub mod mark_writer;
pub mod recover;
pub mod shared;
