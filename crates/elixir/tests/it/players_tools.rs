//! The Players tools over the doors, on both backends, against a generated world whose every
//! battle the test knows: a player's battle log read every two hours for ten days (an
//! eight-hour stretch lost and recorded as a coverage gap) and two profile reads. Summary
//! STATS, war and trophies are recomputed here from the world, the timeline's days checked
//! against the world's battles and the gap, the profile and collection against the rendered
//! profile; plus defaults, every bound and one past it, no_subject and not_recorded.

use std::collections::BTreeSet;

use elixir::model::{ClanRow, CoverageGap, MemberSeen};
use elixir::recorder::ingest;
use elixir::store::SharedStore;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::{Battle, Tag};
use serde_json::{Value, json};
use testkit::cr_api::{self, BattleType, Outcome, World, WorldConfig};

use crate::on_both_backends;
use crate::support::{T0, spawn, success, tool_error};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
/// A tag nothing records.
const STRANGER: &str = "#2PP";
const CLAN: &str = "#9YJUPU9LY";

/// A recorded player of a generated world, and what the record holds of them.
pub struct Recorded {
    pub world: World,
    pub player: u32,
    pub tag: String,
    pub name: String,
    /// The lost stretch (exclusive bounds), stored as a `battle_count` gap.
    pub gap: (i64, i64),
    /// Battle-log read instants, oldest first.
    pub reads: Vec<i64>,
    /// The oldest battle of the first read.
    pub first_oldest: i64,
    /// The profile of the last profile read.
    pub profile: Value,
    /// Every profile read: when, and the rendered profile.
    pub profiles: Vec<(i64, Value)>,
}

impl Recorded {
    /// Indices of the player's recorded battles in `[from, to)`.
    pub fn kept(&self, from: i64, to: i64) -> Vec<u32> {
        let last = *self.reads.last().unwrap();
        self.world
            .battles_of(self.player)
            .iter()
            .copied()
            .filter(|&b| {
                let t = self.world.battles()[b as usize].time_millis();
                t >= from
                    && t < to
                    && t < last
                    && t >= self.first_oldest
                    && !(self.gap.0 < t && t < self.gap.1)
            })
            .collect()
    }
}

/// Records the most active player of a ten-day world ending at [`T0`] into `store`.
pub async fn record_world(store: &SharedStore) -> Recorded {
    let world = World::generate(WorldConfig::new(11, 8, 10, T0)).unwrap();
    let player = (0..world.players().len() as u32)
        .max_by_key(|&p| world.battles_of(p).len())
        .unwrap();
    let tag = world.players()[player as usize].tag.clone();
    let subject = Tag::parse(&tag).unwrap();
    let start = world.config().start_millis();
    let gap = (start + 4 * DAY + HOUR, start + 4 * DAY + 9 * HOUR);
    let mut reads = Vec::new();
    let mut first_oldest = None;
    let mut at = start + 2 * HOUR;
    while at <= T0 {
        let payload = cr_api::render::battlelog_json(&world, player, at).to_string();
        let log = Battle::from_battlelog(payload.as_bytes()).unwrap();
        assert!(log.rejected.is_empty());
        let battles: Vec<Battle> = log
            .battles
            .into_iter()
            .filter(|b| {
                let t = b.battle_time.as_millisecond();
                !(gap.0 < t && t < gap.1)
            })
            .collect();
        if first_oldest.is_none() {
            first_oldest = battles.iter().map(|b| b.battle_time.as_millisecond()).min();
        }
        let rows = ingest::new_battles(&subject, &battles).unwrap();
        let name = ingest::observer_name(&subject, &battles).map(str::to_owned);
        store
            .ingest_battles(&tag, name.as_deref(), at, &rows)
            .await
            .unwrap();
        reads.push(at);
        at += 2 * HOUR;
    }
    store
        .add_gap(&CoverageGap {
            subject: tag.clone(),
            from_at: gap.0,
            to_at: gap.1,
            reason: "battle_count".into(),
            detected_at: gap.1,
        })
        .await
        .unwrap();
    let mut profile = Value::Null;
    let mut profiles = Vec::new();
    for observed in [start + DAY + HOUR, T0 - HOUR] {
        profile = cr_api::render::player_json(&world, player, observed).unwrap();
        profiles.push((observed, profile.clone()));
        let read = PlayerProfile::from_upstream(profile.to_string().as_bytes()).unwrap();
        let (row, snapshot) = ingest::player_rows(&read.profile, observed).unwrap();
        store.put_player(&row, &snapshot).await.unwrap();
    }
    let name = profile["name"].as_str().unwrap().to_owned();
    Recorded {
        world,
        player,
        tag,
        name,
        gap,
        reads,
        first_oldest: first_oldest.unwrap(),
        profile,
        profiles,
    }
}

