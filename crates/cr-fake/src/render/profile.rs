//! `/players/{tag}` as of an instant: counters, trophies, deck, clan and name consistent with
//! the battles played before it. Battle entries are the parent module's.

use serde_json::{Map, Value, json};

use super::{arena, clan_block, gauge, tracked_deck_cards};
use crate::calendar::{self, DAY_MS};
use crate::generate::{ladder_deck, mix};
use crate::world::{BattleType, Outcome, Player, World};

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
    let deck_index = current_deck_index(world, index, now);
    let deck = player.decks.get(deck_index)?;
    let current_deck = tracked_deck_cards(world, player, deck);
    let troop = world.catalog.tower_troop(deck.tower_troop)?;
    let troop_level = player
        .owned_tower_troop(deck.tower_troop)
        .map_or(1, |o| o.level);
    let favourite = world.catalog.card(deck.cards[0])?;
    let collection_level: i64 = player
        .collection
        .iter()
        .filter_map(|o| {
            let card = world.catalog.card(o.card)?;
            Some(card.rarity.in_game_level(i64::from(o.level)))
        })
        .sum::<i64>()
        * 3;
    let pol = world.pol_trophies_at(index, now);
    let (donations, received) = donations(world, index, now);
    let war_wins = world
        .battles_before(index, now)
        .iter()
        .filter(|&&b| {
            let battle = &world.battles[b as usize];
            battle.kind.is_war() && battle.outcome_for(index) == Some(Outcome::Win)
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

/// The deck of the player's last battle played with a ladder deck (war decks and event decks
/// do not change the profile's deck), else the deck their rotation is on now.
fn current_deck_index(world: &World, index: u32, now: i64) -> usize {
    let ladder = world
        .players
        .get(index as usize)
        .map_or(1, Player::ladder_decks);
    let last = world
        .battles_before(index, now)
        .iter()
        .rev()
        .find_map(|&b| {
            let battle = &world.battles[b as usize];
            if battle.kind.is_war() || battle.kind == BattleType::Trail {
                return None;
            }
            let side = battle.side_of(index)?;
            let me = battle
                .side(side)
                .iter()
                .find(|p| p.player() == Some(index))?;
            Some(usize::from(me.deck()))
        });
    last.filter(|&d| d < ladder)
        .unwrap_or_else(|| usize::from(ladder_deck(world, index, now)))
}

/// Wins in a row (positive) or losses in a row (negative) up to `now`.
fn streak(world: &World, index: u32, now: i64) -> i64 {
    let mut streak = 0i64;
    for &b in world.battles_before(index, now).iter().rev() {
        match world.battles[b as usize].outcome_for(index) {
            Some(Outcome::Win) if streak >= 0 => streak += 1,
            Some(Outcome::Loss) if streak <= 0 => streak -= 1,
            _ => break,
        }
    }
    streak
}

/// Donations given and received this week (they reset Monday 10:00Z), growing with the week.
pub(super) fn donations(world: &World, index: u32, now: i64) -> (u32, u32) {
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
pub(super) fn last_seen(world: &World, index: u32, now: i64) -> i64 {
    let seed = world.config.seed;
    match world.battles_before(index, now).last() {
        Some(&b) => {
            let after = (mix(seed, &[72, u64::from(index), u64::from(b)]) % 900) as i64 * 1000;
            (world.battles[b as usize].time_millis + after).min(now)
        }
        None => now - (3 * DAY_MS + (mix(seed, &[73, u64::from(index)]) % 20) as i64 * DAY_MS),
    }
}
