//! The Players group (SURFACE §2.3): `players_profile`, `players_summary`, `players_timeline`,
//! `players_collection` and `players_search`, each about one player (you when no tag is given,
//! resolved by `tools::subject`), answered from Elixir's record: the stored profile, the
//! recorded battles (STATS by `elixir_record::stats`) and the profile snapshots. Coverage
//! (measured spans, `complete`, `completeness_note`) is `tools::service`'s; the daily series
//! is `players_timeline`'s and the name search `players_search`'s; the live lane is not part
//! of this file.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use elixir_record::battle::Form;
use elixir_record::normalize::player::{CollectionCard, PlayerProfile};
use elixir_record::stats::{Accumulator, RowKind};
use elixir_record::time;
use elixir_record::window;
use elixir_record::{Battle, BattleCard, Mode, Outcome, Side};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{Fail, Outcome as ToolOutcome, Success, ToolCtx, handler};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, SCOPE_READ, ToolSpec};
use crate::model::{PlayerRow, PollEndpoint, RecordedBattle};
use crate::recorder::live::LiveStatus;
use crate::store::BattleQuery;
use crate::tools::service;
use crate::tools::subject::{
    PlayerFacts, go_live, live_pending, recorded, recording, resolve_player,
};
use crate::tools::{players_search, players_timeline};

/// War points per battle as the game awards them: a war battle won or lost, a duel round won
/// or lost, a boat attack won or lost.
pub const WAR_POINTS: [(u64, u64); 3] = [(200, 100), (250, 100), (125, 75)];

/// The Player tools of this build.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        profile(),
        summary(),
        players_timeline::timeline(),
        collection(),
        players_search::search(),
    ]
}

pub(crate) fn instant(description: &str) -> Value {
    json!({"type": ["string", "null"], "description": description})
}

/// The stored profile of a player, parsed.
fn stored_profile(row: Option<&PlayerRow>) -> Result<Option<PlayerProfile>, Fail> {
    match row.and_then(|r| r.profile.as_deref()) {
        None => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| Fail::Internal(format!("stored profile: {e}"))),
    }
}

pub(crate) fn card_json(card: &BattleCard) -> Value {
    json!({
        "id": card.id,
        "name": card.name,
        "level": card.level,
        "form": card.form,
        "elixir": card.elixir,
    })
}

fn league(result: Option<&elixir_record::normalize::player::LeagueResult>) -> Value {
    match result {
        Some(l) => {
            json!({"league_number": l.league_number, "trophies": l.trophies, "rank": l.rank})
        }
        None => Value::Null,
    }
}

// ---- players_profile ----

fn profile() -> ToolSpec {
    ToolSpec {
        name: "players_profile",
        group: Group::Players,
        title: "Player profile",
        description: "Player tool: a player's current profile as Elixir last read it (you when no tag is given): name, king tower level, trophies and best, arena, clan and role, Path of Legend (current, last, best), counters (wins, losses, battles, three-crown wins, war day wins, donations, collection level, star points, streak), current deck and favourite card, with the recording state and when it was observed. live:true reads the API first when the record is older than its cache.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::L, Flag::O],
        params: {
            let mut params = blocks::player_params();
            params.push(blocks::live_param());
            params
        },
        compact_drops: None,
        output: vec![
            ("live_status", shape::live_status("With live: {state fresh, observed_at}, {state pending, retry_after_s, observed_at} or {state unavailable, reason, resets_at?}."), false),
            ("player", shape::object("{tag, name, king_tower_level, trophies, best_trophies, arena, clan {tag, name, role}?, path_of_legend {current, last, best}?, wins, losses, battle_count, three_crown_wins, war_day_wins, donations {given, received, total}, collection_level, star_points, current_streak, current_deck {deck_hash, cards[], tower_troop, snapshot}?, favourite_card?}; null fields before the first profile read.", &["tag", "name", "king_tower_level", "trophies", "best_trophies", "wins", "losses", "battle_count"]), true),
            ("recording", shape::object("{state active|paused|held, since, last_battle_at}.", &["state", "since", "last_battle_at"]), true),
            ("observed_at", instant("When the profile was read; null before the first read."), true),
        ],
        docs: "tools-players#players-profile".into(),
        too_large_hint: "Report meta.request_id with elixir_feedback.".into(),
        handler: handler(profile_call),
    }
}

