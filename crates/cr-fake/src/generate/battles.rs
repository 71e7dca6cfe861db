//! Every battle of the world: per player and game day, sessions of battles of every type at
//! the player's rate (war battles on war days within four decks a day, clan-mate battles with
//! tracked mates, some tracked opponents), then a replay in time order that writes starting
//! trophies and trophy changes. Players, clans and history events are the parent's.

use std::collections::{HashMap, HashSet};

use super::{Dice, mix};
use crate::calendar::{self, DAY_MS};
use crate::world::{Battle, BattleType, Participant, Player, World};

/// What a player's day offers when the next battle is drawn.
struct DayContext {
    clan: Option<u32>,
    war_day: bool,
    colosseum: bool,
    decks_left: u8,
}

pub(super) fn make_battles(world: &mut World) {
    let config = world.config;
    let start = config.start_millis();
    let end = config.end_millis;
    let first_day = calendar::game_day(start);
    let last_day = calendar::game_day(end - 1);
    let mut battles: Vec<Battle> = Vec::new();
    let mut seen: HashSet<(i64, [u32; 4])> = HashSet::new();
    // Everyone who was ever in each clan: candidates for clan-mate battles.
    let mut clan_pool: Vec<Vec<u32>> = vec![Vec::new(); world.clans.len()];
    for m in &world.memberships {
        if let Some(pool) = clan_pool.get_mut(m.clan as usize)
            && !pool.contains(&m.player)
        {
            pool.push(m.player);
        }
    }
    let mut by_league: HashMap<u8, Vec<u32>> = HashMap::new();
    for (i, p) in world.players.iter().enumerate() {
        if !p.activity.is_idle() {
            by_league
                .entry(p.pol_league)
                .or_default()
                .push(u32::try_from(i).unwrap_or(0));
        }
    }
    let mut active: Vec<u32> = by_league.values().flatten().copied().collect();
    active.sort_unstable();
    let player_count = u32::try_from(world.players.len()).unwrap_or(1);
    for owner in 0..player_count {
        let activity = world.players[owner as usize].activity;
        if activity.is_idle() {
            continue;
        }
        for day in first_day..=last_day {
            let mut dice = Dice::new(config.seed, &[4, u64::from(owner), day as u64]);
            if !dice.chance(u32::from(activity.active_per_mille)) {
                continue;
            }
            let (lo, hi) = activity.battles_per_day;
            let count = dice.range(i64::from(lo), i64::from(hi));
            let times = session_times(&mut dice, day, count);
            let war = calendar::war_position(day);
            let mut ctx = DayContext {
                clan: None,
                war_day: calendar::is_war_day(day),
                colosseum: war.colosseum,
                decks_left: 4,
            };
            for t in times {
                if t < start || t >= end {
                    continue;
                }
                ctx.clan = world.membership_at(owner, t).map(|m| m.clan);
                let Some(mut battle) =
                    draw_battle(world, &clan_pool, &by_league, &mut dice, owner, t, &mut ctx)
                else {
                    continue;
                };
                if config.tracked_opponents {
                    track_opponents(world, &active, &mut battle);
                }
                let mut key = [u32::MAX; 4];
                let mut tracked: Vec<u32> = battle.tracked().collect();
                tracked.sort_unstable();
                if tracked.len() >= 2 {
                    for (slot, p) in key.iter_mut().zip(&tracked) {
                        *slot = *p;
                    }
                    if !seen.insert((t, key)) {
                        continue;
                    }
                }
                battles.push(battle);
            }
        }
    }
    battles.sort_by_key(|b| (b.time_millis, b.seed));
    let mut by_player: Vec<Vec<u32>> = vec![Vec::new(); world.players.len()];
    for (i, battle) in battles.iter().enumerate() {
        for player in battle.tracked() {
            if let Some(list) = by_player.get_mut(player as usize) {
                list.push(u32::try_from(i).unwrap_or(0));
            }
        }
    }
    for list in &mut by_player {
        list.shrink_to_fit();
    }
    battles.shrink_to_fit();
    replay_trophies(&world.players, &mut battles);
    world.battles = battles;
    world.by_player = by_player;
}

