//! The world as the API's JSON. This module owns battle-log entries, rendered from each
//! tracked participant's side; `profile` owns `/players/{tag}` and `clan` the clan, member
//! and river race bodies. Details the world does not store (untracked players, hit points,
//! elixir leaked …) are drawn from each battle's seed, so the same battle always renders the
//! same. HTTP framing is left to `server`.

mod clan;
mod profile;

pub use clan::{
    WarTally, clan_json, current_river_race_json, member_list, river_race_log, war_tally,
};
pub use profile::player_json;

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::calendar::api_time;
use crate::catalog::Card;
use crate::generate::{Dice, api_level, fresh_tag, level_base, mix};
use crate::world::{Battle, BattleType, Deck, Participant, Player, World};

/// The battle log holds this many entries (newest first).
pub const BATTLELOG_LEN: usize = 30;
const KING_HP: u32 = 9020;
const PRINCESS_HP: u32 = 6104;

/// An untracked participant, invented from a battle's seed and slot.
#[derive(Debug, Clone)]
pub struct Synthetic {
    /// A tag no tracked player has.
    pub tag: String,
    /// Name.
    pub name: String,
    /// `(tag, name, badgeId)` of their clan, if any.
    pub clan: Option<(String, String, u32)>,
    /// One deck per round (one for non-duels); the boat defence list is 12 cards.
    pub decks: Vec<Vec<(u16, u8)>>,
    /// The in-game level their cards centre on.
    pub level_base: i64,
    /// Catalogue index of their tower troop.
    pub tower_troop: u16,
}

/// The invented participant of `slot` (0–3) of a battle.
pub fn synthetic(world: &World, battle: &Battle, slot: usize) -> Synthetic {
    let mut dice = Dice::new(
        world.config.seed,
        &[
            10,
            u64::from(battle.seed),
            slot as u64,
            battle.time_millis as u64,
        ],
    );
    let mut taken = HashSet::new();
    let tag = loop {
        let tag = fresh_tag(&mut dice, &mut taken);
        if world.player_index(&tag).is_none() && world.clan_index(&tag).is_none() {
            break tag;
        }
    };
    let name = {
        let heads = [
            "Nova", "Grim", "Pixel", "Moro", "Kai", "Luna", "Blaze", "Otto",
        ];
        let head = dice.pick(&heads).copied().unwrap_or("Foe");
        format!("{head}{}", dice.below(1000))
    };
    let clan = if dice.chance(700) {
        dice.pick(&world.rival_clans).cloned()
    } else {
        None
    };
    let anchor = battle.side(0)[0]
        .player()
        .and_then(|p| world.players.get(p as usize))
        .map_or(12, |p| level_base(p.start_trophies));
    let level_base = (anchor + dice.range(-1, 1)).clamp(9, 16);
    let catalog = world.catalog();
    let card_count = u32::try_from(catalog.cards().len()).unwrap_or(1);
    let mut all: Vec<u16> = (0..card_count)
        .map(|c| u16::try_from(c).unwrap_or(0))
        .collect();
    dice.shuffle(&mut all);
    let boat_defender = battle.kind == BattleType::BoatBattle && slot >= 2;
    let (decks_wanted, size) = if boat_defender {
        (1, 12)
    } else if battle.kind.is_duel() {
        (battle.rounds().len(), 8)
    } else {
        (1, 8)
    };
    let mut decks = Vec::new();
    for d in 0..decks_wanted {
        let cards = all.iter().cycle().skip(d * size).take(size);
        let deck = cards
            .map(|&card| {
                let bits = catalog
                    .card(card)
                    .and_then(|c| c.max_evolution_level)
                    .unwrap_or(0);
                let form = if bits == 0 || !dice.chance(300) {
                    0
                } else if boat_defender {
                    bits
                } else if bits == 3 {
                    1 + dice.below(2) as u8
                } else {
                    bits
                };
                (card, form)
            })
            .collect();
        decks.push(deck);
    }
    let troops = u32::try_from(catalog.tower_troops().len()).unwrap_or(1);
    Synthetic {
        tag,
        name,
        clan,
        decks,
        level_base,
        tower_troop: u16::try_from(dice.below(troops)).unwrap_or(0),
    }
}