/// `recording` as the Player tools show it: the battle log's schedule, `paused` without one.
fn recording_state(facts: &PlayerFacts, now: Millis) -> Value {
    let last_battle = facts
        .span
        .map(|s| s.1)
        .or(facts.row.as_ref().and_then(|r| r.last_battle_at));
    match recording(&facts.polls, PollEndpoint::Battlelog, now) {
        Some(r) => {
            json!({"state": r["state"], "since": r["since"], "last_battle_at": last_battle.map(iso)})
        }
        None => json!({"state": "paused", "since": null, "last_battle_at": last_battle.map(iso)}),
    }
}

/// The subject of an L tool: with `live`, the record is made live first (§4.4) and read after;
/// no record at all is `live_pending` while the read is under way.
pub(crate) async fn live_subject(
    ctx: &ToolCtx,
    a: &Map<String, Value>,
    endpoint: PollEndpoint,
) -> Result<(PlayerFacts, Option<LiveStatus>), Fail> {
    if !blocks::live(a) {
        return recorded(ctx, a).await.map(|f| (f, None));
    }
    let arg = blocks::player(a, ctx.caller.kind)?;
    let tag = resolve_player(ctx, &arg).await?;
    let before = PlayerFacts::read(ctx, &tag).await?;
    let observed = before.observed(ctx, endpoint).await?;
    let status = go_live(ctx, &tag, endpoint, observed).await?;
    let facts = PlayerFacts::read(ctx, &tag).await?;
    if !facts.is_recorded() {
        return Err(match &status {
            LiveStatus::Pending { retry_after_s, .. } => live_pending(&tag, *retry_after_s),
            _ => facts.not_recorded(),
        });
    }
    Ok((facts, Some(status)))
}

async fn profile_call(ctx: ToolCtx, a: Map<String, Value>) -> ToolOutcome {
    let (facts, live) = live_subject(&ctx, &a, PollEndpoint::Player).await?;
    let now = ctx.services.now();
    let row = facts.row.as_ref();
    let profile = stored_profile(row)?;
    let tag = facts.tag.to_string();
    let player = match &profile {
        Some(p) => {
            let pol = &p.path_of_legend;
            let path = if pol.current.is_none() && pol.last.is_none() && pol.best.is_none() {
                Value::Null
            } else {
                json!({
                    "current": league(pol.current.as_ref()),
                    "last": league(pol.last.as_ref()),
                    "best": league(pol.best.as_ref()),
                })
            };
            json!({
                "tag": tag,
                "name": p.name,
                "king_tower_level": p.king_tower_level,
                "trophies": p.trophies,
                "best_trophies": p.best_trophies,
                "arena": p.arena.as_ref().map(|a| json!({"id": a.id, "name": a.name})),
                "clan": p.clan.as_ref().map(|c| json!({"tag": c.tag.to_string(), "name": c.name, "role": c.role})),
                "path_of_legend": path,
                "wins": p.wins,
                "losses": p.losses,
                "battle_count": p.battle_count,
                "three_crown_wins": p.three_crown_wins,
                "war_day_wins": p.war_day_wins,
                "donations": {"given": p.donations.given, "received": p.donations.received, "total": p.donations.total},
                "collection_level": p.collection_level,
                "star_points": p.star_points,
                "current_streak": p.current_streak,
                "current_deck": p.current_deck.as_ref().map(|d| json!({
                    "deck_hash": d.deck_hash,
                    "cards": d.cards.iter().map(card_json).collect::<Vec<_>>(),
                    "tower_troop": d.tower_troop.as_ref().map(card_json),
                    "snapshot": true,
                })),
                "favourite_card": p.favourite_card.as_ref().map(|f| json!({"id": f.id, "name": f.name, "elixir": f.elixir})),
            })
        }
        None => json!({
            "tag": tag,
            "name": row.map(|r| r.name.clone()),
            "king_tower_level": null, "trophies": row.and_then(|r| r.trophies),
            "best_trophies": null, "arena": null,
            "clan": row.and_then(|r| r.clan_tag.as_ref().map(|c| json!({"tag": c, "name": r.clan_name, "role": r.role}))),
            "path_of_legend": null, "wins": null, "losses": null, "battle_count": null,
            "three_crown_wins": null, "war_day_wins": null,
            "donations": {"given": null, "received": null, "total": null},
            "collection_level": null, "star_points": null, "current_streak": null,
            "current_deck": null, "favourite_card": null,
        }),
    };
    let mut success = Success::new()
        .field("player", player)
        .field("recording", recording_state(&facts, now))
        .field(
            "observed_at",
            json!(row.and_then(|r| r.observed_at).map(iso)),
        )
        .applied("verbosity", json!(args::verbosity(&a)));
    if profile.is_none() {
        success = success.note(format!(
            "{tag}'s profile has not been read yet; only what battle logs showed is filled in."
        ));
    }
    if let Some(status) = live {
        success = success.field("live_status", status.to_json());
    }
    Ok(success.metas(facts.meta(now, &[PollEndpoint::Player])))
}