/// Fills the battle's synthetic slots with active tracked players not already in it, from a
/// stream of their own (the world's other draws stay as they are). A slot stays synthetic
/// when eight draws find no one free (a world of one or two players).
fn track_opponents(world: &World, active: &[u32], battle: &mut Battle) {
    let mut dice = Dice::new(
        world.config.seed,
        &[11, u64::from(battle.seed), battle.time_millis as u64],
    );
    for slot in 0..battle.slots.len() {
        if battle.slots[slot].is_empty() || battle.slots[slot].player().is_some() {
            continue;
        }
        for _ in 0..8 {
            let Some(&other) = dice.pick(active) else {
                return;
            };
            if battle.tracked().all(|p| p != other) {
                let deck = ladder_deck(world, other, battle.time_millis);
                battle.slots[slot] = Participant::tracked(other, deck);
                break;
            }
        }
    }
}

/// Battle instants for one game day: one to three sessions, a battle every 2½–5½ minutes.
fn session_times(dice: &mut Dice, day: i64, count: i64) -> Vec<i64> {
    let day_start = calendar::game_day_start(day);
    let sessions = dice.range(1, 3);
    let mut times = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let per_session = (count + sessions - 1) / sessions;
    let mut left = count;
    for _ in 0..sessions {
        let mut t = day_start + dice.range(0, 22 * 3600) * 1000;
        for _ in 0..per_session.min(left) {
            times.push(t);
            t += dice.range(150, 330) * 1000;
        }
        left -= per_session.min(left);
    }
    times.sort_unstable();
    times.retain(|&t| t < day_start + DAY_MS);
    times
}

pub(crate) fn ladder_deck(world: &World, player: u32, millis: i64) -> u8 {
    let decks = world.players[player as usize].ladder_decks().max(1);
    let rotation = calendar::game_day(millis) / 3;
    let pick = mix(world.config.seed, &[9, u64::from(player), rotation as u64]) % decks as u64;
    u8::try_from(pick).unwrap_or(0)
}

/// A tracked clan mate of `owner` at `millis`, if one can be found.
fn clan_mate(
    world: &World,
    pool: &[Vec<u32>],
    dice: &mut Dice,
    owner: u32,
    clan: u32,
    millis: i64,
) -> Option<u32> {
    let candidates = pool.get(clan as usize)?;
    for _ in 0..4 {
        let &mate = dice.pick(candidates)?;
        let plays = !world.players[mate as usize].activity.is_idle();
        if mate != owner && plays && world.membership_at(mate, millis).map(|m| m.clan) == Some(clan)
        {
            return Some(mate);
        }
    }
    None
}

