//! The world as the API's JSON: battle-log entries from each tracked participant's side,
//! profiles, clans, member pages, river races and the card list. Details the world does not
//! store (untracked players, hit points, elixir leaked …) are drawn from each battle's seed,
//! so the same battle always renders the same. HTTP framing is left to `server`.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::calendar::{self, DAY_MS, HOUR_MS, NEVER, api_time};
use crate::catalog::Card;
use crate::generate::{Dice, api_level, fresh_tag, ladder_deck, level_base, mix};
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

/// The owned-card rendering of a profile's `cards[]`.
fn collection_json(world: &World, player: &Player) -> Vec<Value> {
    player
        .collection
        .iter()
        .filter_map(|owned| {
            let card = world.catalog.card(owned.card)?;
            let mut value = card.played_json(owned.level, owned.evolution_level);
            let map = value.as_object_mut()?;
            if owned.star_level > 0 {
                map.insert("starLevel".into(), json!(owned.star_level));
            }
            map.insert("count".into(), json!(owned.count));
            Some(value)
        })
        .collect()
}

fn best_trophies(world: &World, index: u32, now: i64) -> i32 {
    let Some(player) = world.players.get(index as usize) else {
        return 0;
    };
    let mut best = player.best_trophies_before.max(player.start_trophies);
    for &b in world.battles_before(index, now) {
        let battle = &world.battles[b as usize];
        if battle.kind != BattleType::PvP {
            continue;
        }
        if let Some(me) = battle
            .side_of(index)
            .and_then(|s| battle.side(s).iter().find(|p| p.player() == Some(index)))
        {
            let after =
                me.starting_trophies().unwrap_or(0) + i32::from(me.trophy_change().unwrap_or(0));
            best = best.max(after);
        }
    }
    best
}

