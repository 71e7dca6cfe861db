//! The battle log fixture read into the record's types: modes, participants, levels, forms,
//! tower troops, duel rounds, boat defence lists and outcomes, one battle of each shape.

use elixir_record::battle::Form;
use elixir_record::{Battle, Mode, Outcome, Side};

use super::fixture;

fn battles() -> Vec<Battle> {
    Battle::from_battlelog(&fixture("battlelog.json"))
        .unwrap()
        .battles
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
    assert_eq!(boat.boat.as_ref().and_then(|b| b.won), Some(true));

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

fn tag(text: &str) -> elixir_record::Tag {
    text.parse().unwrap()
}

#[test]
fn times_arenas_clans_and_leaks_are_normalized() {
    let all = battles();
    let pvp = &all[0];
    assert_eq!(
        elixir_record::time::iso(pvp.battle_time),
        "2026-09-18T19:34:12Z"
    );
    let arena = pvp.arena.as_ref().unwrap();
    assert_eq!(
        (arena.id, arena.name.as_str()),
        (54_000_142, "Ultimate Clash Pit")
    );
    assert_eq!(pvp.deck_selection.as_deref(), Some("collection"));
    assert_eq!(all[3].deck_selection.as_deref(), Some("warDeckPick"));
    assert_eq!(all[1].league_number, Some(7));
    let me = &pvp.team[0];
    let clan = me.clan.as_ref().unwrap();
    assert_eq!(
        (clan.tag.as_str(), clan.name.as_str(), clan.badge_id),
        ("#QLRG2UV0", "Tidewater Lanterns", Some(16_000_072))
    );
    assert_eq!(me.elixir_leaked, Some(1.62));
    assert_eq!(me.king_tower_hp, Some(7150));
    // a clanless opponent (Path of Legend) has no clan
    assert_eq!(all[1].opponent[0].clan, None);
    let json = serde_json::to_value(pvp).unwrap();
    assert_eq!(json["battle_time"], "2026-09-18T19:34:12Z");
    assert_eq!(json["team"][0]["clan"]["tag"], "#QLRG2UV0");
    assert_eq!(
        json["team"][0]["princess_towers_hp"],
        serde_json::json!([2788, 0])
    );
}

#[test]
fn princess_towers_list_survivors_then_zeros() {
    let all = battles();
    let towers = |b: usize, side: Side, i: usize| all[b].side(side)[i].princess_towers_hp;
    // one tower left: [2788] is [2788, 0]
    assert_eq!(towers(0, Side::Team, 0), Some([2788, 0]));
    // upstream null: both destroyed
    assert_eq!(towers(0, Side::Opponent, 0), Some([0, 0]));
    assert_eq!(towers(2, Side::Opponent, 0), Some([0, 0]));
    assert_eq!(towers(6, Side::Opponent, 0), Some([0, 0]));
    // both standing
    assert_eq!(towers(1, Side::Team, 0), Some([3390, 1207]));
    assert_eq!(towers(5, Side::Opponent, 1), Some([2728, 0]));
}

#[test]
fn duels_sum_crowns_take_the_last_rounds_towers_and_count_a_game_per_round() {
    let all = battles();
    let duel = &all[3];
    assert!(duel.is_duel());
    let (me, them) = (&duel.team[0], &duel.opponent[0]);
    assert_eq!((me.crowns, them.crowns), (Some(3), Some(1)));
    // the last round's towers: [0, 2310] is one survivor then a destroyed one
    assert_eq!(
        (me.king_tower_hp, me.princess_towers_hp),
        (Some(6012), Some([2310, 0]))
    );
    assert_eq!(
        (them.king_tower_hp, them.princess_towers_hp),
        (Some(0), Some([0, 0]))
    );
    assert_eq!(me.rounds[0].king_tower_hp, Some(9020));
    assert_eq!(me.rounds[0].princess_towers_hp, Some([6104, 2980]));
    assert_eq!(me.rounds[1].elixir_leaked, Some(0.85));
    // the per-round cards keep `used`; Archer Queen is a champion (API 5 + 10)
    let queen = me.rounds[0]
        .cards
        .iter()
        .find(|c| c.id == 26_000_072)
        .unwrap();
    assert_eq!((queen.level, queen.used), (Some(15), Some(true)));
    assert_eq!(me.rounds[1].cards[7].used, Some(false));
    assert_eq!(
        duel.round_outcomes(Side::Team),
        [Some(Outcome::Win), Some(Outcome::Win)]
    );
    assert_eq!(
        duel.round_outcomes(Side::Opponent),
        [Some(Outcome::Loss), Some(Outcome::Loss)]
    );
    let rounds = duel.rounds();
    assert_eq!(rounds.len(), 2);
    assert_eq!(
        (
            rounds[1].index,
            rounds[1].outcome,
            rounds[1].team.crowns,
            rounds[1].opponent.crowns
        ),
        (2, Some(Outcome::Win), Some(2), Some(1))
    );
    assert_eq!(rounds[0].team.deck_hash, me.rounds[0].deck_hash.as_deref());

    // deck and card rows: one game per round, each with the round's deck and outcome
    let games = duel.games_of(&tag("#8Y2QPRLJ"));
    assert_eq!(games.len(), 2);
    assert_eq!(
        games
            .iter()
            .map(|g| (g.round, g.outcome))
            .collect::<Vec<_>>(),
        [
            (Some(1), Some(Outcome::Loss)),
            (Some(2), Some(Outcome::Loss))
        ]
    );
    assert_eq!(games[1].deck_hash, them.rounds[1].deck_hash.as_deref());
    assert_eq!(games[1].cards.len(), 8);
    assert_ne!(games[0].deck_hash, games[1].deck_hash);
    // a battle that is not a duel is one game, with the battle's deck
    let pvp_games = all[0].games_of(&tag("#2QY8LRJC9"));
    assert_eq!(pvp_games.len(), 1);
    assert_eq!(
        (
            pvp_games[0].round,
            pvp_games[0].outcome,
            pvp_games[0].deck_hash
        ),
        (
            None,
            Some(Outcome::Win),
            all[0].team[0].deck_hash.as_deref()
        )
    );
    assert!(all[0].games_of(&tag("#CCCCCC")).is_empty());
}

#[test]
fn boat_battles_report_the_boat_and_the_defence_list() {
    let all = battles();
    let boat_battle = &all[4];
    let boat = boat_battle.boat.as_ref().unwrap();
    assert_eq!(
        (
            boat.side.as_deref(),
            boat.won,
            boat.new_towers_destroyed,
            boat.prev_towers_destroyed,
            boat.remaining_towers
        ),
        (Some("attacker"), Some(true), Some(2), Some(1), Some(0))
    );
    let defender = &boat_battle.opponent[0];
    assert_eq!(defender.defence_cards.len(), 12);
    assert_eq!(defender.mean_level(), None);
    // only boat battles carry a boat, and the JSON leaves it out elsewhere
    assert!(all.iter().filter(|b| b.boat.is_some()).count() == 1);
    assert!(serde_json::to_value(&all[0]).unwrap().get("boat").is_none());
    assert_eq!(
        serde_json::to_value(boat_battle).unwrap()["boat"]["remaining_towers"],
        0
    );
}

#[test]
fn war_decks_end_in_zero_and_undisclosed_decks_have_no_hash() {
    let all = battles();
    let war = &all[2];
    let me = &war.team[0];
    let input = elixir_record::ids::deck_hash_input(
        me.cards.iter().map(|c| (c.id, c.evolution_level)),
        None,
    )
    .unwrap();
    assert!(input.ends_with("|0"), "{input}");
    assert_eq!(
        me.deck_hash,
        elixir_record::deck_hash(me.cards.iter().map(|c| (c.id, c.evolution_level)), None)
    );
    let event = &all[6];
    assert!(
        event
            .team
            .iter()
            .chain(&event.opponent)
            .all(|p| p.deck_hash.is_none())
    );
    assert_eq!(event.team[0].mean_level(), None);
    assert_eq!(event.level_gap(&tag("#2QY8LRJC9")), None);
}

#[test]
fn two_versus_two_has_two_a_side() {
    let all = battles();
    let two = &all[5];
    let fenwick = tag("#V2L9PCQ8");
    assert_eq!(two.side_of(&fenwick), Some(Side::Team));
    assert_eq!(two.outcome_of(&fenwick), Some(Outcome::Win));
    let marrow = tag("#L2RUQ9V");
    assert_eq!(two.outcome_of(&marrow), Some(Outcome::Loss));
    let opponents: Vec<&str> = two
        .opponents_of(&fenwick)
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(opponents, ["Marrow", "Brisk"]);
    assert_eq!(two.opponents_of(&marrow).len(), 2);
    // Royal Chef, a legendary tower troop: API 6 + 8
    assert_eq!(
        two.opponent[0].tower_troop.as_ref().unwrap().level,
        Some(14)
    );
    assert!(two.opponents_of(&tag("#CCCCCC")).is_empty());
    assert_eq!(two.side_of(&tag("#CCCCCC")), None);
}

#[test]
fn levels_gaps_and_card_keys() {
    let all = battles();
    let me = tag("#2QY8LRJC9");
    // every card of the ladder decks is in-game 15 (e.g. The Log: legendary 7 + 8)
    assert_eq!(all[0].team[0].mean_level(), Some(15.0));
    assert_eq!(all[0].level_gap(&me), Some(0.0));
    // the war opponent plays level 14 across the board
    assert_eq!(all[2].opponent[0].mean_level(), Some(14.0));
    assert_eq!(all[2].level_gap(&me), Some(1.0));
    assert_eq!(
        all[0].team[0].card_keys(),
        [
            "26000010:1",
            "27000000:1",
            "26000014:2",
            "26000021:0",
            "26000038:0",
            "26000030:0",
            "28000000:0",
            "28000011:0"
        ]
    );
}

#[test]
fn each_outcome_rule_on_the_fixture() {
    let all = battles();
    let me = tag("#2QY8LRJC9");
    // (1) boatBattleWon decides although both sides show 0 crowns
    assert_eq!(
        (all[4].team[0].crowns, all[4].opponent[0].crowns),
        (Some(0), Some(0))
    );
    assert_eq!(all[4].outcome_of(&me), Some(Outcome::Win));
    // (2) duel: rounds won
    assert_eq!(all[3].outcome_of(&me), Some(Outcome::Win));
    // (3) trophy change in opposite directions: ladder +31/−31, Path of Legend −18/+18
    assert_eq!(all[0].outcome_of(&me), Some(Outcome::Win));
    assert_eq!(all[1].outcome_of(&me), Some(Outcome::Loss));
    // (4) crowns: war (no trophy change), 2v2, event
    assert_eq!(all[2].outcome_of(&me), Some(Outcome::Win));
    assert_eq!(all[5].outcome_of(&me), Some(Outcome::Win));
    assert_eq!(all[6].outcome_of(&me), Some(Outcome::Win));
    // (5) the event without its crowns cannot be told
    let mut entries: Vec<serde_json::Value> =
        serde_json::from_slice(&fixture("battlelog.json")).unwrap();
    let event = &mut entries[6];
    event["team"][0].as_object_mut().unwrap().remove("crowns");
    let battle = Battle::from_upstream(event).unwrap();
    assert_eq!(battle.outcome_of(&me), None);
    assert_eq!(battle.team[0].crowns, None);
    // and a duel whose rounds split falls through to the summed crowns
    let duel = &mut entries[3];
    duel["team"][0]["rounds"][1]["crowns"] = serde_json::json!(0);
    let battle = Battle::from_upstream(duel).unwrap();
    assert_eq!(battle.team[0].crowns, Some(1));
    assert_eq!(
        battle.round_outcomes(Side::Team),
        [Some(Outcome::Win), Some(Outcome::Loss)]
    );
    assert_eq!(battle.outcome_of(&me), Some(Outcome::Draw));
}

#[test]
fn the_fixture_reads_without_a_rejected_entry() {
    let log = Battle::from_battlelog(&fixture("battlelog.json")).unwrap();
    assert_eq!((log.battles.len(), log.rejected.len()), (7, 0));
}