// ---- players_summary ----

/// A STATS object plus `three_crown_wins`.
fn stats_schema(description: &str) -> Value {
    shape::object(
        description,
        &[
            "battles",
            "wins",
            "losses",
            "draws",
            "decided_battles",
            "win_rate",
            "players",
            "insufficient_sample",
            "three_crown_wins",
        ],
    )
}

fn summary() -> ToolSpec {
    let mut params = blocks::player_params();
    params.extend(blocks::window_params());
    params.extend(blocks::mode_params());
    ToolSpec {
        name: "players_summary",
        group: Group::Players,
        title: "Summary",
        description: "Player tool: how a player (you when no tag is given) did over a window (default the last 30 days) from the recorded battles: overall STATS with three-crown wins, per mode, trophies at the start and end with the change and best, Path of Legend leagues, the top three decks, war decks used and points, active days and the last battle. mode narrows the battles counted.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W],
        params,
        compact_drops: None,
        output: vec![
            ("overall", stats_schema("STATS {battles, wins, losses, draws, decided_battles, win_rate, players, insufficient_sample} plus three_crown_wins."), true),
            ("by_mode", shape::list("[{mode, STATS}] per mode played, most battles first.", &["mode", "battles", "wins", "losses", "win_rate"]), true),
            ("trophies", shape::object("{start, end, change, best}: ladder trophies from profile reads and ladder battles inside the window; null when none was seen.", &["start", "end", "change", "best"]), true),
            ("path_of_legend", shape::object("{league_start, league_end}: the Path of Legend league at the window's first and last sighting.", &["league_start", "league_end"]), true),
            ("top_decks", shape::list("Up to 3 [{deck_hash, cards[], STATS}], most games first (a duel round is one game).", &["deck_hash", "cards", "battles", "wins", "losses", "win_rate"]), true),
            ("war", shape::object("{decks_used, points}: from the war battles the record holds (all modes of the river race, whatever mode says).", &["decks_used", "points"]), true),
            ("active_days", json!({"type": "integer", "description": "Local days (applied timezone) with at least one counted battle."}), true),
            ("last_battle_at", instant("The newest counted battle; null when none."), true),
        ],
        docs: "tools-players#players-summary".into(),
        too_large_hint: "players_summary({\"days\": 7}) narrows the window.".into(),
        handler: handler(summary_call),
    }
}

/// The recorded battles of a player in `[from, to)`, parsed, oldest first.
async fn battles_in(
    ctx: &ToolCtx,
    player: &str,
    from: Millis,
    to: Millis,
) -> Result<Vec<(RecordedBattle, Battle)>, Fail> {
    let rows = ctx
        .services
        .store
        .battles(
            player,
            &BattleQuery {
                from: Some(from),
                to: Some(to),
                ..BattleQuery::default()
            },
        )
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows.into_iter().rev() {
        let battle: Battle = serde_json::from_str(&row.body)
            .map_err(|e| Fail::Internal(format!("stored battle {}: {e}", row.battle_id)))?;
        out.push((row, battle));
    }
    Ok(out)
}