/// `/players/{tag}` as of `now`: trophies, counters, deck, clan and name consistent with the
/// battles generated before `now`.
pub fn player_json(world: &World, index: u32, now: i64) -> Option<Value> {
    let player = world.players.get(index as usize)?;
    let seed = world.config.seed;
    let trophies = world.trophies_at(index, now);
    let totals = world.totals_at(index, now);
    let deck_index = usize::from(ladder_deck(world, index, now));
    let deck = player.decks.get(deck_index)?;
    let current_deck = tracked_deck_cards(world, player, deck);
    let troop = world.catalog.tower_troop(deck.tower_troop)?;
    let troop_level = player
        .owned_tower_troop(deck.tower_troop)
        .map_or(1, |o| o.level);
    let favourite = world.catalog.card(deck.cards[0])?;
    let collection_level: u32 = player
        .collection
        .iter()
        .filter_map(|o| {
            let card = world.catalog.card(o.card)?;
            Some(u32::from(o.level + card.rarity.offset()))
        })
        .sum::<u32>()
        * 3;
    let pol = world.pol_trophies_at(index, now);
    let (donations, received) = donations(world, index, now);
    let war_wins = world
        .battles_before(index, now)
        .iter()
        .filter(|&&b| {
            let battle = &world.battles[b as usize];
            battle.kind.is_war() && battle.outcome_for(index) == Some(crate::world::Outcome::Win)
        })
        .count();
    let mut out = Map::new();
    out.insert("tag".into(), json!(player.tag));
    out.insert("name".into(), json!(player.name_at(now)));
    out.insert("expLevel".into(), json!(player.exp_level));
    out.insert("trophies".into(), json!(trophies));
    out.insert(
        "bestTrophies".into(),
        json!(best_trophies(world, index, now)),
    );
    out.insert("wins".into(), json!(totals.wins));
    out.insert("losses".into(), json!(totals.losses));
    out.insert("battleCount".into(), json!(totals.battles));
    out.insert("threeCrownWins".into(), json!(totals.three_crown_wins));
    out.insert("challengeCardsWon".into(), json!(totals.battles / 2));
    out.insert(
        "challengeMaxWins".into(),
        json!(gauge(index, &[seed, 60], 3, 20)),
    );
    out.insert("tournamentCardsWon".into(), json!(totals.battles / 50));
    out.insert("tournamentBattleCount".into(), json!(totals.battles / 40));
    let membership = world.membership_at(index, now);
    if let Some(m) = membership {
        out.insert("role".into(), json!(m.role.as_str()));
    }
    out.insert("donations".into(), json!(donations));
    out.insert("donationsReceived".into(), json!(received));
    out.insert("totalDonations".into(), json!(totals.battles * 3));
    out.insert(
        "warDayWins".into(),
        json!(totals.battles / 100 + war_wins as u32),
    );
    out.insert("clanCardsCollected".into(), json!(totals.battles * 6));
    if let Some(clan) = clan_block(world, index, now) {
        out.insert("clan".into(), clan);
    }
    out.insert("arena".into(), arena(trophies));
    let month = calendar::war_position(calendar::game_day(now));
    let season_label = |season_id: i64| {
        let months = 2026 * 12 + 8 + (season_id - 136);
        format!("{:04}-{:02}", months / 12, months % 12 + 1)
    };
    out.insert(
        "leagueStatistics".into(),
        json!({
            "currentSeason": {"trophies": trophies, "bestTrophies": trophies.max(player.start_trophies)},
            "previousSeason": {
                "id": season_label(month.season_id - 1),
                "trophies": player.start_trophies,
                "bestTrophies": player.best_trophies_before,
            },
            "bestSeason": {
                "id": season_label(month.season_id - 20),
                "rank": gauge(index, &[seed, 61], 1000, 90000),
                "trophies": player.best_trophies_before,
            },
        }),
    );
    out.insert(
        "badges".into(),
        json!([
            {
                "name": "Classic12Wins",
                "level": 1 + gauge(index, &[seed, 62], 0, 7),
                "maxLevel": 8,
                "progress": gauge(index, &[seed, 63], 0, 49),
                "target": 50,
                "iconUrls": {"large": "https://api-assets.clashroyale.com/playerbadges/512/9O25YvlgqYy9K2pKIa-7_v_OP9jYWE_xbXs1vPKdWRI.png"}
            },
            {
                "name": "CollectionLevel",
                "level": 1,
                "maxLevel": 1,
                "progress": collection_level,
                "target": collection_level,
                "iconUrls": {"large": "https://api-assets.clashroyale.com/playerbadges/512/-_030x1at5MJc0hPIiatxvSO6Ty1743T50uL1hP8rW8.png"}
            },
            {
                "name": "2025YearBadge",
                "progress": 1,
                "iconUrls": {"large": "https://api-assets.clashroyale.com/playerbadges/512/nqX4uggQ9AqqrpMNNN56uoDSjTRLXP0CS1ilxoZcxKU.png"}
            }
        ]),
    );
    out.insert(
        "achievements".into(),
        json!([
            {"name": "Team Player", "stars": 3, "value": 1 + gauge(index, &[seed, 64], 0, 20), "target": 1, "info": "Join a Clan", "completionInfo": null},
            {"name": "Friend in Need", "stars": 3, "value": totals.battles * 3, "target": 2500, "info": "Donate 2500 cards", "completionInfo": null}
        ]),
    );
    out.insert("cards".into(), Value::Array(collection_json(world, player)));
    let support: Vec<Value> = player
        .tower_troops
        .iter()
        .filter_map(|owned| {
            let mut value = world
                .catalog
                .tower_troop(owned.card)?
                .support_json(owned.level);
            value
                .as_object_mut()?
                .insert("count".into(), json!(owned.count));
            Some(value)
        })
        .collect();
    out.insert("supportCards".into(), Value::Array(support));
    out.insert("currentDeck".into(), Value::Array(current_deck));
    out.insert(
        "currentDeckSupportCards".into(),
        json!([troop.support_json(troop_level)]),
    );
    out.insert("currentFavouriteCard".into(), favourite.catalog_json());
    out.insert("starPoints".into(), json!(totals.wins));
    out.insert("expPoints".into(), json!(0));
    out.insert(
        "totalExpPoints".into(),
        json!(u64::from(totals.battles) * 120),
    );
    out.insert(
        "currentPathOfLegendSeasonResult".into(),
        json!({"leagueNumber": player.pol_league, "trophies": pol, "rank": null}),
    );
    out.insert(
        "lastPathOfLegendSeasonResult".into(),
        json!({
            "leagueNumber": player.pol_league,
            "trophies": player.pol_start_trophies,
            "rank": gauge(index, &[seed, 65], 1000, 90000),
        }),
    );
    out.insert(
        "bestPathOfLegendSeasonResult".into(),
        json!({
            "leagueNumber": player.pol_league,
            "trophies": player.pol_start_trophies + 100,
            "rank": gauge(index, &[seed, 66], 1000, 90000),
        }),
    );
    out.insert(
        "legacyTrophyRoadHighScore".into(),
        json!(player.best_trophies_before.min(7500)),
    );
    out.insert(
        "progress".into(),
        json!({
            "": {
                "arena": {"id": 168000059, "name": "Diamond", "rawName": "AutoChessArena10_2025_Oct"},
                "trophies": gauge(index, &[seed, 67], 1000, 4000),
                "bestTrophies": 4260
            },
            "AutoChess_2026_Season_11": {
                "arena": {"id": 168000071, "name": "Gold", "rawName": "AutoChessArena7_2026_Sep"},
                "trophies": gauge(index, &[seed, 68], 1000, 3000),
                "bestTrophies": 3010
            }
        }),
    );
    out.insert(
        "currentWinLoseStreak".into(),
        json!(streak(world, index, now)),
    );
    out.insert("kingTowerLevel".into(), json!(player.king_tower_level));
    out.insert("collectionLevel".into(), json!(collection_level));
    Some(Value::Object(out))
}

