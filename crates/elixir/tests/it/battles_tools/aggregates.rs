//! The aggregate Battles tools (performance, decks, cards, opponents, levels): STATS
//! arithmetic against numbers computed from the cr-fake world itself, argument bounds and one
//! past them, sizes, and the subject refusals.

use std::collections::BTreeMap;

use elixir_record::Battle;
use serde_json::{Value, json};
use testkit::cr_api::{Outcome, World};

use super::{battles_of, is_duel, outcome_name, record, tag, world};
use crate::support::{spawn, success, tool_error};

/// What the world says player `p`'s record is, computed from cr-fake's own battles.
struct Expected {
    battles: u64,
    wins: u64,
    losses: u64,
    draws: u64,
    three_crown_wins: u64,
    trophy_change_sum: i64,
    crowns_for: f64,
    crowns_against: f64,
    /// Oldest first.
    outcomes: Vec<Outcome>,
    /// Duel rounds and other battles, for deck and card rows: (outcome, has a deck).
    games: Vec<Outcome>,
}

fn expected(w: &World, p: u32) -> Expected {
    let mut e = Expected {
        battles: 0,
        wins: 0,
        losses: 0,
        draws: 0,
        three_crown_wins: 0,
        trophy_change_sum: 0,
        crowns_for: 0.0,
        crowns_against: 0.0,
        outcomes: Vec::new(),
        games: Vec::new(),
    };
    for &i in w.battles_of(p) {
        let b = &w.battles()[i as usize];
        let side = b.side_of(p).unwrap();
        let o = b.outcome(side);
        e.battles += 1;
        match o {
            Outcome::Win => e.wins += 1,
            Outcome::Loss => e.losses += 1,
            Outcome::Draw => e.draws += 1,
        }
        if o == Outcome::Win && !is_duel(b.kind()) && b.crowns(side) >= 3 {
            e.three_crown_wins += 1;
        }
        let me = b.side(side).iter().find(|s| s.player() == Some(p)).unwrap();
        if let Some(tc) = me.trophy_change() {
            e.trophy_change_sum += i64::from(tc);
        }
        e.crowns_for += f64::from(b.crowns(side));
        e.crowns_against += f64::from(b.crowns(1 - side));
        e.outcomes.push(o);
        if is_duel(b.kind()) {
            for (a, c) in b.rounds() {
                let (mine, theirs) = if side == 0 { (a, c) } else { (c, a) };
                e.games.push(match mine.cmp(&theirs) {
                    std::cmp::Ordering::Greater => Outcome::Win,
                    std::cmp::Ordering::Less => Outcome::Loss,
                    std::cmp::Ordering::Equal => Outcome::Draw,
                });
            }
        } else if b.kind() != testkit::cr_api::BattleType::Trail {
            e.games.push(o);
        }
    }
    e
}