/// Who is behind a slot, resolved for rendering.
enum Face<'w> {
    Tracked(u32, &'w Player),
    Invented(Box<Synthetic>),
}

fn face<'w>(world: &'w World, battle: &Battle, slot: usize, p: &Participant) -> Face<'w> {
    match p
        .player()
        .and_then(|i| world.players.get(i as usize).map(|pl| (i, pl)))
    {
        Some((i, player)) => Face::Tracked(i, player),
        None => Face::Invented(Box::new(synthetic(world, battle, slot))),
    }
}

fn gauge(seed: u32, parts: &[u64], lo: u32, hi: u32) -> u32 {
    let span = u64::from(hi.saturating_sub(lo)) + 1;
    lo + u32::try_from(mix(u64::from(seed), parts) % span).unwrap_or(0)
}

/// Elixir leaked, two decimals.
fn leaked(seed: u32, parts: &[u64]) -> f64 {
    f64::from(gauge(seed, parts, 0, 600)) / 100.0
}

/// The tower state of a side whose opponent took `crowns_against`: king hit points and the
/// surviving princess towers (`null` when none survive).
fn towers(seed: u32, side: usize, crowns_against: u8) -> (u32, Value) {
    let s = side as u64;
    if crowns_against >= 3 {
        return (0, Value::Null);
    }
    let king = if crowns_against == 0 && gauge(seed, &[20, s], 0, 1) == 0 {
        KING_HP
    } else {
        gauge(seed, &[21, s], 1200, KING_HP)
    };
    let survivors = 2 - usize::from(crowns_against);
    if survivors == 0 {
        return (king, Value::Null);
    }
    let hp: Vec<u32> = (0..survivors)
        .map(|i| gauge(seed, &[22, s, i as u64], 300, PRINCESS_HP))
        .collect();
    (king, json!(hp))
}

/// A duel round's towers: princess towers always two long, 0 for a destroyed one.
fn round_towers(seed: u32, round: usize, side: usize, crowns_against: u8) -> (u32, Value) {
    let s = side as u64;
    let r = round as u64;
    if crowns_against >= 3 {
        return (0, json!([0, 0]));
    }
    let king = gauge(seed, &[23, r, s], 1500, KING_HP);
    let hp: Vec<u32> = (0..2)
        .map(|i| {
            if i < usize::from(crowns_against) {
                0
            } else {
                gauge(seed, &[24, r, s, i as u64], 300, PRINCESS_HP)
            }
        })
        .collect();
    (king, json!(hp))
}

/// Arena by ladder trophies (the fixtures' two trophy-road arenas).
fn arena(trophies: i32) -> Value {
    if trophies >= 5000 {
        json!({"id": 54000142, "name": "Ultimate Clash Pit", "rawName": "Arena_L16"})
    } else {
        json!({"id": 54000013, "name": "Royal Crypt", "rawName": "Arena_L7"})
    }
}

fn game_mode(kind: BattleType) -> Value {
    // Ids from the fixtures where they show them; the rest are plausible stand-ins.
    let (id, name) = match kind {
        BattleType::PvP => (72000006, "Ladder"),
        BattleType::PathOfLegend => (72000464, "Ranked1v1_NewArena2"),
        BattleType::RiverRacePvP => (72000268, "CW_Battle_1v1"),
        BattleType::RiverRaceDuel => (72000267, "CW_Duel_1v1"),
        BattleType::RiverRaceDuelColosseum => (72000313, "CW_Duel_1v1_Colosseum"),
        BattleType::BoatBattle => (72000266, "ClanWar_BoatBattle"),
        BattleType::ClanMate2v2 => (72000014, "TeamVsTeam"),
        BattleType::Friendly => (72000011, "Friendly"),
        BattleType::ClanMate => (72000011, "Friendly"),
        BattleType::Tournament => (72000009, "Tournament"),
        BattleType::Trail => (72000502, "Crazy_Arena"),
        BattleType::Challenge => (72000048, "Challenge_AllCards_EventDeck"),
        BattleType::Unknown => (72000999, "Seasonal_Brawl"),
    };
    json!({"id": id, "name": name})
}

fn card_json(world: &World, card: u16, level: u8, form: u8) -> Option<Value> {
    world
        .catalog
        .card(card)
        .map(|c: &Card| c.played_json(level, form))
}

