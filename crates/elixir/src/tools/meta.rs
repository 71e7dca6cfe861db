//! The meta tools of the Battles group (SURFACE §2.4, §3.4, §4.5): `battles_meta_decks` and
//! `battles_meta_cards`, what wins in a segment (`mine`, `corpus`, a clan's members, a list
//! of players) over a window. The segment, window, mode and card arguments are read here;
//! the store's meta area groups the segment's games by deck and player under the heavy-query
//! budget (`crate::store::MetaReads`), and this file rolls those rows up into decks or cards
//! with their STATS, usage shares and Wilson lower bounds, filters, sorts and pages them. A
//! spent budget is `query_timeout` (refunded by the spec runner).

use std::collections::{BTreeSet, HashMap};

use elixir_record::cards::Catalogue;
use elixir_record::stats::{RowKind, Stats, round4, wilson_lower_bound, win_rate};
use elixir_record::window::{self, Window};
use elixir_record::{Mode, ModeFilter, Tag, calendar};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::envelope::{ErrorCode, Success, ToolError};
use crate::mcp::spec::{
    Fail, Flag, Group, Outcome, Param, SCOPE_READ, ToolCtx, ToolSpec, bad_request, handler,
};
use crate::model::Principal;
use crate::store::{DeckGames, MetaQuery, MetaRows, Population, SegmentFilter, StoreError};

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
enum Tool {
    Decks,
    Cards,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Decks => "battles_meta_decks",
            Tool::Cards => "battles_meta_cards",
        }
    }

    fn limits(self) -> (i64, i64) {
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
                    "properties": {"collection": args::pattern("A collection slug.", "^[a-z0-9][a-z0-9-]{1,39}$", 40)},
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
        args::choice(
            "Battles of this mode or family (competitive: ladder and path_of_legend; river_race: war, war_duel and boat).",
            &ModeFilter::names(),
            Some("competitive"),
        ),
    ));
    params.push(Param::new(
        "min_battles",
        args::integer(
            "Leave out rows with fewer games than this (1-1000).",
            1,
            1000,
            5,
        ),
    ));
    params.push(Param::new(
        "sort",
        args::choice(
            "Order: win_rate_low (95% Wilson lower bound), battles, win_rate or usage_share, highest first.",
            &["win_rate_low", "battles", "win_rate", "usage_share"],
            Some("win_rate_low"),
        ),
    ));
    params.push(Param::new(
        "limit",
        args::integer("Rows per page.", 1, max_limit, default_limit),
    ));
    params.push(Param::new(
        "offset",
        args::integer("Rows to skip (from next_offset).", 0, 10_000, 0),
    ));
    if tool == Tool::Decks {
        params.push(Param::new(
            "min_players",
            args::integer(
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

pub fn meta_decks() -> ToolSpec {
    let mut output = vec![(
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
        true,
    )];
    output.extend(common_output());
    ToolSpec {
        name: Tool::Decks.name(),
        group: Group::Battles,
        title: "Meta decks",
        description: "Segment tool: the decks that win in a segment (mine, corpus, a clan's members or up to 50 players) over a window (default: the current season to date), competitive modes by default. Each deck carries its cards, usage_share, STATS and win_rate_low (95% Wilson lower bound, the default order); a duel counts each round as a game. min_battles, min_players, containing and excluding narrow the list; population and excluded say what was counted. Runs under the 18 s heavy-query budget.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W, Flag::S, Flag::Co, Flag::H],
        params: params(Tool::Decks),
        compact_drops: None,
        output,
        docs: DECKS_DOCS.into(),
        too_large_hint: "battles_meta_decks({\"limit\": 10}) pages fewer decks; min_battles or containing narrow the list.".into(),
        handler: handler(|ctx, a| call(ctx, a, Tool::Decks)),
    }
}

pub fn meta_cards() -> ToolSpec {
    let mut output = vec![(
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
        true,
    )];
    output.extend(common_output());
    ToolSpec {
        name: Tool::Cards.name(),
        group: Group::Battles,
        title: "Meta cards",
        description: "Segment tool: how each card (and form) is used and does in a segment (mine, corpus, a clan's members or up to 50 players) over a window (default: the current season to date), competitive modes by default. Each card carries usage_share (of games with a known deck), STATS and win_rate_low (95% Wilson lower bound, the default order); a duel counts each round as a game. population and excluded say what was counted. Runs under the 18 s heavy-query budget.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W, Flag::S, Flag::Co, Flag::H],
        params: params(Tool::Cards),
        compact_drops: None,
        output,
        docs: CARDS_DOCS.into(),
        too_large_hint: "battles_meta_cards({\"limit\": 20}) pages fewer cards; min_battles narrows the list.".into(),
        handler: handler(|ctx, a| call(ctx, a, Tool::Cards)),
    }
}

// ---- arguments ----

/// The segment a call names, resolved to whose games count.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    filter: SegmentFilter,
    /// `applied.segment`.
    echo: Value,
}

/// Reads `segment` (SURFACE §2.1) for this caller.
async fn segment(ctx: &ToolCtx, a: &Map<String, Value>, tool: Tool) -> Result<Segment, Fail> {
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
async fn mine(ctx: &ToolCtx, tool: Tool) -> Result<Segment, Fail> {
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
async fn recorded_clan(ctx: &ToolCtx, clan: &Tag) -> Result<(), Fail> {
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
fn player_tags(items: &[Value], hint: &str) -> Result<Segment, Fail> {
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
fn mode(a: &Map<String, Value>) -> Result<ModeFilter, Fail> {
    if a.get("mode").is_none() {
        return Ok(ModeFilter::Competitive);
    }
    blocks::mode(a)
}

/// The stored mode names a filter keeps; `None` for every mode.
fn mode_names(filter: ModeFilter) -> Option<Vec<String>> {
    (filter != ModeFilter::All).then(|| {
        Mode::ALL
            .iter()
            .filter(|m| filter.includes(**m))
            .map(|m| m.as_str().to_owned())
            .collect()
    })
}

/// The card ids of `containing` or `excluding`: an id as it is, a name by the catalogue.
fn card_ids(
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
struct Request {
    segment: Segment,
    window: Window,
    mode: ModeFilter,
    mode_text: String,
    min_battles: i64,
    min_players: i64,
    sort: Sort,
    limit: i64,
    offset: i64,
    containing: Vec<i64>,
    excluding: Vec<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    WinRateLow,
    Battles,
    WinRate,
    UsageShare,
}

impl Sort {
    fn parse(text: &str) -> Option<Sort> {
        match text {
            "win_rate_low" => Some(Sort::WinRateLow),
            "battles" => Some(Sort::Battles),
            "win_rate" => Some(Sort::WinRate),
            "usage_share" => Some(Sort::UsageShare),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
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
fn bounded(
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

async fn request(ctx: &ToolCtx, a: &Map<String, Value>, tool: Tool) -> Result<Request, Fail> {
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

// ---- the answer ----

/// One deck's or card's games, rolled up from the store's per-player rows.
#[derive(Debug, Clone, Default)]
struct Tally {
    games: u64,
    wins: u64,
    losses: u64,
    draws: u64,
    players: BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, row: &DeckGames) {
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        self.games += n(row.games);
        self.wins += n(row.wins);
        self.losses += n(row.losses);
        self.draws += n(row.draws);
        if !self.players.contains(&row.player_tag) {
            self.players.insert(row.player_tag.clone());
        }
    }

    fn stats(&self) -> Stats {
        let decided = self.wins + self.losses;
        Stats {
            battles: self.games,
            wins: self.wins,
            losses: self.losses,
            draws: self.draws,
            decided_battles: decided,
            win_rate: win_rate(self.wins, decided),
            players: u64::try_from(self.players.len()).unwrap_or(u64::MAX),
            insufficient_sample: decided < RowKind::Pooled.min_decided(),
        }
    }

    fn win_rate_low(&self) -> Option<f64> {
        wilson_lower_bound(self.wins, self.wins + self.losses)
    }
}

/// A ranked row: its key, tally and usage share.
struct Ranked {
    key: String,
    tally: Tally,
    usage_share: f64,
}

/// `part ÷ whole` to four decimals (0 when nothing was played).
fn share(part: u64, whole: u64) -> f64 {
    // game counts stay far below 2^53
    #[allow(clippy::cast_precision_loss)]
    if whole == 0 {
        0.0
    } else {
        round4(part as f64 / whole as f64)
    }
}

/// Orders rows by `sort`, highest first; ties by games, then key (stable pages).
fn rank(rows: &mut [Ranked], sort: Sort) {
    let metric = |r: &Ranked| -> f64 {
        match sort {
            Sort::WinRateLow => r.tally.win_rate_low().unwrap_or(-1.0),
            Sort::Battles => 0.0,
            Sort::WinRate => r.tally.stats().win_rate.unwrap_or(-1.0),
            Sort::UsageShare => r.usage_share,
        }
    };
    rows.sort_by(|a, b| {
        metric(b)
            .total_cmp(&metric(a))
            .then(b.tally.games.cmp(&a.tally.games))
            .then(a.key.cmp(&b.key))
    });
}

/// The card ids of a deck's keys (`"<id>:<form>"`).
fn ids_of(card_keys: &str) -> impl Iterator<Item = i64> + '_ {
    card_keys
        .split(',')
        .filter_map(|k| k.split(':').next().and_then(|id| id.parse().ok()))
}

/// The rows that pass the thresholds, and the `excluded` counts.
struct Kept {
    rows: Vec<Ranked>,
    considered: u64,
    below_min_battles: u64,
    below_min_players: u64,
}

fn keep(tallies: HashMap<String, Tally>, disclosed: u64, req: &Request, tool: Tool) -> Kept {
    let min_battles = u64::try_from(req.min_battles).unwrap_or(1);
    let min_players = match tool {
        Tool::Decks => usize::try_from(req.min_players).unwrap_or(1),
        Tool::Cards => 1,
    };
    let mut kept = Kept {
        rows: Vec::new(),
        considered: 0,
        below_min_battles: 0,
        below_min_players: 0,
    };
    for (key, tally) in tallies {
        kept.considered += 1;
        if tally.games < min_battles {
            kept.below_min_battles += 1;
        } else if tally.players.len() < min_players {
            kept.below_min_players += 1;
        } else {
            let usage_share = share(tally.games, disclosed);
            kept.rows.push(Ranked {
                key,
                tally,
                usage_share,
            });
        }
    }
    rank(&mut kept.rows, req.sort);
    kept
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
        "crosses": w.season_rolls().iter().map(|r| json!({
            "kind": "season",
            "at": iso(r.at.as_millisecond()),
            "from_season": r.from_season,
            "to_season": r.to_season,
        })).collect::<Vec<_>>(),
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
    let req = request(&ctx, &a, tool).await?;
    let now = ctx.services.now();
    let query = MetaQuery {
        from: req.window.from.map(|f| f.as_millisecond()),
        to: req.window.to.as_millisecond(),
        modes: mode_names(req.mode),
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
        Tool::Decks => decks(&ctx, &rows, &req).await?,
        Tool::Cards => cards(&ctx, &rows, &req).await?,
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
        .applied("verbosity", json!(args::verbosity(&a)));
    if tool == Tool::Decks {
        success = success.applied("min_players", json!(req.min_players));
    }
    Ok(success)
}

/// The page of `kept` and its `excluded`, `total` and `next_offset` fields.
fn page<'k>(success: Success, kept: &'k Kept, req: &Request) -> (Success, &'k [Ranked]) {
    let total = kept.rows.len();
    let offset = usize::try_from(req.offset).unwrap_or(0).min(total);
    let limit = usize::try_from(req.limit).unwrap_or(1);
    let end = (offset + limit).min(total);
    let next = (end < total).then_some(end);
    let success = success
        .field(
            "excluded",
            json!({
                "considered": kept.considered,
                "below_min_battles": kept.below_min_battles,
                "below_min_players": kept.below_min_players,
            }),
        )
        .field("total", json!(total))
        .field("next_offset", json!(next));
    (success, &kept.rows[offset..end])
}

fn stats_json(t: &Tally) -> Value {
    serde_json::to_value(t.stats()).unwrap_or(Value::Null)
}

async fn decks(ctx: &ToolCtx, rows: &MetaRows, req: &Request) -> Result<Success, Fail> {
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    let mut disclosed = 0u64;
    for row in &rows.games {
        let Some(hash) = &row.deck_hash else { continue };
        disclosed += u64::try_from(row.games).unwrap_or(0);
        let keys = rows.card_keys.get(hash).map_or("", String::as_str);
        let ids: Vec<i64> = ids_of(keys).collect();
        let passes = req.containing.iter().all(|c| ids.contains(c))
            && !req.excluding.iter().any(|c| ids.contains(c));
        if passes {
            tallies.entry(hash.clone()).or_default().add(row);
        }
    }
    let kept = keep(tallies, disclosed, req, Tool::Decks);
    let (success, shown) = page(Success::new(), &kept, req);
    let hashes: Vec<String> = shown.iter().map(|r| r.key.clone()).collect();
    let details: HashMap<String, crate::store::DeckDetail> = ctx
        .services
        .store
        .deck_details(&hashes)
        .await?
        .into_iter()
        .map(|d| (d.deck_hash.clone(), d))
        .collect();
    let mut out = Vec::with_capacity(shown.len());
    let (mut with_troop, mut without_troop) = (false, false);
    for r in shown {
        let detail = details
            .get(&r.key)
            .ok_or_else(|| Fail::Internal(format!("deck {} has games but no row", r.key)))?;
        let cards: Value = serde_json::from_str(&detail.cards)
            .map_err(|e| Fail::Internal(format!("deck {} cards: {e}", r.key)))?;
        let tower_troop: Value = match &detail.tower_troop {
            Some(t) => serde_json::from_str(t)
                .map_err(|e| Fail::Internal(format!("deck {} tower troop: {e}", r.key)))?,
            None => Value::Null,
        };
        if tower_troop.is_null() {
            without_troop = true;
        } else {
            with_troop = true;
        }
        out.push(json!({
            "deck_hash": r.key,
            "avg_elixir": avg_elixir(&cards),
            "cards": cards,
            "tower_troop": tower_troop,
            "usage_share": r.usage_share,
            "win_rate_low": r.tally.win_rate_low(),
            "stats": stats_json(&r.tally),
        }));
    }
    let mut success = success.field("decks", Value::Array(out));
    if with_troop && without_troop {
        success = success.note("War battles report no tower troop, so a war deck (tower_troop null) hashes apart from the same eight cards on the ladder.");
    }
    Ok(success)
}

/// The mean elixir cost of a deck's cards whose cost is known, two decimals; null when none
/// is (Mirror has no fixed cost).
fn avg_elixir(cards: &Value) -> Value {
    let costs: Vec<i64> = cards
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|card| card["elixir"].as_i64())
                .collect()
        })
        .unwrap_or_default();
    if costs.is_empty() {
        return Value::Null;
    }
    // a deck's few small costs are exact in f64
    #[allow(clippy::cast_precision_loss)]
    let mean = costs.iter().sum::<i64>() as f64 / costs.len() as f64;
    json!((mean * 100.0).round() / 100.0)
}

async fn cards(ctx: &ToolCtx, rows: &MetaRows, req: &Request) -> Result<Success, Fail> {
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    // a deck holding each card, to read its name and form back
    let mut holder: HashMap<String, (String, usize)> = HashMap::new();
    let mut disclosed = 0u64;
    for row in &rows.games {
        let Some(hash) = &row.deck_hash else { continue };
        disclosed += u64::try_from(row.games).unwrap_or(0);
        let Some(keys) = rows.card_keys.get(hash) else {
            continue;
        };
        for (i, key) in keys.split(',').filter(|k| !k.is_empty()).enumerate() {
            tallies.entry(key.to_owned()).or_default().add(row);
            holder
                .entry(key.to_owned())
                .or_insert_with(|| (hash.clone(), i));
        }
    }
    let kept = keep(tallies, disclosed, req, Tool::Cards);
    let (success, shown) = page(Success::new(), &kept, req);
    let mut hashes: Vec<String> = shown
        .iter()
        .filter_map(|r| holder.get(&r.key).map(|(h, _)| h.clone()))
        .collect();
    hashes.sort();
    hashes.dedup();
    let decks: HashMap<String, Value> = ctx
        .services
        .store
        .deck_details(&hashes)
        .await?
        .into_iter()
        .map(|d| {
            let cards = serde_json::from_str(&d.cards).unwrap_or(Value::Null);
            (d.deck_hash, cards)
        })
        .collect();
    let mut out = Vec::with_capacity(shown.len());
    for r in shown {
        let card = holder
            .get(&r.key)
            .and_then(|(hash, i)| decks.get(hash).and_then(|cards| cards.get(*i)))
            .ok_or_else(|| Fail::Internal(format!("card {} has games but no deck row", r.key)))?;
        out.push(json!({
            "id": card["id"],
            "name": card["name"],
            "form": card["form"],
            "usage_share": r.usage_share,
            "win_rate_low": r.tally.win_rate_low(),
            "stats": stats_json(&r.tally),
        }));
    }
    Ok(success
        .field("cards", Value::Array(out))
        .note("A card's usage_share is the share of games with a known deck that held it, so the shares add up to about eight."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(wins: u64, losses: u64, players: &[&str]) -> Tally {
        Tally {
            games: wins + losses,
            wins,
            losses,
            draws: 0,
            players: players.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn ranked(key: &str, t: Tally, usage_share: f64) -> Ranked {
        Ranked {
            key: key.into(),
            tally: t,
            usage_share,
        }
    }

    #[test]
    fn wilson_order_puts_a_large_sample_above_a_perfect_small_one() {
        let mut rows = vec![
            ranked("small", tally(3, 0, &["a"]), 0.1),
            ranked("large", tally(60, 20, &["a", "b"]), 0.5),
            ranked("empty", tally(0, 0, &["a"]), 0.0),
        ];
        rank(&mut rows, Sort::WinRateLow);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["large", "small", "empty"]);
        rank(&mut rows, Sort::WinRate);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["small", "large", "empty"]);
        rank(&mut rows, Sort::Battles);
        assert_eq!(rows[0].key, "large");
        // ties by games, then key: pages stay stable
        let mut tied = vec![
            ranked("b", tally(1, 1, &["a"]), 0.2),
            ranked("a", tally(1, 1, &["a"]), 0.2),
        ];
        rank(&mut tied, Sort::UsageShare);
        assert_eq!(tied[0].key, "a");
    }

    #[test]
    fn pooled_rows_need_twenty_decided_games() {
        assert!(tally(10, 9, &["a"]).stats().insufficient_sample);
        assert!(!tally(10, 10, &["a"]).stats().insufficient_sample);
        assert_eq!(tally(3, 1, &["a", "b"]).stats().players, 2);
    }

    #[test]
    fn shares_and_elixir_round_and_card_ids_parse() {
        assert_eq!(share(1, 3), 0.3333);
        assert_eq!(share(0, 0), 0.0);
        assert_eq!(
            ids_of("26000000:0,26000010:1,28000000:0").collect::<Vec<_>>(),
            [26_000_000, 26_000_010, 28_000_000]
        );
        let cards = json!([{"elixir": 3}, {"elixir": 4}, {"elixir": null}]);
        assert_eq!(avg_elixir(&cards), json!(3.5));
        assert_eq!(avg_elixir(&json!([{"elixir": null}])), Value::Null);
        assert_eq!(
            mode_names(ModeFilter::Competitive),
            Some(vec!["ladder".to_owned(), "path_of_legend".to_owned()])
        );
        assert_eq!(mode_names(ModeFilter::All), None);
    }
}
