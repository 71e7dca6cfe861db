//! The generated world: determinism, mirrored logs, every mode, the special cases, consistent
//! trophies and history events, and scale.

use std::collections::BTreeSet;
use std::time::Instant;

use cr_fake::calendar::DAY_MS;
use cr_fake::render::battle_json;
use cr_fake::{BattleType, Outcome, World, WorldConfig};

use crate::{END_MILLIS, small_world};

#[test]
fn a_seed_gives_the_same_world_and_another_seed_another() {
    let a = small_world(42);
    let b = small_world(42);
    let c = small_world(43);
    assert_eq!(a.battles(), b.battles());
    assert!(!a.battles().is_empty());
    let tags = |w: &World| {
        w.players()
            .iter()
            .map(|p| p.tag.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(tags(&a), tags(&b));
    assert_ne!(tags(&a), tags(&c));
    assert_ne!(a.battles(), c.battles());
    let first = &a.battles()[0];
    let owner = first.side(0)[0].player().unwrap();
    assert_eq!(
        battle_json(&a, first, owner),
        battle_json(&b, &b.battles()[0], owner)
    );
}

#[test]
fn bad_configs_are_refused_with_the_reason() {
    let err = World::generate(WorldConfig::new(1, 0, 7, END_MILLIS)).unwrap_err();
    assert!(
        err.to_string()
            .contains("players must be 1..=100000, got 0"),
        "{err}"
    );
    let err = World::generate(WorldConfig::new(1, 5, 0, END_MILLIS)).unwrap_err();
    assert!(err.to_string().contains("days must be"), "{err}");
    let err = World::generate(WorldConfig::new(1, 5, 7, 0)).unwrap_err();
    assert!(err.to_string().contains("between 2000 and 2100"), "{err}");
}

#[test]
fn the_clan_count_is_a_knob_within_its_bounds() {
    // 120 players: 3 clans hold them (50 each at most), 120 is one each
    let config = |clans| WorldConfig::new(3, 120, 2, END_MILLIS).with_clans(clans);
    for clans in [3, 120] {
        let world = World::generate(config(clans)).unwrap();
        assert_eq!(world.clans().len(), clans as usize);
        let start = world.config().start_millis();
        let placed: usize = (0..clans).map(|c| world.members_at(c, start).len()).sum();
        assert!(
            placed >= 100,
            "about one player in twenty has no clan: {placed}"
        );
        for clan in 0..clans {
            let members = world.members_at(clan, start).len();
            assert!(members <= 50, "clan {clan}: {members}");
        }
    }
    for clans in [2, 121] {
        let err = World::generate(config(clans)).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("clans must be 3..=120 for 120 players (50 members at most, one per player at most), got {clans}")),
            "{err}"
        );
    }
    // unset: one per 45 players, as before
    let world = World::generate(WorldConfig::new(3, 120, 2, END_MILLIS)).unwrap();
    assert_eq!(world.clans().len(), 3);
}

#[test]
fn a_battle_between_tracked_players_is_in_both_logs_mirrored() {
    let world = small_world(7);
    let battle = world
        .battles()
        .iter()
        .find(|b| b.per_side() == 1 && b.side(1)[0].player().is_some())
        .expect("a battle between two tracked players");
    let a = battle.side(0)[0].player().unwrap();
    let b = battle.side(1)[0].player().unwrap();
    let index = world
        .battles()
        .iter()
        .position(|x| std::ptr::eq(x, battle))
        .unwrap() as u32;
    assert!(world.battles_of(a).contains(&index));
    assert!(world.battles_of(b).contains(&index));
    let from_a = battle_json(&world, battle, a).unwrap();
    let from_b = battle_json(&world, battle, b).unwrap();
    assert_eq!(from_a["team"], from_b["opponent"]);
    assert_eq!(from_a["opponent"], from_b["team"]);
    assert_eq!(from_a["team"][0]["tag"], world.players()[a as usize].tag);
    assert_eq!(from_a["battleTime"], from_b["battleTime"]);
    // The outcomes mirror too (a draw is a draw on both sides).
    let (oa, ob) = (
        battle.outcome_for(a).unwrap(),
        battle.outcome_for(b).unwrap(),
    );
    match oa {
        Outcome::Win => assert_eq!(ob, Outcome::Loss),
        Outcome::Loss => assert_eq!(ob, Outcome::Win),
        Outcome::Draw => assert_eq!(ob, Outcome::Draw),
    }
    // 2v2 with a tracked team mate: both logs show the same two on the team, each first in
    // their own.
    let duo = world
        .battles()
        .iter()
        .find(|b| b.kind() == BattleType::ClanMate2v2)
        .expect("a 2v2");
    let (p, q) = (
        duo.side(0)[0].player().unwrap(),
        duo.side(0)[1].player().unwrap(),
    );
    let from_p = battle_json(&world, duo, p).unwrap();
    let from_q = battle_json(&world, duo, q).unwrap();
    assert_eq!(from_p["team"][0], from_q["team"][1]);
    assert_eq!(from_p["team"][1], from_q["team"][0]);
    assert_eq!(from_p["opponent"], from_q["opponent"]);
    assert_eq!(from_p["team"].as_array().unwrap().len(), 2);
}

