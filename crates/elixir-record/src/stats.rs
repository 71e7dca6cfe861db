//! STATS arithmetic (SURFACE §3.4): the sample every aggregate row carries — battles (those
//! whose outcome is unknown included), wins, losses, draws, decided battles, the win rate,
//! distinct players and the small-sample flag — plus the three-crown rule, the 95% Wilson
//! lower bound the meta tools rank by, and win/loss streaks. Which battles (or duel rounds)
//! enter a row is the caller's: a duel is one battle everywhere but deck and card rows,
//! where [`Battle::games_of`] gives one game per round.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::battle::{Battle, Game, Outcome, Side};

/// Below this many decided battles a row about one player is an insufficient sample.
pub const SINGLE_PLAYER_MIN_DECIDED: u64 = 10;
/// Below this many decided battles a row that pools players is an insufficient sample.
pub const POOLED_MIN_DECIDED: u64 = 20;
/// The normal quantile of the 95% Wilson interval.
pub const WILSON_Z: f64 = 1.96;

/// Whom a row is about, which sets its small-sample threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RowKind {
    /// Single-player tools and each member row of clans_standings: threshold 10.
    SinglePlayer,
    /// Segment tools and clan totals: threshold 20.
    Pooled,
}

impl RowKind {
    /// The fewest decided battles that make a sufficient sample.
    pub fn min_decided(self) -> u64 {
        match self {
            RowKind::SinglePlayer => SINGLE_PLAYER_MIN_DECIDED,
            RowKind::Pooled => POOLED_MIN_DECIDED,
        }
    }
}

/// The STATS block, with its wire field names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Every battle (or game) in the row, including those whose outcome is unknown.
    pub battles: u64,
    /// Wins.
    pub wins: u64,
    /// Losses.
    pub losses: u64,
    /// Draws.
    pub draws: u64,
    /// wins + losses.
    pub decided_battles: u64,
    /// wins ÷ decided_battles to four decimals; `None` when nothing was decided.
    pub win_rate: Option<f64>,
    /// Distinct players who contributed.
    pub players: u64,
    /// Whether `decided_battles` is below the row kind's threshold.
    pub insufficient_sample: bool,
}

/// A STATS row plus the three-crown count (players_summary and battles_performance
/// `overall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsWithThreeCrowns {
    /// The sample.
    #[serde(flatten)]
    pub stats: Stats,
    /// Won battles (never duels) in which the subject's side had 3 crowns.
    pub three_crown_wins: u64,
}

/// Rounds to four decimals, as every rate on the wire.
pub fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

fn ratio(wins: u64, decided: u64) -> Option<f64> {
    // counts stay far below 2^53, where u64 → f64 is exact
    #[allow(clippy::cast_precision_loss)]
    (decided > 0).then(|| wins as f64 / decided as f64)
}

/// wins ÷ decided, four decimals; `None` when `decided` is 0.
pub fn win_rate(wins: u64, decided: u64) -> Option<f64> {
    ratio(wins, decided).map(round4)
}

/// The lower bound of the 95% Wilson score interval for `wins` out of `decided`, four
/// decimals; `None` when `decided` is 0. With p = wins ÷ n, n = decided and z = 1.96:
///
/// ```text
/// (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)
/// ```
///
/// It never exceeds the win rate and shrinks toward 0 as the sample shrinks, so a card won
/// 3 of 3 times ranks below one won 60 of 80.
pub fn wilson_lower_bound(wins: u64, decided: u64) -> Option<f64> {
    let p = ratio(wins, decided)?;
    #[allow(clippy::cast_precision_loss)]
    let n = decided as f64;
    let z2 = WILSON_Z * WILSON_Z;
    let centre = p + z2 / (2.0 * n);
    let margin = WILSON_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let low = (centre - margin) / (1.0 + z2 / n);
    // floating error can leave −1e-17 at p = 0, and a hair above p
    Some(round4(low.clamp(0.0, p)))
}

/// Whether the battle is a three-crown win for `side`: won, not a duel (a duel's crowns are
/// summed over its rounds, §6.5), and the side's crowns at least 3.
pub fn is_three_crown_win(battle: &Battle, side: Side) -> bool {
    !battle.is_duel()
        && battle.outcome(side) == Some(Outcome::Win)
        && battle
            .side(side)
            .first()
            .and_then(|p| p.crowns)
            .is_some_and(|c| c >= 3)
}