/// Wins in a row (positive) or losses in a row (negative) up to `now`.
fn streak(world: &World, index: u32, now: i64) -> i64 {
    let mut streak = 0i64;
    for &b in world.battles_before(index, now).iter().rev() {
        match world.battles[b as usize].outcome_for(index) {
            Some(crate::world::Outcome::Win) if streak >= 0 => streak += 1,
            Some(crate::world::Outcome::Loss) if streak <= 0 => streak -= 1,
            _ => break,
        }
    }
    streak
}

/// Donations given and received this week (they reset Monday 10:00Z), growing with the week.
fn donations(world: &World, index: u32, now: i64) -> (u32, u32) {
    let day = calendar::game_day(now);
    let week = (day - calendar::weekday(day)) as u64;
    let elapsed = now - calendar::game_day_start(day - calendar::weekday(day));
    let fraction = (elapsed as f64 / (7 * DAY_MS) as f64).clamp(0.0, 1.0);
    let seed = world.config.seed;
    let given = (mix(seed, &[70, u64::from(index), week]) % 300) as f64 * fraction;
    let got = (mix(seed, &[71, u64::from(index), week]) % 250) as f64 * fraction;
    (given as u32, got as u32)
}

/// When the clan list last saw a player: shortly after their last battle, else days ago.
fn last_seen(world: &World, index: u32, now: i64) -> i64 {
    let seed = world.config.seed;
    match world.battles_before(index, now).last() {
        Some(&b) => {
            let after = (mix(seed, &[72, u64::from(index), u64::from(b)]) % 900) as i64 * 1000;
            (world.battles[b as usize].time_millis + after).min(now)
        }
        None => now - (3 * DAY_MS + (mix(seed, &[73, u64::from(index)]) % 20) as i64 * DAY_MS),
    }
}

