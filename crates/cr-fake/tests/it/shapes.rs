//! Generated JSON against the shared fixtures: the same field names at every depth and the
//! same value kinds, endpoint by endpoint and battle type by battle type.

use serde_json::Value;

use cr_fake::render;
use cr_fake::{BattleType, World};

use crate::{END_MILLIS, small_world};

const BATTLELOG: &str = include_str!("../../fixtures/battlelog.json");
const PLAYER: &str = include_str!("../../fixtures/player.json");
const CLAN: &str = include_str!("../../fixtures/clan.json");
const MEMBERS: &str = include_str!("../../fixtures/clan_members.json");
const RACE: &str = include_str!("../../fixtures/currentriverrace.json");
const RACE_LOG: &str = include_str!("../../fixtures/riverracelog.json");
const CARDS: &str = include_str!("../../fixtures/cards.json");

/// Keys that come and go with the data, not with the shape: a clanless player has no `clan`;
/// a card's forms and cost decide `evolutionLevel`, `maxEvolutionLevel`, `elixirCost`,
/// `starLevel` and the form icons;
/// Mirror in the profile fixture has no `count`; `after`/`before` depend on the page.
const DATA_DEPENDENT: &[&str] = &[
    "clan",
    "role",
    "evolutionLevel",
    "maxEvolutionLevel",
    "elixirCost",
    "starLevel",
    "evolutionMedium",
    "heroMedium",
    "after",
    "before",
    "countryCode",
    "count",
];

fn fixture(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every difference between the shapes of `got` and `want`, by JSON path.
fn shape_diff(got: &Value, want: &Value, path: &str, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(g), Value::Object(w)) => {
            for key in w.keys() {
                if !g.contains_key(key) && !DATA_DEPENDENT.contains(&key.as_str()) {
                    out.push(format!("{path}.{key}: missing"));
                }
            }
            for (key, value) in g {
                match w.get(key) {
                    Some(expected) => shape_diff(value, expected, &format!("{path}.{key}"), out),
                    None if DATA_DEPENDENT.contains(&key.as_str()) => {}
                    None => out.push(format!("{path}.{key}: not in the fixture")),
                }
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            // Each item against the fixture item of the same `name` (a card, a badge), else
            // the first.
            for (i, item) in g.iter().enumerate() {
                let named = w
                    .iter()
                    .find(|m| m.get("name").is_some() && m.get("name") == item.get("name"));
                if let Some(model) = named.or(w.first()) {
                    shape_diff(item, model, &format!("{path}[{i}]"), out);
                }
            }
        }
        (g, w) if kind(g) == kind(w) => {}
        (g, w) => out.push(format!(
            "{path}: {} where the fixture has {}",
            kind(g),
            kind(w)
        )),
    }
}

fn assert_shape(got: &Value, want: &Value, what: &str) {
    let mut diff = Vec::new();
    shape_diff(got, want, what, &mut diff);
    assert!(
        diff.is_empty(),
        "{what} differs from its fixture:\n{}",
        diff.join("\n")
    );
}

#[test]
fn the_comparison_catches_a_renamed_or_retyped_field() {
    let want = fixture(PLAYER);
    let mut renamed = want.clone();
    let trophies = renamed.as_object_mut().unwrap().remove("trophies").unwrap();
    renamed
        .as_object_mut()
        .unwrap()
        .insert("trophy".into(), trophies);
    let mut diff = Vec::new();
    shape_diff(&renamed, &want, "player", &mut diff);
    assert_eq!(
        diff,
        [
            "player.trophies: missing",
            "player.trophy: not in the fixture"
        ]
    );
    let mut retyped = want.clone();
    retyped["cards"][0]["level"] = Value::String("15".into());
    let mut diff = Vec::new();
    shape_diff(&retyped, &want, "player", &mut diff);
    assert_eq!(
        diff,
        ["player.cards[0].level: string where the fixture has number"]
    );
}

#[test]
fn battles_of_every_fixture_type_have_the_fixture_fields() {
    let world = small_world(21);
    let fixtures = fixture(BATTLELOG);
    let mut checked = 0;
    for want in fixtures.as_array().unwrap() {
        let kind = want["type"].as_str().unwrap();
        let mut seen = 0;
        for battle in world.battles().iter().filter(|b| b.kind().as_str() == kind) {
            for player in battle.tracked() {
                let got = render::battle_json(&world, battle, player).unwrap();
                assert_shape(&got, want, kind);
                seen += 1;
            }
        }
        assert!(seen > 0, "no generated {kind}");
        checked += 1;
    }
    assert_eq!(checked, 7);
    // Types the fixtures do not show still carry the common battle fields.
    let pvp = &fixtures[0];
    for kind in [
        BattleType::Friendly,
        BattleType::Tournament,
        BattleType::Unknown,
    ] {
        let battle = world.battles().iter().find(|b| b.kind() == kind).unwrap();
        let player = battle.tracked().next().unwrap();
        let got = render::battle_json(&world, battle, player).unwrap();
        for key in pvp.as_object().unwrap().keys() {
            assert!(got.get(key).is_some(), "{kind:?} lacks {key}");
        }
    }
}

#[test]
fn a_player_with_cards_of_every_form_matches_the_profile_fixture() {
    let world = small_world(22);
    for index in 0..world.players().len() as u32 {
        let got = render::player_json(&world, index, END_MILLIS).unwrap();
        assert_shape(&got, &fixture(PLAYER), "player");
    }
    // Collections hold owned-form bit fields 1, 2 and 3 somewhere in the world.
    let forms: std::collections::BTreeSet<u8> = world
        .players()
        .iter()
        .flat_map(|p| p.collection.iter().map(|c| c.evolution_level))
        .collect();
    assert_eq!(forms, [0, 1, 2, 3].into_iter().collect());
}

fn clan_with_members(world: &World) -> u32 {
    (0..world.clans().len() as u32)
        .find(|&c| world.members_at(c, END_MILLIS).len() >= 3)
        .expect("a clan with members")
}

#[test]
fn clans_members_and_races_match_their_fixtures() {
    let world = small_world(23);
    let clan = clan_with_members(&world);
    let got = render::clan_json(&world, clan, END_MILLIS).unwrap();
    assert_shape(&got, &fixture(CLAN), "clan");
    assert_eq!(
        got["members"].as_u64().unwrap() as usize,
        got["memberList"].as_array().unwrap().len()
    );
    let members = serde_json::json!({
        "items": render::member_list(&world, clan, END_MILLIS),
        "paging": {"cursors": {}},
    });
    assert_shape(&members, &fixture(MEMBERS), "members");
    let race = render::current_river_race_json(&world, clan, END_MILLIS).unwrap();
    assert_shape(&race, &fixture(RACE), "currentriverrace");
    assert_eq!(race["clans"].as_array().unwrap().len(), 5);
    let log = render::river_race_log(&world, clan, END_MILLIS, 3).unwrap();
    let log = serde_json::json!({"items": log, "paging": {"cursors": {"after": "eyJwb3MiOjF9"}}});
    assert_shape(&log, &fixture(RACE_LOG), "riverracelog");
    let cards = world.catalog().cards_json();
    assert_shape(&cards, &fixture(CARDS), "cards");
}
