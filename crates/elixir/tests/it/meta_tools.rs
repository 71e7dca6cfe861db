//! battles_meta_decks and battles_meta_cards over a generated cr-fake world the test records
//! itself and recomputes directly from the normalized battles (games per duel round, both
//! sides of a battle between recorded players): every segment, the defaults, bounds and one
//! past them, containing and excluding, the Wilson order, the population and excluded
//! arithmetic, and query_timeout under a tiny budget with its refund, on both backends.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use elixir::recorder::ingest::{clan_rows, new_battles, observer_name, player_rows};
use elixir::store::SharedStore;
use elixir_record::normalize::clan::ClanProfile;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::stats::wilson_lower_bound;
use elixir_record::{Battle, Mode, Outcome, Tag};
use serde_json::{Value, json};
use testkit::cr_api::render::{battle_json, clan_json, player_json};
use testkit::cr_api::{World, WorldConfig};

use crate::on_both_backends;
use crate::support::{Options, T0, spawn, spawn_with, success, tool_error};

/// 2025-12-01T10:00:00Z: the start of the season the server's clock (T0) is in.
const SEASON_START: i64 = 1_764_583_200_000;

/// The world a test knows: every tracked player's normalized battles.
struct Known {
    world: World,
    /// (tag, battles) per tracked player.
    logs: Vec<(Tag, Vec<Battle>)>,
    /// (clan tag, member tags) as recorded.
    clans: Vec<(String, Vec<String>)>,
}

/// Generates a world ending at T0 and records all of it: each tracked player's whole battle
/// history from their own log (so a battle between two of them arrives twice), their
/// profiles, and each clan's member list as read before the first battle.
async fn record(store: &SharedStore, seed: u64, players: u32) -> Known {
    let world = World::generate(WorldConfig::new(seed, players, 35, T0)).unwrap();
    let start = world.config().start_millis();
    let mut logs = Vec::new();
    for (i, p) in world.players().iter().enumerate() {
        let index = u32::try_from(i).unwrap();
        let tag = Tag::parse(&p.tag).unwrap();
        let battles: Vec<Battle> = world
            .battles_of(index)
            .iter()
            .map(|&b| &world.battles()[b as usize])
            .filter_map(|b| battle_json(&world, b, index))
            .map(|j| Battle::from_upstream(&j).unwrap())
            .collect();
        let rows = new_battles(&tag, &battles).unwrap();
        store
            .ingest_battles(&p.tag, observer_name(&tag, &battles), T0, &rows)
            .await
            .unwrap();
        let profile = player_json(&world, index, T0).unwrap();
        let read = PlayerProfile::from_upstream(profile.to_string().as_bytes()).unwrap();
        let (row, snapshot) = player_rows(&read.profile, T0).unwrap();
        store.put_player(&row, &snapshot).await.unwrap();
        logs.push((tag, battles));
    }
    let mut clans = Vec::new();
    for i in 0..world.clans().len() {
        let Some(json) = clan_json(&world, u32::try_from(i).unwrap(), start) else {
            continue;
        };
        let read = ClanProfile::from_upstream(json.to_string().as_bytes()).unwrap();
        let (row, members) = clan_rows(&read.profile, start).unwrap();
        store.put_clan(&row, &members, start).await.unwrap();
        clans.push((
            row.tag.clone(),
            members.iter().map(|m| m.player_tag.clone()).collect(),
        ));
    }
    Known { world, logs, clans }
}

/// A deck's or card's expected sample.
#[derive(Debug, Default, Clone, PartialEq)]
struct Expect {
    games: u64,
    wins: u64,
    losses: u64,
    draws: u64,
    players: BTreeSet<String>,
}

impl Expect {
    fn add(&mut self, outcome: Option<Outcome>, player: &str) {
        self.games += 1;
        match outcome {
            Some(Outcome::Win) => self.wins += 1,
            Some(Outcome::Loss) => self.losses += 1,
            Some(Outcome::Draw) => self.draws += 1,
            None => {}
        }
        self.players.insert(player.to_owned());
    }
}

/// What the tools should answer for `segment` players, competitive, from `from` to T0.
struct Expected {
    decks: HashMap<String, Expect>,
    cards: HashMap<String, Expect>,
    disclosed: u64,
    players_in_window: usize,
    battles: usize,
    decided: usize,
}

