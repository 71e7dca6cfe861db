//! The Account tools of this build: `elixir_settings` (timezone and primary player). The
//! primary must already be tracked; tracking arrives with the recorder, so until then every
//! `primary_player_tag` answers `not_recorded`.

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::is_time_zone;
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::envelope::{ErrorCode, Success, ToolError};
use crate::mcp::spec::{
    Fail, Flag, Group, Outcome, Param, SCOPE_ACCOUNT, ToolCtx, ToolSpec, bad_request, handler,
};

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
            ("settings", json!({"type": "object", "description": "{timezone, primary_player, tier} after the call."}), true),
            ("changed", json!({"type": "array", "description": "Names of the settings this call changed."}), true),
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
    if let Some(raw) = args::text(&a, "primary_player_tag") {
        let tag = blocks::tag(
            raw,
            "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. elixir_settings({\"primary_player_tag\": \"#20JJJ2CCRU\"}).",
        )?;
        // Tracking arrives with the recorder; until then no player is tracked.
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NotRecorded,
            format!("{tag} is not tracked on this account, so it cannot be the primary."),
            // The hint names only what answers today: tracking is still coming.
            "Player tracking is coming (elixir_docs({\"page\": \"tools-players\"})); until it \
             arrives no player can be the primary."
                .to_owned(),
        )));
    }
    let mut changed = Vec::new();
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
    let primary = match (caller.kind, &caller.primary_player_tag) {
        (Kind::Person, Some(tag)) => json!({"tag": tag}),
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