fn member_rows(world: &World, clan: u32, now: i64) -> Vec<Value> {
    let mut members: Vec<(u32, i32, &'static str)> = world
        .members_at(clan, now)
        .into_iter()
        .map(|m| (m.player, world.trophies_at(m.player, now), m.role.as_str()))
        .collect();
    members.sort_by_key(|&(p, trophies, _)| (std::cmp::Reverse(trophies), p));
    let week_ago = now - 7 * DAY_MS;
    let mut previous: Vec<(u32, i32)> = members
        .iter()
        .map(|&(p, _, _)| (p, world.trophies_at(p, week_ago)))
        .collect();
    previous.sort_by_key(|&(p, trophies)| (std::cmp::Reverse(trophies), p));
    members
        .iter()
        .enumerate()
        .filter_map(|(rank, &(p, trophies, role))| {
            let player = world.players.get(p as usize)?;
            let previous_rank = previous.iter().position(|&(q, _)| q == p).unwrap_or(rank);
            let (given, got) = donations(world, p, now);
            Some(json!({
                "tag": player.tag,
                "name": player.name_at(now),
                "role": role,
                "lastSeen": api_time(last_seen(world, p, now)),
                "expLevel": 0,
                "trophies": trophies,
                "arena": arena(trophies),
                "clanRank": rank + 1,
                "previousClanRank": previous_rank + 1,
                "donations": given,
                "donationsReceived": got,
                "clanChestPoints": 0,
            }))
        })
        .collect()
}

/// `/clans/{tag}` as of `now`.
pub fn clan_json(world: &World, clan: u32, now: i64) -> Option<Value> {
    let c = world.clans.get(clan as usize)?;
    let rows = member_rows(world, clan, now);
    let score: i64 = rows
        .iter()
        .map(|r| r["trophies"].as_i64().unwrap_or(0))
        .sum::<i64>()
        / 2;
    let donations: i64 = rows
        .iter()
        .map(|r| r["donations"].as_i64().unwrap_or(0))
        .sum();
    let (id, name, is_country, code) = c.location;
    let mut location = json!({"id": id, "name": name, "isCountry": is_country});
    if let (Some(code), Some(map)) = (code, location.as_object_mut()) {
        map.insert("countryCode".into(), json!(code));
    }
    Some(json!({
        "tag": c.tag,
        "name": c.name,
        "type": c.kind,
        "description": c.description,
        "badgeId": c.badge_id,
        "clanScore": score,
        "clanWarTrophies": c.war_trophies,
        "location": location,
        "requiredTrophies": c.required_trophies,
        "donationsPerWeek": donations,
        "clanChestStatus": "inactive",
        "clanChestLevel": 1,
        "clanChestMaxLevel": 0,
        "members": rows.len(),
        "memberList": rows,
    }))
}

/// The member rows of `/clans/{tag}/members` (paging is the server's).
pub fn member_list(world: &World, clan: u32, now: i64) -> Vec<Value> {
    member_rows(world, clan, now)
}

/// Fame and decks a member earned from their war battles in `[from, to)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WarTally {
    /// Fame.
    pub fame: u32,
    /// Decks used (a duel uses one per round).
    pub decks_used: u32,
    /// Boat attacks.
    pub boat_attacks: u32,
}

/// What a player's war battles in `[from, to)` earned.
pub fn war_tally(world: &World, player: u32, from: i64, to: i64) -> WarTally {
    let mut tally = WarTally::default();
    let all = world.battles_before(player, to);
    let first = all.partition_point(|&b| world.battles[b as usize].time_millis < from);
    for &b in &all[first..] {
        let battle = &world.battles[b as usize];
        let won = battle.outcome_for(player) == Some(crate::world::Outcome::Win);
        match battle.kind {
            BattleType::RiverRacePvP => {
                tally.decks_used += 1;
                tally.fame += if won { 200 } else { 100 };
            }
            k if k.is_duel() => {
                let side = battle.side_of(player).unwrap_or(0);
                for (a, b) in battle.rounds() {
                    let mine = if side == 0 { a > b } else { b > a };
                    tally.decks_used += 1;
                    tally.fame += if mine { 250 } else { 100 };
                }
            }
            BattleType::BoatBattle => {
                tally.decks_used += 1;
                tally.boat_attacks += 1;
                tally.fame += if won { 125 } else { 75 };
            }
            _ => {}
        }
    }
    tally
}

