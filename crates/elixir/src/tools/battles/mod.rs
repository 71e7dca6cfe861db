//! The Battles group, player side (SURFACE §2.4): the registry of the group's tools and what
//! they share — the arguments every one takes (PLAYER, WINDOW, SEASON, MODE), the call's
//! subject and window resolved once ([`Scope`]), the subject's battles read from the record
//! and turned so the subject's side is `team` ([`Played`]), `applied.window`, the subject
//! `meta` keys and completeness notes, and the STATS row JSON. Each tool is its own file:
//! [`query`] (battles_query, with [`cursor`] and [`render`]), [`performance`], [`decks`],
//! [`cards`], [`opponents`] and [`levels`]. The meta tools (segment side) are not built yet.

pub mod cards;
pub mod cursor;
pub mod decks;
pub mod levels;
pub mod opponents;
pub mod performance;
pub mod query;
pub mod render;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hash;

use elixir_record::calendar::{self, DAY_MS};
use elixir_record::cards::Catalogue;
use elixir_record::stats::{Accumulator, RowKind, Stats};
use elixir_record::window::{self, Window};
use elixir_record::{Battle, ModeFilter, Side, Tag};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{Fail, Success, ToolCtx, bad_request};
use crate::mcp::spec::{Param, ToolSpec};
use crate::model::PollEndpoint;
use crate::recorder::live::LiveStatus;
use crate::store::BattleQuery;
use crate::tools::subject::{PlayerFacts, go_live, live_pending, resolve_player};

/// The Battles tools of this build, player side.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        query::spec(),
        cards::spec(),
        decks::spec(),
        levels::spec(),
        opponents::spec(),
        performance::spec(),
    ]
}

/// The `docs` pointer of a Battles tool: its generated section.
pub fn docs_pointer(tool: &str) -> String {
    format!("tools-battles#{}", tool.replace('_', "-"))
}

/// PLAYER, WINDOW, SEASON and MODE: the arguments every player-side Battles tool takes first.
pub fn common_params() -> Vec<Param> {
    [
        blocks::player_params(),
        blocks::window_params(),
        blocks::season_params(),
        blocks::mode_params(),
    ]
    .concat()
}

/// `offset` of the Co tools (SURFACE §2.1): 0–10000, default 0.
pub fn offset_param() -> Param {
    Param::new(
        "offset",
        args::integer(
            "Rows to skip (0-10000); next_offset gives the next page.",
            0,
            MAX_OFFSET,
            0,
        ),
    )
}

/// `offset` as [`offset_param`] declares it.
pub fn offset(a: &Map<String, Value>) -> Result<i64, Fail> {
    bounded(a, "offset", 0, MAX_OFFSET, 0)
}

/// The largest `offset`.
pub const MAX_OFFSET: i64 = 10_000;

/// An integer argument checked against its bounds (the door checked the schema; this words
/// the refusal should a value slip past it, never clamping).
pub fn bounded(
    a: &Map<String, Value>,
    name: &str,
    min: i64,
    max: i64,
    default: i64,
) -> Result<i64, Fail> {
    match a.get(name) {
        None => Ok(default),
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(bad_request(
                format!("{name} takes an integer from {min} to {max}, not {v}."),
                format!("Send {name} between {min} and {max}, or leave it out for {default}."),
            )),
        },
    }
}

/// A string argument that must be one of `allowed`; `default` when absent.
pub fn one_of<'a>(
    a: &'a Map<String, Value>,
    name: &str,
    allowed: &[&'static str],
    default: &'static str,
) -> Result<&'a str, Fail> {
    match a.get(name) {
        None => Ok(default),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(s.as_str()),
        Some(v) => Err(bad_request(
            format!("{name} {v} is not one of {}.", allowed.join(", ")),
            format!(
                "Send {name} as one of {}, or leave it out for {default}.",
                allowed.join(", ")
            ),
        )),
    }
}

/// A call's subject and window, resolved once: arguments are read (and refused) before the
/// subject is looked up, so a bad call is `bad_request` whoever it is about.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The subject.
    pub tag: Tag,
    /// What the record knows of them.
    pub facts: PlayerFacts,
    /// The window, as resolved (`from` is `None` when unbounded).
    pub window: Window,
    /// The zone that resolved dates and labels.
    pub zone: TimeZone,
    /// MODE.
    pub mode: ModeFilter,
    /// `full` or `compact`.
    pub verbosity: String,
    /// The injected clock's reading for this call.
    pub now: Millis,
}

