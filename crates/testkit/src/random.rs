//! Deterministic randomness for tests: a counter run through SHA-256 — unique, repeatable,
//! never secret.

use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Implements the platform's `Random` from a seeded counter.
#[derive(Debug)]
pub struct CountingRandom(AtomicU64);

impl CountingRandom {
    pub fn new(seed: u64) -> Self {
        Self(AtomicU64::new(seed))
    }
}

impl mcp_door::Random for CountingRandom {
    fn fill(&self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(32) {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            let d = Sha256::digest(n.to_le_bytes());
            chunk.copy_from_slice(&d[..chunk.len()]);
        }
    }
}