fn participants_json(
    world: &World,
    clan: u32,
    from: i64,
    to: i64,
    today: i64,
) -> (u32, Vec<Value>) {
    let mut total = 0;
    let mut list = Vec::new();
    for m in world.members_at(clan, to - 1) {
        let Some(player) = world.players.get(m.player as usize) else {
            continue;
        };
        let section = war_tally(world, m.player, from, to);
        let day = war_tally(world, m.player, today.max(from), to);
        total += section.fame;
        list.push(json!({
            "tag": player.tag,
            "name": player.name_at(to - 1),
            "fame": section.fame,
            "repairPoints": 0,
            "boatAttacks": section.boat_attacks,
            "decksUsed": section.decks_used,
            "decksUsedToday": day.decks_used,
        }));
    }
    (total, list)
}

fn rivals(world: &World, clan: u32, section_key: u64) -> Vec<&(String, String, u32)> {
    let mut picked: Vec<&(String, String, u32)> = Vec::new();
    let mut k = 0;
    while picked.len() < 4 && !world.rival_clans.is_empty() && k < 50 {
        let at = mix(world.config.seed, &[80, u64::from(clan), section_key, k]) as usize
            % world.rival_clans.len();
        let rival = &world.rival_clans[at];
        if !picked.iter().any(|p| p.0 == rival.0) {
            picked.push(rival);
        }
        k += 1;
    }
    picked
}

/// A clan entry of a race: `(tag, name, badgeId)`, fame, participants, points, score and,
/// in the log, the finish time.
fn race_clan(
    (tag, name, badge): (&str, &str, u32),
    fame: u32,
    participants: Vec<Value>,
    points: u32,
    score: u32,
    finish: Option<&str>,
) -> Value {
    let mut clan = json!({
        "tag": tag,
        "name": name,
        "badgeId": badge,
        "fame": fame,
        "repairPoints": 0,
        "participants": participants,
        "periodPoints": points,
        "clanScore": score,
    });
    if let (Some(finish), Some(map)) = (finish, clan.as_object_mut()) {
        map.insert("finishTime".into(), json!(finish));
    }
    clan
}

fn rival_participants(
    world: &World,
    rival: &(String, String, u32),
    key: u64,
    fame: u32,
) -> Vec<Value> {
    let mut dice = Dice::new(world.config.seed, &[81, key, u64::from(rival.2)]);
    let mut taken = HashSet::new();
    let count = 1 + dice.below(3);
    (0..count)
        .map(|_| {
            json!({
                "tag": fresh_tag(&mut dice, &mut taken),
                "name": format!("Rival{}", dice.below(1000)),
                "fame": fame / count,
                "repairPoints": 0,
                "boatAttacks": dice.below(2),
                "decksUsed": 4 + dice.below(12),
                "decksUsedToday": dice.below(5),
            })
        })
        .collect()
}

/// `/clans/{tag}/currentriverrace` as of `now`: the clan and four rivals in this war week.
pub fn current_river_race_json(world: &World, clan: u32, now: i64) -> Option<Value> {
    let c = world.clans.get(clan as usize)?;
    let day = calendar::game_day(now);
    let pos = calendar::war_position(day);
    let section_start_day = pos.season_start_day + pos.section_index * 7;
    let from = calendar::game_day_start(section_start_day);
    let key = section_start_day as u64;
    let (fame, participants) =
        participants_json(world, clan, from, now, calendar::game_day_start(day));
    let mut clans = vec![race_clan(
        (&c.tag, &c.name, c.badge_id),
        fame,
        participants,
        fame * 3,
        c.war_trophies,
        None,
    )];
    for rival in rivals(world, clan, key) {
        let rival_fame = gauge(rival.2, &[world.config.seed, key, 82], 0, fame.max(1000));
        clans.push(race_clan(
            (&rival.0, &rival.1, rival.2),
            rival_fame,
            rival_participants(world, rival, key, rival_fame),
            rival_fame * 3,
            gauge(rival.2, &[83], 1000, 5000),
            None,
        ));
    }
    let mut logs = Vec::new();
    for past in pos.season_start_day..day {
        if !calendar::is_war_day(past) {
            continue;
        }
        let past_pos = calendar::war_position(past);
        let past_key = (pos.season_start_day + past_pos.section_index * 7) as u64;
        let start = calendar::game_day_start(past);
        let end = start + DAY_MS;
        let mut items = Vec::new();
        let own: u32 = world
            .members_at(clan, end - 1)
            .iter()
            .map(|m| war_tally(world, m.player, start, end).fame)
            .sum();
        items.push((c.tag.clone(), own));
        for rival in rivals(world, clan, past_key) {
            items.push((
                rival.0.clone(),
                gauge(rival.2, &[past as u64, 84], 500, 4000),
            ));
        }
        let mut ranked: Vec<(String, u32)> = items.clone();
        ranked.sort_by_key(|(_, f)| std::cmp::Reverse(*f));
        let items: Vec<Value> = items
            .iter()
            .map(|(tag, earned)| {
                let rank = ranked.iter().position(|(t, _)| t == tag).unwrap_or(0);
                json!({
                    "clan": {"tag": tag},
                    "pointsEarned": earned * 10,
                    "progressStartOfDay": 0,
                    "progressEndOfDay": earned,
                    "endOfDayRank": rank,
                    "progressEarned": earned,
                    "numOfDefensesRemaining": 15 - (rank as u32).min(15),
                    "progressEarnedFromDefenses": earned / 10,
                })
            })
            .collect();
        logs.push(json!({"periodIndex": past_pos.period_index(), "items": items}));
    }
    let own = clans.first().cloned().unwrap_or(Value::Null);
    Some(json!({
        "state": "full",
        "clan": own,
        "clans": clans,
        "sectionIndex": pos.section_index,
        "periodIndex": pos.period_index(),
        "periodType": pos.period_type(),
        "periodLogs": logs,
    }))
}

