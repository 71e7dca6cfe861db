//! The record's derived identifiers (SURFACE §6.2–6.3): `deck_hash`, which names a deck by
//! its cards, forms and tower troop; and `battle_id`, which names a battle by its time,
//! participants and class so every sighting of it lands on one row. Both are SHA-256 hex;
//! the golden vectors are `tests/fixtures/derived_ids.json`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::tag::Tag;
use crate::time::iso;

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// What `deck_hash` hashes: the `"<id>:<evolutionLevel or 0>"` strings sorted bytewise and
/// joined by `,`, then `|` and the tower troop id (or `0`). `None` for no cards (`cards: []`
/// discloses no deck). Level and star level never enter it; the form does.
pub fn deck_hash_input<I>(cards: I, tower_troop: Option<i64>) -> Option<String>
where
    I: IntoIterator<Item = (i64, Option<i64>)>,
{
    let mut parts: Vec<String> = cards
        .into_iter()
        .map(|(id, evolution)| format!("{id}:{}", evolution.unwrap_or(0)))
        .collect();
    if parts.is_empty() {
        return None;
    }
    parts.sort_unstable();
    Some(format!("{}|{}", parts.join(","), tower_troop.unwrap_or(0)))
}

/// The deck's `deck_hash`: SHA-256 hex of [`deck_hash_input`]; `None` for no cards.
pub fn deck_hash<I>(cards: I, tower_troop: Option<i64>) -> Option<String>
where
    I: IntoIterator<Item = (i64, Option<i64>)>,
{
    deck_hash_input(cards, tower_troop).map(|input| sha256_hex(&input))
}

/// The class that ends a `battle_id` input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BattleClass {
    /// Every battle but boat battles.
    Pvp,
    /// `boatBattle`.
    Boat,
}

impl BattleClass {
    /// `boat` for upstream `boatBattle`, else `pvp`.
    pub fn of_type(battle_type: &str) -> BattleClass {
        if battle_type == "boatBattle" {
            BattleClass::Boat
        } else {
            BattleClass::Pvp
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            BattleClass::Pvp => "pvp",
            BattleClass::Boat => "boat",
        }
    }
}

/// What `battle_id` hashes: `YYYY-MM-DDTHH:MM:SSZ:<tags>:<class>`, the participants'
/// normalized tags sorted and joined by `,` (tagless participants are simply absent).
pub fn battle_id_input<'a, I>(battle_time: Timestamp, tags: I, class: BattleClass) -> String
where
    I: IntoIterator<Item = &'a Tag>,
{
    let mut tags: Vec<&str> = tags.into_iter().map(Tag::as_str).collect();
    tags.sort_unstable();
    format!("{}:{}:{}", iso(battle_time), tags.join(","), class.as_str())
}

/// The battle's `battle_id`: SHA-256 hex of [`battle_id_input`].
pub fn battle_id<'a, I>(battle_time: Timestamp, tags: I, class: BattleClass) -> String
where
    I: IntoIterator<Item = &'a Tag>,
{
    sha256_hex(&battle_id_input(battle_time, tags, class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deck_hash_sorts_bytewise_and_ignores_order() {
        let cards = [
            (28_000_011, None),
            (26_000_010, Some(1)),
            (159_000_000, Some(0)),
        ];
        assert_eq!(
            deck_hash_input(cards, Some(159_000_001)).as_deref(),
            // bytewise: "159…" sorts before "26…" although it is the larger number
            Some("159000000:0,26000010:1,28000011:0|159000001")
        );
        let mut reversed = cards;
        reversed.reverse();
        assert_eq!(deck_hash(cards, None), deck_hash(reversed, None));
        assert!(deck_hash_input(cards, None).unwrap().ends_with("|0"));
        // the form counts: an evolved card is another deck
        assert_ne!(
            deck_hash([(26_000_010, Some(1))], None),
            deck_hash([(26_000_010, None)], None)
        );
        assert_eq!(
            deck_hash([(26_000_010, Some(0))], None),
            deck_hash([(26_000_010, None)], None)
        );
        assert_eq!(deck_hash(Vec::new(), Some(159_000_000)), None);
        assert_eq!(
            deck_hash([(1, None)], None).as_deref(),
            // sha256("1:0|0")
            Some(hex::encode(Sha256::digest(b"1:0|0")).as_str())
        );
    }

    #[test]
    fn battle_id_sorts_normalized_tags() {
        let time: Timestamp = "2026-09-18T19:34:12.500Z".parse().unwrap();
        let a = Tag::parse("pv9c2j8l").unwrap();
        let b = Tag::parse("#2QY8LRJC9").unwrap();
        assert_eq!(
            battle_id_input(time, [&a, &b], BattleClass::Pvp),
            "2026-09-18T19:34:12Z:#2QY8LRJC9,#PV9C2J8L:pvp"
        );
        assert_eq!(
            battle_id(time, [&a, &b], BattleClass::Pvp),
            battle_id(time, [&b, &a], BattleClass::Pvp)
        );
        assert_ne!(
            battle_id(time, [&a, &b], BattleClass::Pvp),
            battle_id(time, [&a, &b], BattleClass::Boat)
        );
        assert_eq!(
            battle_id_input(time, [], BattleClass::Boat),
            "2026-09-18T19:34:12Z::boat"
        );
        assert_eq!(BattleClass::of_type("boatBattle"), BattleClass::Boat);
        assert_eq!(BattleClass::of_type("riverRacePvP"), BattleClass::Pvp);
    }
}