fn draw_battle(
    world: &World,
    clan_pool: &[Vec<u32>],
    by_league: &HashMap<u8, Vec<u32>>,
    dice: &mut Dice,
    owner: u32,
    t: i64,
    ctx: &mut DayContext,
) -> Option<Battle> {
    let me = &world.players[owner as usize];
    let ladder = ladder_deck(world, owner, t);
    let war_first = u8::try_from(me.ladder_decks()).unwrap_or(2);
    let mut battle = Battle {
        time_millis: t,
        seed: dice.next_u32(),
        kind: BattleType::PvP,
        winner: None,
        null_trophy_change: false,
        crowns: [0, 0],
        rounds: 0,
        slots: [Participant::EMPTY; 4],
    };
    battle.slots[0] = Participant::tracked(owner, ladder);
    battle.slots[2] = Participant::synthetic();

    let war_possible = ctx.war_day && ctx.clan.is_some() && ctx.decks_left > 0;
    if war_possible && dice.chance(350) {
        let roll = dice.below(100);
        if roll < 35 && ctx.decks_left >= 3 {
            battle.kind = if ctx.colosseum {
                BattleType::RiverRaceDuelColosseum
            } else {
                BattleType::RiverRaceDuel
            };
            battle.slots[0] = Participant::tracked(owner, war_first);
            let played = duel_rounds(dice, &mut battle);
            ctx.decks_left -= played;
        } else if roll < 50 {
            battle.kind = BattleType::BoatBattle;
            battle.slots[0] = Participant::tracked(owner, war_first + 3);
            battle.winner = dice.chance(600).then_some(0).or(Some(1));
            ctx.decks_left -= 1;
        } else {
            battle.kind = BattleType::RiverRacePvP;
            let deck = war_first + u8::try_from(dice.below(4)).unwrap_or(0);
            battle.slots[0] = Participant::tracked(owner, deck);
            one_on_one(dice, &mut battle, 0);
            ctx.decks_left -= 1;
        }
        return Some(battle);
    }

    let roll = dice.below(1000);
    let clan = ctx.clan;
    match roll {
        0..=169 if me.king_tower_level >= 12 => {
            battle.kind = BattleType::PathOfLegend;
            if dice.chance(60) {
                let peers = by_league
                    .get(&me.pol_league)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                if let Some(&peer) = dice.pick(peers)
                    && peer != owner
                {
                    battle.slots[2] = Participant::tracked(peer, ladder_deck(world, peer, t));
                }
            }
            one_on_one(dice, &mut battle, 40);
        }
        170..=219 => {
            let mate = clan.and_then(|c| clan_mate(world, clan_pool, dice, owner, c, t))?;
            battle.kind = BattleType::ClanMate2v2;
            battle.slots[1] = Participant::tracked(mate, ladder_deck(world, mate, t));
            battle.slots[3] = Participant::synthetic();
            one_on_one(dice, &mut battle, 30);
        }
        220..=249 => {
            battle.kind = BattleType::Friendly;
            if dice.chance(500) {
                let other = dice.below(u32::try_from(world.players.len()).unwrap_or(1));
                if other != owner && !world.players[other as usize].activity.is_idle() {
                    battle.slots[2] = Participant::tracked(other, ladder_deck(world, other, t));
                }
            }
            one_on_one(dice, &mut battle, 50);
        }
        250..=279 => {
            let mate = clan.and_then(|c| clan_mate(world, clan_pool, dice, owner, c, t))?;
            battle.kind = BattleType::ClanMate;
            battle.slots[2] = Participant::tracked(mate, ladder_deck(world, mate, t));
            one_on_one(dice, &mut battle, 50);
        }
        280..=319 => {
            battle.kind = BattleType::Tournament;
            one_on_one(dice, &mut battle, 0);
        }
        320..=389 => {
            battle.kind = BattleType::Trail;
            one_on_one(dice, &mut battle, 20);
        }
        390..=449 => {
            battle.kind = BattleType::Challenge;
            one_on_one(dice, &mut battle, 0);
        }
        450..=464 => {
            battle.kind = BattleType::Unknown;
            one_on_one(dice, &mut battle, 20);
        }
        _ => {
            battle.kind = BattleType::PvP;
            if dice.chance(150) {
                // Matchmaking pairs players of similar trophies.
                let other = dice.below(u32::try_from(world.players.len()).unwrap_or(1));
                let them = &world.players[other as usize];
                let close = (them.start_trophies - me.start_trophies).abs() <= 600;
                if other != owner && close && !them.activity.is_idle() {
                    battle.slots[2] = Participant::tracked(other, ladder_deck(world, other, t));
                }
            }
            one_on_one(dice, &mut battle, 30);
            battle.null_trophy_change = dice.chance(10);
        }
    }
    Some(battle)
}

/// Draws a winner (or a draw with probability `draw_per_mille`) and crowns that agree.
fn one_on_one(dice: &mut Dice, battle: &mut Battle, draw_per_mille: u32) {
    if dice.chance(draw_per_mille) {
        let crowns = u8::try_from(dice.range(0, 2)).unwrap_or(0);
        battle.winner = None;
        battle.crowns = [crowns, crowns];
        return;
    }
    let winner = dice.below(2) as usize;
    let win = u8::try_from(dice.range(1, 3)).unwrap_or(1);
    let lose = u8::try_from(dice.range(0, i64::from(win) - 1)).unwrap_or(0);
    battle.winner = Some(u8::try_from(winner).unwrap_or(0));
    battle.crowns[winner] = win;
    battle.crowns[1 - winner] = lose;
}

/// Plays a best-of-three duel: each round has a winner; returns the rounds (decks) played.
fn duel_rounds(dice: &mut Dice, battle: &mut Battle) -> u8 {
    let mut won = [0u8; 2];
    let mut rounds: u16 = 0;
    let mut played = 0u8;
    let mut crowns = [0u8; 2];
    while won[0] < 2 && won[1] < 2 {
        let winner = dice.below(2) as usize;
        let win = u8::try_from(dice.range(1, 3)).unwrap_or(1);
        let lose = u8::try_from(dice.range(0, i64::from(win) - 1)).unwrap_or(0);
        let mut round = [0u8; 2];
        round[winner] = win;
        round[1 - winner] = lose;
        let at = 2 + 4 * u16::from(played);
        rounds |= u16::from(round[0]) << at;
        rounds |= u16::from(round[1]) << (at + 2);
        crowns[0] += round[0];
        crowns[1] += round[1];
        won[winner] += 1;
        played += 1;
    }
    battle.rounds = rounds | u16::from(played);
    battle.crowns = crowns;
    battle.winner = Some(if won[0] == 2 { 0 } else { 1 });
    played
}

