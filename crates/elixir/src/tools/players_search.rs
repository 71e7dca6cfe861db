//! `players_search` (SURFACE §2.3), a Reference tool: recorded players whose name (or the
//! caller's nickname for them) contains a query, each ranked by the best reason it matches —
//! nickname, tracked, clanmate, recorded. The names are the store's; the ranking is here.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso, name_key};
use crate::mcp::args;
use crate::mcp::call::{Fail, Outcome as ToolOutcome, Success, ToolCtx, bad_request, handler};
use crate::mcp::shape;
use crate::mcp::spec::{Group, Param, SCOPE_READ, ToolSpec};
use crate::model::{PlayerRow, Principal};

// ---- players_search ----

pub fn search() -> ToolSpec {
    ToolSpec {
        name: "players_search",
        group: Group::Players,
        title: "Find a player",
        description: "Reference tool: finds players' tags by name among the players Elixir has recorded: names containing query (case-insensitive), ranked by why they match — your nickname for them, a player you track, a member of your clan, then anyone recorded — with their clan and when they were last seen.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![],
        params: vec![
            Param::new("query", args::string("Part of the in-game name or of your nickname (2-40).", 2, 40)).required(),
            Param::new("limit", args::integer("Matches at most (1-25).", 1, 25, 10)),
        ],
        compact_drops: None,
        output: vec![
            ("matches", shape::list("[{tag, name, clan {tag, name}?, why nickname|tracked|clanmate|recorded, last_seen_at}], best first.", &["tag", "name", "why", "last_seen_at"]), true),
        ],
        docs: "tools-players#players-search".into(),
        too_large_hint: "players_search({\"limit\": 5}) returns fewer matches.".into(),
        handler: handler(search_call),
    }
}

/// Why a player matched, best first.
const WHY: [&str; 4] = ["nickname", "tracked", "clanmate", "recorded"];

fn principal(ctx: &ToolCtx) -> Principal {
    match &ctx.caller.agent {
        Some(agent) => Principal::Agent(agent.id),
        None => Principal::Person,
    }
}

/// The clans whose members count as the caller's clanmates: the door's clan on agent and
/// integration doors, the primary player's current clans on the person door.
async fn caller_clans(ctx: &ToolCtx) -> Result<Vec<String>, Fail> {
    if let Some(agent) = &ctx.caller.agent {
        return Ok(agent.clan_tag.iter().cloned().collect());
    }
    let Some(primary) = &ctx.caller.primary_player_tag else {
        return Ok(Vec::new());
    };
    let store = &ctx.services.store;
    let mut clans: Vec<String> = store
        .clans_of(primary)
        .await?
        .into_iter()
        .map(|m| m.clan_tag)
        .collect();
    if clans.is_empty()
        && let Some(clan) = store.player(primary).await?.and_then(|p| p.clan_tag)
    {
        clans.push(clan);
    }
    Ok(clans)
}

async fn search_call(ctx: ToolCtx, a: Map<String, Value>) -> ToolOutcome {
    let query = args::text(&a, "query").unwrap_or_default();
    let key = name_key(query);
    if key.chars().count() < 2 {
        return Err(bad_request(
            format!("query {query:?} has fewer than 2 characters once trimmed."),
            "players_search({\"query\": \"King\"})",
        ));
    }
    let limit = args::int(&a, "limit", 10);
    let store = &ctx.services.store;
    let who = principal(&ctx);
    let account = ctx.caller.account_id;
    // tag → (rank, name known to the source)
    let mut found: HashMap<String, (usize, Option<String>)> = HashMap::new();
    let mut offer = |tag: String, rank: usize, name: Option<String>| {
        let entry = found.entry(tag).or_insert((rank, name.clone()));
        if rank < entry.0 {
            *entry = (rank, name.or(entry.1.take()));
        }
    };
    for (tag, nickname) in store.nicknames(account, who).await? {
        if name_key(&nickname).contains(&key) {
            offer(tag, 0, None);
        }
    }
    for t in store.tracked_players(account, who).await? {
        if t.name
            .as_deref()
            .is_some_and(|n| name_key(n).contains(&key))
        {
            offer(t.player_tag, 1, t.name);
        }
    }
    for clan in caller_clans(&ctx).await? {
        for m in store.memberships(&clan, i64::MAX).await? {
            if m.left_observed_at.is_none() && name_key(&m.name).contains(&key) {
                offer(m.player_tag, 2, Some(m.name));
            }
        }
    }
    for p in store.search_players(&key, limit).await? {
        offer(p.tag, 3, Some(p.name));
    }
    let tags: Vec<String> = found.keys().cloned().collect();
    let rows: HashMap<String, PlayerRow> = store
        .players_by_tags(&tags)
        .await?
        .into_iter()
        .map(|r| (r.tag.clone(), r))
        .collect();
    let mut matches: Vec<(usize, bool, Option<Millis>, String, Value)> = found
        .into_iter()
        .map(|(tag, (rank, source_name))| {
            let row = rows.get(&tag);
            let name = row.map(|r| r.name.clone()).or(source_name);
            let exact = name.as_deref().is_some_and(|n| name_key(n) == key);
            let last_seen = row.and_then(|r| r.last_battle_at.max(r.observed_at));
            let clan = row.and_then(|r| {
                r.clan_tag
                    .as_ref()
                    .map(|c| json!({"tag": c, "name": r.clan_name}))
            });
            let value = json!({
                "tag": tag,
                "name": name,
                "clan": clan,
                "why": WHY[rank],
                "last_seen_at": last_seen.map(iso),
            });
            (rank, !exact, last_seen, tag, value)
        })
        .collect();
    matches.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(b.2.cmp(&a.2))
            .then(a.3.cmp(&b.3))
    });
    let total = matches.len();
    let shown: Vec<Value> = matches
        .into_iter()
        .take(usize::try_from(limit).unwrap_or(10))
        .map(|m| m.4)
        .collect();
    let mut success = Success::new()
        .field("matches", Value::Array(shown))
        .applied("limit", json!(limit))
        .applied("verbosity", json!(args::verbosity(&a)));
    if total == 0 {
        success = success.note(format!(
            "No recorded player's name contains {query:?}; elixir_track_player records a player by tag."
        ));
    }
    Ok(success)
}