/// The mode Elixir derives from an upstream type (SURFACE §6.5), for the expected rows.
fn mode_of(kind: BattleType, per_side: usize) -> &'static str {
    match kind {
        _ if per_side == 2 => "2v2",
        BattleType::PvP => "ladder",
        BattleType::PathOfLegend => "path_of_legend",
        BattleType::RiverRacePvP => "war",
        BattleType::RiverRaceDuel | BattleType::RiverRaceDuelColosseum => "war_duel",
        BattleType::BoatBattle => "boat",
        BattleType::Friendly | BattleType::ClanMate => "friendly",
        BattleType::Tournament => "tournament",
        BattleType::Trail | BattleType::Challenge => "event",
        _ => "other",
    }
}

/// The STATS the world says `battles` make for `player`, with three-crown wins.
fn expected_stats(r: &Recorded, battles: &[u32]) -> Value {
    let (mut wins, mut losses, mut draws, mut three) = (0u64, 0u64, 0u64, 0u64);
    for &b in battles {
        let battle = &r.world.battles()[b as usize];
        match battle.outcome_for(r.player).unwrap() {
            Outcome::Win => {
                wins += 1;
                let side = battle.side_of(r.player).unwrap();
                if !battle.kind().is_duel() && battle.crowns(side) >= 3 {
                    three += 1;
                }
            }
            Outcome::Loss => losses += 1,
            Outcome::Draw => draws += 1,
        }
    }
    let decided = wins + losses;
    let rate =
        (decided > 0).then(|| ((wins as f64 / decided as f64) * 10_000.0).round() / 10_000.0);
    json!({
        "battles": battles.len(), "wins": wins, "losses": losses, "draws": draws,
        "decided_battles": decided, "win_rate": rate, "players": 1,
        "insufficient_sample": decided < 10, "three_crown_wins": three,
    })
}

fn day_label(at: i64) -> String {
    jiff::Timestamp::from_millisecond(at)
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .to_string()
}