fn tracked_level(world: &World, player: &Player, card: u16) -> u8 {
    match player.owned(card) {
        Some(owned) => owned.level,
        None => world.catalog.card(card).map_or(1, |c| {
            api_level(level_base(player.start_trophies), c.rarity)
        }),
    }
}

fn tracked_deck_cards(world: &World, player: &Player, deck: &Deck) -> Vec<Value> {
    deck.cards
        .iter()
        .zip(deck.forms)
        .filter_map(|(&card, form)| {
            card_json(world, card, tracked_level(world, player, card), form)
        })
        .collect()
}

fn invented_cards(world: &World, who: &Synthetic, deck: &[(u16, u8)]) -> Vec<Value> {
    deck.iter()
        .filter_map(|&(card, form)| {
            let rarity = world.catalog.card(card)?.rarity;
            let level = api_level(who.level_base, rarity);
            card_json(world, card, level, form)
        })
        .collect()
}

fn clan_block(world: &World, player: u32, millis: i64) -> Option<Value> {
    let membership = world.membership_at(player, millis)?;
    let clan = world.clans.get(membership.clan as usize)?;
    Some(json!({"tag": clan.tag, "name": clan.name, "badgeId": clan.badge_id}))
}

/// One participant as the battle log shows them.
fn participant_json(world: &World, battle: &Battle, side: usize, slot: usize) -> Value {
    let p = &battle.slots[slot];
    let kind = battle.kind;
    let who = face(world, battle, slot, p);
    let mut out = Map::new();
    let (tag, name) = match &who {
        Face::Tracked(_, player) => (
            player.tag.clone(),
            player.name_at(battle.time_millis).to_owned(),
        ),
        Face::Invented(s) => (s.tag.clone(), s.name.clone()),
    };
    out.insert("tag".into(), json!(tag));
    out.insert("name".into(), json!(name));
    if let Some(start) = p.starting_trophies() {
        out.insert("startingTrophies".into(), json!(start));
    }
    if matches!(kind, BattleType::PvP | BattleType::PathOfLegend) {
        out.insert("trophyChange".into(), json!(p.trophy_change()));
    }
    out.insert("crowns".into(), json!(battle.crowns(side)));
    let clan = match &who {
        Face::Tracked(i, _) => clan_block(world, *i, battle.time_millis),
        Face::Invented(s) => s
            .clan
            .as_ref()
            .map(|(tag, name, badge)| json!({"tag": tag, "name": name, "badgeId": badge})),
    };
    // Decks: one per round for duels (concatenated at the top level), 12 for a boat defence.
    let decks: Vec<Vec<Value>> = match (&who, kind) {
        (_, BattleType::Trail) => vec![Vec::new()],
        (Face::Tracked(_, player), _) if kind.is_duel() => (0..battle.rounds().len())
            .filter_map(|r| player.decks.get(usize::from(p.deck()) + r))
            .map(|deck| tracked_deck_cards(world, player, deck))
            .collect(),
        (Face::Tracked(_, player), _) => player
            .decks
            .get(usize::from(p.deck()))
            .map(|deck| vec![tracked_deck_cards(world, player, deck)])
            .unwrap_or_default(),
        (Face::Invented(s), _) => s
            .decks
            .iter()
            .map(|deck| invented_cards(world, s, deck))
            .collect(),
    };
    let support = if kind.is_war() || kind == BattleType::Trail {
        Vec::new()
    } else {
        let troop = match &who {
            Face::Tracked(_, player) => player.decks.get(usize::from(p.deck())).and_then(|d| {
                let card = world.catalog.tower_troop(d.tower_troop)?;
                let level = player
                    .owned_tower_troop(d.tower_troop)
                    .map_or(1, |owned| owned.level);
                Some(card.support_json(level))
            }),
            Face::Invented(s) => world
                .catalog
                .tower_troop(s.tower_troop)
                .map(|card| card.support_json(api_level(s.level_base, card.rarity))),
        };
        troop.into_iter().collect::<Vec<_>>()
    };
    let other = 1 - side;
    let seed = battle.seed;
    let rounds = battle.rounds();
    let (king, princess) = if kind.is_duel() {
        let last = rounds.len().saturating_sub(1);
        let against = rounds
            .get(last)
            .map_or(0, |r| if side == 0 { r.1 } else { r.0 });
        round_towers(seed, last, side, against)
    } else if kind == BattleType::BoatBattle {
        boat_towers(battle, side)
    } else {
        towers(seed, side, battle.crowns(other))
    };
    out.insert("kingTowerHitPoints".into(), json!(king));
    out.insert("princessTowersHitPoints".into(), princess);
    if let Some(clan) = clan {
        out.insert("clan".into(), clan);
    }
    let cards: Vec<Value> = decks.iter().flatten().cloned().collect();
    out.insert("cards".into(), Value::Array(cards));
    out.insert("supportCards".into(), Value::Array(support));
    out.insert("globalRank".into(), Value::Null);
    if kind.is_duel() {
        let mut total = 0.0;
        let mut list = Vec::new();
        for (r, round) in rounds.iter().enumerate() {
            let (mine, against) = if side == 0 {
                *round
            } else {
                (round.1, round.0)
            };
            let (king, princess) = round_towers(seed, r, side, against);
            let leak = leaked(seed, &[30, r as u64, slot as u64]);
            total += leak;
            list.push(json!({
                "cards": round_cards(decks.get(r), seed, r, slot),
                "elixirLeaked": leak,
                "crowns": mine,
                "kingTowerHitPoints": king,
                "princessTowersHitPoints": princess,
            }));
        }
        out.insert(
            "elixirLeaked".into(),
            json!((total * 100.0).round() / 100.0),
        );
        out.insert("rounds".into(), Value::Array(list));
    } else if kind == BattleType::BoatBattle && side == 1 {
        out.insert("elixirLeaked".into(), json!(0.0));
    } else {
        out.insert(
            "elixirLeaked".into(),
            json!(leaked(seed, &[31, slot as u64])),
        );
    }
    Value::Object(out)
}

