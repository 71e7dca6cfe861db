//! Every generated battle read by Elixir's own battle reader (elixir-record): it parses, gets
//! the mode of its type, the outcome the world expects for each tracked participant, and one
//! battle id from every log it appears in.

use std::collections::HashMap;

use cr_fake::BattleType;
use cr_fake::render::battle_json;
use elixir_record::{Battle, Mode, Side};

use crate::small_world;

fn mode_of(kind: BattleType) -> Mode {
    match kind {
        BattleType::PvP => Mode::Ladder,
        BattleType::PathOfLegend => Mode::PathOfLegend,
        BattleType::RiverRacePvP => Mode::War,
        BattleType::RiverRaceDuel | BattleType::RiverRaceDuelColosseum => Mode::WarDuel,
        BattleType::BoatBattle => Mode::Boat,
        BattleType::ClanMate2v2 => Mode::TwoVTwo,
        BattleType::Friendly | BattleType::ClanMate => Mode::Friendly,
        BattleType::Tournament => Mode::Tournament,
        BattleType::Trail | BattleType::Challenge => Mode::Event,
        _ => Mode::Other,
    }
}

#[test]
fn every_generated_battle_reads_with_the_expected_mode_outcome_and_one_id() {
    let world = small_world(51);
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut read = 0;
    for (index, battle) in world.battles().iter().enumerate() {
        for player in battle.tracked() {
            let json = battle_json(&world, battle, player).unwrap();
            let recorded = Battle::from_upstream(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
            assert_eq!(recorded.mode, mode_of(battle.kind()), "{json}");
            assert_eq!(recorded.battle_type, battle.kind().as_str());
            let expected = battle.outcome_for(player);
            assert_eq!(recorded.outcome(Side::Team), expected, "{json}");
            // The same battle seen from any log has one id; different battles never share one.
            let seen = *ids.entry(recorded.battle_id.clone()).or_insert(index);
            assert_eq!(seen, index, "battle id shared by two battles: {json}");
            read += 1;
        }
    }
    assert_eq!(ids.len(), world.battles().len());
    assert!(read > ids.len(), "some battles are in two logs");
}
