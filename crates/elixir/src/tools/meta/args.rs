//! The meta tools' arguments (SURFACE §2.1, §2.4): `segment` resolved for the caller
//! (`"mine"`, `"corpus"`, a recorded clan, 1-50 tags; collections refused honestly), the
//! window under the season default, MODE under the competitive default, the card filters by
//! id or catalogue name, and the bounded integers, checked before the store is asked.

use elixir_record::cards::Catalogue;
use elixir_record::window::{self, Window};
use elixir_record::{Mode, ModeFilter, Tag};
use serde_json::{Map, Value, json};

use super::{MAX_SEGMENT_PLAYERS, Tool};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{ErrorCode, Fail, ToolCtx, ToolError, bad_request};
use crate::model::Principal;
use crate::store::SegmentFilter;

/// The segment a call names, resolved to whose games count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) filter: SegmentFilter,
    /// `applied.segment`.
    pub(super) echo: Value,
}

/// Reads `segment` (SURFACE §2.1) for this caller.
pub(super) async fn segment(
    ctx: &ToolCtx,
    a: &Map<String, Value>,
    tool: Tool,
) -> Result<Segment, Fail> {
    let hint = format!(
        "{}({{\"segment\": \"corpus\"}}) or {{\"segment\": {{\"clan_tag\": \"#…\"}}}}.",
        tool.name()
    );
    match a.get("segment") {
        Some(Value::String(s)) if s == "corpus" => Ok(Segment {
            filter: SegmentFilter::Corpus,
            echo: json!("corpus"),
        }),
        Some(Value::String(s)) if s == "mine" => mine(ctx, tool).await,
        Some(Value::Object(o)) if o.len() == 1 => {
            if let Some(raw) = o.get("clan_tag").and_then(Value::as_str) {
                let clan = blocks::tag(raw, &hint)?;
                recorded_clan(ctx, &clan).await?;
                return Ok(Segment {
                    filter: SegmentFilter::Clan(clan.to_string()),
                    echo: json!({"clan_tag": clan.as_str()}),
                });
            }
            if let Some(items) = o.get("player_tags").and_then(Value::as_array) {
                return player_tags(items, &hint);
            }
            if let Some(slug) = o.get("collection").and_then(Value::as_str) {
                return Err(Fail::Tool(ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "There is no collection {slug:?}: collections are not available in this version of Elixir yet."
                    ),
                    format!(
                        "{}({{\"segment\": {{\"player_tags\": [\"#…\"]}}}}) names the players directly.",
                        tool.name()
                    ),
                )));
            }
            Err(bad_request(
                "segment's one key must be clan_tag, player_tags or collection.",
                hint,
            ))
        }
        Some(other) => Err(bad_request(
            format!(
                "segment {other} is not \"mine\", \"corpus\" or an object with exactly one of clan_tag, player_tags, collection."
            ),
            hint,
        )),
        None => Err(bad_request(
            "segment is required: say whose battles to count.",
            hint,
        )),
    }
}

/// `"mine"`: the person's tracked players; on agent and integration doors, the door clan.
pub(super) async fn mine(ctx: &ToolCtx, tool: Tool) -> Result<Segment, Fail> {
    let caller = &ctx.caller;
    if let Some(agent) = &caller.agent {
        let Some(clan) = &agent.clan_tag else {
            return Err(Fail::Tool(ToolError::new(
                ErrorCode::NoSubject,
                "This door has no clan set, so \"mine\" has no members to count.",
                format!(
                    "{}({{\"segment\": {{\"clan_tag\": \"#…\"}}}}) names a clan; the owner sets the door's clan on the agent page.",
                    tool.name()
                ),
            )));
        };
        return Ok(Segment {
            filter: SegmentFilter::Clan(clan.clone()),
            echo: json!("mine"),
        });
    }
    let tracked = ctx
        .services
        .store
        .tracked_players(caller.account_id, Principal::Person)
        .await?;
    if tracked.is_empty() {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NoSubject,
            "You track no players, so \"mine\" has nobody to count.",
            "elixir_track_player({\"player_tag\": \"#…\"}) tracks one; or send {\"segment\": \"corpus\"}.",
        )));
    }
    Ok(Segment {
        filter: SegmentFilter::Players(tracked.into_iter().map(|t| t.player_tag).collect()),
        echo: json!("mine"),
    })
}