async fn summary_counts_what_the_world_played(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let person = server.person();
    // default window: the last 30 days, every mode
    let body = success(
        &person
            .tool("players_summary", json!({"player_tag": r.tag}))
            .await,
    );
    let all = r.kept(T0 - 30 * DAY, T0);
    assert!(all.len() > 50, "a busy player: {}", all.len());
    assert_eq!(body["overall"], expected_stats(&r, &all));
    assert_eq!(body["applied"]["window"]["source"], "default");
    assert_eq!(body["applied"]["window"]["from"], "2025-12-02T00:00:00Z");
    assert_eq!(body["applied"]["window"]["partial"], true);
    assert_eq!(
        body["applied"]["window"]["covers"]["to"],
        "2026-01-01T00:00:00Z"
    );
    // the season of 2025-12 started Monday 2025-12-01 10:00Z; no roll inside the window
    assert_eq!(body["applied"]["window"]["season_age_days"], 30);
    assert!(body["applied"]["window"].get("crosses").is_none());
    assert_eq!(body["applied"]["mode"], "all");
    assert!(
        body["meta"]["completeness_note"]
            .as_str()
            .unwrap()
            .contains("gap")
    );
    assert_eq!(body["meta"]["timezone_applied"], "UTC");
    assert_eq!(body["meta"]["recorded_since"].as_str().unwrap().len(), 20);
    // by_mode rows add up to the world's per-mode counts
    for row in body["by_mode"].as_array().unwrap() {
        let mode = row["mode"].as_str().unwrap();
        let of_mode: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&b| {
                let battle = &r.world.battles()[b as usize];
                mode_of(battle.kind(), battle.per_side()) == mode
            })
            .collect();
        let mut expected = expected_stats(&r, &of_mode);
        expected.as_object_mut().unwrap().remove("three_crown_wins");
        expected["mode"] = json!(mode);
        assert_eq!(row, &expected, "{mode}");
    }
    let modes: u64 = body["by_mode"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["battles"].as_u64().unwrap())
        .sum();
    assert_eq!(modes, all.len() as u64);
    // war: the fake's own fame rule over the recorded stretches (the gap's battles are lost)
    let start = r.world.config().start_millis();
    let last = *r.reads.last().unwrap();
    let a = cr_api::render::war_tally(&r.world, r.player, start, r.gap.0 + 1);
    let b = cr_api::render::war_tally(&r.world, r.player, r.gap.1, last);
    assert_eq!(
        body["war"],
        json!({"decks_used": a.decks_used + b.decks_used, "points": a.fame + b.fame})
    );
    // active days and the last battle
    let days: BTreeSet<String> = all
        .iter()
        .map(|&b| day_label(r.world.battles()[b as usize].time_millis()))
        .collect();
    assert_eq!(body["active_days"], days.len());
    let newest = r.world.battles()[*all.last().unwrap() as usize].time_millis();
    assert_eq!(body["last_battle_at"], elixir::domain::iso(newest).as_str());
    // trophies: every sighting in the window — ladder battles' starting trophies and their
    // result, and the two profile reads — gives start, end and best
    let mut sightings: Vec<(i64, i64)> = r
        .profiles
        .iter()
        .map(|(at, p)| (*at, p["trophies"].as_i64().unwrap()))
        .collect();
    for &b in &all {
        let battle = &r.world.battles()[b as usize];
        if battle.kind() != BattleType::PvP {
            continue;
        }
        let side = battle.side_of(r.player).unwrap();
        let me = battle
            .side(side)
            .iter()
            .find(|p| p.player() == Some(r.player))
            .unwrap();
        let Some(start) = me.starting_trophies() else {
            continue;
        };
        sightings.push((battle.time_millis(), i64::from(start)));
        if let Some(change) = me.trophy_change() {
            sightings.push((
                battle.time_millis() + 1,
                i64::from(start) + i64::from(change),
            ));
        }
    }
    sightings.sort();
    let (first, last_seen) = (sightings[0].1, sightings.last().unwrap().1);
    assert_eq!(
        body["trophies"],
        json!({"start": first, "end": last_seen, "change": last_seen - first,
               "best": sightings.iter().map(|s| s.1).max()})
    );
    // top decks: at most three, most games first, each a STATS row with cards
    let decks = body["top_decks"].as_array().unwrap();
    assert!(!decks.is_empty() && decks.len() <= 3);
    for pair in decks.windows(2) {
        assert!(pair[0]["battles"].as_u64() >= pair[1]["battles"].as_u64());
    }
    assert_eq!(decks[0]["deck_hash"].as_str().unwrap().len(), 64);
    assert!(!decks[0]["cards"].as_array().unwrap().is_empty());

    // a dated window after the gap, one mode: nothing missing, no completeness note
    let from = r.gap.1 + DAY;
    let from_day = day_label(from);
    let to_day = day_label(last - DAY);
    let ladder_only = success(
        &person
            .tool(
                "players_summary",
                json!({"player_tag": r.tag, "from": from_day, "to": to_day, "mode": "ladder"}),
            )
            .await,
    );
    let lo = jiff::civil::Date::strptime("%Y-%m-%d", &from_day)
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
        .as_millisecond();
    let hi = jiff::civil::Date::strptime("%Y-%m-%d", &to_day)
        .unwrap()
        .tomorrow()
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
        .as_millisecond();
    let window_ladder: Vec<u32> = r
        .kept(lo, hi)
        .into_iter()
        .filter(|&b| r.world.battles()[b as usize].kind() == BattleType::PvP)
        .collect();
    assert_eq!(ladder_only["overall"], expected_stats(&r, &window_ladder));
    assert_eq!(ladder_only["applied"]["window"]["source"], "argument");
    assert_eq!(ladder_only["applied"]["mode"], "ladder");
    assert!(ladder_only["meta"].get("completeness_note").is_none());
    assert!(ladder_only["applied"]["window"].get("partial").is_none());
    // the bad inputs
    for (args, code) in [
        (
            json!({"player_tag": r.tag, "mode": "ranked"}),
            "bad_request",
        ),
        (json!({"player_tag": r.tag, "days": 731}), "bad_request"),
        (json!({"player_tag": r.tag, "days": 0}), "bad_request"),
        (
            json!({"player_tag": r.tag, "days": 3, "weeks": 1}),
            "bad_request",
        ),
        (
            json!({"player_tag": r.tag, "from": "2026-01-02", "to": "2026-01-01"}),
            "bad_request",
        ),
        (
            json!({"player_tag": r.tag, "timezone": "Mars/Base"}),
            "bad_request",
        ),
        (json!({"player_tag": ""}), "bad_request"),
        (json!({"player_tag": "#ABC"}), "invalid_tag"),
        (json!({}), "no_subject"),
        (json!({"player_tag": STRANGER}), "not_recorded"),
    ] {
        let e = tool_error(&person.tool("players_summary", args.clone()).await);
        assert_eq!(e["error"]["code"], code, "{args}");
    }
    let longest = success(
        &person
            .tool("players_summary", json!({"player_tag": r.tag, "days": 730}))
            .await,
    );
    assert_eq!(longest["overall"]["battles"], all.len());
    let crosses = longest["applied"]["window"]["crosses"].as_array().unwrap();
    assert_eq!(crosses.len(), 23, "two years of season rolls");
    assert_eq!(crosses.last().unwrap()["to_season"], "2025-12");
}