/// War decks used and points of one battle for the player on `side` (SURFACE §2.3 `war`):
/// `None` points when the outcome the points depend on is unknown.
pub fn war_points(battle: &Battle, side: Side) -> (u64, Option<u64>) {
    let value = |outcome: Option<Outcome>, (win, loss): (u64, u64)| match outcome {
        Some(Outcome::Win) => Some(win),
        Some(_) => Some(loss),
        None => None,
    };
    match battle.mode {
        Mode::War => (1, value(battle.outcome(side), WAR_POINTS[0])),
        Mode::WarDuel => {
            let rounds = battle.round_outcomes(side);
            let points = rounds
                .iter()
                .map(|o| value(*o, WAR_POINTS[1]))
                .sum::<Option<u64>>();
            (rounds.len() as u64, points)
        }
        Mode::Boat => (1, value(battle.outcome(side), WAR_POINTS[2])),
        _ => (0, Some(0)),
    }
}

/// A time-ordered value sighting of trophies or a league.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sighting {
    at: Millis,
    value: i64,
}

fn first_last(mut points: Vec<Sighting>) -> Option<(Sighting, Sighting, i64)> {
    points.sort_by_key(|p| p.at);
    let best = points.iter().map(|p| p.value).max()?;
    Some((*points.first()?, *points.last()?, best))
}

