//! Every vector of `derived_ids.json`: each battle's `battle_id` input and hash, and each
//! deck's (or duel round's) `deck_hash` input and hash, recomputed from `battlelog.json`.

use elixir_record::Battle;
use elixir_record::ids::{self, BattleClass};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::fixture;

fn input_of(cards: &[elixir_record::BattleCard], tower_troop: Option<i64>) -> Option<String> {
    ids::deck_hash_input(cards.iter().map(|c| (c.id, c.evolution_level)), tower_troop)
}

#[test]
fn every_golden_vector_matches() {
    let battles = Battle::from_battlelog(&fixture("battlelog.json"))
        .unwrap()
        .battles;
    let vectors: Vec<Value> = serde_json::from_slice(&fixture("derived_ids.json")).unwrap();
    assert_eq!(battles.len(), vectors.len());
    let mut decks_checked = 0;
    for (battle, vector) in battles.iter().zip(&vectors) {
        assert_eq!(battle.battle_type, vector["type"], "{vector}");
        let tags: Vec<_> = battle
            .team
            .iter()
            .chain(&battle.opponent)
            .filter_map(|p| p.tag.as_ref())
            .collect();
        let class = BattleClass::of_type(&battle.battle_type);
        assert_eq!(
            ids::battle_id_input(battle.battle_time, tags.iter().copied(), class),
            vector["battle_id_input"].as_str().unwrap(),
        );
        assert_eq!(battle.battle_id, vector["battle_id"].as_str().unwrap());
        let direct = hex::encode(Sha256::digest(vector["battle_id_input"].as_str().unwrap()));
        assert_eq!(battle.battle_id, direct);
        for deck in vector["decks"].as_array().unwrap() {
            let tag: elixir_record::Tag = deck["tag"].as_str().unwrap().parse().unwrap();
            let p = battle.participant(&tag).unwrap();
            let tower = p.tower_troop.as_ref().map(|t| t.id);
            let (hash, input) = match deck["round"].as_u64() {
                Some(round) => {
                    let r = &p.rounds[usize::try_from(round).unwrap() - 1];
                    assert_eq!(p.deck_hash, None, "a duel's participant-level hash is null");
                    (r.deck_hash.clone(), input_of(&r.cards, tower))
                }
                None => (p.deck_hash.clone(), input_of(&p.cards, tower)),
            };
            assert_eq!(
                hash.as_deref(),
                deck["deck_hash"].as_str(),
                "{tag} in {}",
                battle.battle_type
            );
            match deck["input"].as_str() {
                Some(expected) => assert_eq!(input.as_deref(), Some(expected)),
                // a null hash: no cards disclosed, or a boat defence list (not a deck)
                None => assert!(input.is_none(), "{tag}: {input:?} ({})", deck["why"]),
            }
            if let Some(expected) = deck["input"].as_str() {
                let direct = hex::encode(Sha256::digest(expected.as_bytes()));
                assert_eq!(hash.as_deref(), Some(direct.as_str()));
            }
            decks_checked += 1;
        }
    }
    assert_eq!(decks_checked, 18);
}