/// A duel round's cards, each marked `used` (a card still in hand at the end was not).
fn round_cards(deck: Option<&Vec<Value>>, seed: u32, round: usize, slot: usize) -> Vec<Value> {
    let unused = gauge(seed, &[32, round as u64, slot as u64], 0, 15) as usize;
    deck.map(|cards| {
        cards
            .iter()
            .enumerate()
            .map(|(i, card)| {
                let mut card = card.clone();
                if let Some(map) = card.as_object_mut() {
                    map.insert("used".into(), json!(i != unused));
                }
                card
            })
            .collect()
    })
    .unwrap_or_default()
}

/// `(prevTowersDestroyed, newTowersDestroyed, remainingTowers)` of a boat battle.
fn boat_counts(battle: &Battle) -> (u32, u32, u32) {
    let prev = gauge(battle.seed, &[40], 0, 2);
    if battle.winner == Some(0) {
        (prev, 3 - prev, 0)
    } else {
        let new = gauge(battle.seed, &[41], 0, 2 - prev);
        (prev, new, 3 - prev - new)
    }
}

fn boat_towers(battle: &Battle, side: usize) -> (u32, Value) {
    if side == 0 {
        return (KING_HP, json!([PRINCESS_HP, PRINCESS_HP]));
    }
    let (prev, new, remaining) = boat_counts(battle);
    let destroyed = prev + new;
    let king = if remaining == 0 {
        0
    } else {
        gauge(battle.seed, &[42], 1000, KING_HP)
    };
    let hp: Vec<u32> = (0..2)
        .map(|i| {
            if i < destroyed {
                0
            } else {
                gauge(battle.seed, &[43, u64::from(i)], 500, PRINCESS_HP)
            }
        })
        .collect();
    (king, json!(hp))
}