/// A clan the record knows (its row, or members observed); otherwise `not_recorded`.
pub(super) async fn recorded_clan(ctx: &ToolCtx, clan: &Tag) -> Result<(), Fail> {
    let store = &ctx.services.store;
    if store.clan(clan.as_str()).await?.is_some() {
        return Ok(());
    }
    Err(Fail::Tool(ToolError::new(
        ErrorCode::NotRecorded,
        format!("Clan {clan} is not recorded, so it has no members to count."),
        format!("elixir_track_clan({{\"clan_tag\": \"{clan}\"}}) starts recording it."),
    )))
}

/// `{player_tags}`: 1-50 tags, each normalized; a bad one is `invalid_tag` naming its index.
pub(super) fn player_tags(items: &[Value], hint: &str) -> Result<Segment, Fail> {
    if items.is_empty() || items.len() as u64 > MAX_SEGMENT_PLAYERS {
        return Err(bad_request(
            format!(
                "segment.player_tags holds {} tags; send 1 to {MAX_SEGMENT_PLAYERS}.",
                items.len()
            ),
            hint,
        ));
    }
    let mut tags = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let raw = item.as_str().unwrap_or_default();
        let tag = Tag::parse(raw).map_err(|_| {
            Fail::Tool(ToolError::new(
                ErrorCode::InvalidTag,
                format!("segment.player_tags[{i}] {raw:?} is not a Clash Royale tag."),
                "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. #20JJJ2CCRU.",
            ))
        })?;
        tags.push(tag.to_string());
    }
    tags.sort();
    tags.dedup();
    Ok(Segment {
        echo: json!({"player_tags": tags}),
        filter: SegmentFilter::Players(tags),
    })
}

/// MODE with this family's default: competitive.
pub(super) fn mode(a: &Map<String, Value>) -> Result<ModeFilter, Fail> {
    if a.get("mode").is_none() {
        return Ok(ModeFilter::Competitive);
    }
    blocks::mode(a)
}

/// The stored mode names a filter keeps; `None` for every mode.
pub(super) fn mode_names(filter: ModeFilter) -> Option<Vec<String>> {
    (filter != ModeFilter::All).then(|| {
        Mode::ALL
            .iter()
            .filter(|m| filter.includes(**m))
            .map(|m| m.as_str().to_owned())
            .collect()
    })
}

