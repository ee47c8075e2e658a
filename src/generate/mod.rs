#![doc = include_str!("README.md")]

pub mod at;
pub mod bigint;
pub mod ids;
pub mod observe;
pub mod take;
pub mod tx;
pub mod xact_callbacks;

use crate::base::settings::{self, PublisherSource};
use crate::horizon::cluster_worker;

/// The publisher id of the ids this server makes ([`settings::publisher`]); the 55000 of a node
/// of a Citus cluster that shares its id with a node that started first (the cluster horizon's
/// worker finds it).
#[inline]
pub fn publisher() -> (u16, PublisherSource) {
    let found = settings::publisher();
    if cluster_worker::refusing() {
        cluster_worker::raise_refused();
    }
    found
}

/// [`settings::publisher_fast`], `None` on a node that refuses to make ids too (the slow path
/// raises).
#[inline]
pub fn publisher_fast() -> Option<u16> {
    if cluster_worker::refusing() {
        return None;
    }
    settings::publisher_fast()
}
