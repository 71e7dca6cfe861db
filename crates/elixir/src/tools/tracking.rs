//! The Account tools that decide what is recorded (SURFACE §2.2): `elixir_track_player`,
//! `elixir_track_clan`, `elixir_my_players` and `elixir_nickname`. Slots are the payer's
//! (§4.2), checked by the store in the transaction that takes them; a new subject is
//! scheduled for an immediate read, which `first_read` reports.

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, handler};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, Param, SCOPE_ACCOUNT, SCOPE_READ, SCOPE_RECORDINGS, ToolSpec};
use crate::model::{
    ClanScope, PollEndpoint, Principal, Relationship, TrackClan, TrackPlayer, TrackResult,
};
use crate::services::Caller;
use crate::tools::subject::{first_read, recording};

const ACTIONS: [&str; 4] = ["add", "remove", "notify_on", "notify_off"];
const TAG_HINT: &str = "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. #20JJJ2CCRU.";
const NO_HINT: &str = "Report meta.request_id with elixir_feedback.";

pub fn specs() -> Vec<ToolSpec> {
    vec![track_player(), track_clan(), my_players(), nickname()]
}

fn principal(caller: &Caller) -> Principal {
    match &caller.agent {
        Some(agent) => Principal::Agent(agent.id),
        None => Principal::Person,
    }
}

/// The keys of the slots block.
const SLOTS: &[&str] = &["players", "clans"];

/// The slots block: `{players, clans {activity, comprehensive}}`, each `{used, max}`.
async fn slots(ctx: &ToolCtx) -> Result<Value, Fail> {
    let used = ctx.services.store.slot_use(ctx.caller.account_id).await?;
    let tier = ctx.caller.tier;
    let (activity, comprehensive) = tier.tracked_clans();
    Ok(json!({
        "players": {"used": used.players, "max": tier.tracked_players()},
        "clans": {
            "activity": {"used": used.clans_activity, "max": activity},
            "comprehensive": {"used": used.clans_comprehensive, "max": comprehensive},
        },
    }))
}

fn no_slot(what: &str, max: Option<i64>) -> Fail {
    Fail::Tool(ToolError::new(
        ErrorCode::QuotaExceeded,
        format!(
            "Every {what} slot of this account is in use ({} of {}).",
            max.unwrap_or(0),
            max.unwrap_or(0)
        ),
        format!(
            "elixir_my_players() lists them; remove one with action \"remove\" to free a {what} slot."
        ),
    ))
}

fn track_player() -> ToolSpec {
    ToolSpec {
        name: "elixir_track_player",
        group: Group::Account,
        title: "Track a player",
        description: "Account tool: starts, stops or tunes the recording of a player's battles and profile. action add (default) takes a slot and schedules an immediate first read; remove frees it; notify_on/notify_off set timeline notices. relationship primary makes them your default subject.".into(),
        scope: SCOPE_RECORDINGS,
        kinds: vec![Kind::Person, Kind::Agent],
        flags: vec![Flag::D],
        params: vec![
            Param::new("player_tag", blocks::tag_schema("The player's tag, e.g. #20JJJ2CCRU.")).required(),
            Param::new("action", args::choice("add (default), remove, notify_on or notify_off.", &ACTIONS, Some("add"))),
            Param::new("relationship", args::choice("primary, alt, friend or watching (default); agent doors track only as watching.", &Relationship::NAMES, Some("watching"))),
        ],
        compact_drops: None,
        output: vec![
            ("player", shape::object("{tag, name, relationship, notify}; name is null until the first read.", &["tag", "name", "relationship", "notify"]), true),
            ("recording", shape::object_or_null("{state, since, last_polled_at}; null after remove.", &["state", "since", "last_polled_at"]), true),
            ("changed", json!({"type": "boolean", "description": "Whether the call changed anything."}), true),
            ("slots", shape::object("{players, clans {activity, comprehensive}}, each {used, max}; max null is unlimited.", SLOTS), true),
            ("first_read", shape::live_status("A live_status of the subject's first read."), true),
        ],
        docs: "tools-account#elixir-track-player".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(track_player_call),
    }
}

