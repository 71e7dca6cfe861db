//! A battle as `battles_query` shows it (SURFACE §2.4), at full and compact size, from a
//! battle already turned to its subject ([`super::Played`]): `team` is the subject's side and
//! `outcome` theirs; `battle_time_local` is in the applied zone with its offset. Unknown is
//! `null` (§3.3); `rounds` appear on duels only, `boat` on boat battles only and
//! `defence_cards` on a boat defender only. Which battles are shown is `query`'s.

use elixir_record::battle::{BattleCard, Participant};
use elixir_record::{Battle, Side};
use jiff::tz::TimeZone;
use serde_json::{Value, json};

use elixir_record::time::iso;

/// A battle at full size.
pub fn full(battle: &Battle, zone: &TimeZone) -> Value {
    let mut out = json!({
        "battle_id": battle.battle_id,
        "battle_time": iso(battle.battle_time),
        "battle_time_local": local(battle, zone),
        "type": battle.battle_type,
        "mode": battle.mode.as_str(),
        "game_mode": battle.game_mode.as_ref().map(|g| json!({"id": g.id, "name": g.name})),
        "deck_selection": battle.deck_selection,
        "arena": battle.arena.as_ref().map(|a| json!({"id": a.id, "name": a.name})),
        "league_number": battle.league_number,
        "outcome": battle.outcome(Side::Team),
        "team": battle.team.iter().map(participant).collect::<Vec<_>>(),
        "opponent": battle.opponent.iter().map(participant).collect::<Vec<_>>(),
    });
    if battle.is_duel() {
        out["rounds"] = Value::Array(
            battle
                .rounds()
                .iter()
                .map(|r| {
                    json!({
                        "index": r.index,
                        "outcome": r.outcome,
                        "team": {"crowns": r.team.crowns, "deck_hash": r.team.deck_hash, "cards": r.team.cards.iter().map(round_card).collect::<Vec<_>>()},
                        "opponent": {"crowns": r.opponent.crowns, "deck_hash": r.opponent.deck_hash, "cards": r.opponent.cards.iter().map(round_card).collect::<Vec<_>>()},
                    })
                })
                .collect(),
        );
    }
    if let Some(boat) = &battle.boat {
        out["boat"] = json!({
            "side": boat.side,
            "won": boat.won,
            "new_towers_destroyed": boat.new_towers_destroyed,
            "prev_towers_destroyed": boat.prev_towers_destroyed,
            "remaining_towers": boat.remaining_towers,
        });
    }
    out
}

/// A battle at compact size: {battle_id, battle_time, mode, outcome}, compact participants
/// and, on duels, rounds {index, outcome, deck_hash} (the subject's round deck).
pub fn compact(battle: &Battle) -> Value {
    let mut out = json!({
        "battle_id": battle.battle_id,
        "battle_time": iso(battle.battle_time),
        "mode": battle.mode.as_str(),
        "outcome": battle.outcome(Side::Team),
        "team": battle.team.iter().map(compact_participant).collect::<Vec<_>>(),
        "opponent": battle.opponent.iter().map(compact_participant).collect::<Vec<_>>(),
    });
    if battle.is_duel() {
        out["rounds"] = Value::Array(
            battle
                .rounds()
                .iter()
                .map(|r| json!({"index": r.index, "outcome": r.outcome, "deck_hash": r.team.deck_hash}))
                .collect(),
        );
    }
    out
}

/// `battle_time` in `zone`, with its offset (`2026-01-01T11:00:00+01:00`).
pub fn local(battle: &Battle, zone: &TimeZone) -> String {
    battle
        .battle_time
        .to_zoned(zone.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
}

fn card(c: &BattleCard) -> Value {
    json!({"id": c.id, "name": c.name, "level": c.level, "form": c.form, "elixir": c.elixir})
}

fn round_card(c: &BattleCard) -> Value {
    let mut v = card(c);
    v["used"] = json!(c.used);
    v
}

fn participant(p: &Participant) -> Value {
    let mut out = json!({
        "tag": p.tag.as_ref().map(|t| t.to_string()),
        "name": p.name,
        "clan": p.clan.as_ref().map(|c| json!({"tag": c.tag.to_string(), "name": c.name})),
        "starting_trophies": p.starting_trophies,
        "trophy_change": p.trophy_change,
        "crowns": p.crowns,
        "king_tower_hp": p.king_tower_hp,
        "princess_towers_hp": p.princess_towers_hp,
        "elixir_leaked": p.elixir_leaked,
        "deck_hash": p.deck_hash,
        "tower_troop": p.tower_troop.as_ref().map(|t| json!({"id": t.id, "name": t.name, "level": t.level})),
        "cards": p.cards.iter().map(card).collect::<Vec<_>>(),
    });
    if !p.defence_cards.is_empty() {
        out["defence_cards"] = Value::Array(p.defence_cards.iter().map(card).collect());
    }
    out
}

fn compact_participant(p: &Participant) -> Value {
    json!({
        "tag": p.tag.as_ref().map(|t| t.to_string()),
        "name": p.name,
        "crowns": p.crowns,
        "trophy_change": p.trophy_change,
        "deck_hash": p.deck_hash,
        "card_keys": p.card_keys(),
        "tower_troop_id": p.tower_troop.as_ref().map(|t| t.id),
    })
}
