//! The clan bodies as of an instant: `/clans/{tag}`, the member rows `/members` pages, and
//! the river race (`currentriverrace`, `riverracelog`) with fame from the members' war
//! battles. Paging is the server's.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::profile::{donations, last_seen};
use super::{arena, gauge};
use crate::calendar::{self, DAY_MS, HOUR_MS, NEVER, api_time};
use crate::generate::{Dice, fresh_tag, mix};
use crate::world::{BattleType, Outcome, World};

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
        let won = battle.outcome_for(player) == Some(Outcome::Win);
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