async fn timeline_days_are_local_and_never_zero_filled(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let person = server.person();
    let body = success(
        &person
            .tool(
                "players_timeline",
                json!({"player_tag": r.tag, "metrics": ["battles", "wins", "losses", "trophies"]}),
            )
            .await,
    );
    let series = body["series"].as_array().unwrap();
    assert_eq!(body["applied"]["limit"], 120);
    assert_eq!(series.first().unwrap()["day"], "2025-12-03");
    assert_eq!(series.last().unwrap()["day"], "2025-12-31");
    let gap_day = day_label(r.gap.0 + 1);
    let start_day = day_label(r.first_oldest);
    let start = r.world.config().start_millis();
    for item in series {
        let day = item["day"].as_str().unwrap();
        let day_from = jiff::civil::Date::strptime("%Y-%m-%d", day)
            .unwrap()
            .to_zoned(jiff::tz::TimeZone::UTC)
            .unwrap()
            .timestamp()
            .as_millisecond();
        let values = &item["values"];
        if day_from + DAY <= start {
            // before the record: unknown, never 0
            assert_eq!(values["battles"], Value::Null, "{day}");
            assert_eq!(item["complete"], false, "{day}");
            continue;
        }
        let kept = r.kept(day_from, day_from + DAY);
        assert_eq!(values["battles"], kept.len(), "{day}");
        let wins = kept
            .iter()
            .filter(|&&b| r.world.battles()[b as usize].outcome_for(r.player) == Some(Outcome::Win))
            .count();
        assert_eq!(values["wins"], wins, "{day}");
        let expected_complete = day != gap_day && day != start_day;
        assert_eq!(item["complete"], expected_complete, "{day}");
    }
    // the two profile reads are the only days with trophies
    let with_trophies: Vec<&str> = series
        .iter()
        .filter(|i| !i["values"]["trophies"].is_null())
        .map(|i| i["day"].as_str().unwrap())
        .collect();
    assert_eq!(
        with_trophies,
        [day_label(start + DAY + HOUR), day_label(T0 - HOUR)]
    );
    // the default metrics and limits at their bounds
    let defaults = success(
        &person
            .tool("players_timeline", json!({"player_tag": r.tag, "limit": 1}))
            .await,
    );
    let only = defaults["series"].as_array().unwrap();
    assert_eq!(only.len(), 1);
    let keys: BTreeSet<&str> = only[0]["values"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from(["best_trophies", "pol_league", "pol_trophies", "trophies"])
    );
    assert!(defaults["notes"][0].as_str().unwrap().contains("newest 1"));
    let wide = success(
        &person
            .tool(
                "players_timeline",
                json!({"player_tag": r.tag, "limit": 400, "days": 400, "metrics": ["battles"]}),
            )
            .await,
    );
    assert_eq!(wide["series"].as_array().unwrap().len(), 400);
    // every metric over 400 days is past the result cap: refused whole, never sliced
    let all_metrics = json!([
        "trophies",
        "best_trophies",
        "pol_league",
        "pol_trophies",
        "battles",
        "wins",
        "losses",
        "king_tower_level",
        "collection_level",
        "donations"
    ]);
    let too_large = tool_error(
        &person
            .tool(
                "players_timeline",
                json!({"player_tag": r.tag, "limit": 400, "days": 400, "metrics": all_metrics}),
            )
            .await,
    );
    assert_eq!(too_large["error"]["code"], "result_too_large");
    let ten = success(
        &person
            .tool(
                "players_timeline",
                json!({"player_tag": r.tag, "days": 7, "metrics": all_metrics}),
            )
            .await,
    );
    assert_eq!(ten["series"][0]["values"].as_object().unwrap().len(), 10);
    for (args, code) in [
        (json!({"player_tag": r.tag, "limit": 0}), "bad_request"),
        (json!({"player_tag": r.tag, "limit": 401}), "bad_request"),
        (json!({"player_tag": r.tag, "metrics": []}), "bad_request"),
        (
            json!({"player_tag": r.tag, "metrics": ["elo"]}),
            "bad_request",
        ),
        (
            json!({"player_tag": r.tag, "metrics": ["wins", "wins"]}),
            "bad_request",
        ),
        (
            json!({"player_tag": r.tag, "metrics": ["trophies", "best_trophies", "pol_league",
                "pol_trophies", "battles", "wins", "losses", "king_tower_level",
                "collection_level", "donations", "trophies"]}),
            "bad_request",
        ),
        (json!({}), "no_subject"),
        (json!({"player_tag": STRANGER}), "not_recorded"),
    ] {
        let e = tool_error(&person.tool("players_timeline", args.clone()).await);
        assert_eq!(e["error"]["code"], code, "{args}");
    }
    // another zone moves the day boundaries
    let tokyo = success(
        &person
            .tool(
                "players_timeline",
                json!({"player_tag": r.tag, "timezone": "Asia/Tokyo", "days": 2, "metrics": ["battles"]}),
            )
            .await,
    );
    assert_eq!(tokyo["applied"]["window"]["timezone"], "Asia/Tokyo");
    assert_eq!(tokyo["meta"]["timezone_applied"], "Asia/Tokyo");
    assert_eq!(tokyo["series"][0]["day"], "2025-12-30");
}