fn expected(known: &Known, segment: &[String], from: i64) -> Expected {
    let mut e = Expected {
        decks: HashMap::new(),
        cards: HashMap::new(),
        disclosed: 0,
        players_in_window: 0,
        battles: 0,
        decided: 0,
    };
    let mut battles = BTreeSet::new();
    let mut decided = BTreeSet::new();
    for (tag, log) in &known.logs {
        if !segment.contains(&tag.to_string()) {
            continue;
        }
        let mut played = false;
        for b in log {
            let t = b.battle_time.as_millisecond();
            if t < from || t >= T0 || !matches!(b.mode, Mode::Ladder | Mode::PathOfLegend) {
                continue;
            }
            played = true;
            battles.insert(b.battle_id.clone());
            if matches!(b.outcome_of(tag), Some(Outcome::Win | Outcome::Loss)) {
                decided.insert(b.battle_id.clone());
            }
            for g in b.games_of(tag) {
                let Some(hash) = g.deck_hash else { continue };
                e.disclosed += 1;
                e.decks
                    .entry(hash.to_owned())
                    .or_default()
                    .add(g.outcome, tag.as_str());
                for c in g.cards {
                    e.cards
                        .entry(c.key())
                        .or_default()
                        .add(g.outcome, tag.as_str());
                }
            }
        }
        if played {
            e.players_in_window += 1;
        }
    }
    e.battles = battles.len();
    e.decided = decided.len();
    e
}

fn all_tags(known: &Known) -> Vec<String> {
    known.logs.iter().map(|(t, _)| t.to_string()).collect()
}

/// A row's STATS match the expectation exactly, and win_rate_low is its Wilson bound.
fn check_row(row: &Value, want: &Expect) {
    let s = &row["stats"];
    assert_eq!(s["battles"], want.games, "{row}");
    assert_eq!(s["wins"], want.wins, "{row}");
    assert_eq!(s["losses"], want.losses, "{row}");
    assert_eq!(s["draws"], want.draws, "{row}");
    assert_eq!(s["decided_battles"], want.wins + want.losses, "{row}");
    assert_eq!(s["players"], want.players.len(), "{row}");
    assert_eq!(
        s["insufficient_sample"],
        want.wins + want.losses < 20,
        "{row}"
    );
    assert_eq!(
        row["win_rate_low"],
        json!(wilson_lower_bound(want.wins, want.wins + want.losses)),
        "{row}"
    );
}

fn share(part: u64, whole: u64) -> f64 {
    ((part as f64 / whole as f64) * 10_000.0).round() / 10_000.0
}

/// Every page of a tool's rows, following next_offset.
async fn all_rows(
    client: &testkit::mcp::Client,
    tool: &str,
    field: &str,
    mut args: Value,
) -> Vec<Value> {
    let mut rows = Vec::new();
    loop {
        let body = success(&client.tool(tool, args.clone()).await);
        rows.extend(body[field].as_array().unwrap().iter().cloned());
        match body["next_offset"].as_i64() {
            Some(next) => args["offset"] = json!(next),
            None => return rows,
        }
    }
}