fn rate(wins: u64, decided: u64) -> Value {
    if decided == 0 {
        Value::Null
    } else {
        json!(((wins as f64 / decided as f64) * 10_000.0).round() / 10_000.0)
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The mean-level gap of a normalized battle for its log owner, computed here.
fn gap(b: &Battle) -> Option<f64> {
    let mean = |cards: &[elixir_record::BattleCard]| -> Option<f64> {
        if cards.is_empty() {
            return None;
        }
        let levels: Option<Vec<i64>> = cards.iter().map(|c| c.level).collect();
        let levels = levels?;
        Some(levels.iter().sum::<i64>() as f64 / levels.len() as f64)
    };
    let mine = mean(&b.team[0].cards)?;
    if b.opponent.iter().any(|o| o.cards.is_empty()) {
        return None;
    }
    let theirs: Vec<_> = b.opponent.iter().flat_map(|o| o.cards.clone()).collect();
    Some(mine - mean(&theirs)?)
}

async fn performance_matches_the_world(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 20);
    record(&server.store, &w, &[1, 0]).await;
    let me = tag(&w, 0);
    let person = server.person();
    let e = expected(&w, 0);
    let body = success(
        &person
            .tool("battles_performance", json!({"player_tag": me}))
            .await,
    );
    let o = &body["overall"];
    let decided = e.wins + e.losses;
    assert_eq!(o["battles"], e.battles);
    assert_eq!(o["wins"], e.wins);
    assert_eq!(o["losses"], e.losses);
    assert_eq!(o["draws"], e.draws);
    assert_eq!(o["decided_battles"], decided);
    assert_eq!(o["win_rate"], rate(e.wins, decided));
    assert_eq!(o["players"], 1);
    assert_eq!(o["insufficient_sample"], decided < 10);
    assert_eq!(o["three_crown_wins"], e.three_crown_wins);
    assert_eq!(o["trophy_change_sum"], e.trophy_change_sum);
    assert_eq!(
        o["avg_crowns_for"],
        json!(round2(e.crowns_for / e.battles as f64))
    );
    assert_eq!(
        o["avg_crowns_against"],
        json!(round2(e.crowns_against / e.battles as f64))
    );
    let ours = battles_of(&w, 0);
    let gaps: Vec<f64> = ours.iter().filter_map(gap).collect();
    assert_eq!(o["level_gap_battles"], gaps.len());
    if !gaps.is_empty() {
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!(
            (o["mean_level_gap"].as_f64().unwrap() - round2(m)).abs() < 1e-9,
            "{o}"
        );
    }
    // by mode: the same battles split, in order
    let mut modes: BTreeMap<String, u64> = BTreeMap::new();
    for b in &ours {
        *modes.entry(b.mode.as_str().to_owned()).or_default() += 1;
    }
    let by_mode = body["by_mode"].as_array().unwrap();
    assert_eq!(by_mode.len(), modes.len());
    for row in by_mode {
        assert_eq!(
            row["battles"],
            modes[row["mode"].as_str().unwrap()],
            "{row}"
        );
    }
    assert_eq!(body["groups"], json!([]));
    assert_eq!(body["applied"]["group_by"], "none");
    assert_eq!(body["docs"], "tools-battles#battles-performance");
    // streaks, computed here: a draw breaks a run
    let (mut longest_win, mut longest_loss, mut run) = (0u64, 0u64, None::<(Outcome, u64)>);
    for o in &e.outcomes {
        run = match (*o, run) {
            (Outcome::Draw, _) => None,
            (x, Some((y, n))) if x == y => Some((x, n + 1)),
            (x, _) => Some((x, 1)),
        };
        if let Some((x, n)) = run {
            if x == Outcome::Win {
                longest_win = longest_win.max(n);
            } else {
                longest_loss = longest_loss.max(n);
            }
        }
    }
    let s = &body["streaks"];
    assert_eq!(s["longest_win"], longest_win);
    assert_eq!(s["longest_loss"], longest_loss);
    match run {
        Some((x, n)) => assert_eq!(
            s["current"],
            json!({"outcome": outcome_name(x), "length": n})
        ),
        None => assert_eq!(s["current"], Value::Null),
    }
    // groups partition the battles
    for by in ["week", "war_week", "season", "mode"] {
        let g = success(
            &person
                .tool(
                    "battles_performance",
                    json!({"player_tag": me, "group_by": by}),
                )
                .await,
        );
        let groups = g["groups"].as_array().unwrap();
        let sum: u64 = groups.iter().map(|r| r["battles"].as_u64().unwrap()).sum();
        assert_eq!(sum, e.battles, "{by}");
        for r in groups {
            assert!(r["from"].as_str() < r["to"].as_str(), "{r}");
        }
        if by == "week" {
            assert!(groups[0]["key"].as_str().unwrap().contains("-W"), "{g}");
        }
    }
    // last_n_battles: the newest N, at both bounds
    let last = success(
        &person
            .tool(
                "battles_performance",
                json!({"player_tag": me, "last_n_battles": 10}),
            )
            .await,
    );
    let newest: Vec<&Outcome> = e.outcomes.iter().rev().take(10).collect();
    assert_eq!(last["overall"]["battles"], 10);
    assert_eq!(
        last["overall"]["wins"],
        newest.iter().filter(|o| ***o == Outcome::Win).count()
    );
    assert!(
        last["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("These are your last 10")),
        "{last}"
    );
    let small = last["overall"]["insufficient_sample"] == true;
    assert_eq!(
        last["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("insufficient_sample")),
        small
    );
    for n in [1, 500] {
        success(
            &person
                .tool(
                    "battles_performance",
                    json!({"player_tag": me, "last_n_battles": n}),
                )
                .await,
        );
    }
    // deck_hash narrows to the battles played with it
    let hash = ours
        .iter()
        .rev()
        .find_map(|b| b.team[0].deck_hash.clone())
        .unwrap();
    let with = ours
        .iter()
        .filter(|b| b.team[0].deck_hash.as_deref() == Some(&hash))
        .count();
    let d = success(
        &person
            .tool(
                "battles_performance",
                json!({"player_tag": me, "deck_hash": hash}),
            )
            .await,
    );
    assert_eq!(d["overall"]["battles"], with);
    // refusals
    for refused in [
        json!({"player_tag": me, "last_n_battles": 0}),
        json!({"player_tag": me, "last_n_battles": 501}),
        json!({"player_tag": me, "last_n_battles": 5, "days": 3}),
        json!({"player_tag": me, "last_n_battles": 5, "season": "current"}),
        json!({"player_tag": me, "last_n_battles": 5, "from": "2025-12-25"}),
        json!({"player_tag": me, "group_by": "day"}),
        json!({"player_tag": me, "deck_hash": "xyz"}),
    ] {
        let e = tool_error(&person.tool("battles_performance", refused.clone()).await);
        assert_eq!(e["error"]["code"], "bad_request", "{refused}");
    }
}

async fn decks_and_cards_count_rounds(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 20);
    record(&server.store, &w, &[0]).await;
    let me = tag(&w, 0);
    let person = server.person();
    let e = expected(&w, 0);
    // every deck row, all pages: duels count one game per round
    let mut rows = Vec::new();
    let mut offset = 0;
    loop {
        let page = success(
            &person
                .tool(
                    "battles_decks",
                    json!({"player_tag": me, "limit": 50, "offset": offset}),
                )
                .await,
        );
        rows.extend(page["decks"].as_array().unwrap().iter().cloned());
        match page["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => {
                assert_eq!(page["total"], rows.len());
                break;
            }
        }
    }
    let games: u64 = rows.iter().map(|r| r["battles"].as_u64().unwrap()).sum();
    assert_eq!(games, e.games.len() as u64);
    let wins: u64 = rows.iter().map(|r| r["wins"].as_u64().unwrap()).sum();
    assert_eq!(
        wins,
        e.games.iter().filter(|o| **o == Outcome::Win).count() as u64
    );
    let war = rows.iter().any(|r| r["tower_troop"].is_null());
    let other = rows.iter().any(|r| !r["tower_troop"].is_null());
    let first = success(
        &person
            .tool("battles_decks", json!({"player_tag": me}))
            .await,
    );
    assert_eq!(
        first["applied"],
        json!({"window": first["applied"]["window"], "mode": "all", "verbosity": "full",
               "sort": "battles", "limit": 10, "offset": 0, "min_battles": 1})
    );
    assert_eq!(
        first["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("|0")),
        war && other
    );
    let sorted: Vec<u64> = first["decks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["battles"].as_u64().unwrap())
        .collect();
    let mut desc = sorted.clone();
    desc.sort_by(|a, b| b.cmp(a));
    assert_eq!(sorted, desc);
    let d = &first["decks"][0];
    assert_eq!(d["deck_hash"].as_str().unwrap().len(), 64);
    assert!(d["avg_elixir"].is_number());
    assert!(d["first_played_at"].as_str() <= d["last_played_at"].as_str());
    // min_battles keeps only decks with that many games
    let min = success(
        &person
            .tool(
                "battles_decks",
                json!({"player_tag": me, "min_battles": 5, "limit": 50}),
            )
            .await,
    );
    assert!(
        min["decks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["battles"].as_u64().unwrap() >= 5)
    );
    assert_eq!(
        min["total"],
        rows.iter()
            .filter(|r| r["battles"].as_u64().unwrap() >= 5)
            .count()
    );
    let recent = success(
        &person
            .tool("battles_decks", json!({"player_tag": me, "sort": "recent"}))
            .await,
    );
    let lasts: Vec<&str> = recent["decks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["last_played_at"].as_str().unwrap())
        .collect();
    let mut by_recent = lasts.clone();
    by_recent.sort_by(|a, b| b.cmp(a));
    assert_eq!(lasts, by_recent);
    // cards: baseline is every game with a deck, shares are of those games
    let cards = success(
        &person
            .tool("battles_cards", json!({"player_tag": me, "limit": 120}))
            .await,
    );
    let decided = e.games.iter().filter(|o| **o != Outcome::Draw).count();
    let won = e.games.iter().filter(|o| **o == Outcome::Win).count();
    assert_eq!(cards["baseline"]["decided_battles"], decided);
    assert_eq!(
        cards["baseline"]["win_rate"],
        rate(won as u64, decided as u64)
    );
    let top = &cards["cards"][0];
    let share = top["battles"].as_f64().unwrap() / e.games.len() as f64;
    assert!(
        (top["usage_share"].as_f64().unwrap() - share).abs() < 1e-4,
        "{top}"
    );
    assert!(top["form"].is_string());
    assert_eq!(cards["total"], cards["cards"].as_array().unwrap().len());
    assert_eq!(cards["next_offset"], Value::Null);
    let paged = success(
        &person
            .tool("battles_cards", json!({"player_tag": me, "limit": 1}))
            .await,
    );
    assert_eq!(paged["next_offset"], 1);
    assert_eq!(paged["cards"][0]["id"], top["id"]);
    let losses = success(
        &person
            .tool("battles_cards", json!({"player_tag": me, "sort": "losses"}))
            .await,
    );
    let l: Vec<u64> = losses["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["losses"].as_u64().unwrap())
        .collect();
    assert!(l.windows(2).all(|p| p[0] >= p[1]));
    // bounds and one past them, on both Co tools
    for (tool, args) in [
        (
            "battles_decks",
            json!({"limit": 50, "offset": 10_000, "min_battles": 100}),
        ),
        (
            "battles_decks",
            json!({"limit": 1, "offset": 0, "min_battles": 1, "sort": "win_rate"}),
        ),
        ("battles_cards", json!({"limit": 120, "offset": 10_000})),
        ("battles_cards", json!({"limit": 1, "sort": "win_rate"})),
    ] {
        let mut a = args.clone();
        a["player_tag"] = json!(me);
        success(&person.tool(tool, a).await);
    }
    let empty = success(
        &person
            .tool("battles_decks", json!({"player_tag": me, "offset": 10_000}))
            .await,
    );
    assert_eq!(empty["decks"], json!([]));
    assert_eq!(empty["next_offset"], Value::Null);
    for (tool, args) in [
        ("battles_decks", json!({"limit": 51})),
        ("battles_decks", json!({"limit": 0})),
        ("battles_decks", json!({"offset": 10_001})),
        ("battles_decks", json!({"offset": -1})),
        ("battles_decks", json!({"min_battles": 0})),
        ("battles_decks", json!({"min_battles": 101})),
        ("battles_decks", json!({"sort": "losses"})),
        ("battles_cards", json!({"limit": 121})),
        ("battles_cards", json!({"limit": 0})),
        ("battles_cards", json!({"offset": 10_001})),
        ("battles_cards", json!({"sort": "recent"})),
        ("battles_cards", json!({"mode": "ranked"})),
    ] {
        let mut a = args.clone();
        a["player_tag"] = json!(me);
        let e = tool_error(&person.tool(tool, a).await);
        assert_eq!(e["error"]["code"], "bad_request", "{tool} {args}");
    }
}

async fn opponents_and_levels(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 20);
    record(&server.store, &w, &[0, 1]).await;
    let me = tag(&w, 0);
    let rival = tag(&w, 1);
    let person = server.person();
    // by player: the rival's row is your record against them
    let mut won = 0u64;
    let mut lost = 0u64;
    let mut met = 0u64;
    for &i in w.battles_of(0) {
        let b = &w.battles()[i as usize];
        let (Some(mine), Some(theirs)) = (b.side_of(0), b.side_of(1)) else {
            continue;
        };
        if mine == theirs {
            continue;
        }
        met += 1;
        match b.outcome(mine) {
            Outcome::Win => won += 1,
            Outcome::Loss => lost += 1,
            Outcome::Draw => {}
        }
    }
    assert!(met > 0);
    let body = success(
        &person
            .tool(
                "battles_opponents",
                json!({"player_tag": me, "group_by": "player", "min_battles": 1, "limit": 50}),
            )
            .await,
    );
    let row = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"]["tag"] == rival)
        .unwrap_or_else(|| panic!("{rival} in {body}"));
    assert_eq!(row["battles"], met);
    assert_eq!(row["wins"], won);
    assert_eq!(row["losses"], lost);
    assert_eq!(row["players"], 1);
    assert_eq!(row["win_rate"], rate(won, won + lost));
    let e = expected(&w, 0);
    assert_eq!(body["baseline"]["decided_battles"], e.wins + e.losses);
    assert_eq!(
        body["baseline"]["win_rate"],
        rate(e.wins, e.wins + e.losses)
    );
    // by card (default): sorted by losses, min_battles 3, players distinct opponents
    let cards = success(
        &person
            .tool("battles_opponents", json!({"player_tag": me}))
            .await,
    );
    assert_eq!(cards["applied"]["group_by"], "card");
    assert_eq!(cards["applied"]["min_battles"], 3);
    assert_eq!(cards["applied"]["sort"], "losses");
    let rows = cards["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["battles"].as_u64().unwrap() >= 3));
    // two opponents a battle at most (2v2)
    assert!(
        rows.iter()
            .all(|r| r["players"].as_u64().unwrap() <= 2 * r["battles"].as_u64().unwrap())
    );
    assert!(rows.iter().all(|r| r["players"].as_u64().unwrap() >= 1));
    let l: Vec<u64> = rows.iter().map(|r| r["losses"].as_u64().unwrap()).collect();
    assert!(l.windows(2).all(|p| p[0] >= p[1]));
    assert!(rows[0]["key"]["id"].is_number());
    for by in ["deck", "clan"] {
        let b = success(
            &person
                .tool(
                    "battles_opponents",
                    json!({"player_tag": me, "group_by": by, "min_battles": 1}),
                )
                .await,
        );
        assert!(b["total"].as_u64().unwrap() > 0, "{by}");
    }
    for refused in [
        json!({"group_by": "arena"}),
        json!({"min_battles": 0}),
        json!({"min_battles": 101}),
        json!({"limit": 51}),
        json!({"offset": 10_001}),
        json!({"sort": "recent"}),
    ] {
        let mut a = refused.clone();
        a["player_tag"] = json!(me);
        let e = tool_error(&person.tool("battles_opponents", a).await);
        assert_eq!(e["error"]["code"], "bad_request", "{refused}");
    }
    // levels: bands partition the comparable battles; compact drops cards[]
    let ours = battles_of(&w, 0);
    let gaps: Vec<f64> = ours.iter().filter_map(gap).collect();
    let levels = success(
        &person
            .tool("battles_levels", json!({"player_tag": me}))
            .await,
    );
    let o = &levels["overall"];
    assert_eq!(o["battles"], ours.len());
    assert_eq!(o["comparable"], gaps.len());
    let bands = levels["bands"].as_array().unwrap();
    let labels: Vec<&str> = bands.iter().map(|b| b["gap"].as_str().unwrap()).collect();
    assert_eq!(labels, ["≤-3", "-2", "-1", "0", "+1", "+2", "≥+3"]);
    let sum: u64 = bands.iter().map(|b| b["battles"].as_u64().unwrap()).sum();
    assert_eq!(sum, gaps.len() as u64);
    let zero = gaps.iter().filter(|g| g.round() == 0.0).count();
    assert_eq!(bands[3]["battles"], zero);
    let profile_kt = w.players()[0].king_tower_level;
    assert_eq!(o["king_tower"]["yours"], profile_kt);
    assert_eq!(o["king_tower"]["mean_opponent"], Value::Null);
    let cards = levels["cards"].as_array().unwrap();
    assert!(!cards.is_empty());
    let faced: Vec<u64> = cards
        .iter()
        .map(|c| c["faced_battles"].as_u64().unwrap())
        .collect();
    assert!(faced.windows(2).all(|p| p[0] >= p[1]));
    let compact = success(
        &person
            .tool(
                "battles_levels",
                json!({"player_tag": me, "verbosity": "compact"}),
            )
            .await,
    );
    assert!(compact.get("cards").is_none());
    assert_eq!(compact["bands"], levels["bands"]);
    assert_eq!(compact["applied"]["verbosity"], "compact");
    // subject refusals on every aggregate tool
    for tool in [
        "battles_performance",
        "battles_decks",
        "battles_cards",
        "battles_opponents",
        "battles_levels",
    ] {
        let e = tool_error(&person.tool(tool, json!({})).await);
        assert_eq!(e["error"]["code"], "no_subject", "{tool}");
        let e = tool_error(&person.tool(tool, json!({"player_tag": "#2PP"})).await);
        assert_eq!(e["error"]["code"], "not_recorded", "{tool}");
        let e = tool_error(
            &person
                .tool(
                    tool,
                    json!({"player_tag": me, "from": "2025-12-10", "to": "2025-12-01"}),
                )
                .await,
        );
        assert_eq!(e["error"]["code"], "bad_request", "{tool}");
        let e = tool_error(
            &server
                .agent()
                .tool(tool, json!({"display_name": "x"}))
                .await,
        );
        assert_eq!(e["error"]["code"], "bad_request", "{tool}");
    }
}

crate::on_both_backends!(
    performance_matches_the_world,
    decks_and_cards_count_rounds,
    opponents_and_levels,
);
