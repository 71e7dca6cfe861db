//! The player door's in-process cache of rendered read answers: the bytes of a
//! `get_play_context`, `read_play_journal` or `search_play_memory` answer kept per
//! (assignment, version, read), bounded by their size (moka). It owns the keys and the bound;
//! what a read answers is the play service's and how it renders is the player door's.
//!
//! Why it is correct: every write that changes what a player read answers — a turn, a finish,
//! a review (even one that only decides consequences) — goes through the store's one write
//! path, which bumps the assignment's version in the same atomic write; the scenario's title and
//! the nodes of a published version never change; and the token check reads the version from
//! the database on every request, in the same statement. So a key names exactly one answer,
//! on every instance, and nothing is ever invalidated: an entry of an old version is simply
//! never asked for again and ages out. A token rotation, a revocation or a deactivation
//! changes who may read, not what is read: the token check refuses them before the cache is
//! consulted.

use std::sync::Arc;

use mcp_door::PreparedResult;
use uuid::Uuid;

/// The default bound of [`ReadCache`]: 32 MiB of rendered answers (about a thousand played
/// sessions' `get_play_context`).
pub const DEFAULT_READ_CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// Which read, with the arguments that change its answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Read {
    Context,
    Journal { offset: i64, limit: i64 },
    Search(String),
}

/// What names one rendered answer: the assignment, the version it was read at, the read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadKey {
    pub assignment: Uuid,
    pub version: i64,
    pub read: Read,
}

impl ReadKey {
    /// What an entry costs besides its answer's bytes: the key and moka's bookkeeping, a
    /// round figure so that many small answers cannot outgrow the bound.
    fn weight(&self, answer: &PreparedResult) -> u32 {
        let extra = match &self.read {
            Read::Search(query) => query.len(),
            _ => 0,
        };
        u32::try_from(answer.size() + extra + 256).unwrap_or(u32::MAX)
    }
}

/// Rendered answers by [`ReadKey`], at most `max_bytes` of them (least recently and least
/// frequently used go first). A bound of 0 keeps nothing.
#[derive(Clone)]
pub struct ReadCache {
    entries: Option<moka::sync::Cache<ReadKey, Arc<PreparedResult>>>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache")
            .field("entries", &self.entries.as_ref().map(|c| c.entry_count()))
            .finish()
    }
}

impl ReadCache {
    /// A cache of at most `max_bytes` of answers (0: none).
    pub fn new(max_bytes: u64) -> Self {
        let entries = (max_bytes > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &ReadKey, answer: &Arc<PreparedResult>| key.weight(answer))
                .build()
        });
        Self { entries }
    }

    /// The answer kept for `key`, if any.
    pub fn get(&self, key: &ReadKey) -> Option<Arc<PreparedResult>> {
        self.entries.as_ref()?.get(key)
    }

    /// Keeps `answer` for `key`.
    pub fn insert(&self, key: ReadKey, answer: Arc<PreparedResult>) {
        if let Some(entries) = &self.entries {
            entries.insert(key, answer);
        }
    }

    /// The bytes kept now (moka settles its counts in the background; see
    /// [`ReadCache::settle`]).
    pub fn weighted_size(&self) -> u64 {
        self.entries.as_ref().map_or(0, |c| c.weighted_size())
    }

    /// Runs moka's pending maintenance (evictions, counts) now; for tests and metrics.
    pub fn settle(&self) {
        if let Some(entries) = &self.entries {
            entries.run_pending_tasks();
        }
    }

    /// What the cache holds, settled first: `GET /metrics` samples it as
    /// `mcp_door_cache_{entries,weight}{cache="play_reads"}`.
    pub fn held(&self) -> mcp_door::CacheUse {
        self.settle();
        mcp_door::CacheUse {
            entries: self.entries.as_ref().map_or(0, |c| c.entry_count()),
            weight: self.weighted_size(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer(bytes: usize) -> Arc<PreparedResult> {
        Arc::new(PreparedResult::new(&json!({"text": "x".repeat(bytes)})).unwrap())
    }

    fn key(version: i64, read: Read) -> ReadKey {
        ReadKey {
            assignment: Uuid::nil(),
            version,
            read,
        }
    }

    #[test]
    fn a_key_names_one_assignment_version_and_read() {
        let cache = ReadCache::new(1 << 20);
        cache.insert(key(2, Read::Context), answer(10));
        assert!(cache.get(&key(2, Read::Context)).is_some());
        assert!(cache.get(&key(3, Read::Context)).is_none());
        assert!(cache.get(&key(2, Read::Search("x".into()))).is_none());
        assert!(
            cache
                .get(&key(
                    2,
                    Read::Journal {
                        offset: 0,
                        limit: 10
                    }
                ))
                .is_none()
        );
        let other = ReadKey {
            assignment: Uuid::from_u128(1),
            ..key(2, Read::Context)
        };
        assert!(cache.get(&other).is_none());
    }

    #[test]
    fn the_bound_is_bytes_and_holds() {
        let cache = ReadCache::new(100_000);
        for v in 0..100 {
            cache.insert(key(v, Read::Context), answer(10_000));
            cache.settle();
        }
        assert!(
            cache.weighted_size() <= 100_000,
            "{}",
            cache.weighted_size()
        );
        assert!(cache.weighted_size() > 0);
    }

    #[test]
    fn a_bound_of_zero_keeps_nothing() {
        let cache = ReadCache::new(0);
        cache.insert(key(1, Read::Context), answer(10));
        assert!(cache.get(&key(1, Read::Context)).is_none());
        assert_eq!(cache.weighted_size(), 0);
    }
}
