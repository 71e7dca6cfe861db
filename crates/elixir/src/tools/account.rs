//! `elixir_settings`: the caller's timezone and, on the person door, the primary player, which
//! must already be tracked (the old primary becomes an alt). The other Account tools are
//! `tracking`'s and `identities`'.

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::is_time_zone;
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{
    ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, bad_request, handler,
};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, Param, SCOPE_ACCOUNT, ToolSpec};
use crate::model::{Principal, Relationship, TrackPlayer};

pub fn settings() -> ToolSpec {
    ToolSpec {
        name: "elixir_settings",
        group: Group::Account,
        title: "Settings",
        description: "Account tool: reads or changes your settings: timezone (IANA, used for date-only windows and local labels) and, on the personal door, primary_player_tag (must already be tracked; the old primary becomes an alt). No arguments reads them.".into(),
        scope: SCOPE_ACCOUNT,
        kinds: vec![Kind::Person, Kind::Agent],
        flags: vec![Flag::D],
        params: vec![
            Param::new("timezone", args::string("IANA time zone, e.g. Europe/Warsaw.", 1, 64)),
            Param::new("primary_player_tag", blocks::tag_schema("Tag of an already tracked player to make your primary.")).person_only(),
        ],
        compact_drops: None,
        output: vec![
            ("settings", shape::object("{timezone, primary_player, tier} after the call.", &["timezone", "primary_player", "tier"]), true),
            ("changed", shape::strings("Names of the settings this call changed."), true),
        ],
        docs: "tools-account#elixir-settings".into(),
        too_large_hint: "Report meta.request_id with elixir_feedback.".into(),
        handler: handler(settings_call),
    }
}

async fn settings_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let services = &ctx.services;
    let caller = &ctx.caller;
    let timezone = args::text(&a, "timezone");
    if let Some(tz) = timezone
        && !is_time_zone(tz)
    {
        return Err(bad_request(
            format!("{tz:?} is not an IANA time zone."),
            "elixir_settings({\"timezone\": \"Europe/Warsaw\"}) — use a name from the IANA database.",
        ));
    }
    let mut changed = Vec::new();
    let mut primary_now = caller.primary_player_tag.clone();
    if let Some(raw) = args::text(&a, "primary_player_tag") {
        let tag = blocks::tag(
            raw,
            "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. elixir_settings({\"primary_player_tag\": \"#20JJJ2CCRU\"}).",
        )?
        .to_string();
        let tracked = services
            .store
            .tracked_players(caller.account_id, Principal::Person)
            .await?;
        if !tracked.iter().any(|p| p.player_tag == tag) {
            return Err(Fail::Tool(ToolError::new(
                ErrorCode::NotRecorded,
                format!("{tag} is not tracked on this account, so it cannot be the primary."),
                format!(
                    "elixir_track_player({{\"player_tag\": \"{tag}\", \"relationship\": \"primary\"}}) tracks it as your primary."
                ),
            )));
        }
        if primary_now.as_deref() != Some(tag.as_str()) {
            services
                .store
                .track_player(&TrackPlayer {
                    account_id: caller.account_id,
                    principal: Principal::Person,
                    player_tag: tag.clone(),
                    relationship: Relationship::Primary,
                    max_players: None,
                    at: services.now(),
                })
                .await?;
            primary_now = Some(tag);
            changed.push("primary_player");
        }
    }
    let mut current = caller.timezone.clone();
    if let Some(tz) = timezone
        && tz != current
    {
        match &caller.agent {
            Some(agent) => services.store.set_agent_timezone(agent.id, tz).await?,
            None => {
                services
                    .store
                    .set_account_timezone(caller.account_id, tz)
                    .await?
            }
        }
        current = tz.to_owned();
        changed.push("timezone");
    }
    let primary = match (caller.kind, primary_now) {
        (Kind::Person, Some(tag)) => {
            let name = services.store.player(&tag).await?.map(|p| p.name);
            json!({"tag": tag, "name": name})
        }
        _ => Value::Null,
    };
    Ok(Success::new()
        .field(
            "settings",
            json!({"timezone": current, "primary_player": primary, "tier": caller.tier.as_str()}),
        )
        .field("changed", json!(changed))
        .applied("verbosity", json!(args::verbosity(&a))))
}
