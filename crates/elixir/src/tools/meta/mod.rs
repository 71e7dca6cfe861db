//! The meta tools of the Battles group (SURFACE §2.4, §3.4, §4.5): `battles_meta_decks` and
//! `battles_meta_cards`, what wins in a segment (`mine`, `corpus`, a clan's members, a list
//! of players) over a window. This file declares them and runs a call: [`args`] reads and
//! checks the arguments, the store's meta area groups the segment's games by deck and player
//! under the heavy-query budget (`crate::store::MetaReads`), and [`rollup`] turns those rows
//! into decks or cards with their STATS, usage shares and Wilson lower bounds, filtered,
//! sorted and paged. A spent budget is `query_timeout` (refunded by the spec runner).

mod args;
mod rollup;

use elixir_record::window::Window;
use elixir_record::{ModeFilter, calendar};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::mcp::args as arg;
use crate::mcp::blocks;
use crate::mcp::call::{ErrorCode, Fail, Outcome, ToolCtx, ToolError, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};
use crate::store::{MetaQuery, Population, SegmentFilter, StoreError};
use args::Request;

/// The decks tool's `docs` pointer.
pub const DECKS_DOCS: &str = "tools-battles#battles-meta-decks";
/// The cards tool's `docs` pointer.
pub const CARDS_DOCS: &str = "tools-battles#battles-meta-cards";
/// Most players in a `{player_tags}` segment.
pub const MAX_SEGMENT_PLAYERS: u64 = 50;
/// Most cards in `containing` or `excluding`.
pub const MAX_CARD_FILTER: u64 = 8;
/// `retry_after_s` of a `query_timeout`: long enough for a busy database to drain.
pub const TIMEOUT_RETRY_S: u64 = 30;
const DAY_MS: Millis = 86_400_000;

pub fn specs() -> Vec<ToolSpec> {
    vec![meta_cards(), meta_decks()]
}

/// Which of the two tools a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tool {
    Decks,
    Cards,
}

impl Tool {
    pub(super) fn name(self) -> &'static str {
        match self {
            Tool::Decks => "battles_meta_decks",
            Tool::Cards => "battles_meta_cards",
        }
    }

    pub(super) fn limits(self) -> (i64, i64) {
        match self {
            Tool::Decks => (50, 20),
            Tool::Cards => (120, 40),
        }
    }
}

// ---- declarations ----

fn segment_param() -> Param {
    let tag = |description: &str| blocks::tag_schema(description);
    Param::new(
        "segment",
        json!({
            "description": "Whose battles: \"mine\", \"corpus\", {\"clan_tag\"}, {\"player_tags\": [1-50]} or {\"collection\"}.",
            "anyOf": [
                {"type": "string", "enum": ["mine", "corpus"], "description": "mine: your tracked players (agent doors: the door clan's members); corpus: every recorded player."},
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["clan_tag"],
                    "description": "The clan's recorded members over the window.",
                    "properties": {"clan_tag": tag("The clan's tag, e.g. #9YJUPU9LY.")},
                },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["player_tags"],
                    "description": "These players.",
                    "properties": {"player_tags": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_SEGMENT_PLAYERS,
                        "items": tag("A player's tag."),
                        "description": "1-50 player tags.",
                    }},
                },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["collection"],
                    "description": "A collection's players (collections are not available yet).",
                    "properties": {"collection": arg::pattern("A collection slug.", "^[a-z0-9][a-z0-9-]{1,39}$", 40)},
                },
            ],
        }),
    )
    .required()
}

fn card_list_param(name: &'static str, description: &str) -> Param {
    Param::new(
        name,
        json!({
            "type": "array",
            "maxItems": MAX_CARD_FILTER,
            "items": {"anyOf": [
                {"type": "integer", "minimum": 1, "maximum": 999_999_999},
                {"type": "string", "minLength": 1, "maxLength": 40},
            ]},
            "description": description,
        }),
    )
}

fn params(tool: Tool) -> Vec<Param> {
    let (max_limit, default_limit) = tool.limits();
    let mut params = vec![segment_param()];
    params.extend(blocks::window_params());
    params.extend(blocks::season_params());
    params.push(Param::new(
        "mode",
        arg::choice(
            "Battles of this mode or family (competitive: ladder and path_of_legend; river_race: war, war_duel and boat).",
            &ModeFilter::names(),
            Some("competitive"),
        ),
    ));
    params.push(Param::new(
        "min_battles",
        arg::integer(
            "Leave out rows with fewer games than this (1-1000).",
            1,
            1000,
            5,
        ),
    ));
    params.push(Param::new(
        "sort",
        arg::choice(
            "Order: win_rate_low (95% Wilson lower bound), battles, win_rate or usage_share, highest first.",
            &["win_rate_low", "battles", "win_rate", "usage_share"],
            Some("win_rate_low"),
        ),
    ));
    params.push(Param::new(
        "limit",
        arg::integer("Rows per page.", 1, max_limit, default_limit),
    ));
    params.push(Param::new(
        "offset",
        arg::integer("Rows to skip (from next_offset).", 0, 10_000, 0),
    ));
    if tool == Tool::Decks {
        params.push(Param::new(
            "min_players",
            arg::integer(
                "Leave out decks played by fewer distinct players (1-50).",
                1,
                50,
                1,
            ),
        ));
        params.push(card_list_param(
            "containing",
            "Only decks holding every one of these cards (ids or exact names, any form; 0-8).",
        ));
        params.push(card_list_param(
            "excluding",
            "Only decks holding none of these cards (ids or exact names, any form; 0-8).",
        ));
    }
    params
}