/// A battle-log entry as the tracked `perspective` player's log shows it (`team` = their
/// side, them first). `None` when they did not play in it.
pub fn battle_json(world: &World, battle: &Battle, perspective: u32) -> Option<Value> {
    let side = battle.side_of(perspective)?;
    let kind = battle.kind;
    let slots = |s: usize| -> Vec<usize> {
        let base = if s == 0 { 0 } else { 2 };
        let mut list: Vec<usize> = (base..base + battle.per_side()).collect();
        list.sort_by_key(|&i| battle.slots[i].player() != Some(perspective));
        list
    };
    let team: Vec<Value> = slots(side)
        .into_iter()
        .map(|slot| participant_json(world, battle, side, slot))
        .collect();
    let opponent: Vec<Value> = slots(1 - side)
        .into_iter()
        .map(|slot| participant_json(world, battle, 1 - side, slot))
        .collect();
    let me = battle
        .side(side)
        .iter()
        .find(|p| p.player() == Some(perspective));
    let trophies = me
        .and_then(Participant::starting_trophies)
        .unwrap_or_else(|| world.trophies_at(perspective, battle.time_millis));
    let mut out = Map::new();
    out.insert("type".into(), json!(kind.as_str()));
    out.insert("battleTime".into(), json!(api_time(battle.time_millis)));
    out.insert("isLadderTournament".into(), json!(false));
    let arena_json = if kind == BattleType::PathOfLegend {
        json!({"id": 54000121, "name": "Legendary Arena", "rawName": "Arena_L"})
    } else {
        arena(trophies)
    };
    out.insert("arena".into(), arena_json);
    out.insert("gameMode".into(), game_mode(kind));
    let selection = match kind {
        k if k.is_duel() => "warDeckPick",
        BattleType::Trail => "eventDeck",
        _ => "collection",
    };
    out.insert("deckSelection".into(), json!(selection));
    out.insert("team".into(), Value::Array(team.clone()));
    out.insert("opponent".into(), Value::Array(opponent));
    match kind {
        BattleType::BoatBattle => {
            let (prev, new, remaining) = boat_counts(battle);
            out.insert("boatBattleSide".into(), json!("attacker"));
            out.insert("boatBattleWon".into(), json!(battle.winner == Some(0)));
            out.insert("newTowersDestroyed".into(), json!(new));
            out.insert("prevTowersDestroyed".into(), json!(prev));
            out.insert("remainingTowers".into(), json!(remaining));
        }
        BattleType::Trail => {
            let names = [
                "Pekka3",
                "Graveyard2",
                "Rage1",
                "Fireball3",
                "GoblinHut2",
                "Berserker1",
            ];
            let mods: Vec<Value> = (0..2)
                .flat_map(|s| slots(s).into_iter())
                .enumerate()
                .map(|(n, slot)| {
                    let tag = match face(world, battle, slot, &battle.slots[slot]) {
                        Face::Tracked(_, p) => p.tag.clone(),
                        Face::Invented(s) => s.tag.clone(),
                    };
                    let picks: Vec<&str> = (0..3)
                        .map(|k| names[gauge(battle.seed, &[50, n as u64, k], 0, 5) as usize])
                        .collect();
                    json!({"tag": tag, "modifiers": picks})
                })
                .collect();
            out.insert("modifiers".into(), Value::Array(mods));
        }
        BattleType::Tournament => {
            out.insert(
                "tournamentTag".into(),
                json!(format!("#{}", gauge(battle.seed, &[51], 20000, 99999))),
            );
        }
        BattleType::Challenge => {
            out.insert(
                "challengeId".into(),
                json!(65000000 + gauge(battle.seed, &[52], 0, 99)),
            );
            out.insert(
                "challengeWinCountBefore".into(),
                json!(gauge(battle.seed, &[53], 0, 11)),
            );
            out.insert("challengeTitle".into(), json!("Classic Challenge"));
        }
        _ => {}
    }
    out.insert("isHostedMatch".into(), json!(false));
    let league = if kind == BattleType::PathOfLegend {
        battle.side(0)[0]
            .player()
            .and_then(|p| world.players.get(p as usize))
            .map_or(1, |p| p.pol_league)
    } else {
        1
    };
    out.insert("leagueNumber".into(), json!(league));
    Some(Value::Object(out))
}

/// `/players/{tag}/battlelog`: the last 30 battles before `now`, newest first.
pub fn battlelog_json(world: &World, player: u32, now: i64) -> Value {
    let battles = world.battles_before(player, now);
    let list: Vec<Value> = battles
        .iter()
        .rev()
        .take(BATTLELOG_LEN)
        .filter_map(|&b| battle_json(world, &world.battles[b as usize], player))
        .collect();
    Value::Array(list)
}