async fn profile_and_collection_show_the_last_read(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    for kind in elixir::access::kinds::Kind::ALL {
        let client = server.client(kind);
        let body = success(
            &client
                .tool("players_profile", json!({"player_tag": r.tag}))
                .await,
        );
        let p = &body["player"];
        assert_eq!(p["tag"], r.tag.as_str());
        assert_eq!(p["name"], r.name.as_str());
        assert_eq!(p["trophies"], r.profile["trophies"]);
        assert_eq!(p["best_trophies"], r.profile["bestTrophies"]);
        assert_eq!(p["wins"], r.profile["wins"]);
        assert_eq!(p["battle_count"], r.profile["battleCount"]);
        assert_eq!(p["donations"]["given"], r.profile["donations"]);
        assert_eq!(p["current_deck"]["snapshot"], true);
        assert_eq!(p["current_deck"]["cards"].as_array().unwrap().len(), 8);
        assert_eq!(body["recording"]["state"], "paused");
        assert_eq!(body["observed_at"], elixir::domain::iso(T0 - HOUR).as_str());
        assert_eq!(
            body["meta"]["source_polls"]["player"],
            Value::Null,
            "no schedule row: never polled by the recorder"
        );
    }
    let person = server.person();
    let full = success(
        &person
            .tool("players_collection", json!({"player_tag": r.tag}))
            .await,
    );
    let cards = full["cards"].as_array().unwrap();
    assert_eq!(cards.len(), r.profile["cards"].as_array().unwrap().len());
    assert_eq!(full["summary"]["cards_owned"], cards.len());
    assert_eq!(
        full["summary"]["cards_total"],
        Value::Null,
        "catalogue never read"
    );
    let by_rarity: u64 = full["summary"]["by_rarity"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_rarity, cards.len() as u64);
    let evolutions = r.profile["cards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["evolutionLevel"].as_i64().unwrap_or(0) & 1 == 1)
        .count();
    assert_eq!(full["summary"]["evolutions_unlocked"], evolutions);
    for key in ["name", "rarity", "kind", "max_level", "count", "elixir"] {
        assert!(cards[0].get(key).is_some(), "{key}");
    }
    assert_eq!(full["applied"]["verbosity"], "full");
    let compact = success(
        &person
            .tool(
                "players_collection",
                json!({"player_tag": r.tag, "verbosity": "compact"}),
            )
            .await,
    );
    let first = compact["cards"][0].as_object().unwrap();
    let keys: BTreeSet<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["forms_unlocked", "id", "level"]));
    assert_eq!(compact["cards"][0]["id"], full["cards"][0]["id"]);
    assert_eq!(compact["applied"]["verbosity"], "compact");
    for tool in ["players_profile", "players_collection"] {
        let none = tool_error(&person.tool(tool, json!({})).await);
        assert_eq!(none["error"]["code"], "no_subject", "{tool}");
        assert!(
            none["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("elixir_track_player")
        );
        let stranger = tool_error(&person.tool(tool, json!({"player_tag": STRANGER})).await);
        assert_eq!(stranger["error"]["code"], "not_recorded", "{tool}");
        let agent = tool_error(&server.agent().tool(tool, json!({})).await);
        assert_eq!(agent["error"]["code"], "no_subject", "{tool}");
        assert!(
            agent["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("elixir_identify")
        );
    }
    // the primary is the default subject
    success(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": r.tag, "relationship": "primary"}),
            )
            .await,
    );
    let mine = success(&person.tool("players_profile", json!({})).await);
    assert_eq!(mine["player"]["tag"], r.tag.as_str());
    assert_eq!(mine["recording"]["state"], "active");
}

