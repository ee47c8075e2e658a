#![doc = include_str!("README.md")]

pub mod cluster;
pub mod cluster_worker;
pub mod consumers;
pub mod prepared;
pub mod published;
pub mod publisher;
pub mod read_committed;
pub mod readers;
pub mod server;
pub mod slots;
pub mod wait;