fn stats_schema() -> Value {
    json!({
        "type": "object",
        "description": "The row's sample (games: a duel counts each round).",
        "required": ["battles", "wins", "losses", "draws", "decided_battles", "win_rate", "players", "insufficient_sample"],
        "properties": {
            "battles": {"type": "integer"}, "wins": {"type": "integer"},
            "losses": {"type": "integer"}, "draws": {"type": "integer"},
            "decided_battles": {"type": "integer"}, "win_rate": {"type": ["number", "null"]},
            "players": {"type": "integer"}, "insufficient_sample": {"type": "boolean"},
        },
    })
}

fn common_output() -> Vec<(&'static str, Value, bool)> {
    vec![
        (
            "population",
            json!({
                "type": "object",
                "description": "{recorded_players, players_in_window, battles_in_window, decided_battles} of the segment.",
                "required": ["recorded_players", "players_in_window", "battles_in_window", "decided_battles"],
                "properties": {
                    "recorded_players": {"type": "integer"}, "players_in_window": {"type": "integer"},
                    "battles_in_window": {"type": "integer"}, "decided_battles": {"type": "integer"},
                },
            }),
            true,
        ),
        (
            "excluded",
            json!({
                "type": "object",
                "description": "{considered, below_min_battles, below_min_players}: rows seen and rows left out by each threshold.",
                "required": ["considered", "below_min_battles", "below_min_players"],
                "properties": {
                    "considered": {"type": "integer"}, "below_min_battles": {"type": "integer"},
                    "below_min_players": {"type": "integer"},
                },
            }),
            true,
        ),
        (
            "total",
            json!({"type": "integer", "description": "Rows that pass every threshold, across all pages."}),
            true,
        ),
        (
            "next_offset",
            json!({"type": ["integer", "null"], "description": "offset of the next page; null on the last."}),
            true,
        ),
    ]
}

fn deck_card_schema() -> Value {
    json!({
        "type": "object",
        "required": ["id", "name", "form", "elixir"],
        "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"},
            "form": {"type": ["string", "null"]}, "elixir": {"type": ["integer", "null"]},
        },
    })
}

/// A segment tool's declaration: what every one shares (group, scope, kinds, flags, its
/// parameters, its rows then the common output, its handler) around its own `title`,
/// `description`, `rows` entry and (`docs`, `too_large_hint`).
fn declare(
    tool: Tool,
    title: &'static str,
    description: &str,
    (name, rows): (&'static str, Value),
    (docs, too_large_hint): (&str, &str),
) -> ToolSpec {
    let mut output = vec![(name, rows, true)];
    output.extend(common_output());
    ToolSpec {
        name: tool.name(),
        group: Group::Battles,
        title,
        description: description.into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W, Flag::S, Flag::Co, Flag::H],
        params: params(tool),
        compact_drops: None,
        output,
        docs: docs.into(),
        too_large_hint: too_large_hint.into(),
        handler: handler(move |ctx, a| call(ctx, a, tool)),
    }
}

pub fn meta_decks() -> ToolSpec {
    declare(
        Tool::Decks,
        "Meta decks",
        "Segment tool: the decks that win in a segment (mine, corpus, a clan's members or up to 50 players) over a window (default: the current season to date), competitive modes by default. Each deck carries its cards, usage_share, STATS and win_rate_low (95% Wilson lower bound, the default order); a duel counts each round as a game. min_battles, min_players, containing and excluding narrow the list; population and excluded say what was counted. Runs under the 18 s heavy-query budget.",
        (
            "decks",
            json!({
                "type": "array",
                "description": "{deck_hash, cards[], tower_troop?, avg_elixir, usage_share, win_rate_low, STATS}, sorted.",
                "items": {
                    "type": "object",
                    "required": ["deck_hash", "cards", "tower_troop", "avg_elixir", "usage_share", "win_rate_low", "stats"],
                    "properties": {
                        "deck_hash": {"type": "string"},
                        "cards": {"type": "array", "items": deck_card_schema()},
                        "tower_troop": {"type": ["object", "null"]},
                        "avg_elixir": {"type": ["number", "null"]},
                        "usage_share": {"type": "number"},
                        "win_rate_low": {"type": ["number", "null"]},
                        "stats": stats_schema(),
                    },
                },
            }),
        ),
        (
            DECKS_DOCS,
            "battles_meta_decks({\"limit\": 10}) pages fewer decks; min_battles or containing narrow the list.",
        ),
    )
}