/// Collects a row's sample one battle (or game) at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accumulator {
    battles: u64,
    wins: u64,
    losses: u64,
    draws: u64,
    three_crown_wins: u64,
    players: BTreeSet<String>,
}

impl Accumulator {
    /// An empty row.
    pub fn new() -> Accumulator {
        Accumulator::default()
    }

    /// Counts one battle or game with `outcome` (`None` counts in `battles` only), played by
    /// `player` (the subject, or on battles_opponents the opponent).
    pub fn add(&mut self, outcome: Option<Outcome>, player: &str) {
        self.battles += 1;
        match outcome {
            Some(Outcome::Win) => self.wins += 1,
            Some(Outcome::Loss) => self.losses += 1,
            Some(Outcome::Draw) => self.draws += 1,
            None => {}
        }
        self.see(player);
    }

    /// Counts games already summed for `player` (a store's per-player row of one deck or
    /// card): `games` in all, of them `wins`, `losses` and `draws`; the rest had no known
    /// outcome.
    pub fn add_counted(&mut self, games: u64, wins: u64, losses: u64, draws: u64, player: &str) {
        self.battles += games;
        self.wins += wins;
        self.losses += losses;
        self.draws += draws;
        self.see(player);
    }

    /// Counts `player` among the row's distinct players.
    fn see(&mut self, player: &str) {
        if !self.players.contains(player) {
            self.players.insert(player.to_owned());
        }
    }

    /// Battles (or games) counted, whatever their outcome.
    pub fn battles(&self) -> u64 {
        self.battles
    }

    /// Distinct players counted.
    pub fn player_count(&self) -> usize {
        self.players.len()
    }

    /// Counts `battle` once for `player` with their outcome (a duel with the duel's), and
    /// a three-crown win where it is one. A battle `player` did not play in is not theirs to
    /// count: it is left out, and the answer is `false`.
    pub fn add_battle(&mut self, battle: &Battle, player: &crate::Tag) -> bool {
        let Some(side) = battle.side_of(player) else {
            return false;
        };
        self.add(battle.outcome(side), player.as_str());
        if is_three_crown_win(battle, side) {
            self.three_crown_wins += 1;
        }
        true
    }

    /// Counts one game of a deck or card row (a duel round, or a whole battle).
    pub fn add_game(&mut self, game: &Game<'_>, player: &str) {
        self.add(game.outcome, player);
    }

    /// Adds another row's sample (players are unioned, not summed).
    pub fn merge(&mut self, other: &Accumulator) {
        self.battles += other.battles;
        self.wins += other.wins;
        self.losses += other.losses;
        self.draws += other.draws;
        self.three_crown_wins += other.three_crown_wins;
        self.players.extend(other.players.iter().cloned());
    }

    /// Won battles with three crowns counted by [`Accumulator::add_battle`].
    pub fn three_crown_wins(&self) -> u64 {
        self.three_crown_wins
    }

    /// The row's STATS.
    pub fn stats(&self, kind: RowKind) -> Stats {
        let decided = self.wins + self.losses;
        Stats {
            battles: self.battles,
            wins: self.wins,
            losses: self.losses,
            draws: self.draws,
            decided_battles: decided,
            win_rate: win_rate(self.wins, decided),
            players: u64::try_from(self.players.len()).unwrap_or(u64::MAX),
            insufficient_sample: decided < kind.min_decided(),
        }
    }

    /// The row's STATS with its three-crown wins.
    pub fn stats_with_three_crowns(&self, kind: RowKind) -> StatsWithThreeCrowns {
        StatsWithThreeCrowns {
            stats: self.stats(kind),
            three_crown_wins: self.three_crown_wins,
        }
    }

    /// The 95% Wilson lower bound of the row's win rate.
    pub fn win_rate_low(&self) -> Option<f64> {
        wilson_lower_bound(self.wins, self.wins + self.losses)
    }
}

/// The streak the newest games end on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentStreak {
    /// `win` or `loss`.
    pub outcome: Outcome,
    /// How many in a row.
    pub length: u64,
}

/// battles_performance `streaks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Streaks {
    /// The most wins in a row.
    pub longest_win: u64,
    /// The most losses in a row.
    pub longest_loss: u64,
    /// The run the newest decided-or-drawn game belongs to; `None` when there is none or the
    /// newest such game is a draw.
    pub current: Option<CurrentStreak>,
}

