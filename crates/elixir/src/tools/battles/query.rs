//! `battles_query` (SURFACE §2.4): the subject's recorded battles, newest first, filtered by
//! window, mode, game mode, opponent, outcome, cards, deck and battle id, paged by signed
//! cursor ([`super::cursor`]) and shown at full or compact size ([`super::render`]). Reads
//! `limit + 1` battles so an exactly full page carries no cursor (§4.5). The window, game mode,
//! outcome and battle id filter in SQL; the filters a stored row cannot answer alone (any
//! opponent in 2v2, cards, a duel's round decks) filter the subject's window in process.

use elixir_record::cards::Catalogue;
use elixir_record::{Side, Tag};
use serde_json::{Map, Value, json};

use super::cursor::{self, CursorError, Position};
use super::{Args, Played, Scope, bounded, common_params, docs_pointer, kinds, one_of, render};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{
    ErrorCode, Fail, Outcome, RESULT_CAP, ToolCtx, ToolError, bad_request, handler,
};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_query";
/// The most battles a full-size page may carry; more needs `verbosity: "compact"`.
pub const FULL_LIMIT: i64 = 25;
/// The most battles a page may carry.
pub const MAX_LIMIT: i64 = 50;
/// What a page's battles may spend of the result cap, leaving the rest to the envelope
/// (`meta`, `applied`, notes, `next_cursor`, `live_status`), which stays under 4,000 characters.
const PAGE_BUDGET: usize = RESULT_CAP - 8_000;
/// `deck_hash` and `battle_id`: 64 hex characters.
pub const HEX64_PATTERN: &str = "^[0-9a-fA-F]{64}$";

fn card_items() -> Value {
    json!({
        "type": "array",
        "description": "1-8 cards (ids or exact names) all in your deck.",
        "minItems": 1,
        "maxItems": 8,
        "items": {"anyOf": [
            {"type": "integer", "minimum": 1, "maximum": 999_999_999},
            {"type": "string", "minLength": 1, "maxLength": 40},
        ]},
    })
}

/// The `battles_query` declaration.
pub fn spec() -> ToolSpec {
    let mut params = common_params();
    params.push(blocks::live_param());
    params.extend([
        Param::new(
            "game_mode_id",
            json!({"type": "integer", "minimum": 0, "maximum": 999_999_999, "description": "Only battles of this upstream gameMode.id."}),
        ),
        Param::new(
            "opponent_tag",
            blocks::tag_schema("Only battles against this player (either opponent in 2v2)."),
        ),
        Param::new(
            "outcome",
            args::choice("Only battles you won, lost or drew.", &["win", "loss", "draw"], None),
        ),
        blocks::card_param("with_card", "Only battles where your deck had this card (id or exact name)."),
        Param::new("with_cards", card_items()),
        blocks::card_param("against_card", "Only battles where an opponent's deck had this card (id or exact name)."),
        Param::new(
            "deck_hash",
            args::pattern("Only battles played with this deck (64 hex; a duel matches any round).", HEX64_PATTERN, 64),
        ),
        Param::new(
            "battle_id",
            args::pattern("Only the battle with this id (64 hex).", HEX64_PATTERN, 64),
        ),
        Param::new(
            "include_total",
            json!({"type": "boolean", "default": false, "description": "Also count every matching battle (total)."}),
        ),
        Param::new(
            "cursor",
            args::pattern(
                "next_cursor of the previous page, with the same filters (24 hours).",
                "^[A-Za-z0-9_-]{1,200}$",
                cursor::MAX_CHARS,
            ),
        ),
        Param::new(
            "limit",
            args::integer("Battles per page (1-50); above 25 needs verbosity compact.", 1, MAX_LIMIT, FULL_LIMIT),
        ),
    ]);
    let participant = json!({"type": "object"});
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Battle log",
        description: "Player tool: your recorded battles, newest first, filtered by window, season, mode, game mode, opponent, outcome, cards you or they played, deck_hash or battle_id. Each battle shows your side as team and your outcome; compact keeps ids, crowns, trophies and card keys. Pages by next_cursor (signed, 24 hours, same filters); limit above 25 needs compact; live:true reads the log first.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S, Flag::V, Flag::Cc, Flag::L, Flag::O],
        params,
        compact_drops: Some("each battle to its id, time, mode and outcome, and each participant to tag, name, crowns, trophy_change, deck_hash, card_keys and tower_troop_id"),
        output: vec![
            (
                "battles",
                json!({
                    "type": "array",
                    "description": "Battles newest first: {battle_id, battle_time, battle_time_local, type, mode, game_mode, deck_selection, arena, league_number?, outcome?, team[], opponent[], rounds[] (duels), boat (boat battles)}.",
                    "items": {
                        "type": "object",
                        "required": ["battle_id", "battle_time", "mode", "outcome", "team", "opponent"],
                        "properties": {
                            "battle_id": {"type": "string"},
                            "battle_time": {"type": "string"},
                            "battle_time_local": {"type": "string"},
                            "mode": {"type": "string"},
                            "outcome": {"enum": ["win", "loss", "draw", null]},
                            "team": {"type": "array", "items": participant},
                            "opponent": {"type": "array", "items": participant},
                            "rounds": {"type": "array"},
                            "boat": {"type": "object"},
                        },
                    },
                }),
                true,
            ),
            (
                "next_cursor",
                json!({"type": ["string", "null"], "description": "Send as cursor, with the same filters, for the next page; null at the end."}),
                true,
            ),
            (
                "total",
                json!({"type": "integer", "minimum": 0, "description": "Every matching battle (with include_total only)."}),
                false,
            ),
            (
                "live_status",
                crate::mcp::shape::live_status("With live: {state fresh, observed_at}, {state pending, retry_after_s, observed_at} or {state unavailable, reason, resets_at?}."),
                false,
            ),
        ],
        docs: docs_pointer(NAME),
        too_large_hint: "battles_query({\"verbosity\": \"compact\"}) shrinks each battle (50 fit); at full size about 20 fit, so send a limit of 20 or less, or narrow with days, mode or outcome.".into(),
        handler: handler(call),
    }
}