async fn corpus_decks_and_cards_match_the_world(url: &str) {
    let server = spawn(url).await;
    let known = record(&server.store, 7, 10).await;
    let want = expected(&known, &all_tags(&known), SEASON_START);
    assert!(
        want.decks.len() > 3 && want.battles > 50,
        "a world too small"
    );
    let person = server.person();

    // defaults: current season to date, competitive, min_battles 5, win_rate_low, limit 20
    let body = success(
        &person
            .tool("battles_meta_decks", json!({"segment": "corpus"}))
            .await,
    );
    let applied = &body["applied"];
    assert_eq!(applied["segment"], "corpus");
    assert_eq!(applied["mode"], "competitive");
    assert_eq!(applied["min_battles"], 5);
    assert_eq!(applied["min_players"], 1);
    assert_eq!(applied["sort"], "win_rate_low");
    assert_eq!(applied["limit"], 20);
    assert_eq!(applied["offset"], 0);
    assert_eq!(applied["window"]["source"], "season");
    assert_eq!(applied["window"]["from"], "2025-12-01T10:00:00Z");
    assert_eq!(applied["window"]["to"], "2026-01-01T00:00:00Z");
    assert_eq!(applied["window"]["season"]["month"], "2025-12");
    assert_eq!(body["docs"], "tools-battles#battles-meta-decks");
    let p = &body["population"];
    assert_eq!(p["recorded_players"], 10);
    assert_eq!(p["players_in_window"], want.players_in_window);
    assert_eq!(p["battles_in_window"], want.battles);
    assert_eq!(p["decided_battles"], want.decided);

    // excluded arithmetic: considered = below_min_battles + below_min_players + total
    let ex = &body["excluded"];
    assert_eq!(ex["considered"], want.decks.len());
    let below = want.decks.values().filter(|d| d.games < 5).count();
    assert_eq!(ex["below_min_battles"], below);
    assert_eq!(ex["below_min_players"], 0);
    assert_eq!(body["total"], want.decks.len() - below);
    let page = body["decks"].as_array().unwrap();
    assert_eq!(page.len(), (want.decks.len() - below).min(20));

    // every deck over every page: exact STATS and shares, in Wilson order
    let rows = all_rows(
        &person,
        "battles_meta_decks",
        "decks",
        json!({"segment": "corpus", "min_battles": 1, "limit": 7}),
    )
    .await;
    assert_eq!(rows.len(), want.decks.len());
    let mut last = f64::INFINITY;
    for row in &rows {
        let hash = row["deck_hash"].as_str().unwrap();
        let w = &want.decks[hash];
        check_row(row, w);
        assert_eq!(row["usage_share"], json!(share(w.games, want.disclosed)));
        assert_eq!(row["cards"].as_array().unwrap().len(), 8, "{row}");
        let low = row["win_rate_low"].as_f64().unwrap_or(-1.0);
        assert!(low <= last, "not in Wilson order: {low} after {last}");
        last = low;
    }

    // cards: one row per card and form, usage of games with a known deck
    let cards = all_rows(
        &person,
        "battles_meta_cards",
        "cards",
        json!({"segment": "corpus", "min_battles": 1, "limit": 120}),
    )
    .await;
    assert_eq!(cards.len(), want.cards.len());
    for row in &cards {
        let key = format!(
            "{}:{}",
            row["id"],
            match row["form"].as_str() {
                Some("evolution") => 1,
                Some("hero") => 2,
                _ => 0,
            }
        );
        let w = &want.cards[&key];
        check_row(row, w);
        assert_eq!(row["usage_share"], json!(share(w.games, want.disclosed)));
        assert!(row["name"].is_string());
    }
    let body = success(
        &person
            .tool(
                "battles_meta_cards",
                json!({"segment": "corpus", "sort": "battles", "limit": 3}),
            )
            .await,
    );
    assert_eq!(body["applied"]["limit"], 3);
    let most: Vec<u64> = body["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stats"]["battles"].as_u64().unwrap())
        .collect();
    let mut sorted: Vec<u64> = want.cards.values().map(|c| c.games).collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(most, sorted[..3]);
    assert_eq!(body["next_offset"], 3);
    let _ = &known.world;
}

