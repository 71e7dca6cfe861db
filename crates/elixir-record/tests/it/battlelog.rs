//! The battle log fixture read into the record's types: modes, participants, levels, forms,
//! tower troops, duel rounds, boat defence lists and outcomes, one battle of each shape.

use elixir_record::battle::Form;
use elixir_record::{Battle, Mode, Outcome, Side};

use super::fixture;

fn battles() -> Vec<Battle> {
    Battle::from_battlelog(&fixture("battlelog.json")).unwrap()
}

#[test]
fn each_upstream_type_gets_its_mode_and_keeps_its_type() {
    let got: Vec<(String, Mode)> = battles()
        .into_iter()
        .map(|b| (b.battle_type, b.mode))
        .collect();
    let want = [
        ("PvP", Mode::Ladder),
        ("pathOfLegend", Mode::PathOfLegend),
        ("riverRacePvP", Mode::War),
        ("riverRaceDuel", Mode::WarDuel),
        ("boatBattle", Mode::Boat),
        ("clanMate2v2", Mode::TwoVTwo),
        ("trail", Mode::Event),
    ];
    assert_eq!(got, want.map(|(t, m)| (t.to_owned(), m)));
}

#[test]
fn outcomes_from_the_team_side() {
    let got: Vec<Option<Outcome>> = battles().iter().map(|b| b.outcome(Side::Team)).collect();
    assert_eq!(
        got,
        [
            Some(Outcome::Win),  // PvP: +31 / −31
            Some(Outcome::Loss), // Path of Legend: −18 / +18
            Some(Outcome::Win),  // war: 3 crowns to 0, no trophy change reported
            Some(Outcome::Win),  // duel: both rounds (1–0, 2–1)
            Some(Outcome::Win),  // boat: boatBattleWon
            Some(Outcome::Win),  // 2v2: 1 crown to 0
            Some(Outcome::Win),  // event: 2 crowns to 1
        ]
    );
    let pvp = &battles()[0];
    assert_eq!(pvp.outcome(Side::Opponent), Some(Outcome::Loss));
}

#[test]
fn participants_carry_levels_forms_and_tower_troops() {
    let all = battles();
    let pvp = &all[0];
    let me = &pvp.team[0];
    assert_eq!(
        (me.side, me.tag.as_ref().map(|t| t.as_str())),
        (Side::Team, Some("#2QY8LRJC9"))
    );
    assert_eq!(
        (me.name.as_str(), me.crowns, me.trophy_change),
        ("Saltmarsh", Some(2), Some(31))
    );
    assert_eq!(me.starting_trophies, Some(9841));
    assert_eq!(me.cards.len(), 8);
    let skeletons = &me.cards[0];
    // common: API level 15 is in-game 15; evolutionLevel 1 is the evolution played
    assert_eq!(
        (skeletons.id, skeletons.level, skeletons.form),
        (26_000_010, Some(15), Some(Form::Evolution))
    );
    let musketeer = me.cards.iter().find(|c| c.id == 26_000_014).unwrap();
    // rare: API 13 + 2; evolutionLevel 2 is the hero
    assert_eq!(
        (musketeer.level, musketeer.form),
        (Some(15), Some(Form::Hero))
    );
    let hog = me.cards.iter().find(|c| c.id == 26_000_021).unwrap();
    assert_eq!((hog.form, hog.evolution_level), (Some(Form::Base), None));
    let tower = me.tower_troop.as_ref().unwrap();
    // Cannoneer, an epic tower troop: API 9 + 5
    assert_eq!(
        (tower.id, tower.name.as_str(), tower.level),
        (159_000_001, "Cannoneer", Some(14))
    );
    assert_eq!(
        pvp.opponent[0].tower_troop.as_ref().map(|t| t.id),
        Some(159_000_000)
    );
    assert_eq!(pvp.game_mode.as_ref().map(|g| g.id), Some(72_000_006));
    assert_eq!(pvp.league_number, Some(1));
    // war battles report no tower troop, and no trophy change
    let war = &all[2];
    assert_eq!(
        (war.team[0].tower_troop.as_ref(), war.team[0].trophy_change),
        (None, None)
    );
    assert!(war.team[0].deck_hash.as_ref().is_some());
}

#[test]
fn duels_keep_rounds_and_boats_keep_the_defence_apart() {
    let all = battles();
    let duel = &all[3];
    let me = &duel.team[0];
    assert_eq!(me.crowns, Some(3)); // summed upstream
    assert_eq!(me.cards.len(), 16); // rounds concatenated, as sent
    assert_eq!(me.rounds.len(), 2);
    assert_eq!(
        me.rounds.iter().map(|r| r.crowns).collect::<Vec<_>>(),
        [Some(1), Some(2)]
    );
    assert_eq!(
        me.rounds[0]
            .cards
            .iter()
            .filter(|c| c.used == Some(false))
            .count(),
        1
    );
    assert!(me.rounds.iter().all(|r| r.deck_hash.is_some()));
    assert_eq!(me.deck_hash, None);

    let boat = &all[4];
    let (attacker, defender) = (&boat.team[0], &boat.opponent[0]);
    assert_eq!((attacker.cards.len(), attacker.defence_cards.len()), (8, 0));
    assert!(attacker.deck_hash.is_some());
    assert_eq!(
        (defender.cards.len(), defender.defence_cards.len()),
        (0, 12)
    );
    assert_eq!(defender.deck_hash, None);
    // a defence list reports forms owned (3 = both), not a form played
    assert_eq!(defender.defence_cards[0].form, None);
    assert_eq!(boat.boat_battle_won, Some(true));

    let two = &all[5];
    assert_eq!((two.team.len(), two.opponent.len()), (2, 2));
    let event = &all[6];
    assert!(event.team[0].cards.is_empty());
    assert_eq!(event.team[0].deck_hash, None);
}

#[test]
fn a_battle_round_trips_through_json() {
    for battle in battles() {
        let json = serde_json::to_value(&battle).unwrap();
        assert_eq!(json["type"], battle.battle_type.as_str());
        assert_eq!(json["mode"], battle.mode.as_str());
        assert!(json["battle_time"].as_str().unwrap().ends_with('Z'));
        let back: Battle = serde_json::from_value(json).unwrap();
        assert_eq!(back, battle);
    }
}