async fn track_player_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let raw = args::text(&a, "player_tag").unwrap_or_default();
    let tag = blocks::tag(raw, TAG_HINT)?;
    let action = args::text(&a, "action").unwrap_or("add");
    let relationship = Relationship::parse(args::text(&a, "relationship").unwrap_or("watching"))
        .unwrap_or(Relationship::Watching);
    let caller = &ctx.caller;
    if caller.kind != Kind::Person && relationship != Relationship::Watching {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NotEntitled,
            format!(
                "Agent doors track only as watching, not as {}.",
                relationship.as_str()
            ),
            format!(
                "elixir_track_player({{\"player_tag\": \"{tag}\", \"relationship\": \"watching\"}})"
            ),
        )));
    }
    let store = &ctx.services.store;
    let now = ctx.services.now();
    let who = principal(caller);
    let tag_text = tag.to_string();
    let changed = match action {
        "add" => {
            let result = store
                .track_player(&TrackPlayer {
                    account_id: caller.account_id,
                    principal: who,
                    player_tag: tag_text.clone(),
                    relationship,
                    max_players: caller.tier.tracked_players(),
                    at: now,
                })
                .await?;
            match result {
                TrackResult::NoSlot => {
                    return Err(no_slot("player", caller.tier.tracked_players()));
                }
                TrackResult::Unchanged => false,
                TrackResult::Changed { .. } => true,
            }
        }
        "remove" => {
            store
                .untrack_player(caller.account_id, who, &tag_text)
                .await?
        }
        _ => {
            let on = action == "notify_on";
            store
                .set_player_notify(caller.account_id, who, &tag_text, on)
                .await?
                .ok_or_else(|| not_tracked("player", &tag_text))?
        }
    };
    let tracked = store.tracked_players(caller.account_id, who).await?;
    let mine = tracked.iter().find(|p| p.player_tag == tag_text);
    let polls = store.polls_of(&tag_text).await?;
    let player = match mine {
        Some(p) => {
            json!({"tag": tag_text, "name": p.name, "relationship": p.relationship.as_str(), "notify": p.notify})
        }
        None => {
            json!({"tag": tag_text, "name": store.player(&tag_text).await?.map(|p| p.name), "relationship": null, "notify": false})
        }
    };
    let mut success = Success::new()
        .field("player", player)
        .field(
            "recording",
            recording(&polls, PollEndpoint::Battlelog, now).unwrap_or(Value::Null),
        )
        .field("changed", json!(changed))
        .field("slots", slots(&ctx).await?)
        .field(
            "first_read",
            first_read(&polls, PollEndpoint::Battlelog, now),
        )
        .applied("verbosity", json!(args::verbosity(&a)));
    if changed && action == "add" && polls.iter().all(|p| p.last_read_at.is_none()) {
        success = success.note(
            "The first read is queued with the recorder; players_profile answers once it lands.",
        );
    }
    Ok(success)
}

fn not_tracked(what: &str, tag: &str) -> Fail {
    Fail::Tool(ToolError::new(
        ErrorCode::NotRecorded,
        format!("{tag} is not a {what} you track."),
        format!("elixir_track_{what}({{\"{what}_tag\": \"{tag}\"}}) tracks it first."),
    ))
}

