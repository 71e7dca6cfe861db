//! The agent-door Account tools (SURFACE §2.2): `elixir_identify` binds an end user's opaque
//! id to a member of the door's clan, write-once, so Player-family calls can name them by
//! `on_behalf_of`; `elixir_my_identities` pages the bindings.

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::iso;
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{
    ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, bad_request, handler,
};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_ACCOUNT, SCOPE_READ, ToolSpec};
use crate::store::{Bound, Identity};

const NO_HINT: &str = "Report meta.request_id with elixir_feedback.";

pub fn specs() -> Vec<ToolSpec> {
    vec![identify(), my_identities()]
}

fn identify() -> ToolSpec {
    ToolSpec {
        name: "elixir_identify",
        group: Group::Account,
        title: "Who is asking",
        description: "Account tool: binds an end user's opaque external_id (1-200) to a player who is in this door's clan now, so later calls can send on_behalf_of instead of a tag. Write-once: an id never moves to another player.".into(),
        scope: SCOPE_ACCOUNT,
        kinds: vec![Kind::Agent, Kind::Integration],
        flags: vec![],
        params: vec![
            Param::new("external_id", args::string("The end user's opaque id on your side (1-200).", 1, 200)).required(),
            Param::new("player_tag", blocks::tag_schema("Their player's tag, e.g. #20JJJ2CCRU; must be in the door's clan.")).required(),
            Param::new("display_name", args::string("Their in-game name (1-60), kept with the binding.", 1, 60)),
        ],
        compact_drops: None,
        output: vec![
            ("identity", json!({"type": "object", "description": "{external_id, display_name, player {tag, name}, bound_at}."}), true),
            ("created", json!({"type": "boolean", "description": "False when the same binding existed."}), true),
        ],
        docs: "tools-account#elixir-identify".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(identify_call),
    }
}

async fn identify_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let external = args::text(&a, "external_id").unwrap_or_default();
    if external.trim().is_empty() {
        return Err(bad_request(
            "external_id is empty.",
            "Send the end user's opaque id (1-200 characters).",
        ));
    }
    let tag = blocks::tag(
        args::text(&a, "player_tag").unwrap_or_default(),
        "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. #20JJJ2CCRU.",
    )?
    .to_string();
    let Some(agent) = ctx.caller.agent.clone() else {
        return Err(Fail::Internal("elixir_identify on a person door".into()));
    };
    let store = &ctx.services.store;
    let Some(clan) = agent.clan_tag.clone() else {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NotEntitled,
            "This door has no clan yet, so nobody can be identified as a member.",
            "The owner sets the door's clan on Account → Agents; then repeat the call.",
        )));
    };
    if let Some(existing) = store.identity(agent.id, external).await?
        && existing.player_tag != tag
    {
        return Err(rebinding(external, &existing.player_tag));
    }
    let member = store
        .memberships(&clan, i64::MAX)
        .await?
        .into_iter()
        .find(|m| m.player_tag == tag && m.left_observed_at.is_none());
    let Some(member) = member else {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NotEntitled,
            format!("{tag} is not in this door's clan {clan} as last recorded."),
            "Only current members can be identified; clans_roster lists them.",
        )));
    };
    let display_name = args::text(&a, "display_name").map(|n| n.trim().to_owned());
    let bound = store
        .bind_identity(
            agent.id,
            &Identity {
                external_id: external.to_owned(),
                player_tag: tag.clone(),
                display_name,
                bound_at: ctx.services.now(),
            },
        )
        .await?;
    let (identity, created) = match bound {
        Bound::Created(i) => (i, true),
        Bound::Existing(i) => (i, false),
        Bound::Conflict(i) => return Err(rebinding(external, &i.player_tag)),
    };
    Ok(Success::new()
        .field(
            "identity",
            json!({
                "external_id": identity.external_id,
                "display_name": identity.display_name,
                "player": {"tag": identity.player_tag, "name": member.name},
                "bound_at": iso(identity.bound_at),
            }),
        )
        .field("created", json!(created))
        .applied("verbosity", json!(args::verbosity(&a))))
}

/// The refusal of moving a write-once binding.
fn rebinding(external: &str, bound_to: &str) -> Fail {
    bad_request(
        format!("{external:?} is already bound to {bound_to}; bindings are write-once."),
        "Use a new external_id, or keep the existing binding.",
    )
}

fn my_identities() -> ToolSpec {
    ToolSpec {
        name: "elixir_my_identities",
        group: Group::Account,
        title: "People you know",
        description: "Account tool: pages the on_behalf_of ids this door has bound with elixir_identify, newest first, each with its player and whether they are in the door's clan now.".into(),
        scope: SCOPE_READ,
        kinds: vec![Kind::Agent, Kind::Integration],
        flags: vec![Flag::Co],
        params: vec![
            Param::new("limit", args::integer("Bindings per page (1-200).", 1, 200, 100)),
            Param::new("offset", args::integer("Bindings to skip (0-10000).", 0, 10_000, 0)),
        ],
        compact_drops: None,
        output: vec![
            ("identities", json!({"type": "array", "description": "{external_id, display_name, player {tag, name, in_clan_now}, bound_at}, newest first."}), true),
            ("total", json!({"type": "integer", "description": "Bindings in all."}), true),
            ("next_offset", json!({"type": ["integer", "null"], "description": "The next page's offset; null at the end."}), true),
        ],
        docs: "tools-account#elixir-my-identities".into(),
        too_large_hint: "Lower limit, e.g. elixir_my_identities({\"limit\": 50}).".into(),
        handler: handler(my_identities_call),
    }
}

async fn my_identities_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let limit = args::int(&a, "limit", 100);
    let offset = args::int(&a, "offset", 0);
    let Some(agent) = ctx.caller.agent.clone() else {
        return Err(Fail::Internal(
            "elixir_my_identities on a person door".into(),
        ));
    };
    let store = &ctx.services.store;
    let (page, total) = store.identities(agent.id, limit, offset).await?;
    let members = match &agent.clan_tag {
        Some(clan) => store.memberships(clan, i64::MAX).await?,
        None => Vec::new(),
    };
    let identities: Vec<Value> = page
        .iter()
        .map(|i| {
            let stint = members.iter().find(|m| m.player_tag == i.player_tag);
            json!({
                "external_id": i.external_id,
                "display_name": i.display_name,
                "player": {
                    "tag": i.player_tag,
                    "name": stint.map(|m| m.name.clone()),
                    "in_clan_now": stint.is_some_and(|m| m.left_observed_at.is_none()),
                },
                "bound_at": iso(i.bound_at),
            })
        })
        .collect();
    let next = offset + page.len() as i64;
    Ok(Success::new()
        .field("identities", json!(identities))
        .field("total", json!(total))
        .field("next_offset", json!((next < total).then_some(next)))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset))
        .applied("verbosity", json!(args::verbosity(&a))))
}
