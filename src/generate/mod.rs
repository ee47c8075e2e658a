#![doc = include_str!("README.md")]

pub mod at;
pub mod bigint;
pub mod ids;
pub mod observe;
pub mod take;
pub mod tx;
pub mod xact_callbacks;