async fn summary_call(ctx: ToolCtx, a: Map<String, Value>) -> ToolOutcome {
    let facts = recorded(&ctx, &a).await?;
    let mode = blocks::mode(&a)?;
    let rules = window::default_for("players_summary")
        .ok_or_else(|| Fail::Internal("players_summary has no window rules".into()))?;
    let now = ctx.services.now();
    let w = blocks::window(&a, &rules, &ctx.caller.timezone, now)?;
    let (from, to) = service::bounds(&w);
    let tag = facts.tag.clone();
    let subject_tag = tag.to_string();
    let battles = battles_in(&ctx, &subject_tag, from, to).await?;
    let snapshots = ctx.services.store.snapshots(&subject_tag, from, to).await?;
    let coverage = service::player_coverage(&ctx, &subject_tag, from, to).await?;
    let zone = w.zone();

    let mut overall = Accumulator::new();
    let mut by_mode: BTreeMap<&'static str, Accumulator> = BTreeMap::new();
    let mut decks: HashMap<String, (Accumulator, Vec<Value>)> = HashMap::new();
    let mut days = BTreeSet::new();
    let mut last_battle = None;
    let mut trophies = Vec::new();
    let mut leagues = Vec::new();
    let (mut decks_used, mut points, mut war_battles) = (0u64, Some(0u64), 0u64);
    for s in &snapshots {
        if let Some(t) = s.trophies {
            trophies.push(Sighting {
                at: s.observed_at,
                value: t,
            });
        }
        if let Some(l) = s.pol_league {
            leagues.push(Sighting {
                at: s.observed_at,
                value: l,
            });
        }
    }
    for (row, battle) in &battles {
        let Some(side) = battle.side_of(&tag) else {
            continue;
        };
        let me = battle.participant(&tag);
        if battle.mode == Mode::Ladder
            && let Some(start) = me.and_then(|p| p.starting_trophies)
        {
            trophies.push(Sighting {
                at: row.battle_time,
                value: start,
            });
            if let Some(change) = me.and_then(|p| p.trophy_change) {
                trophies.push(Sighting {
                    at: row.battle_time + 1,
                    value: start + change,
                });
            }
        }
        if battle.mode == Mode::PathOfLegend
            && let Some(l) = battle.league_number
        {
            leagues.push(Sighting {
                at: row.battle_time,
                value: l,
            });
        }
        if matches!(battle.mode, Mode::War | Mode::WarDuel | Mode::Boat) {
            let (used, earned) = war_points(battle, side);
            war_battles += 1;
            decks_used += used;
            points = points.zip(earned).map(|(a, b)| a + b);
        }
        if !mode.includes(battle.mode) {
            continue;
        }
        overall.add_battle(battle, &tag);
        by_mode
            .entry(battle.mode.as_str())
            .or_default()
            .add_battle(battle, &tag);
        for game in battle.games_of(&tag) {
            if let Some(hash) = game.deck_hash {
                let entry = decks.entry(hash.to_owned()).or_insert_with(|| {
                    (
                        Accumulator::new(),
                        game.cards.iter().map(card_json).collect(),
                    )
                });
                entry.0.add_game(&game, tag.as_str());
            }
        }
        if let Some(day) = time::local_date(row.battle_time, &zone) {
            days.insert(day);
        }
        last_battle = Some(row.battle_time);
    }
    let stats = |acc: &Accumulator| serde_json::to_value(acc.stats(RowKind::SinglePlayer));
    let overall_json = serde_json::to_value(overall.stats_with_three_crowns(RowKind::SinglePlayer))
        .map_err(|e| Fail::Internal(e.to_string()))?;
    let mut modes: Vec<(&str, Accumulator)> = by_mode.into_iter().collect();
    modes.sort_by(|a, b| {
        b.1.stats(RowKind::SinglePlayer)
            .battles
            .cmp(&a.1.stats(RowKind::SinglePlayer).battles)
            .then(a.0.cmp(b.0))
    });
    let mut by_mode_json = Vec::new();
    for (name, acc) in &modes {
        let mut v = stats(acc).map_err(|e| Fail::Internal(e.to_string()))?;
        v["mode"] = json!(name);
        by_mode_json.push(v);
    }
    let mut deck_rows: Vec<(String, Accumulator, Vec<Value>)> = decks
        .into_iter()
        .map(|(h, (acc, cards))| (h, acc, cards))
        .collect();
    deck_rows.sort_by(|a, b| {
        let (sa, sb) = (
            a.1.stats(RowKind::SinglePlayer),
            b.1.stats(RowKind::SinglePlayer),
        );
        sb.battles
            .cmp(&sa.battles)
            .then(sb.wins.cmp(&sa.wins))
            .then(a.0.cmp(&b.0))
    });
    let mut top_decks = Vec::new();
    for (hash, acc, cards) in deck_rows.into_iter().take(3) {
        let mut v = stats(&acc).map_err(|e| Fail::Internal(e.to_string()))?;
        v["deck_hash"] = json!(hash);
        v["cards"] = Value::Array(cards);
        top_decks.push(v);
    }
    let trophies_json = match first_last(trophies) {
        Some((start, end, best)) => json!({
            "start": start.value, "end": end.value, "change": end.value - start.value, "best": best,
        }),
        None => json!({"start": null, "end": null, "change": null, "best": null}),
    };
    let pol_json = match first_last(leagues) {
        Some((start, end, _)) => json!({"league_start": start.value, "league_end": end.value}),
        None => json!({"league_start": null, "league_end": null}),
    };
    let mut success = Success::new()
        .field("overall", overall_json)
        .field("by_mode", Value::Array(by_mode_json))
        .field("trophies", trophies_json)
        .field("path_of_legend", pol_json)
        .field("top_decks", Value::Array(top_decks))
        .field("war", json!({"decks_used": decks_used, "points": points}))
        .field("active_days", json!(days.len()))
        .field("last_battle_at", json!(last_battle.map(iso)))
        .applied(
            "window",
            service::applied_window(&w, facts.recorded_since()),
        )
        .applied("mode", json!(mode_name(&a)))
        .applied("verbosity", json!(args::verbosity(&a)))
        .meta("timezone_applied", json!(w.timezone));
    success = success.metas(facts.meta(now, &[PollEndpoint::Battlelog]));
    let partial = service::completeness_note(&coverage);
    if war_battles > 0 && partial.is_some() {
        success = success.note(
            "war counts only the war battles the record holds; part of this window is not recorded, so decks_used and points may be low.",
        );
    }
    if war_battles > 0 && points.is_none() {
        success = success.note("war points are null: a war battle's result is unknown.");
    }
    if war_battles > 0 {
        success = success.note(
            "War points are estimated from results: 200/100 a war battle won/lost, 250/100 a duel round, 125/75 a boat attack.",
        );
    }
    if let Some(note) = partial {
        success = success.meta("completeness_note", json!(note));
    }
    if overall.stats(RowKind::SinglePlayer).battles == 0 {
        success = success.note("No recorded battle matches this window and mode.");
    }
    Ok(success)
}

fn mode_name(a: &Map<String, Value>) -> &str {
    args::text(a, "mode").unwrap_or("all")
}

// ---- players_collection ----

