#![doc = include_str!("README.md")]

pub mod at;
pub mod ids;
pub mod observe;
pub mod tx;
pub mod xact_callbacks;
