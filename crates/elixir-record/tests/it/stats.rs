//! STATS over the battle log fixture: duels count once (or once per round on deck rows),
//! three-crown wins never count a duel, unknown outcomes count as battles only.

use elixir_record::stats::{Accumulator, RowKind, is_three_crown_win, streaks};
use elixir_record::{Battle, Outcome, Side, Tag};

use super::fixture;

fn battles() -> Vec<Battle> {
    Battle::from_battlelog(&fixture("battlelog.json"))
        .unwrap()
        .battles
}

#[test]
fn the_fixture_player_overall() {
    let me: Tag = "#2QY8LRJC9".parse().unwrap();
    let mut acc = Accumulator::new();
    for battle in battles() {
        assert!(acc.add_battle(&battle, &me));
    }
    // a battle the player did not play is not counted
    let stranger: Tag = "#CCCCCC".parse().unwrap();
    let before = acc.clone();
    assert!(!acc.add_battle(&battles()[0], &stranger));
    assert_eq!(acc, before);
    let overall = acc.stats_with_three_crowns(RowKind::SinglePlayer);
    let json = serde_json::to_value(&overall).unwrap();
    // six wins (ladder, war, duel, boat, 2v2, event) and the Path of Legend loss
    assert_eq!(
        json,
        serde_json::json!({
            "battles": 7, "wins": 6, "losses": 1, "draws": 0, "decided_battles": 7,
            "win_rate": 0.8571, "players": 1, "insufficient_sample": true,
            "three_crown_wins": 1
        })
    );
}

#[test]
fn three_crown_wins_skip_duels() {
    let all = battles();
    // the war battle: 3 crowns to 0, won
    assert!(is_three_crown_win(&all[2], Side::Team));
    assert!(!is_three_crown_win(&all[2], Side::Opponent));
    // the duel: 3 crowns summed over two rounds, won, but a duel never counts
    assert_eq!(all[3].team[0].crowns, Some(3));
    assert_eq!(all[3].outcome(Side::Team), Some(Outcome::Win));
    assert!(!is_three_crown_win(&all[3], Side::Team));
    // the ladder win had 2 crowns
    assert!(!is_three_crown_win(&all[0], Side::Team));
}

#[test]
fn deck_rows_count_each_duel_round() {
    let all = battles();
    let opponent: Tag = "#8Y2QPRLJ".parse().unwrap();
    let mut per_round = Accumulator::new();
    for game in all[3].games_of(&opponent) {
        per_round.add_game(&game, opponent.as_str());
    }
    let stats = per_round.stats(RowKind::SinglePlayer);
    assert_eq!((stats.battles, stats.losses), (2, 2));
    let mut once = Accumulator::new();
    assert!(once.add_battle(&all[3], &opponent));
    assert_eq!(once.stats(RowKind::SinglePlayer).battles, 1);
}

#[test]
fn streaks_over_the_fixture_in_time_order() {
    let me: Tag = "#2QY8LRJC9".parse().unwrap();
    let mut all = battles();
    all.sort_by_key(|b| b.battle_time);
    let s = streaks(all.iter().map(|b| b.outcome_of(&me)));
    // oldest first: event W, 2v2 W, boat W, duel W, war W, PoL L, ladder W
    assert_eq!((s.longest_win, s.longest_loss), (5, 1));
    let current = s.current.unwrap();
    assert_eq!((current.outcome, current.length), (Outcome::Win, 1));
}
