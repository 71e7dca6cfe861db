//! Coverage gaps (SURFACE §7.4), pure: from what the record held before a read and what the
//! read returned, whether battles may have been lost, and the interval they would lie in.
//! Two kinds: a battle log read whose every entry is new (the log may have overflowed
//! between reads; the interval is known, the count is not), and a profile whose
//! `battleCount` rose by more than the battles recorded since the last profile read (the
//! count is known, the span estimated). Storing gaps and showing them (`unknown_intervals`,
//! `completeness_note`, `complete:false`) are the service's.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::time::iso_serde;

/// Why an interval is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GapKind {
    /// Every entry of a (non-first) battle log read was new: the log may have overflowed.
    LogOverflow,
    /// `battleCount` rose by more than the battles recorded.
    BattleCount,
}

/// An interval in which battles may be missing from the record. The bounds are exclusive
/// (`from` < t < `to`): the battles at either end are recorded, or are the reads themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownInterval {
    /// The exclusive start.
    #[serde(with = "iso_serde")]
    pub from: Timestamp,
    /// The exclusive end.
    #[serde(with = "iso_serde")]
    pub to: Timestamp,
    /// What revealed it.
    pub kind: GapKind,
    /// How many battles are missing, when known (`battle_count` gaps); `None` for a log
    /// overflow, where nothing may turn out lost.
    pub missing_battles: Option<u64>,
    /// Whether the span is an estimate (the battles lie somewhere between two profile
    /// reads) rather than the exact stretch between two recorded battles.
    pub estimated: bool,
}

impl UnknownInterval {
    /// Whether the gap meets the window `[from, to)`.
    pub fn overlaps(&self, from: Timestamp, to: Timestamp) -> bool {
        // the gap is the open interval (self.from, self.to)
        self.from < to && from < self.to
    }
}

/// The gap a battle log read may reveal. `last_recorded` is the newest `battle_time` the
/// record held for the player before this read (`None`: the first read, which has nothing to
/// miss); `fetched` the read's battle times in any order. When the read is not the first,
/// returned something, and every entry is new (newer than `last_recorded`), the possible gap
/// is the open interval from `last_recorded` to the oldest fetched battle — reported even if
/// nothing turns out lost, since the log cannot say.
pub fn log_gap(last_recorded: Option<Timestamp>, fetched: &[Timestamp]) -> Option<UnknownInterval> {
    let last = last_recorded?;
    let oldest = fetched.iter().min().copied()?;
    if oldest <= last {
        // the read reaches back into what was recorded: the two overlap, nothing is lost
        return None;
    }
    Some(UnknownInterval {
        from: last,
        to: oldest,
        kind: GapKind::LogOverflow,
        missing_battles: None,
        estimated: false,
    })
}

/// A profile reading of `battleCount` and when it was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountReading {
    /// Upstream `battleCount`.
    pub battle_count: u64,
    /// When the profile was read.
    pub observed_at: Timestamp,
}

/// The gap two profile reads may reveal: `battleCount` went from `previous` to `current`,
/// while the record gained `recorded_since` battles played between the two reads. When the
/// count rose by more, the difference is missing, somewhere between the two reads (the span
/// is an estimate). A first read (`previous` `None`), a count that did not rise beyond what
/// was recorded, or one that fell (upstream reset or a changed account) reveals nothing.
pub fn battle_count_gap(
    previous: Option<CountReading>,
    current: CountReading,
    recorded_since: u64,
) -> Option<UnknownInterval> {
    let previous = previous?;
    let rise = current.battle_count.checked_sub(previous.battle_count)?;
    let missing = rise.checked_sub(recorded_since).filter(|m| *m > 0)?;
    if current.observed_at <= previous.observed_at {
        return None;
    }
    Some(UnknownInterval {
        from: previous.observed_at,
        to: current.observed_at,
        kind: GapKind::BattleCount,
        missing_battles: Some(missing),
        estimated: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_read_of_only_new_battles_is_a_possible_gap() {
        let last = at("2026-09-18T10:00:00Z");
        let fetched = [
            at("2026-09-18T19:34:12Z"),
            at("2026-09-18T12:00:00Z"),
            at("2026-09-18T15:00:00Z"),
        ];
        let gap = log_gap(Some(last), &fetched).unwrap();
        assert_eq!((gap.from, gap.to), (last, at("2026-09-18T12:00:00Z")));
        assert_eq!(
            (gap.kind, gap.missing_battles, gap.estimated),
            (GapKind::LogOverflow, None, false)
        );
        assert_eq!(
            serde_json::to_value(&gap).unwrap(),
            serde_json::json!({
                "from": "2026-09-18T10:00:00Z", "to": "2026-09-18T12:00:00Z",
                "kind": "log_overflow", "missing_battles": null, "estimated": false
            })
        );
    }

    #[test]
    fn an_overlapping_first_or_empty_read_is_no_gap() {
        let last = at("2026-09-18T10:00:00Z");
        // the oldest fetched battle is the one recorded last: the reads overlap
        assert_eq!(
            log_gap(Some(last), &[at("2026-09-18T12:00:00Z"), last]),
            None
        );
        assert_eq!(log_gap(Some(last), &[at("2026-09-17T12:00:00Z")]), None);
        // a first read has nothing to miss
        assert_eq!(log_gap(None, &[at("2026-09-18T12:00:00Z")]), None);
        // an empty read brings nothing new
        assert_eq!(log_gap(Some(last), &[]), None);
    }

    #[test]
    fn a_battle_count_that_outruns_the_record_is_a_counted_gap() {
        let before = CountReading {
            battle_count: 24_400,
            observed_at: at("2026-09-18T02:00:00Z"),
        };
        let after = CountReading {
            battle_count: 24_410,
            observed_at: at("2026-09-18T10:00:00Z"),
        };
        let gap = battle_count_gap(Some(before), after, 7).unwrap();
        assert_eq!(
            (
                gap.from,
                gap.to,
                gap.kind,
                gap.missing_battles,
                gap.estimated
            ),
            (
                before.observed_at,
                after.observed_at,
                GapKind::BattleCount,
                Some(3),
                true
            )
        );
        // every battle recorded (or more, e.g. friendlies the count leaves out): no gap
        assert_eq!(battle_count_gap(Some(before), after, 10), None);
        assert_eq!(battle_count_gap(Some(before), after, 12), None);
        // a first profile read, a falling count, a reading out of order: nothing
        assert_eq!(battle_count_gap(None, after, 0), None);
        assert_eq!(battle_count_gap(Some(after), before, 0), None);
        let same_time = CountReading {
            battle_count: 24_420,
            observed_at: after.observed_at,
        };
        assert_eq!(battle_count_gap(Some(after), same_time, 0), None);
    }

    #[test]
    fn gaps_meet_windows_by_their_open_interval() {
        let gap = log_gap(
            Some(at("2026-09-18T10:00:00Z")),
            &[at("2026-09-18T12:00:00Z")],
        )
        .unwrap();
        assert!(gap.overlaps(at("2026-09-18T00:00:00Z"), at("2026-09-19T00:00:00Z")));
        assert!(gap.overlaps(at("2026-09-18T11:00:00Z"), at("2026-09-18T11:30:00Z")));
        // a window ending at the gap's start, or starting at its end, does not meet it
        assert!(!gap.overlaps(at("2026-09-18T00:00:00Z"), at("2026-09-18T10:00:00Z")));
        assert!(!gap.overlaps(at("2026-09-18T12:00:00Z"), at("2026-09-18T13:00:00Z")));
    }
}