/// The card ids of `containing` or `excluding`: an id as it is, a name by the catalogue.
pub(super) fn card_ids(
    a: &Map<String, Value>,
    name: &str,
    catalogue: Option<&Catalogue>,
) -> Result<Vec<i64>, Fail> {
    let Some(items) = a.get(name).and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::with_capacity(items.len());
    for item in items {
        let id = match (catalogue, item) {
            (Some(catalogue), _) => {
                let one: Map<String, Value> =
                    [(name.to_owned(), item.clone())].into_iter().collect();
                blocks::card(&one, name, catalogue)?.map(|c| c.id)
            }
            (None, Value::Number(n)) => n.as_i64(),
            (None, _) => {
                return Err(Fail::Tool(ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "{name} names the card {item}, but the card catalogue has not been read yet, so names cannot be resolved."
                    ),
                    "Send card ids instead (cards_catalog lists them once it is read).",
                )));
            }
        };
        if let Some(id) = id {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// Everything a call asks for, read and checked before the store is asked.
pub(super) struct Request {
    pub(super) segment: Segment,
    pub(super) window: Window,
    pub(super) mode: ModeFilter,
    pub(super) mode_text: String,
    pub(super) min_battles: i64,
    pub(super) min_players: i64,
    pub(super) sort: Sort,
    pub(super) limit: i64,
    pub(super) offset: i64,
    pub(super) containing: Vec<i64>,
    pub(super) excluding: Vec<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sort {
    WinRateLow,
    Battles,
    WinRate,
    UsageShare,
}

impl Sort {
    pub(super) fn parse(text: &str) -> Option<Sort> {
        match text {
            "win_rate_low" => Some(Sort::WinRateLow),
            "battles" => Some(Sort::Battles),
            "win_rate" => Some(Sort::WinRate),
            "usage_share" => Some(Sort::UsageShare),
            _ => None,
        }
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Sort::WinRateLow => "win_rate_low",
            Sort::Battles => "battles",
            Sort::WinRate => "win_rate",
            Sort::UsageShare => "usage_share",
        }
    }
}

/// A bounded integer argument: the door checks the schema, and a value outside it is still
/// refused here rather than clamped.
pub(super) fn bounded(
    a: &Map<String, Value>,
    name: &str,
    min: i64,
    max: i64,
    default: i64,
) -> Result<i64, Fail> {
    let v = args::int(a, name, default);
    if v < min || v > max {
        return Err(bad_request(
            format!("{name} {v} is outside {min}-{max}."),
            format!("Send {name} between {min} and {max}, or leave it out for {default}."),
        ));
    }
    Ok(v)
}

pub(super) async fn request(
    ctx: &ToolCtx,
    a: &Map<String, Value>,
    tool: Tool,
) -> Result<Request, Fail> {
    let (max_limit, default_limit) = tool.limits();
    let sort_text = args::text(a, "sort").unwrap_or("win_rate_low");
    let sort = Sort::parse(sort_text).ok_or_else(|| {
        bad_request(
            format!(
                "sort {sort_text:?} is not one of win_rate_low, battles, win_rate, usage_share."
            ),
            format!("{}({{\"sort\": \"battles\"}})", tool.name()),
        )
    })?;
    let mode = mode(a)?;
    let rules = window::default_for(tool.name())
        .ok_or_else(|| Fail::Internal(format!("no default window for {}", tool.name())))?;
    let window = blocks::window(a, &rules, &ctx.caller.timezone, ctx.services.now())?;
    let catalogue = if a.contains_key("containing") || a.contains_key("excluding") {
        ctx.services.store.cards_catalogue().await?
    } else {
        None
    };
    let catalogue = catalogue.as_ref().map(|c| &c.catalogue);
    let containing = card_ids(a, "containing", catalogue)?;
    let excluding = card_ids(a, "excluding", catalogue)?;
    if let Some(both) = containing.iter().find(|id| excluding.contains(id)) {
        return Err(bad_request(
            format!("Card {both} is both in containing and in excluding."),
            "Name each card in one of containing and excluding.",
        ));
    }
    Ok(Request {
        segment: segment(ctx, a, tool).await?,
        window,
        mode,
        mode_text: args::text(a, "mode").unwrap_or("competitive").to_owned(),
        min_battles: bounded(a, "min_battles", 1, 1000, 5)?,
        min_players: bounded(a, "min_players", 1, 50, 1)?,
        sort,
        limit: bounded(a, "limit", 1, max_limit, default_limit)?,
        offset: bounded(a, "offset", 0, 10_000, 0)?,
        containing,
        excluding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_default_to_competitive_and_name_their_stored_modes() {
        assert_eq!(mode(&Map::new()).unwrap(), ModeFilter::Competitive);
        assert_eq!(
            mode_names(ModeFilter::Competitive),
            Some(vec!["ladder".to_owned(), "path_of_legend".to_owned()])
        );
        assert_eq!(mode_names(ModeFilter::All), None);
        for s in ["win_rate_low", "battles", "win_rate", "usage_share"] {
            assert_eq!(Sort::parse(s).unwrap().as_str(), s);
        }
        assert_eq!(Sort::parse("wins"), None);
    }

    #[test]
    fn player_tags_normalize_dedupe_and_name_a_bad_index() {
        let seg = player_tags(&[json!("#20jjj2ccru"), json!("20JJJ2CCRU")], "h").unwrap();
        assert_eq!(
            seg.filter,
            SegmentFilter::Players(vec!["#20JJJ2CCRU".into()])
        );
        let Err(Fail::Tool(e)) = player_tags(&[json!("#20JJJ2CCRU"), json!("#XYZ")], "h") else {
            panic!("accepted a bad tag");
        };
        assert_eq!(e.code, ErrorCode::InvalidTag);
        assert!(e.message.contains("[1]"), "{}", e.message);
        assert!(player_tags(&[], "h").is_err());
    }
}