/// Streaks over outcomes in time order, oldest first (a duel once, with its outcome). A draw
/// breaks a streak: it is neither a win nor a loss. An unknown outcome (`None`) neither
/// breaks nor extends one: we cannot tell what it was, and counting it either way would
/// invent a result.
pub fn streaks<I>(outcomes: I) -> Streaks
where
    I: IntoIterator<Item = Option<Outcome>>,
{
    let mut out = Streaks::default();
    let mut run: Option<CurrentStreak> = None;
    for outcome in outcomes.into_iter().flatten() {
        run = match (outcome, run) {
            (Outcome::Draw, _) => None,
            (o, Some(r)) if r.outcome == o => Some(CurrentStreak {
                outcome: o,
                length: r.length + 1,
            }),
            (o, _) => Some(CurrentStreak {
                outcome: o,
                length: 1,
            }),
        };
        if let Some(r) = run {
            let longest = match r.outcome {
                Outcome::Win => &mut out.longest_win,
                _ => &mut out.longest_loss,
            };
            *longest = (*longest).max(r.length);
        }
    }
    out.current = run;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    use Outcome::{Draw, Loss, Win};

    fn row(outcomes: &[Option<Outcome>]) -> Accumulator {
        let mut acc = Accumulator::new();
        for o in outcomes {
            acc.add(*o, "#2QY8LRJC9");
        }
        acc
    }

    #[test]
    fn stats_count_unknown_outcomes_as_battles_only() {
        let acc = row(&[Some(Win), Some(Win), Some(Loss), Some(Draw), None]);
        let stats = acc.stats(RowKind::SinglePlayer);
        assert_eq!(
            serde_json::to_value(&stats).unwrap(),
            json!({
                "battles": 5, "wins": 2, "losses": 1, "draws": 1, "decided_battles": 3,
                "win_rate": 0.6667, "players": 1, "insufficient_sample": true
            })
        );
        let empty = Accumulator::new().stats(RowKind::Pooled);
        assert_eq!(empty.win_rate, None);
        assert_eq!(
            serde_json::to_value(&empty).unwrap()["win_rate"],
            json!(null)
        );
        // only draws: nothing decided, so no rate
        assert_eq!(row(&[Some(Draw)]).stats(RowKind::Pooled).win_rate, None);
    }

    #[test]
    fn the_sample_threshold_depends_on_the_row() {
        let nine = row(&[Some(Win); 9]);
        let ten = row(&[Some(Loss); 10]);
        assert!(nine.stats(RowKind::SinglePlayer).insufficient_sample);
        assert!(!ten.stats(RowKind::SinglePlayer).insufficient_sample);
        assert!(ten.stats(RowKind::Pooled).insufficient_sample);
        let twenty = row(&[Some(Win); 20]);
        assert!(!twenty.stats(RowKind::Pooled).insufficient_sample);
        // draws and unknowns never make a sample sufficient
        let drawn = row(&[Some(Draw); 30]);
        assert!(drawn.stats(RowKind::SinglePlayer).insufficient_sample);
    }

    #[test]
    fn players_are_distinct_and_merges_union_them() {
        let mut a = Accumulator::new();
        a.add(Some(Win), "#A");
        a.add(Some(Loss), "#A");
        a.add(None, "#B");
        let mut b = Accumulator::new();
        b.add(Some(Win), "#B");
        b.add(Some(Draw), "#C");
        a.merge(&b);
        let stats = a.stats(RowKind::Pooled);
        assert_eq!(
            (
                stats.battles,
                stats.wins,
                stats.losses,
                stats.draws,
                stats.players
            ),
            (5, 2, 1, 1, 3)
        );
        assert_eq!(stats.win_rate, Some(0.6667));
    }

    #[test]
    fn counted_rows_add_up_like_the_games_they_sum() {
        let mut one_by_one = row(&[Some(Win), Some(Win), Some(Loss), Some(Draw), None]);
        one_by_one.add(Some(Loss), "#8PJJ2C");
        let mut counted = Accumulator::new();
        counted.add_counted(5, 2, 1, 1, "#2QY8LRJC9");
        counted.add_counted(1, 0, 1, 0, "#8PJJ2C");
        counted.add_counted(0, 0, 0, 0, "#2QY8LRJC9");
        assert_eq!(counted, one_by_one);
        assert_eq!((counted.battles(), counted.player_count()), (6, 2));
        assert_eq!(
            counted.stats(RowKind::Pooled),
            one_by_one.stats(RowKind::Pooled)
        );
    }

    #[test]
    fn win_rates_round_to_four_decimals() {
        assert_eq!(win_rate(1, 3), Some(0.3333));
        assert_eq!(win_rate(2, 3), Some(0.6667));
        assert_eq!(win_rate(1, 8), Some(0.125));
        assert_eq!(win_rate(0, 0), None);
        assert_eq!(win_rate(5, 5), Some(1.0));
    }

    #[test]
    fn wilson_bounds_match_the_formula() {
        // hand-computed with z = 1.96
        assert_eq!(wilson_lower_bound(3, 3), Some(0.4385));
        assert_eq!(wilson_lower_bound(60, 80), Some(0.6452));
        assert_eq!(wilson_lower_bound(0, 10), Some(0.0));
        assert_eq!(wilson_lower_bound(5, 10), Some(0.2366));
        assert_eq!(wilson_lower_bound(0, 0), None);
        // a small perfect record ranks below a large good one
        assert!(wilson_lower_bound(3, 3) < wilson_lower_bound(60, 80));
        let acc = row(&[Some(Win), Some(Win), Some(Win), Some(Draw)]);
        assert_eq!(acc.win_rate_low(), Some(0.4385));
    }

    #[test]
    fn streaks_break_on_draws_and_skip_unknowns() {
        let s = streaks([
            Some(Win),
            Some(Win),
            None,
            Some(Win),
            Some(Loss),
            Some(Loss),
            Some(Draw),
            Some(Loss),
        ]);
        assert_eq!(
            s,
            Streaks {
                longest_win: 3,
                longest_loss: 2,
                current: Some(CurrentStreak {
                    outcome: Loss,
                    length: 1
                }),
            }
        );
        assert_eq!(streaks([Some(Win), Some(Draw)]).current, None);
        assert_eq!(streaks([Some(Win), Some(Draw)]).longest_win, 1);
        assert_eq!(streaks([None, None]), Streaks::default());
        assert_eq!(
            serde_json::to_value(streaks([Some(Win), Some(Win)])).unwrap(),
            json!({"longest_win": 2, "longest_loss": 0,
                   "current": {"outcome": "win", "length": 2}})
        );
    }

    fn outcome() -> impl Strategy<Value = Option<Outcome>> {
        prop_oneof![
            Just(None),
            Just(Some(Win)),
            Just(Some(Loss)),
            Just(Some(Draw))
        ]
    }

    proptest! {
        #![proptest_config(crate::prop_settings::config())]
        #[test]
        fn stats_invariants_hold(outcomes in proptest::collection::vec(outcome(), 0..200)) {
            let stats = row(&outcomes).stats(RowKind::Pooled);
            prop_assert!(stats.wins + stats.losses + stats.draws <= stats.battles);
            prop_assert_eq!(stats.battles, outcomes.len() as u64);
            prop_assert_eq!(stats.decided_battles, stats.wins + stats.losses);
            prop_assert_eq!(stats.win_rate.is_none(), stats.decided_battles == 0);
            if let Some(rate) = stats.win_rate {
                prop_assert!((0.0..=1.0).contains(&rate));
                let low = wilson_lower_bound(stats.wins, stats.decided_battles).unwrap();
                prop_assert!((0.0..=rate).contains(&low), "{} > {}", low, rate);
            }
            let s = streaks(outcomes.iter().copied());
            prop_assert!(s.longest_win <= stats.wins);
            prop_assert!(s.longest_loss <= stats.losses);
            if let Some(current) = s.current {
                prop_assert!(current.outcome != Draw);
                prop_assert!(current.length <= s.longest_win.max(s.longest_loss));
            }
        }

        #[test]
        fn wilson_never_exceeds_the_rate(decided in 1u64..5_000, wins_share in 0.0f64..=1.0) {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
            let wins = ((decided as f64) * wins_share).floor() as u64;
            let low = wilson_lower_bound(wins, decided).unwrap();
            let rate = win_rate(wins, decided).unwrap();
            prop_assert!((0.0..=rate).contains(&low));
        }
    }
}