fn track_clan() -> ToolSpec {
    ToolSpec {
        name: "elixir_track_clan",
        group: Group::Account,
        title: "Track a clan",
        description: "Account tool: starts, stops or tunes the recording of a clan. activity scope (default) records the clan and its member list; comprehensive also records every member's battle log. action add (default), remove, notify_on or notify_off.".into(),
        scope: SCOPE_RECORDINGS,
        kinds: vec![Kind::Person, Kind::Agent],
        flags: vec![Flag::D],
        params: vec![
            Param::new("clan_tag", blocks::tag_schema("The clan's tag, e.g. #9YJUPU9LY.")).required(),
            Param::new("action", args::choice("add (default), remove, notify_on or notify_off.", &ACTIONS, Some("add"))),
            Param::new("scope", args::choice("activity (default) or comprehensive (every member's battle log too).", &["activity", "comprehensive"], Some("activity"))),
        ],
        compact_drops: None,
        output: vec![
            ("clan", shape::object("{tag, name}; name is null until the first read.", &["tag", "name"]), true),
            ("tracking", shape::object("{scope, notify, recording}; absent after remove.", &["scope", "notify", "recording"]), false),
            ("changed", json!({"type": "boolean", "description": "Whether the call changed anything."}), true),
            ("slots", shape::object("{players, clans {activity, comprehensive}}, each {used, max}.", SLOTS), true),
            ("first_read", shape::live_status("A live_status of the clan's first read."), true),
        ],
        docs: "tools-account#elixir-track-clan".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(track_clan_call),
    }
}

async fn track_clan_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let raw = args::text(&a, "clan_tag").unwrap_or_default();
    let tag = blocks::tag(raw, TAG_HINT)?.to_string();
    let action = args::text(&a, "action").unwrap_or("add");
    let scope = ClanScope::parse(args::text(&a, "scope").unwrap_or("activity"))
        .unwrap_or(ClanScope::Activity);
    let caller = &ctx.caller;
    let store = &ctx.services.store;
    let now = ctx.services.now();
    let who = principal(caller);
    let (activity, comprehensive) = caller.tier.tracked_clans();
    let max = match scope {
        ClanScope::Activity => activity,
        ClanScope::Comprehensive => comprehensive,
    };
    let changed = match action {
        "add" => match store
            .track_clan(&TrackClan {
                account_id: caller.account_id,
                principal: who,
                clan_tag: tag.clone(),
                scope,
                max_of_scope: max,
                at: now,
            })
            .await?
        {
            TrackResult::NoSlot => return Err(no_slot(&format!("{} clan", scope.as_str()), max)),
            TrackResult::Unchanged => false,
            TrackResult::Changed { .. } => true,
        },
        "remove" => store.untrack_clan(caller.account_id, who, &tag).await?,
        _ => store
            .set_clan_notify(caller.account_id, who, &tag, action == "notify_on")
            .await?
            .ok_or_else(|| not_tracked("clan", &tag))?,
    };
    let clans = store.tracked_clans(caller.account_id, who).await?;
    let polls = store.polls_of(&tag).await?;
    let name = store.clan(&tag).await?.map(|c| c.name);
    let mut success = Success::new()
        .field("clan", json!({"tag": tag, "name": name}))
        .field("changed", json!(changed))
        .field("slots", slots(&ctx).await?)
        .field("first_read", first_read(&polls, PollEndpoint::Clan, now))
        .applied("verbosity", json!(args::verbosity(&a)));
    if let Some(c) = clans.iter().find(|c| c.clan_tag == tag) {
        success = success.field(
            "tracking",
            json!({
                "scope": c.scope.as_str(),
                "notify": c.notify,
                "recording": recording(&polls, PollEndpoint::Clan, now),
            }),
        );
    }
    Ok(success)
}

fn my_players() -> ToolSpec {
    ToolSpec {
        name: "elixir_my_players",
        group: Group::Account,
        title: "My players",
        description: "Account tool: lists the players and clans you track, with each one's relationship, nickname, notify flag and recording state, and the slots you have used of your tier's allowance. Takes no arguments.".into(),
        scope: SCOPE_READ,
        kinds: vec![Kind::Person],
        flags: vec![],
        params: vec![],
        compact_drops: None,
        output: vec![
            ("players", shape::list("{tag, name, relationship, nickname, notify, recording, clan, trophies} per tracked player, primary first.", &["tag", "name", "relationship", "nickname", "notify", "recording", "clan", "trophies"]), true),
            ("clans", shape::list("{tag, name, scope, notify, recording} per tracked clan.", &["tag", "name", "scope", "notify", "recording"]), true),
            ("slots", shape::object("{players, clans {activity, comprehensive}}, each {used, max}.", SLOTS), true),
        ],
        docs: "tools-account#elixir-my-players".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(my_players_call),
    }
}