/// `/clans/{tag}/riverracelog` items as of `now`: the finished war weeks, newest first (at most
/// `limit`), with the clan's fame from its members' war battles.
pub fn river_race_log(world: &World, clan: u32, now: i64, limit: usize) -> Option<Vec<Value>> {
    let c = world.clans.get(clan as usize)?;
    let day = calendar::game_day(now);
    let pos = calendar::war_position(day);
    let mut section_start = pos.season_start_day + pos.section_index * 7;
    let mut items = Vec::new();
    while items.len() < limit {
        let end_day = section_start;
        let start_day = end_day - 7;
        let start_pos = calendar::war_position(start_day);
        let from = calendar::game_day_start(start_day);
        let to = calendar::game_day_start(end_day);
        let key = start_day as u64;
        let (fame, participants) = participants_json(world, clan, from, to, to);
        let mut standings: Vec<(String, String, u32, u32, Vec<Value>, u32)> = vec![(
            c.tag.clone(),
            c.name.clone(),
            c.badge_id,
            fame,
            participants,
            c.war_trophies,
        )];
        for rival in rivals(world, clan, key) {
            let rival_fame = gauge(rival.2, &[world.config.seed, key, 85], 0, 12000);
            standings.push((
                rival.0.clone(),
                rival.1.clone(),
                rival.2,
                rival_fame,
                rival_participants(world, rival, key, rival_fame),
                gauge(rival.2, &[83], 1000, 5000),
            ));
        }
        standings.sort_by_key(|s| std::cmp::Reverse(s.3));
        let steps: [i32; 5] = if start_pos.colosseum {
            [100, 50, 0, -50, -100]
        } else {
            [20, 10, 0, -10, -20]
        };
        let finish = api_time(to - 2 * DAY_MS + 10 * HOUR_MS);
        let rows: Vec<Value> = standings
            .into_iter()
            .enumerate()
            .map(|(rank, (tag, name, badge, fame, parts, score))| {
                let finish = if rank == 0 && fame >= 10000 {
                    finish.as_str()
                } else {
                    NEVER
                };
                json!({
                    "rank": rank + 1,
                    "trophyChange": steps.get(rank).copied().unwrap_or(0),
                    "clan": race_clan((&tag, &name, badge), fame, parts, 0, score, Some(finish)),
                })
            })
            .collect();
        items.push(json!({
            "seasonId": start_pos.season_id,
            "sectionIndex": start_pos.section_index,
            "createdDate": api_time(to - 22 * 60_000),
            "standings": rows,
        }));
        section_start -= 7;
    }
    Some(items)
}