/// The filters of one call, read and normalized.
#[derive(Debug, Clone, Default)]
struct Filters {
    game_mode_id: Option<i64>,
    opponent_tag: Option<Tag>,
    outcome: Option<String>,
    /// with_card and with_cards: all must be in your deck.
    with_cards: Vec<i64>,
    against_card: Option<i64>,
    deck_hash: Option<String>,
    battle_id: Option<String>,
}

impl Filters {
    /// Whether some filter needs the battle body (so SQL cannot page alone).
    fn in_process(&self) -> bool {
        self.opponent_tag.is_some()
            || !self.with_cards.is_empty()
            || self.against_card.is_some()
            || self.deck_hash.is_some()
    }

    fn keeps(&self, played: &Played, tag: &Tag) -> bool {
        let b = &played.battle;
        let Some(me) = b.participant(tag).filter(|p| p.side == Side::Team) else {
            return false;
        };
        if let Some(opponent) = &self.opponent_tag
            && !b.opponent.iter().any(|p| p.tag.as_ref() == Some(opponent))
        {
            return false;
        }
        if !self
            .with_cards
            .iter()
            .all(|id| me.cards.iter().any(|c| c.id == *id))
        {
            return false;
        }
        if let Some(id) = self.against_card
            && !b
                .opponent
                .iter()
                .any(|p| p.cards.iter().any(|c| c.id == id))
        {
            return false;
        }
        self.deck_hash
            .as_deref()
            .is_none_or(|hash| played_with(played, tag, hash))
    }

    /// The canonical text the cursor fingerprint covers: the subject and every argument that
    /// selects battles (the window as sent, in its resolved zone), never limit, verbosity or
    /// include_total.
    fn canonical(&self, scope: &Scope, a: &Map<String, Value>) -> String {
        let raw = |k: &str| a.get(k).map(Value::to_string).unwrap_or_default();
        let mut with = self.with_cards.clone();
        with.sort_unstable();
        with.dedup();
        format!(
            "player={};from={};to={};days={};weeks={};season={};timezone={};mode={};game_mode_id={:?};opponent={:?};outcome={:?};with={:?};against={:?};deck={:?};battle={:?}",
            scope.tag,
            raw("from"),
            raw("to"),
            raw("days"),
            raw("weeks"),
            raw("season"),
            scope.window.timezone,
            super::mode_name(scope.mode),
            self.game_mode_id,
            self.opponent_tag.as_ref().map(Tag::as_str),
            self.outcome,
            with,
            self.against_card,
            self.deck_hash,
            self.battle_id,
        )
    }
}