/// Walks every battle in time order and writes starting trophies and trophy changes.
fn replay_trophies(players: &[Player], battles: &mut [Battle]) {
    let mut ladder: Vec<i32> = players.iter().map(|p| p.start_trophies).collect();
    let mut ranked: Vec<i32> = players.iter().map(|p| p.pol_start_trophies).collect();
    for battle in battles.iter_mut() {
        let kind = battle.kind;
        let reports_start = matches!(
            kind,
            BattleType::PvP
                | BattleType::PathOfLegend
                | BattleType::RiverRacePvP
                | BattleType::RiverRaceDuel
                | BattleType::RiverRaceDuelColosseum
        );
        if !reports_start {
            continue;
        }
        let pol = kind == BattleType::PathOfLegend;
        let seed = u64::from(battle.seed);
        let step = if pol {
            15 + (mix(seed, &[1]) % 11) as i32
        } else {
            25 + (mix(seed, &[1]) % 11) as i32
        };
        let pol_draw_cost = 5 + (mix(seed, &[2]) % 8) as i32;
        let state = if pol { &mut ranked } else { &mut ladder };
        // The owner's side is always tracked; an untracked opponent sits near them.
        let anchor = battle.side(0)[0]
            .player()
            .map_or(5000, |p| state[p as usize]);
        let spread = (mix(seed, &[3]) % 121) as i32 - 60;
        let winner = battle.winner;
        let null_change = battle.null_trophy_change;
        for side in 0..2 {
            let change = match (kind, winner) {
                (BattleType::PvP, _) if null_change => None,
                (BattleType::PvP, None) => Some(0),
                (BattleType::PathOfLegend, None) => Some(-pol_draw_cost),
                (BattleType::PvP | BattleType::PathOfLegend, Some(w)) => {
                    Some(if usize::from(w) == side { step } else { -step })
                }
                _ => None,
            };
            for participant in battle.side_mut(side) {
                let start = match participant.player() {
                    Some(p) => state[p as usize],
                    None => (anchor + spread).max(0),
                };
                let change = change.map(|c| c.max(-start));
                let change16 = change.and_then(|c| i16::try_from(c).ok());
                participant.set_trophies(start, change16);
                if let (Some(p), Some(c)) = (participant.player(), change) {
                    state[p as usize] = start + c;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duels_are_best_of_three_with_summed_crowns() {
        for seed in 0..200 {
            let mut dice = Dice::new(seed, &[]);
            let mut battle = Battle {
                time_millis: 0,
                seed: 0,
                kind: BattleType::RiverRaceDuel,
                winner: None,
                null_trophy_change: false,
                crowns: [0, 0],
                rounds: 0,
                slots: [Participant::EMPTY; 4],
            };
            let played = duel_rounds(&mut dice, &mut battle);
            let rounds = battle.rounds();
            assert_eq!(rounds.len(), usize::from(played));
            assert!((2..=3).contains(&played));
            let won0 = rounds.iter().filter(|(a, b)| a > b).count();
            let won1 = rounds.iter().filter(|(a, b)| b > a).count();
            assert_eq!(won0 + won1, rounds.len(), "no drawn rounds");
            assert_eq!(battle.winner, Some(if won0 == 2 { 0 } else { 1 }));
            let sum0: u8 = rounds.iter().map(|r| r.0).sum();
            assert_eq!(battle.crowns[0], sum0);
        }
    }

    #[test]
    fn tracked_opponents_fill_only_the_synthetic_slots() {
        let config = crate::WorldConfig::new(3, 40, 6, 1_767_225_600_000);
        let plain = World::generate(config).expect("world");
        let both = World::generate(config.with_tracked_opponents()).expect("world");
        // The same battles, drawn the same way; only who sits in the synthetic slots differs.
        assert_eq!(plain.battles.len(), both.battles.len());
        let mut filled = 0;
        for (a, b) in plain.battles.iter().zip(&both.battles) {
            assert_eq!(
                (a.time_millis, a.kind, a.winner),
                (b.time_millis, b.kind, b.winner)
            );
            for (x, y) in a.slots.iter().zip(&b.slots) {
                if x.player().is_some() || x.is_empty() {
                    assert_eq!(x.player(), y.player());
                } else {
                    assert!(y.player().is_some(), "a synthetic slot is filled");
                    filled += 1;
                }
            }
            // every battle is in the logs of both of its sides
            assert!(b.side_of(b.slots[0].player().expect("owner")).is_some());
            let sides: Vec<usize> = b.tracked().filter_map(|p| b.side_of(p)).collect();
            assert!(sides.contains(&0) && sides.contains(&1), "{b:?}");
        }
        assert!(filled > 0);
    }
}