fn collection() -> ToolSpec {
    ToolSpec {
        name: "players_collection",
        group: Group::Players,
        title: "Card collection",
        description: "Player tool: the cards a player owns (you when no tag is given) as their last profile read showed them: each card's in-game level and max level, star level, count, evolution and hero forms unlocked and elixir, the tower troops apart, and a summary by rarity with the evolutions and heroes unlocked.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::V],
        params: blocks::player_params(),
        compact_drops: Some("each card to id, level and forms_unlocked"),
        output: vec![
            ("player", shape::object("{tag, name}.", &["tag", "name"]), true),
            ("summary", shape::object("{cards_owned, cards_total (the catalogue's; null before its first read), by_rarity {rarity: count}, evolutions_unlocked, heroes_unlocked}.", &["cards_owned", "cards_total", "by_rarity", "evolutions_unlocked", "heroes_unlocked"]), true),
            ("cards", shape::list("[{id, name, rarity, kind, level, max_level, star_level, count, forms_unlocked[], elixir}] (compact: {id, level, forms_unlocked}).", &["id", "level", "forms_unlocked"]), true),
            ("tower_troops", shape::list("The tower troops owned, as cards.", &["id", "level"]), true),
            ("observed_at", instant("When the profile holding the collection was read."), true),
        ],
        docs: "tools-players#players-collection".into(),
        too_large_hint: "players_collection({\"verbosity\": \"compact\"}) keeps id, level and forms_unlocked.".into(),
        handler: handler(collection_call),
    }
}

fn collection_card(card: &CollectionCard, compact: bool) -> Value {
    if compact {
        return json!({"id": card.id, "level": card.level, "forms_unlocked": card.forms_unlocked});
    }
    json!({
        "id": card.id,
        "name": card.name,
        "rarity": card.rarity,
        "kind": card.kind.map(|k| k.as_str()),
        "level": card.level,
        "max_level": card.max_level,
        "star_level": card.star_level,
        "count": card.count,
        "forms_unlocked": card.forms_unlocked,
        "elixir": card.elixir,
    })
}

async fn collection_call(ctx: ToolCtx, a: Map<String, Value>) -> ToolOutcome {
    let facts = recorded(&ctx, &a).await?;
    let now = ctx.services.now();
    let Some(profile) = stored_profile(facts.row.as_ref())? else {
        return Err(Fail::Tool(crate::mcp::call::ToolError::new(
            crate::mcp::call::ErrorCode::NotRecorded,
            format!(
                "{}'s profile, which holds the collection, has not been read yet.",
                facts.tag
            ),
            format!(
                "elixir_track_player({{\"player_tag\": \"{}\"}}) schedules the profile read.",
                facts.tag
            ),
        )));
    };
    let verbosity = args::verbosity(&a);
    let compact = verbosity == "compact";
    let catalogue = ctx.services.store.cards_catalogue().await?;
    let mut by_rarity: BTreeMap<String, usize> = BTreeMap::new();
    for c in &profile.cards {
        *by_rarity.entry(c.rarity.clone()).or_default() += 1;
    }
    let unlocked = |form: Form| {
        profile
            .cards
            .iter()
            .filter(|c| c.forms_unlocked.contains(&form))
            .count()
    };
    let success = Success::new()
        .field(
            "player",
            json!({"tag": facts.tag.to_string(), "name": profile.name}),
        )
        .field(
            "summary",
            json!({
                "cards_owned": profile.cards.len(),
                "cards_total": catalogue.as_ref().map(|c| c.catalogue.cards.len()),
                "by_rarity": by_rarity,
                "evolutions_unlocked": unlocked(Form::Evolution),
                "heroes_unlocked": unlocked(Form::Hero),
            }),
        )
        .field(
            "cards",
            Value::Array(
                profile
                    .cards
                    .iter()
                    .map(|c| collection_card(c, compact))
                    .collect(),
            ),
        )
        .field(
            "tower_troops",
            Value::Array(
                profile
                    .tower_troops
                    .iter()
                    .map(|c| collection_card(c, compact))
                    .collect(),
            ),
        )
        .field(
            "observed_at",
            json!(facts.row.as_ref().and_then(|r| r.observed_at).map(iso)),
        )
        .applied("verbosity", json!(verbosity));
    Ok(success.metas(facts.meta(now, &[PollEndpoint::Player])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sightings_give_start_end_and_best() {
        let points = vec![
            Sighting {
                at: 30,
                value: 5100,
            },
            Sighting {
                at: 10,
                value: 5000,
            },
            Sighting {
                at: 20,
                value: 5200,
            },
        ];
        let (start, end, best) = first_last(points).unwrap();
        assert_eq!((start.value, end.value, best), (5000, 5100, 5200));
        assert_eq!(first_last(Vec::new()), None);
    }
}