/// A CARD value's id: through the catalogue when it has been read; before the first read
/// an id is taken as sent and a name cannot be known.
fn card_id(value: &Value, name: &str, catalogue: Option<&Catalogue>) -> Result<i64, Fail> {
    match catalogue {
        Some(c) => {
            let mut one = Map::new();
            one.insert(name.to_owned(), value.clone());
            blocks::card(&one, name, c)?
                .map(|card| card.id)
                .ok_or_else(|| Fail::Internal(format!("{name} vanished")))
        }
        None => value.as_i64().ok_or_else(|| {
            Fail::Tool(ToolError::new(
                ErrorCode::NotFound,
                format!(
                    "{name} {value} cannot be matched: the card catalogue has not been read yet."
                ),
                "Send the card's numeric id instead of its name, or retry after 10:00 UTC.",
            ))
        }),
    }
}

/// A 64-hex argument (`deck_hash`, `battle_id`), lower-cased; anything else is `bad_request`.
pub fn hex64_arg(a: &Map<String, Value>, name: &str) -> Result<Option<String>, Fail> {
    match args::text(a, name) {
        None => Ok(None),
        Some(t) if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(t.to_ascii_lowercase()))
        }
        Some(t) => Err(bad_request(
            format!("{name} {t:?} is not 64 hex characters."),
            format!("Copy {name} from a battles_query answer."),
        )),
    }
}