#[test]
fn every_battle_type_and_special_case_appears_in_a_week() {
    let world = small_world(11);
    let kinds: BTreeSet<BattleType> = world.battles().iter().map(|b| b.kind()).collect();
    for kind in BattleType::ALL {
        assert!(kinds.contains(&kind), "no {kind:?} in a week");
    }
    let battles = world.battles();
    // Draws, on the ladder and in Path of Legend (costing both sides).
    assert!(battles.iter().any(|b| b.kind() == BattleType::PvP
        && b.outcome(0) == Outcome::Draw
        && b.side(0)[0].trophy_change() == Some(0)));
    let pol_draw = battles
        .iter()
        .find(|b| b.kind() == BattleType::PathOfLegend && b.outcome(0) == Outcome::Draw)
        .expect("a Path of Legend draw");
    assert!(pol_draw.side(0)[0].trophy_change().unwrap() < 0);
    assert!(pol_draw.side(1)[0].trophy_change().unwrap() < 0);
    // A null trophyChange on the wire.
    let null = battles
        .iter()
        .find(|b| b.null_trophy_change())
        .expect("a null trophyChange");
    let owner = null.side(0)[0].player().unwrap();
    let json = battle_json(&world, null, owner).unwrap();
    assert!(json["team"][0]["trophyChange"].is_null());
    assert!(json["team"][0].get("trophyChange").is_some());
    // Destroyed towers: three crowns leave no princess tower (null) and a fallen king.
    let crushed = battles
        .iter()
        .find(|b| b.kind() == BattleType::PvP && b.crowns(0) == 3)
        .expect("a three-crown win");
    let json = battle_json(&world, crushed, crushed.side(0)[0].player().unwrap()).unwrap();
    assert!(json["opponent"][0]["princessTowersHitPoints"].is_null());
    assert_eq!(json["opponent"][0]["kingTowerHitPoints"], 0);
    // Idle players never play.
    let idle: Vec<usize> = (0..world.players().len())
        .filter(|&p| world.players()[p].activity.is_idle())
        .collect();
    assert!(!idle.is_empty());
    for p in idle {
        assert!(world.battles_of(p as u32).is_empty());
    }
}