async fn my_players_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let caller = &ctx.caller;
    let store = &ctx.services.store;
    let now = ctx.services.now();
    let who = principal(caller);
    let nicknames = store.nicknames(caller.account_id, who).await?;
    let mut players = Vec::new();
    for p in store.tracked_players(caller.account_id, who).await? {
        let polls = store.polls_of(&p.player_tag).await?;
        let nickname = nicknames
            .iter()
            .find(|(t, _)| *t == p.player_tag)
            .map(|(_, n)| n.clone());
        players.push(json!({
            "tag": p.player_tag,
            "name": p.name,
            "relationship": p.relationship.as_str(),
            "nickname": nickname,
            "notify": p.notify,
            "recording": recording(&polls, PollEndpoint::Battlelog, now),
            "clan": p.clan_tag.map(|tag| json!({"tag": tag, "name": p.clan_name})),
            "trophies": p.trophies,
        }));
    }
    let mut clans = Vec::new();
    for c in store.tracked_clans(caller.account_id, who).await? {
        let polls = store.polls_of(&c.clan_tag).await?;
        clans.push(json!({
            "tag": c.clan_tag,
            "name": c.name,
            "scope": c.scope.as_str(),
            "notify": c.notify,
            "recording": recording(&polls, PollEndpoint::Clan, now),
        }));
    }
    Ok(Success::new()
        .field("players", json!(players))
        .field("clans", json!(clans))
        .field("slots", slots(&ctx).await?)
        .applied("verbosity", json!(args::verbosity(&a))))
}

fn nickname() -> ToolSpec {
    ToolSpec {
        name: "elixir_nickname",
        group: Group::Account,
        title: "Nicknames",
        description: "Account tool: sets your private name for a player (1-40 characters), or clears it with nickname null. Only you (this account, or this agent door) see it.".into(),
        scope: SCOPE_ACCOUNT,
        kinds: vec![Kind::Person, Kind::Agent],
        flags: vec![Flag::D],
        params: vec![
            Param::new("player_tag", blocks::tag_schema("The player's tag, e.g. #20JJJ2CCRU.")).required(),
            Param::new("nickname", json!({"type": ["string", "null"], "minLength": 1, "maxLength": 40, "description": "Your private name for them (1-40); null clears it."})).required(),
        ],
        compact_drops: None,
        output: vec![
            ("player", shape::object("{tag, name}; name is null when the player is not recorded.", &["tag", "name"]), true),
            ("nickname", json!({"type": ["string", "null"], "description": "The nickname now."}), true),
            ("previous_nickname", json!({"type": ["string", "null"], "description": "The nickname before."}), true),
        ],
        docs: "tools-account#elixir-nickname".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(nickname_call),
    }
}

async fn nickname_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let raw = args::text(&a, "player_tag").unwrap_or_default();
    let tag = blocks::tag(raw, TAG_HINT)?.to_string();
    let nickname = args::text(&a, "nickname").map(str::trim);
    if nickname == Some("") {
        return Err(crate::mcp::call::bad_request(
            "nickname is blank; send 1-40 characters, or null to clear it.",
            format!(
                "elixir_nickname({{\"player_tag\": \"{tag}\", \"nickname\": null}}) clears it."
            ),
        ));
    }
    let caller = &ctx.caller;
    let store = &ctx.services.store;
    let previous = store
        .set_nickname(
            caller.account_id,
            principal(caller),
            &tag,
            nickname,
            ctx.services.now(),
        )
        .await?;
    let name = store.player(&tag).await?.map(|p| p.name);
    Ok(Success::new()
        .field("player", json!({"tag": tag, "name": name}))
        .field("nickname", json!(nickname))
        .field("previous_nickname", json!(previous))
        .applied("verbosity", json!(args::verbosity(&a))))
}
