//! Random bits for ids: a cryptographically secure stream (the `rand` crate's `StdRng`, ChaCha)
//! seeded from the operating system. It produces its output a block at a time, so an id costs
//! a few nanoseconds, not a system call. The caller keeps one per process (per thread in an
//! application) and makes a new one after fork, so no two processes ever share a stream.

use crate::layout::MAX_RANDOM;
use rand::rngs::{OsRng, StdRng};
use rand::{RngCore, SeedableRng, TryRngCore};

/// The operating system refused random bytes.
pub type OsError = rand::rand_core::OsError;

pub struct RandomSource {
    rng: StdRng,
}

impl RandomSource {
    /// A new stream seeded from the operating system's random source.
    pub fn from_os() -> Result<RandomSource, OsError> {
        let mut seed = <StdRng as SeedableRng>::Seed::default();
        OsRng.try_fill_bytes(&mut seed)?;
        Ok(RandomSource {
            rng: StdRng::from_seed(seed),
        })
    }

    /// 48 random bits.
    #[inline]
    pub fn next48(&mut self) -> u64 {
        self.rng.next_u64() & MAX_RANDOM
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn values_fit_and_streams_differ() {
        let mut a = RandomSource::from_os().unwrap();
        let mut b = RandomSource::from_os().unwrap();
        let xs: Vec<u64> = (0..1000).map(|_| a.next48()).collect();
        let ys: Vec<u64> = (0..1000).map(|_| b.next48()).collect();
        assert!(xs.iter().chain(&ys).all(|&v| v <= MAX_RANDOM));
        let all: HashSet<u64> = xs.iter().chain(&ys).copied().collect();
        assert_eq!(all.len(), 2000);
        // Every one of the 48 bits is used.
        let or = xs.iter().fold(0, |acc, v| acc | v);
        assert_eq!(or, MAX_RANDOM);
    }
}