async fn filters(ctx: &ToolCtx, a: &Map<String, Value>) -> Result<Filters, Fail> {
    let catalogue = if ["with_card", "with_cards", "against_card"]
        .iter()
        .any(|k| a.contains_key(*k))
    {
        super::catalogue(ctx).await?
    } else {
        None
    };
    let mut with_cards = Vec::new();
    if let Some(v) = a.get("with_card") {
        with_cards.push(card_id(v, "with_card", catalogue.as_ref())?);
    }
    if let Some(v) = a.get("with_cards") {
        let items = v
            .as_array()
            .filter(|i| (1..=8).contains(&i.len()))
            .ok_or_else(|| {
                bad_request(
                    "with_cards takes 1 to 8 cards.",
                    "battles_query({\"with_cards\": [26000000, \"Hog Rider\"]})",
                )
            })?;
        for (i, item) in items.iter().enumerate() {
            with_cards.push(card_id(
                item,
                &format!("with_cards[{i}]"),
                catalogue.as_ref(),
            )?);
        }
    }
    let against_card = match a.get("against_card") {
        Some(v) => Some(card_id(v, "against_card", catalogue.as_ref())?),
        None => None,
    };
    let opponent_tag = match args::text(a, "opponent_tag") {
        None => None,
        Some(t) if t.trim().is_empty() => {
            return Err(bad_request(
                "opponent_tag is empty; leave it out instead.",
                "Send the opponent's tag, e.g. #20JJJ2CCRU.",
            ));
        }
        Some(t) => Some(blocks::tag(
            t,
            "An opponent tag is # plus 3 to 12 of 0289PYLQGRJCUV.",
        )?),
    };
    let outcome = match a.get("outcome") {
        None => None,
        Some(_) => Some(one_of(a, "outcome", &["win", "loss", "draw"], "win")?.to_owned()),
    };
    Ok(Filters {
        game_mode_id: match a.get("game_mode_id") {
            None => None,
            Some(_) => Some(bounded(a, "game_mode_id", 0, 999_999_999, 0)?),
        },
        opponent_tag,
        outcome,
        with_cards,
        against_card,
        deck_hash: hex64_arg(a, "deck_hash")?,
        battle_id: hex64_arg(a, "battle_id")?,
    })
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let limit = bounded(&a, "limit", 1, MAX_LIMIT, FULL_LIMIT)?;
    let include_total = match a.get("include_total") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(bad_request(
                format!("include_total {v} is not true or false."),
                "battles_query({\"include_total\": true})",
            ));
        }
    };
    let filters = filters(&ctx, &a).await?;
    if limit > FULL_LIMIT && !shared.compact() {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::ResultTooLarge,
            format!(
                "A full-size page holds at most {FULL_LIMIT} battles; {limit} needs verbosity compact."
            ),
            format!(
                "battles_query({{\"limit\": {limit}, \"verbosity\": \"compact\"}}) or a limit of {FULL_LIMIT} or less."
            ),
        )));
    }
    let (scope, live) = Scope::resolve_live(&ctx, shared, blocks::live(&a)).await?;
    let key = &ctx.services.settings.cursor_key;
    let fingerprint = cursor::fingerprint(NAME, &filters.canonical(&scope, &a));
    let after = match args::text(&a, "cursor") {
        None => None,
        Some(token) => Some(cursor::read(key, NAME, &fingerprint, token, scope.now).map_err(
            |e| {
                let hint = match e {
                    CursorError::OtherFilters => "Send the cursor with exactly the filters of the page it came from, or leave cursor out to start again.",
                    _ => "Leave cursor out to start again from the newest battle.",
                };
                bad_request(format!("The cursor is refused: {e}."), hint)
            },
        )?),
    };
    let mut query = scope.query();
    query.game_mode_id = filters.game_mode_id;
    query.outcome = filters.outcome.clone();
    query.battle_id = filters.battle_id.clone();
    let store = &ctx.services.store;
    let (page, total) = if filters.in_process() {
        let all: Vec<Played> = scope
            .battles(&ctx, &query)
            .await?
            .into_iter()
            .filter(|p| filters.keeps(p, &scope.tag))
            .collect();
        let total = all.len();
        let page: Vec<Played> = all
            .into_iter()
            .filter(|p| after.as_ref().is_none_or(|at| before(p, at)))
            .take(usize::try_from(limit + 1).unwrap_or(usize::MAX))
            .collect();
        (page, include_total.then_some(total as i64))
    } else {
        let total = if include_total {
            Some(store.count_battles(scope.tag.as_str(), &query).await?)
        } else {
            None
        };
        query.before = after.map(|p| (p.battle_time, p.battle_id));
        query.limit = Some(limit + 1);
        (scope.battles(&ctx, &query).await?, total)
    };
    let rendered: Vec<Value> = page
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|p| {
            if scope.compact() {
                render::compact(&p.battle)
            } else {
                render::full(&p.battle, &scope.zone)
            }
        })
        .collect();
    let fitted = fitting(&rendered, PAGE_BUDGET);
    let shortened = fitted < rendered.len();
    let next_cursor = match page.get(fitted) {
        Some(_) => page.get(fitted.wrapping_sub(1)).and_then(|last| {
            cursor::issue(
                key,
                NAME,
                &fingerprint,
                &Position {
                    battle_time: last.time(),
                    battle_id: last.battle.battle_id.clone(),
                },
                scope.now,
            )
        }),
        None => None,
    };
    let mut battles = rendered;
    battles.truncate(fitted);
    let mut out = scope
        .envelope(&ctx, NAME)
        .await?
        .field("battles", Value::Array(battles))
        .field("next_cursor", json!(next_cursor))
        .applied("limit", json!(limit))
        .meta("timezone_applied", json!(scope.window.timezone));
    if shortened {
        out = out.note(format!(
            "This page holds {fitted} of the {limit} battles asked for: one more at full size would pass the {RESULT_CAP}-character result cap. next_cursor continues; verbosity compact holds {MAX_LIMIT} a page."
        ));
    }
    if let Some(total) = total {
        out = out.field("total", json!(total));
    }
    if let Some(status) = live {
        out = out.field("live_status", status.to_json());
    }
    Ok(out)
}

/// Whether the subject played `hash` in the battle: their deck, or a duel round's.
pub fn played_with(played: &Played, tag: &Tag, hash: &str) -> bool {
    played
        .battle
        .participant(tag)
        .filter(|p| p.side == Side::Team)
        .is_some_and(|me| {
            me.deck_hash.as_deref() == Some(hash)
                || me
                    .rounds
                    .iter()
                    .any(|r| r.deck_hash.as_deref() == Some(hash))
        })
}

/// Whether `played` comes after the page that ended at `at` (newest first: strictly older,
/// or as old with a smaller id).
/// How many of `battles`, from the first, fit in `budget` characters of compact JSON (their
/// commas included). At least one, so a page always moves on; a single battle over the
/// budget still leaves through the envelope's cap.
fn fitting(battles: &[Value], budget: usize) -> usize {
    let mut spent = 0;
    for (i, battle) in battles.iter().enumerate() {
        spent += battle.to_string().chars().count() + 1;
        if spent > budget && i > 0 {
            return i;
        }
    }
    battles.len()
}

fn before(played: &Played, at: &Position) -> bool {
    let t = played.time();
    t < at.battle_time || (t == at.battle_time && played.battle.battle_id < at.battle_id)
}