/// What [`Scope::resolve`] reads before the subject: the arguments of the shared blocks.
#[derive(Debug, Clone)]
pub struct Args {
    player: blocks::PlayerArg,
    window: Window,
    mode: ModeFilter,
    verbosity: String,
    now: Millis,
}

impl Args {
    /// Reads PLAYER, WINDOW and SEASON (with `last_n_battles` where the tool has it), MODE
    /// and `verbosity`; every refusal is the call's own (`bad_request`, `invalid_tag`).
    pub fn read(ctx: &ToolCtx, a: &Map<String, Value>, tool: &str) -> Result<Args, Fail> {
        let player = blocks::player(a, ctx.caller.kind)?;
        let now = ctx.services.now();
        let rules = window::default_for(tool)
            .ok_or_else(|| Fail::Internal(format!("{tool} has no default window")))?;
        let window = blocks::window(a, &rules, &ctx.caller.timezone, now)?;
        let mode = blocks::mode(a)?;
        let verbosity = one_of(a, "verbosity", &["full", "compact"], "full")?.to_owned();
        Ok(Args {
            player,
            window,
            mode,
            verbosity,
            now,
        })
    }

    /// Whether the call asked for the compact size.
    pub fn compact(&self) -> bool {
        self.verbosity == "compact"
    }
}

impl Scope {
    /// Resolves the subject of `args` (SURFACE §1.4) and reads what the record knows of them;
    /// a subject with nothing recorded is `not_recorded`.
    pub async fn resolve(ctx: &ToolCtx, args: Args) -> Result<Scope, Fail> {
        Ok(Self::resolve_live(ctx, args, false).await?.0)
    }

    /// [`Scope::resolve`], first making the battle log live when `live` (§4.4): the lane's
    /// status rides along, and no record at all is `live_pending` while the read is under way.
    pub async fn resolve_live(
        ctx: &ToolCtx,
        args: Args,
        live: bool,
    ) -> Result<(Scope, Option<LiveStatus>), Fail> {
        let tag = resolve_player(ctx, &args.player).await?;
        let mut facts = PlayerFacts::read(ctx, &tag).await?;
        let mut status = None;
        if live {
            let endpoint = PollEndpoint::Battlelog;
            let observed = facts.observed(ctx, endpoint).await?;
            let lane = go_live(ctx, &tag, endpoint, observed).await?;
            facts = PlayerFacts::read(ctx, &tag).await?;
            if !facts.is_recorded()
                && let LiveStatus::Pending { retry_after_s, .. } = &lane
            {
                return Err(live_pending(&tag, *retry_after_s));
            }
            status = Some(lane);
        }
        if !facts.is_recorded() {
            return Err(facts.not_recorded());
        }
        let zone = elixir_record::time::zone(&args.window.timezone).unwrap_or(TimeZone::UTC);
        Ok((
            Scope {
                tag,
                facts,
                window: args.window,
                zone,
                mode: args.mode,
                verbosity: args.verbosity,
                now: args.now,
            },
            status,
        ))
    }

    /// Whether the call asked for the compact size.
    pub fn compact(&self) -> bool {
        self.verbosity == "compact"
    }

    /// The window's start as shown: the argument's, else the subject's `recorded_since`.
    pub fn shown_from(&self) -> Millis {
        match self.window.from {
            Some(f) => f.as_millisecond(),
            None => self.facts.recorded_since().unwrap_or(self.now),
        }
    }

    /// The store query of this scope: the window's bounds and MODE's modes.
    pub fn query(&self) -> BattleQuery {
        let modes = match self.mode {
            ModeFilter::All => None,
            filter => Some(
                elixir_record::Mode::ALL
                    .into_iter()
                    .filter(|m| filter.includes(*m))
                    .map(|m| m.as_str().to_owned())
                    .collect(),
            ),
        };
        BattleQuery {
            from: self.window.from.map(|f| f.as_millisecond()),
            to: Some(self.window.to.as_millisecond()),
            modes,
            ..BattleQuery::default()
        }
    }

    /// The subject's battles matching `query`, newest first, each turned to the subject.
    pub async fn battles(&self, ctx: &ToolCtx, query: &BattleQuery) -> Result<Vec<Played>, Fail> {
        let rows = ctx.services.store.battles(self.tag.as_str(), query).await?;
        rows.iter()
            .map(|row| {
                let battle: Battle = serde_json::from_str(&row.body)
                    .map_err(|e| Fail::Internal(format!("stored battle {}: {e}", row.battle_id)))?;
                // the body is its first observer's view: the subject may be its opponent
                Ok(Played::turned(battle, &self.tag))
            })
            .collect()
    }