#[test]
fn war_battles_follow_the_calendar_and_their_wire_rules() {
    let world = small_world(3);
    for battle in world.battles() {
        let day = cr_fake::calendar::game_day(battle.time_millis());
        let pos = cr_fake::calendar::war_position(day);
        if battle.kind().is_war() {
            assert!(cr_fake::calendar::is_war_day(day), "{battle:?}");
        }
        match battle.kind() {
            BattleType::RiverRaceDuel => assert!(!pos.colosseum),
            BattleType::RiverRaceDuelColosseum => assert!(pos.colosseum),
            _ => {}
        }
    }
    let duel = world.battles().iter().find(|b| b.kind().is_duel()).unwrap();
    let owner = duel.side(0)[0].player().unwrap();
    let json = battle_json(&world, duel, owner).unwrap();
    let me = &json["team"][0];
    let rounds = me["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), duel.rounds().len());
    let summed: u64 = rounds.iter().map(|r| r["crowns"].as_u64().unwrap()).sum();
    assert_eq!(me["crowns"].as_u64().unwrap(), summed);
    assert_eq!(me["cards"].as_array().unwrap().len(), 8 * rounds.len());
    assert_eq!(me["supportCards"], serde_json::json!([]));
    assert_eq!(
        me["princessTowersHitPoints"],
        rounds.last().unwrap()["princessTowersHitPoints"]
    );
    let boat = world
        .battles()
        .iter()
        .find(|b| b.kind() == BattleType::BoatBattle)
        .unwrap();
    let json = battle_json(&world, boat, boat.side(0)[0].player().unwrap()).unwrap();
    assert_eq!(json["opponent"][0]["cards"].as_array().unwrap().len(), 12);
    assert_eq!(json["team"][0]["cards"].as_array().unwrap().len(), 8);
    assert_eq!(json["boatBattleWon"], boat.outcome(0) == Outcome::Win);
    let towers = json["prevTowersDestroyed"].as_u64().unwrap()
        + json["newTowersDestroyed"].as_u64().unwrap()
        + json["remainingTowers"].as_u64().unwrap();
    assert_eq!(towers, 3);
    let war = world
        .battles()
        .iter()
        .find(|b| b.kind() == BattleType::RiverRacePvP)
        .unwrap();
    let json = battle_json(&world, war, war.side(0)[0].player().unwrap()).unwrap();
    assert_eq!(json["team"][0]["supportCards"], serde_json::json!([]));
    assert!(json["team"][0].get("trophyChange").is_none());
}

#[test]
fn ladder_trophies_chain_from_battle_to_battle() {
    let world = small_world(5);
    for (index, player) in world.players().iter().enumerate() {
        let index = index as u32;
        let mut expected = player.start_trophies;
        for &b in world.battles_of(index) {
            let battle = &world.battles()[b as usize];
            if battle.kind() != BattleType::PvP {
                continue;
            }
            let side = battle.side_of(index).unwrap();
            let me = battle.side(side)[0];
            assert_eq!(me.starting_trophies(), Some(expected), "{}", player.tag);
            expected += i32::from(me.trophy_change().unwrap_or(0));
        }
        assert_eq!(world.trophies_at(index, END_MILLIS), expected);
    }
}

#[test]
fn name_changes_and_clan_moves_show_in_the_logs() {
    let world = small_world(9);
    let change = world.name_changes().first().expect("a name change");
    let player = &world.players()[change.player as usize];
    assert_eq!(player.name_at(change.at_millis - 1), change.from);
    assert_eq!(player.name_at(change.at_millis), change.to);
    for &b in world.battles_of(change.player) {
        let battle = &world.battles()[b as usize];
        let json = battle_json(&world, battle, change.player).unwrap();
        let want = if battle.time_millis() < change.at_millis {
            &change.from
        } else {
            &change.to
        };
        assert_eq!(json["team"][0]["name"], want.as_str());
    }
    let moved = world.clan_moves().first().expect("a clan move");
    let before = world
        .membership_at(moved.player, moved.left_millis - 1)
        .unwrap();
    assert_eq!(before.clan, moved.from_clan);
    assert!(
        world
            .membership_at(moved.player, moved.left_millis)
            .is_none()
    );
    let after = world
        .membership_at(moved.player, moved.joined_millis)
        .unwrap();
    assert_eq!(after.clan, moved.to_clan);
    assert_eq!(after.role.as_str(), "member");
    let clan_tag = |c: u32| world.clans()[c as usize].tag.clone();
    for &b in world.battles_of(moved.player) {
        let battle = &world.battles()[b as usize];
        let json = battle_json(&world, battle, moved.player).unwrap();
        let shown = json["team"][0]["clan"]["tag"].as_str().map(str::to_owned);
        let t = battle.time_millis();
        let want = if t < moved.left_millis {
            Some(clan_tag(moved.from_clan))
        } else if t < moved.joined_millis {
            None
        } else {
            Some(clan_tag(moved.to_clan))
        };
        assert_eq!(shown, want);
    }
}

#[test]
fn two_thousand_players_for_thirty_days_generate_quickly_and_compactly() {
    let started = Instant::now();
    let world = World::generate(WorldConfig::new(2026, 2000, 30, END_MILLIS)).unwrap();
    let took = started.elapsed();
    let battles = world.battles().len();
    println!(
        "{battles} battles in {took:?}, about {} MB",
        world.approx_heap_bytes() / 1_000_000
    );
    assert!(battles > 400_000, "{battles} battles");
    // Unoptimized test builds on a shared 2-core machine: generous, yet far below a minute.
    assert!(took.as_secs() < 45, "took {took:?}");
    assert!(world.approx_heap_bytes() < 200_000_000);
    let per_day = battles as f64 / 2000.0 / 30.0;
    assert!(
        (5.0..=30.0).contains(&per_day),
        "{per_day} battles a player-day"
    );
    let last = world.battles().last().unwrap().time_millis();
    assert!(last < END_MILLIS && last > END_MILLIS - DAY_MS);
}

#[test]
fn a_script_sets_renames_and_clan_moves_on_given_days() {
    let config = WorldConfig::new(13, 60, 7, END_MILLIS);
    let plain = World::generate(config).unwrap();
    let mover = (0..60u32)
        .find(|&p| {
            plain.membership_at(p, config.start_millis()).is_some()
                && !plain.players()[p as usize].activity.is_idle()
        })
        .unwrap();
    let from_clan = plain
        .membership_at(mover, config.start_millis())
        .unwrap()
        .clan;
    let to_clan = (from_clan + 1) % plain.clans().len() as u32;
    let script = cr_fake::Script {
        renames: vec![(4, 2, "Renamed Rook".into())],
        moves: vec![(mover, 3, to_clan)],
    };
    let world = World::generate_scripted(config, &script).unwrap();
    let renamed_at = cr_fake::Script::instant(&config, 2);
    assert_eq!(world.name_changes().len(), 1);
    assert_eq!(world.name_changes()[0].at_millis, renamed_at);
    assert_eq!(world.players()[4].name_at(renamed_at), "Renamed Rook");
    assert_eq!(
        world.players()[4].name_at(renamed_at - 1),
        plain.players()[4].name_at(0)
    );
    let moved = world.clan_moves();
    assert_eq!(moved.len(), 1);
    let left = cr_fake::Script::instant(&config, 3);
    assert_eq!(
        (moved[0].left_millis, moved[0].joined_millis),
        (left, left + 2 * 3_600_000)
    );
    let in_clan = |clan: u32, at: i64| world.members_at(clan, at).iter().any(|m| m.player == mover);
    assert!(in_clan(from_clan, left - 1) && !in_clan(to_clan, left - 1));
    assert!(!in_clan(from_clan, left) && !in_clan(to_clan, left));
    assert!(in_clan(to_clan, left + 2 * 3_600_000));
    let clan = cr_fake::render::clan_json(&world, to_clan, END_MILLIS).unwrap();
    let tags: Vec<&str> = clan["memberList"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tag"].as_str().unwrap())
        .collect();
    assert!(tags.contains(&world.players()[mover as usize].tag.as_str()));

    for (bad, reason) in [
        (
            cr_fake::Script {
                renames: vec![(60, 1, "X".into())],
                moves: vec![],
            },
            "player 60 does not exist",
        ),
        (
            cr_fake::Script {
                renames: vec![(1, 7, "X".into())],
                moves: vec![],
            },
            "day 7 is outside the history",
        ),
        (
            cr_fake::Script {
                renames: vec![],
                moves: vec![(mover, 1, from_clan)],
            },
            "is already in clan",
        ),
        (
            cr_fake::Script {
                renames: vec![],
                moves: vec![(mover, 1, 99)],
            },
            "clan 99 does not exist",
        ),
    ] {
        let err = World::generate_scripted(config, &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains(reason), "{err}");
    }
}