async fn search_ranks_nicknames_first(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let person = server.person();
    let part: String = r.name.chars().take(3).collect();
    let body = success(
        &person
            .tool("players_search", json!({"query": part.to_lowercase()}))
            .await,
    );
    let matches = body["matches"].as_array().unwrap();
    assert_eq!(matches[0]["tag"], r.tag.as_str());
    assert_eq!(matches[0]["why"], "recorded");
    assert!(matches[0]["last_seen_at"].is_string());
    assert_eq!(body["applied"]["limit"], 10);
    // a nickname outranks the name; a tracked player outranks a recorded one
    success(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": r.tag, "nickname": "Zorro the Bold"}),
            )
            .await,
    );
    let nick = success(
        &person
            .tool("players_search", json!({"query": "zorro"}))
            .await,
    );
    assert_eq!(nick["matches"][0]["tag"], r.tag.as_str());
    assert_eq!(nick["matches"][0]["why"], "nickname");
    assert_eq!(nick["matches"][0]["name"], r.name.as_str());
    success(
        &person
            .tool("elixir_track_player", json!({"player_tag": r.tag}))
            .await,
    );
    let tracked = success(&person.tool("players_search", json!({"query": part})).await);
    assert_eq!(tracked["matches"][0]["why"], "tracked");
    let none = success(
        &person
            .tool("players_search", json!({"query": "qqqzzz"}))
            .await,
    );
    assert_eq!(none["matches"], json!([]));
    assert_eq!(none["notes"].as_array().unwrap().len(), 1);
    let forty = "q".repeat(40);
    success(
        &person
            .tool("players_search", json!({"query": forty, "limit": 25}))
            .await,
    );
    let one = success(
        &person
            .tool("players_search", json!({"query": part, "limit": 1}))
            .await,
    );
    assert_eq!(one["matches"].as_array().unwrap().len(), 1);
    for args in [
        json!({}),
        json!({"query": "a"}),
        json!({"query": " a "}),
        json!({"query": "q".repeat(41)}),
        json!({"query": "ab", "limit": 0}),
        json!({"query": "ab", "limit": 26}),
        json!({"query": "ab", "player_tag": r.tag}),
    ] {
        let e = tool_error(&person.tool("players_search", args.clone()).await);
        assert_eq!(e["error"]["code"], "bad_request", "{args}");
    }
}