    /// The scope's battles, newest first.
    pub async fn all_battles(&self, ctx: &ToolCtx) -> Result<Vec<Played>, Fail> {
        self.battles(ctx, &self.query()).await
    }

    /// `applied.window` (SURFACE §3.1).
    pub fn applied_window(&self) -> Value {
        let from = self.shown_from();
        let to = self.window.to.as_millisecond();
        let mut w = json!({
            "from": iso(from),
            "to": iso(to),
            "source": self.window.source,
            "timezone": self.window.timezone,
            "crosses": crosses(from, to),
            "season_age_days": calendar::season_at(self.window.to)
                .map(|s| (to - s.starts_at.as_millisecond()).div_euclid(DAY_MS)),
        });
        if let Some(season) = &self.window.season {
            w["season"] = json!({
                "month": season.label(),
                "war": season.id,
                "starts_at": elixir_record::time::iso(season.starts_at),
                "ends_at": elixir_record::time::iso(season.ends_at),
            });
        }
        if let Some(since) = self.facts.recorded_since()
            && self.window.from.is_some_and(|f| f.as_millisecond() < since)
        {
            w["partial"] = json!(true);
            w["covers"] = json!({"from": iso(since.min(to)), "to": iso(to)});
        }
        w
    }

    /// The answer's envelope: `applied.window`, `mode` and `verbosity`, the subject `meta`
    /// keys, the completeness note when the window starts before the record or meets a gap,
    /// and the tool's `docs`.
    pub async fn envelope(&self, ctx: &ToolCtx, tool: &str) -> Result<Success, Fail> {
        let mut out = Success::new()
            .applied("window", self.applied_window())
            .applied("mode", json!(mode_name(self.mode)))
            .applied("verbosity", json!(self.verbosity))
            .docs(docs_pointer(tool));
        for (k, v) in self.facts.meta(self.now, &[PollEndpoint::Battlelog]) {
            out = out.meta(k, v);
        }
        if let Some(note) = self.completeness(ctx).await? {
            out = out.meta("completeness_note", json!(note));
        }
        Ok(out)
    }

    async fn completeness(&self, ctx: &ToolCtx) -> Result<Option<String>, Fail> {
        let from = self.shown_from();
        let to = self.window.to.as_millisecond();
        if let Some(since) = self.facts.recorded_since()
            && self.window.from.is_some_and(|f| f.as_millisecond() < since)
        {
            return Ok(Some(format!(
                "The record of {} starts at {}, after this window's start; earlier battles are not counted.",
                self.tag,
                iso(since)
            )));
        }
        let gaps = ctx.services.store.gaps(self.tag.as_str(), from, to).await?;
        Ok(gaps.first().map(|g| {
            format!(
                "The record of {} has a gap from {} to {} inside this window; battles played then are missing.",
                self.tag,
                iso(g.from_at),
                iso(g.to_at)
            )
        }))
    }
}

/// The season rolls inside `[from, to)` (`applied.window.crosses[]`).
fn crosses(from: Millis, to: Millis) -> Value {
    let (Ok(f), Ok(t)) = (
        Timestamp::from_millisecond(from),
        Timestamp::from_millisecond(to),
    ) else {
        return json!([]);
    };
    let w = Window {
        from: Some(f),
        to: t,
        source: elixir_record::window::Source::Argument,
        timezone: "UTC".into(),
        season: None,
    };
    Value::Array(blocks::crosses(&w))
}

/// MODE's wire name.
pub fn mode_name(mode: ModeFilter) -> &'static str {
    match mode {
        ModeFilter::All => "all",
        ModeFilter::Competitive => "competitive",
        ModeFilter::RiverRace => "river_race",
        ModeFilter::Only(m) => m.as_str(),
        _ => "all",
    }
}

/// One of the subject's battles, turned so the subject's side is `team` and the subject its
/// first participant: the stored body is the first observer's view, which is the subject's
/// opponent (or teammate) when someone else's log recorded it first.
#[derive(Debug, Clone)]
pub struct Played {
    /// The battle, the subject on `team`.
    pub battle: Battle,
}

impl Played {
    /// `battle` as stored, turned so `tag` is on `team`, first among teammates.
    pub fn turned(battle: Battle, tag: &Tag) -> Played {
        Played {
            battle: battle.turned_to(tag),
        }
    }

    /// The subject's outcome.
    pub fn outcome(&self) -> Option<elixir_record::Outcome> {
        self.battle.outcome(Side::Team)
    }

