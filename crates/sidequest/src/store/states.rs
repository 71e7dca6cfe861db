//! The play states this instance last wrote: one assignment row per assignment, kept
//! in memory (moka, bounded by size) so that an operation whose token check has just read the
//! assignment's version decides on the row of that version without reading it again, and a
//! turn whose token is checked in its own write decides on the newest row kept.
//!
//! Why it is correct: the assignment row changes only through play's one write path, and every
//! write there moves the version on (`UPDATE … SET version = $next … WHERE version = $read`),
//! so the row of a (assignment, version) never changes once written, on any instance. A state
//! is used only when its version is the one the database answered in the same request, or
//! under a write guarded by its version; the write it leads to is guarded by that version (and
//! by the absence of a receipt for the operation), so a state that went stale meanwhile writes
//! nothing and the operation is decided again on a fresh read. An entry is never invalidated:
//! a newer version simply misses it.

use std::fmt;
use std::sync::Arc;

use uuid::Uuid;

use crate::domain::Assignment;

/// The default bound of [`States`]: 8 MiB of assignment rows (a few hundred played sessions:
/// a row is at most about 60 KB with the contract's longest memory, brief and notes).
pub const DEFAULT_STATE_CACHE_BYTES: u64 = 8 * 1024 * 1024;

/// The newest assignment row this instance wrote, per assignment.
#[derive(Clone)]
pub(super) struct States(moka::sync::Cache<Uuid, Arc<Assignment>>);

impl States {
    /// A cache of at most `max_bytes` of rows (by [`weight`]).
    pub(super) fn new(max_bytes: u64) -> Self {
        Self(
            moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|_: &Uuid, row: &Arc<Assignment>| weight(row))
                .build(),
        )
    }

    /// The row of `assignment` at `version`, if it is the one kept.
    pub(super) fn at(&self, assignment: Uuid, version: i64) -> Option<Arc<Assignment>> {
        self.0.get(&assignment).filter(|row| row.version == version)
    }

    /// The newest row of `assignment` this instance wrote, whatever its version.
    pub(super) fn newest(&self, assignment: Uuid) -> Option<Arc<Assignment>> {
        self.0.get(&assignment)
    }

    /// Keeps `row` as its assignment's newest known row. Two requests of one assignment may
    /// keep rows out of order; an older one only costs the next operation a read.
    pub(super) fn keep(&self, row: Arc<Assignment>) {
        self.0.insert(row.id, row);
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("States")
            .field("entries", &self.0.entry_count())
            .finish()
    }
}

/// What a row costs in memory: its text and a fixed allowance for the struct, the key and
/// moka's bookkeeping.
fn weight(row: &Assignment) -> u32 {
    let texts = [
        &row.character,
        &row.brief,
        &row.instructions,
        &row.boundaries,
        &row.return_condition,
        &row.gm_notes,
        &row.memory,
    ]
    .iter()
    .map(|t| t.len())
    .sum::<usize>()
        + row.current_scene.as_ref().map_or(0, String::len)
        + row.summary.as_ref().map_or(0, String::len)
        + row
            .published_node_ids
            .iter()
            .map(|n| n.len() + 24)
            .sum::<usize>();
    u32::try_from(texts + 512).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Language, Mode, PlayStatus};

    fn row(version: i64, memory: &str) -> Assignment {
        Assignment {
            id: Uuid::from_u128(7),
            scenario_id: Uuid::from_u128(8),
            source_version: 1,
            gm_id: Uuid::from_u128(9),
            player_id: Uuid::from_u128(10),
            mode: Mode::Solo,
            language: Language::En,
            character: "Ash".into(),
            brief: String::new(),
            instructions: String::new(),
            boundaries: String::new(),
            return_condition: String::new(),
            gm_notes: String::new(),
            published_node_ids: vec!["start".into()],
            auto_approve: false,
            status: PlayStatus::Active,
            version,
            memory: memory.into(),
            current_scene: None,
            summary: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn a_row_is_found_only_at_its_own_version() {
        let states = States::new(DEFAULT_STATE_CACHE_BYTES);
        states.keep(Arc::new(row(3, "m")));
        assert_eq!(states.at(Uuid::from_u128(7), 3).map(|r| r.version), Some(3));
        assert!(states.at(Uuid::from_u128(7), 4).is_none());
        assert!(states.at(Uuid::from_u128(7), 2).is_none());
        assert!(states.at(Uuid::from_u128(8), 3).is_none());
        states.keep(Arc::new(row(4, "n")));
        assert!(states.at(Uuid::from_u128(7), 3).is_none());
        assert_eq!(
            states.at(Uuid::from_u128(7), 4).map(|r| r.memory.clone()),
            Some("n".to_owned())
        );
    }

    #[test]
    fn a_row_weighs_its_text() {
        let light = weight(&row(1, ""));
        let heavy = weight(&row(1, &"x".repeat(16_000)));
        assert_eq!(heavy - light, 16_000);
        assert!(light >= 512);
    }

    #[test]
    fn the_bound_holds() {
        let states = States::new(40_000);
        for i in 0..20 {
            let mut r = row(1, &"x".repeat(10_000));
            r.id = Uuid::from_u128(i);
            states.keep(Arc::new(r));
        }
        states.0.run_pending_tasks();
        assert!(
            states.0.weighted_size() <= 40_000,
            "{}",
            states.0.weighted_size()
        );
        assert!(states.0.entry_count() <= 3);
    }
}