pub fn meta_cards() -> ToolSpec {
    declare(
        Tool::Cards,
        "Meta cards",
        "Segment tool: how each card (and form) is used and does in a segment (mine, corpus, a clan's members or up to 50 players) over a window (default: the current season to date), competitive modes by default. Each card carries usage_share (of games with a known deck), STATS and win_rate_low (95% Wilson lower bound, the default order); a duel counts each round as a game. population and excluded say what was counted. Runs under the 18 s heavy-query budget.",
        (
            "cards",
            json!({
                "type": "array",
                "description": "{id, name, form, usage_share, win_rate_low, STATS}, one row per card and form, sorted.",
                "items": {
                    "type": "object",
                    "required": ["id", "name", "form", "usage_share", "win_rate_low", "stats"],
                    "properties": {
                        "id": {"type": "integer"}, "name": {"type": "string"},
                        "form": {"type": ["string", "null"]},
                        "usage_share": {"type": "number"},
                        "win_rate_low": {"type": ["number", "null"]},
                        "stats": stats_schema(),
                    },
                },
            }),
        ),
        (
            CARDS_DOCS,
            "battles_meta_cards({\"limit\": 20}) pages fewer cards; min_battles narrows the list.",
        ),
    )
}

fn population_json(p: &Population) -> Value {
    json!({
        "recorded_players": p.recorded_players,
        "players_in_window": p.players_in_window,
        "battles_in_window": p.battles_in_window,
        "decided_battles": p.decided_battles,
    })
}

/// `applied.window` (SURFACE §3.1) of a season-grained segment tool.
fn window_json(w: &Window, now: Millis) -> Value {
    let to = w.to.as_millisecond();
    let from = w.from.map(|f| f.as_millisecond());
    let season = w.season.or_else(|| w.from.and_then(calendar::season_at));
    let mut out = json!({
        "from": from.map(iso),
        "to": iso(to),
        "source": w.source,
        "timezone": w.timezone,
        "crosses": blocks::crosses(w),
    });
    if let Some(s) = season {
        out["season"] = json!({
            "month": s.label(),
            "war": s.id,
            "starts_at": iso(s.starts_at.as_millisecond()),
            "ends_at": iso(s.ends_at.as_millisecond()),
        });
    }
    let current = jiff::Timestamp::from_millisecond(now)
        .ok()
        .and_then(calendar::season_at);
    if let Some(current) = current {
        let age = (to - current.starts_at.as_millisecond()).div_euclid(DAY_MS);
        if age >= 0 {
            out["season_age_days"] = json!(age);
        }
    }
    out
}

fn timeout(tool: Tool, req: &Request) -> Fail {
    let mut e = ToolError::new(
        ErrorCode::QueryTimeout,
        "The aggregation ran past the heavy-query budget and the database cancelled it; the call was not charged.",
        format!(
            "{}({{\"segment\": {}, \"days\": 7}}) narrows the window; a smaller segment also helps.",
            tool.name(),
            req.segment.echo
        ),
    );
    e.retry_after_s = Some(TIMEOUT_RETRY_S);
    Fail::Tool(e)
}

async fn call(ctx: ToolCtx, a: Map<String, Value>, tool: Tool) -> Outcome {
    let req = args::request(&ctx, &a, tool).await?;
    let now = ctx.services.now();
    let query = MetaQuery {
        from: req.window.from.map(|f| f.as_millisecond()),
        to: req.window.to.as_millisecond(),
        modes: args::mode_names(req.mode),
        segment: req.segment.filter.clone(),
    };
    let store = &ctx.services.store;
    let rows = match store
        .meta_rows(&query, ctx.services.settings.heavy_query_budget)
        .await
    {
        Ok(rows) => rows,
        Err(StoreError::Timeout(_)) => return Err(timeout(tool, &req)),
        Err(e) => return Err(e.into()),
    };
    let mut success = match tool {
        Tool::Decks => rollup::decks(&ctx, &rows, &req).await?,
        Tool::Cards => rollup::cards(&ctx, &rows, &req).await?,
    };
    if rows.population.players_in_window == 0 {
        success = success.note(
            "No battle of this segment is recorded in this window and mode; widen the window, change the mode, or check elixir_coverage.",
        );
    }
    if let SegmentFilter::Players(tags) = &req.segment.filter {
        let unrecorded = usize::try_from(rows.population.recorded_players)
            .map_or(0, |recorded| tags.len().saturating_sub(recorded));
        if unrecorded > 0 {
            success = success.note(format!(
                "{unrecorded} of the {} players named are not recorded, so nothing of theirs is counted.",
                tags.len()
            ));
        }
    }
    let mut success = success
        .field("population", population_json(&rows.population))
        .applied("window", window_json(&req.window, now))
        .applied("segment", req.segment.echo.clone())
        .applied("mode", json!(req.mode_text))
        .applied("min_battles", json!(req.min_battles))
        .applied("sort", json!(req.sort.as_str()))
        .applied("limit", json!(req.limit))
        .applied("offset", json!(req.offset))
        .applied("verbosity", json!(arg::verbosity(&a)));
    if tool == Tool::Decks {
        success = success.applied("min_players", json!(req.min_players));
    }
    Ok(success)
}