async fn agent_doors_answer_for_on_behalf_of(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    server
        .store
        .set_agent_clan(server.agent.agent.id, Some(CLAN))
        .await
        .unwrap();
    server
        .store
        .put_clan(
            &ClanRow {
                tag: CLAN.into(),
                name: "Kings".into(),
                profile: None,
                observed_at: Some(T0),
                first_seen_at: T0,
            },
            &[MemberSeen {
                player_tag: r.tag.clone(),
                name: r.name.clone(),
                role: Some("elder".into()),
                last_seen_at: None,
            }],
            T0,
        )
        .await
        .unwrap();
    let agent = server.agent();
    success(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": r.tag}),
            )
            .await,
    );
    let mine = success(
        &agent
            .tool("players_summary", json!({"on_behalf_of": "u1"}))
            .await,
    );
    assert_eq!(
        mine["overall"],
        expected_stats(&r, &r.kept(T0 - 30 * DAY, T0))
    );
    let profile = success(
        &agent
            .tool("players_profile", json!({"on_behalf_of": "u1"}))
            .await,
    );
    assert_eq!(profile["player"]["tag"], r.tag.as_str());
    let unbound = tool_error(
        &agent
            .tool("players_profile", json!({"on_behalf_of": "u2"}))
            .await,
    );
    assert_eq!(unbound["error"]["code"], "no_subject");
    let named = tool_error(
        &agent
            .tool(
                "players_timeline",
                json!({"on_behalf_of": "u2", "display_name": format!(" {} ", r.name.to_uppercase())}),
            )
            .await,
    );
    assert_eq!(named["error"]["code"], "no_subject");
    assert_eq!(named["error"]["candidates"][0]["tag"], r.tag.as_str());
    let lonely = tool_error(
        &agent
            .tool("players_collection", json!({"display_name": "Ann"}))
            .await,
    );
    assert_eq!(lonely["error"]["code"], "bad_request");
    // the door clan's members are clanmates
    let part: String = r.name.chars().take(3).collect();
    let found = success(&agent.tool("players_search", json!({"query": part})).await);
    assert_eq!(found["matches"][0]["why"], "clanmate");
    // the person door drops on_behalf_of with a note
    let person = success(
        &server
            .person()
            .tool(
                "players_profile",
                json!({"player_tag": r.tag, "on_behalf_of": "u1"}),
            )
            .await,
    );
    assert!(
        person["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("on_behalf_of was ignored"))
    );
}

async fn a_player_seen_only_in_battle_logs(url: &str) {
    let server = spawn(url).await;
    let world = World::generate(WorldConfig::new(5, 4, 3, T0)).unwrap();
    let player = (0..world.players().len() as u32)
        .max_by_key(|&p| world.battles_of(p).len())
        .unwrap();
    let tag = world.players()[player as usize].tag.clone();
    let subject = Tag::parse(&tag).unwrap();
    let payload = cr_api::render::battlelog_json(&world, player, T0).to_string();
    let battles = Battle::from_battlelog(payload.as_bytes()).unwrap().battles;
    let rows = ingest::new_battles(&subject, &battles).unwrap();
    let name = ingest::observer_name(&subject, &battles)
        .unwrap()
        .to_owned();
    server
        .store
        .ingest_battles(&tag, Some(&name), T0, &rows)
        .await
        .unwrap();
    let person = server.person();
    let profile = success(
        &person
            .tool("players_profile", json!({"player_tag": tag}))
            .await,
    );
    assert_eq!(profile["player"]["name"], name.as_str());
    assert_eq!(profile["player"]["trophies"], Value::Null);
    assert_eq!(profile["player"]["current_deck"], Value::Null);
    assert_eq!(profile["observed_at"], Value::Null);
    assert!(
        profile["notes"][0]
            .as_str()
            .unwrap()
            .contains("not been read")
    );
    let newest = battles.iter().map(|b| b.battle_time).max().unwrap();
    assert_eq!(
        profile["recording"]["last_battle_at"],
        elixir_record::time::iso(newest).as_str()
    );
    let collection = tool_error(
        &person
            .tool("players_collection", json!({"player_tag": tag}))
            .await,
    );
    assert_eq!(collection["error"]["code"], "not_recorded");
    // one read: the whole log is its first read, measured back to its oldest battle
    let summary = success(
        &person
            .tool("players_summary", json!({"player_tag": tag}))
            .await,
    );
    assert_eq!(summary["overall"]["battles"], battles.len());
    assert_eq!(
        summary["trophies"]["start"].is_null(),
        !battles
            .iter()
            .any(|b| b.mode == elixir_record::Mode::Ladder)
    );
}

on_both_backends!(
    agent_doors_answer_for_on_behalf_of,
    a_player_seen_only_in_battle_logs,
    summary_counts_what_the_world_played,
    timeline_days_are_local_and_never_zero_filled,
    profile_and_collection_show_the_last_read,
    search_ranks_nicknames_first,
);
