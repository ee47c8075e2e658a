#![doc = include_str!("README.md")]

pub mod backfill;
pub mod partitions;
pub mod table_owner;