async fn segments_count_their_own_players(url: &str) {
    let server = spawn(url).await;
    let known = record(&server.store, 11, 10).await;
    let person = server.person();

    // {player_tags}: exactly those players (an unrecorded one is noted, not counted)
    let two: Vec<String> = all_tags(&known).into_iter().take(2).collect();
    let mut named = two.clone();
    named.push("#2PP".into());
    let body = success(
        &person
            .tool(
                "battles_meta_decks",
                json!({"segment": {"player_tags": named}, "min_battles": 1, "limit": 50}),
            )
            .await,
    );
    let want = expected(&known, &two, SEASON_START);
    assert_eq!(body["population"]["recorded_players"], 2);
    assert_eq!(body["population"]["battles_in_window"], want.battles);
    assert_eq!(body["total"], want.decks.len());
    assert!(
        body["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("1 of the 3 players")),
        "{body}"
    );
    let mut echoed = named.clone();
    echoed.sort();
    assert_eq!(body["applied"]["segment"], json!({"player_tags": echoed}));

    // {clan_tag}: the clan's recorded members
    let (clan, members) = known
        .clans
        .iter()
        .find(|(_, m)| !m.is_empty())
        .cloned()
        .unwrap();
    let body = success(
        &person
            .tool(
                "battles_meta_decks",
                json!({"segment": {"clan_tag": clan}, "min_battles": 1, "limit": 50}),
            )
            .await,
    );
    let want = expected(&known, &members, SEASON_START);
    let recorded = members
        .iter()
        .filter(|m| known.logs.iter().any(|(t, _)| t.as_str() == m.as_str()))
        .count();
    assert_eq!(body["population"]["recorded_players"], recorded);
    assert_eq!(
        body["population"]["players_in_window"],
        want.players_in_window
    );
    assert_eq!(body["total"], want.decks.len());
    assert_eq!(body["applied"]["segment"], json!({"clan_tag": clan}));

    // "mine" on the person door: the tracked players
    let mine = &two[..1];
    success(
        &person
            .tool("elixir_track_player", json!({"player_tag": mine[0]}))
            .await,
    );
    let body = success(
        &person
            .tool(
                "battles_meta_cards",
                json!({"segment": "mine", "min_battles": 1, "limit": 120}),
            )
            .await,
    );
    let want = expected(&known, mine, SEASON_START);
    assert_eq!(body["applied"]["segment"], "mine");
    assert_eq!(body["population"]["recorded_players"], 1);
    assert_eq!(body["total"], want.cards.len());

    // "mine" on an agent door: the door clan's members, once the owner sets it
    let agent = server.agent();
    let refused = tool_error(
        &agent
            .tool("battles_meta_decks", json!({"segment": "mine"}))
            .await,
    );
    assert_eq!(refused["error"]["code"], "no_subject");
    server
        .store
        .set_agent_clan(server.agent.agent.id, Some(&clan))
        .await
        .unwrap();
    let body = success(
        &agent
            .tool(
                "battles_meta_decks",
                json!({"segment": "mine", "min_battles": 1, "limit": 50}),
            )
            .await,
    );
    assert_eq!(body["population"]["recorded_players"], recorded);

    // unknown clan: not_recorded; collections: not_found, honestly
    let e = tool_error(
        &person
            .tool(
                "battles_meta_decks",
                json!({"segment": {"clan_tag": "#2PPQ"}}),
            )
            .await,
    );
    assert_eq!(e["error"]["code"], "not_recorded");
    let e = tool_error(
        &person
            .tool(
                "battles_meta_cards",
                json!({"segment": {"collection": "top-decks"}}),
            )
            .await,
    );
    assert_eq!(e["error"]["code"], "not_found");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("collections are not available"),
        "{e}"
    );
    let e = tool_error(
        &person
            .tool(
                "battles_meta_cards",
                json!({"segment": {"player_tags": ["#20JJJ2CCRU", "#XYZ"]}}),
            )
            .await,
    );
    assert_eq!(e["error"]["code"], "invalid_tag");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("[1]"),
        "{e}"
    );
}