    /// When it was played, in milliseconds.
    pub fn time(&self) -> Millis {
        self.battle.battle_time.as_millisecond()
    }
}

/// The note of an answer whose shown rows include a small sample (methodology: a flagged row
/// is still reported with its counts, and a note says the sample is small).
pub const SMALL_SAMPLE_NOTE: &str = "Rows with insufficient_sample true rest on fewer than 10 decided battles; read their win rates as rough.";

/// Adds [`SMALL_SAMPLE_NOTE`] when one of `rows` (rendered STATS rows) is a small sample
/// that has battles.
pub fn small_sample_note(out: Success, rows: &[Value]) -> Success {
    let small = rows.iter().any(|r| {
        r["insufficient_sample"] == json!(true) && r["battles"].as_u64().is_some_and(|n| n > 0)
    });
    if small {
        out.note(SMALL_SAMPLE_NOTE)
    } else {
        out
    }
}

/// A STATS row's fields, to flatten into an aggregate row.
pub fn stats_fields(stats: &Stats) -> Map<String, Value> {
    match serde_json::to_value(stats) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A row: `head`'s fields then the STATS of `acc` (single-player threshold).
pub fn row(head: Value, acc: &Accumulator) -> Value {
    let mut out = match head {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    out.extend(stats_fields(&acc.stats(RowKind::SinglePlayer)));
    Value::Object(out)
}

/// The output-schema entry of a STATS row with `extra` properties.
pub fn stats_row_schema(description: &str, extra: Value) -> Value {
    let mut properties = stats_properties();
    if let Value::Object(more) = extra {
        properties.extend(more);
    }
    json!({
        "type": "object",
        "description": description,
        "required": ["battles", "wins", "losses", "draws", "decided_battles", "win_rate", "players", "insufficient_sample"],
        "properties": properties,
    })
}

/// The STATS properties.
pub fn stats_properties() -> Map<String, Value> {
    let count = json!({"type": "integer", "minimum": 0});
    let mut m = Map::new();
    for k in [
        "battles",
        "wins",
        "losses",
        "draws",
        "decided_battles",
        "players",
    ] {
        m.insert(k.into(), count.clone());
    }
    m.insert("win_rate".into(), json!({"type": ["number", "null"]}));
    m.insert("insufficient_sample".into(), json!({"type": "boolean"}));
    m
}

/// A page of offset-paged rows: `(page, total, next_offset)`.
pub fn page<T: Clone>(rows: &[T], offset: i64, limit: i64) -> (Vec<T>, usize, Value) {
    let total = rows.len();
    let start = usize::try_from(offset).unwrap_or(0).min(total);
    let end = start
        .saturating_add(usize::try_from(limit).unwrap_or(0))
        .min(total);
    let next = if end < total { json!(end) } else { Value::Null };
    (rows[start..end].to_vec(), total, next)
}

/// The output-schema entries every offset-paged row tool ends with: `total` (described as
/// `total`) and `next_offset`.
pub fn page_outputs(total: &str) -> [(&'static str, Value, bool); 2] {
    [
        (
            "total",
            json!({"type": "integer", "description": total}),
            true,
        ),
        (
            "next_offset",
            json!({"type": ["integer", "null"], "description": "offset of the next page; null at the end."}),
            true,
        ),
    ]
}

/// The output-schema entry of `baseline`: the subject's `{decided_battles, win_rate}`.
pub fn baseline_output(description: &str) -> (&'static str, Value, bool) {
    (
        "baseline",
        json!({"type": "object", "description": description, "required": ["decided_battles", "win_rate"], "properties": {"decided_battles": {"type": "integer"}, "win_rate": {"type": ["number", "null"]}}}),
        true,
    )
}

/// `baseline`: the decided battles and win rate of `acc` (single-player threshold).
pub fn baseline(acc: &Accumulator) -> Value {
    let base = acc.stats(RowKind::SinglePlayer);
    json!({"decided_battles": base.decided_battles, "win_rate": base.win_rate})
}

/// `sort: win_rate` of the row tools: best win rate first (a row without one last), then
/// most games; the caller breaks what is left of the tie.
pub fn by_win_rate(a: &Stats, b: &Stats) -> Ordering {
    b.win_rate
        .unwrap_or(-1.0)
        .total_cmp(&a.win_rate.unwrap_or(-1.0))
        .then(b.battles.cmp(&a.battles))
}

/// `sort: losses` of the row tools: most losses first, then most games.
pub fn by_losses(a: &Stats, b: &Stats) -> Ordering {
    b.losses.cmp(&a.losses).then(b.battles.cmp(&a.battles))
}

/// The rows played at least `min_battles` games (`battles` reads a row's count).
pub fn at_least<T>(rows: Vec<T>, min_battles: i64, battles: impl Fn(&T) -> u64) -> Vec<T> {
    let threshold = u64::try_from(min_battles).unwrap_or(1);
    rows.into_iter()
        .filter(|r| battles(r) >= threshold)
        .collect()
}

/// Rows collected by key, in the order their keys are first seen.
#[derive(Debug)]
pub struct Grouped<K, T> {
    rows: Vec<T>,
    index: HashMap<K, usize>,
}

impl<K, T> Default for Grouped<K, T> {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq, T> Grouped<K, T> {
    /// The row of `key`, made by `new` the first time the key is seen.
    pub fn row(&mut self, key: K, new: impl FnOnce() -> T) -> &mut T {
        let rows = &mut self.rows;
        let i = *self.index.entry(key).or_insert_with(|| {
            rows.push(new());
            rows.len() - 1
        });
        &mut rows[i]
    }

    /// The rows, in first-seen order.
    pub fn into_rows(self) -> Vec<T> {
        self.rows
    }
}

/// The card catalogue, if it has been read; card arguments need it for names.
pub async fn catalogue(ctx: &ToolCtx) -> Result<Option<Catalogue>, Fail> {
    Ok(ctx
        .services
        .store
        .cards_catalogue()
        .await?
        .map(|c| c.catalogue))
}

/// Rounds to `places` decimals.
pub fn round_to(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// The mean of `values`, or `None` when there are none.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// The subject's participant in a turned battle (the first on `team` with their tag).
pub fn me<'a>(played: &'a Played, tag: &Tag) -> Option<&'a elixir_record::Participant> {
    played
        .battle
        .participant(tag)
        .filter(|p| p.side == Side::Team)
}

/// The subject kinds: all three doors carry every player-side Battles tool.
pub fn kinds() -> Vec<Kind> {
    Kind::ALL.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use elixir_record::Mode;

    fn log() -> Vec<Battle> {
        Battle::from_battlelog(include_bytes!(
            "../../../../elixir-record/tests/fixtures/battlelog.json"
        ))
        .unwrap()
        .battles
    }

    /// Every participant of every fixture battle, turned to them: on `team`, first, with
    /// their own outcome; a boat battle's report turns with it.
    #[test]
    fn a_battle_turns_to_any_of_its_players() {
        for battle in log() {
            let tags: Vec<Tag> = battle
                .team
                .iter()
                .chain(&battle.opponent)
                .filter_map(|p| p.tag.clone())
                .collect();
            for tag in tags {
                let own = battle.outcome_of(&tag);
                let was_opponent = battle.side_of(&tag) == Some(Side::Opponent);
                let played = Played::turned(battle.clone(), &tag);
                assert_eq!(played.battle.team[0].tag.as_ref(), Some(&tag));
                assert!(played.battle.team.iter().all(|p| p.side == Side::Team));
                assert!(
                    played
                        .battle
                        .opponent
                        .iter()
                        .all(|p| p.side == Side::Opponent)
                );
                assert_eq!(played.outcome(), own, "{} {tag}", battle.battle_type);
                if let (Some(before), Some(after)) = (&battle.boat, &played.battle.boat) {
                    assert_eq!(after.won.is_some(), before.won.is_some());
                    if was_opponent {
                        assert_eq!(after.won, before.won.map(|w| !w));
                        assert_ne!(after.side, before.side);
                    } else {
                        assert_eq!(after, before);
                    }
                }
            }
        }
        assert!(log().iter().any(|b| b.mode == Mode::Boat));
        assert!(log().iter().any(|b| b.mode == Mode::TwoVTwo));
    }

    #[test]
    fn pages_and_means() {
        let rows: Vec<i32> = (0..5).collect();
        assert_eq!(page(&rows, 0, 2), (vec![0, 1], 5, json!(2)));
        assert_eq!(page(&rows, 4, 2), (vec![4], 5, Value::Null));
        assert_eq!(page(&rows, 3, 2), (vec![3, 4], 5, Value::Null));
        assert_eq!(page(&rows, 10_000, 2), (vec![], 5, Value::Null));
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));
        assert_eq!(round_to(2.345_6, 2), 2.35);
        assert_eq!(docs_pointer("battles_query"), "tools-battles#battles-query");
    }
}