async fn bounds_filters_and_windows(url: &str) {
    let server = spawn(url).await;
    let known = record(&server.store, 5, 8).await;
    let person = server.person();
    let call = |args: Value| {
        let person = &person;
        async move { person.tool("battles_meta_decks", args).await }
    };

    // each bound holds, and one past it is refused, never clamped
    for (name, ok, past) in [
        ("limit", 50, 51),
        ("limit", 1, 0),
        ("min_battles", 1000, 1001),
        ("min_players", 50, 51),
        ("offset", 10_000, 10_001),
    ] {
        let mut args = json!({"segment": "corpus"});
        args[name] = json!(ok);
        let body = success(&call(args.clone()).await);
        assert_eq!(body["applied"][name], ok, "{name}");
        args[name] = json!(past);
        let e = tool_error(&call(args).await);
        assert_eq!(e["error"]["code"], "bad_request", "{name} {past}");
    }
    let past = person
        .tool(
            "battles_meta_cards",
            json!({"segment": "corpus", "limit": 121}),
        )
        .await;
    assert_eq!(tool_error(&past)["error"]["code"], "bad_request");
    let missing = person.tool("battles_meta_cards", json!({})).await;
    assert_eq!(tool_error(&missing)["error"]["code"], "bad_request");

    // containing / excluding, by id, split the decks between them
    let want = expected(&known, &all_tags(&known), SEASON_START);
    let all = all_rows(
        &person,
        "battles_meta_decks",
        "decks",
        json!({"segment": "corpus", "min_battles": 1, "limit": 50}),
    )
    .await;
    let card = all[0]["cards"][0]["id"].as_i64().unwrap();
    let holding = |d: &Value| {
        d["cards"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == card)
    };
    let with = all_rows(
        &person,
        "battles_meta_decks",
        "decks",
        json!({"segment": "corpus", "min_battles": 1, "limit": 50, "containing": [card]}),
    )
    .await;
    let without = all_rows(
        &person,
        "battles_meta_decks",
        "decks",
        json!({"segment": "corpus", "min_battles": 1, "limit": 50, "excluding": [card]}),
    )
    .await;
    assert!(!with.is_empty() && with.iter().all(holding));
    assert!(without.iter().all(|d| !holding(d)));
    assert_eq!(with.len() + without.len(), want.decks.len());
    let both = tool_error(
        &call(json!({"segment": "corpus", "containing": [card], "excluding": [card]})).await,
    );
    assert_eq!(both["error"]["code"], "bad_request");
    // a name needs the catalogue, which this record has not read
    let by_name = tool_error(&call(json!({"segment": "corpus", "containing": ["Knight"]})).await);
    assert_eq!(by_name["error"]["code"], "not_found");

    // min_players: a deck one player used is left out, and counted as such
    let body = success(
        &call(json!({"segment": "corpus", "min_battles": 1, "min_players": 2, "limit": 50})).await,
    );
    let solo = want.decks.values().filter(|d| d.players.len() < 2).count();
    assert_eq!(body["excluded"]["below_min_players"], solo);
    assert_eq!(body["total"], want.decks.len() - solo);

    // a window of days, and every mode
    let body = success(
        &call(json!({"segment": "corpus", "days": 7, "mode": "all", "min_battles": 1})).await,
    );
    assert_eq!(body["applied"]["window"]["source"], "argument");
    assert_eq!(body["applied"]["mode"], "all");
    let week: BTreeSet<&str> = known
        .logs
        .iter()
        .flat_map(|(_, l)| l.iter())
        .filter(|b| b.battle_time.as_millisecond() >= T0 - 7 * 86_400_000)
        .map(|b| b.battle_id.as_str())
        .collect();
    assert_eq!(body["population"]["battles_in_window"], week.len());
    let refused =
        tool_error(&call(json!({"segment": "corpus", "days": 7, "season": "current"})).await);
    assert_eq!(refused["error"]["code"], "bad_request");
    // the previous season has no battles of this world before 2025-11-26
    let body = success(&call(json!({"segment": "corpus", "season": "previous"})).await);
    assert_eq!(body["applied"]["window"]["season"]["month"], "2025-11");
}

async fn a_spent_budget_is_a_refunded_query_timeout(url: &str) {
    let server = spawn_with(
        url,
        Options {
            heavy_query_budget: Duration::from_micros(50),
            ..Options::default()
        },
    )
    .await;
    record(&server.store, 3, 8).await;
    let person = server.person();
    let before = success(&person.tool("game_clock", json!({})).await);
    let used = before["meta"]["quota"]["calls"]["used"].as_i64().unwrap();
    for tool in ["battles_meta_decks", "battles_meta_cards"] {
        let e = tool_error(&person.tool(tool, json!({"segment": "corpus"})).await);
        assert_eq!(e["error"]["code"], "query_timeout", "{e}");
        assert_eq!(e["error"]["class"], "retry");
        assert_eq!(e["error"]["retry_after_s"], 30);
        assert!(
            e["error"]["hint"].as_str().unwrap().contains("\"days\""),
            "{e}"
        );
        // billed at the gate (its quota snapshot counts it), then refunded: each timeout
        // sees the same count, one above the last charged call
        assert_eq!(e["meta"]["quota"]["calls"]["used"], used + 1, "{tool}");
    }
    // the two timeouts left nothing behind: the next call is the only one counted
    let after = success(&person.tool("game_clock", json!({})).await);
    assert_eq!(after["meta"]["quota"]["calls"]["used"], used + 1);
}

on_both_backends!(
    corpus_decks_and_cards_match_the_world,
    segments_count_their_own_players,
    bounds_filters_and_windows,
    a_spent_budget_is_a_refunded_query_timeout,
);
