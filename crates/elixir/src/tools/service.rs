//! The Service group (SURFACE §2.8): `elixir_coverage`, how completely and how recently one
//! player or clan is recorded (measured and unknown intervals from the battle-log reads and
//! coverage gaps), and `elixir_data_insights`, the corpus, the recorder's health and the
//! recorded clans. It also owns the coverage arithmetic the Player tools share (a window's
//! measured spans, its unknown intervals with their reasons, `applied.window`, the
//! `completeness_note`); which gaps exist is the recorder's, their detection
//! `elixir_record::coverage`'s.

use elixir_record::Tag;
use elixir_record::window::{self, Window};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{
    ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, bad_request, handler,
};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};
use crate::model::{CoverageGap, LogRead, PollEndpoint};
use crate::store::BattleTally;
use crate::tools::subject::{PlayerFacts, resolve_player};

/// Why an interval of a window is unknown, besides the recorder's gap reasons
/// (`log_overflow`, `battle_count`).
pub const BEFORE_RECORDING: &str = "before_recording";
/// The stretch after the newest battle-log read: battles played since are not read yet.
pub const AFTER_LAST_READ: &str = "after_last_read";
/// A clan's stretch that some current member's record does not measure.
pub const MEMBER_NOT_MEASURED: &str = "member_not_measured";

const NO_HINT: &str = "Report meta.request_id with elixir_feedback.";

/// The Service tools of this build.
pub fn specs() -> Vec<ToolSpec> {
    vec![coverage(), data_insights()]
}

// ---- coverage arithmetic ----

/// A half-open span `[from, to)` of Unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub from: Millis,
    pub to: Millis,
}

/// A span of a window the record cannot vouch for, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub from: Millis,
    pub to: Millis,
    /// `log_overflow`, `battle_count`, [`BEFORE_RECORDING`], [`AFTER_LAST_READ`] or
    /// [`MEMBER_NOT_MEASURED`].
    pub reason: String,
}

/// What the record measured of one window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Coverage {
    /// Measured spans inside the window, merged, oldest first.
    pub measured: Vec<Span>,
    /// The rest of the window, with reasons, oldest first.
    pub unknown: Vec<Unknown>,
    /// The start of the record when it falls inside the window.
    pub recording_start: Option<Millis>,
}

impl Coverage {
    /// Whether `[from, to)` lies wholly inside one measured span.
    pub fn covers(&self, from: Millis, to: Millis) -> bool {
        self.measured.iter().any(|s| s.from <= from && to <= s.to)
    }

    /// Whether `[from, to)` meets any measured span.
    pub fn meets_measured(&self, from: Millis, to: Millis) -> bool {
        self.measured.iter().any(|s| s.from < to && from < s.to)
    }

    /// The recorder's gaps inside the window (not the record's start or end).
    pub fn gaps(&self) -> impl Iterator<Item = &Unknown> {
        self.unknown.iter().filter(|u| {
            ![BEFORE_RECORDING, AFTER_LAST_READ, MEMBER_NOT_MEASURED].contains(&u.reason.as_str())
        })
    }

    /// Measured hours, two decimals.
    pub fn measured_hours(&self) -> f64 {
        let ms: i64 = self.measured.iter().map(|s| s.to - s.from).sum();
        #[allow(clippy::cast_precision_loss)]
        let hours = ms as f64 / 3_600_000.0;
        (hours * 100.0).round() / 100.0
    }

    /// The `coverage` field of elixir_coverage.
    pub fn to_json(&self) -> Value {
        json!({
            "measured_hours": self.measured_hours(),
            "measured_intervals": self.measured.iter()
                .map(|s| json!({"from": iso(s.from), "to": iso(s.to)}))
                .collect::<Vec<_>>(),
            "unknown_intervals": self.unknown.iter()
                .map(|u| json!({"from": iso(u.from), "to": iso(u.to), "reason": u.reason}))
                .collect::<Vec<_>>(),
        })
    }
}

/// Sorts and merges overlapping or touching spans, dropping empty ones.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| s.from < s.to);
    spans.sort_by_key(|s| (s.from, s.to));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.from <= last.to => last.to = last.to.max(s.to),
            _ => out.push(s),
        }
    }
    out
}

/// `spans` without `cut`.
fn subtract(spans: &[Span], cut: Span) -> Vec<Span> {
    let mut out = Vec::new();
    for s in spans {
        if cut.to <= s.from || s.to <= cut.from {
            out.push(*s);
            continue;
        }
        if s.from < cut.from {
            out.push(Span {
                from: s.from,
                to: cut.from,
            });
        }
        if cut.to < s.to {
            out.push(Span {
                from: cut.to,
                to: s.to,
            });
        }
    }
    out
}

/// The spans of `[from, to)` that `spans` (merged) leave out.
fn complement(spans: &[Span], from: Millis, to: Millis) -> Vec<Span> {
    let mut out = Vec::new();
    let mut at = from;
    for s in spans {
        if s.from > at {
            out.push(Span {
                from: at,
                to: s.from,
            });
        }
        at = at.max(s.to);
    }
    if at < to {
        out.push(Span { from: at, to });
    }
    out
}

/// The spans both lists measure.
pub fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            let span = Span {
                from: x.from.max(y.from),
                to: x.to.min(y.to),
            };
            if span.from < span.to {
                out.push(span);
            }
        }
    }
    merge(out)
}

/// What one player's battle-log reads measure of `[from, to)`. `before` is the newest read
/// before the window (`None`: the record starts inside it or later), `reads` those inside
/// it, `after` the first at or after its end; `gaps` the recorder's gaps meeting it.
///
/// Between two consecutive reads the record is complete (a log that may have overflowed
/// between them is a gap, which is cut out); the first read ever also vouches for its own
/// entries, back to its oldest battle. Before that is [`BEFORE_RECORDING`], after the last
/// read [`AFTER_LAST_READ`].
pub fn measure(
    from: Millis,
    to: Millis,
    before: Option<&LogRead>,
    reads: &[LogRead],
    after: Option<&LogRead>,
    gaps: &[CoverageGap],
) -> Coverage {
    let mut chain: Vec<&LogRead> = before.into_iter().chain(reads).chain(after).collect();
    chain.sort_by_key(|r| r.read_at);
    let mut raw = Vec::new();
    let mut record_start = None;
    if before.is_none()
        && let Some(first) = chain.first()
    {
        let start = first.oldest_at.unwrap_or(first.read_at).min(first.read_at);
        record_start = Some(start);
        raw.push(Span {
            from: start,
            to: first.read_at,
        });
    }
    for pair in chain.windows(2) {
        raw.push(Span {
            from: pair[0].read_at,
            to: pair[1].read_at,
        });
    }
    let clip = |s: Span| Span {
        from: s.from.max(from),
        to: s.to.min(to),
    };
    let raw = merge(raw.into_iter().map(clip).collect());
    let last_read = chain.last().map(|r| r.read_at);
    let mut unknown: Vec<Unknown> = complement(&raw, from, to)
        .into_iter()
        .map(|s| {
            let reason = match (record_start, last_read) {
                (None, None) => BEFORE_RECORDING,
                (Some(start), _) if s.to <= start => BEFORE_RECORDING,
                (_, Some(last)) if s.from >= last => AFTER_LAST_READ,
                // only a window with no read at all before it and none in it reaches here
                _ => BEFORE_RECORDING,
            };
            Unknown {
                from: s.from,
                to: s.to,
                reason: reason.to_owned(),
            }
        })
        .collect();
    let mut measured = raw;
    for g in gaps {
        let cut = clip(Span {
            from: g.from_at,
            to: g.to_at,
        });
        if cut.from >= cut.to {
            continue;
        }
        measured = subtract(&measured, cut);
        unknown.push(Unknown {
            from: cut.from,
            to: cut.to,
            reason: g.reason.clone(),
        });
    }
    unknown.sort_by_key(|a| (a.from, a.to));
    Coverage {
        measured,
        unknown,
        recording_start: record_start.filter(|s| *s > from && *s < to),
    }
}

/// Reads what [`measure`] needs for one player and measures `[from, to)`.
pub async fn player_coverage(
    ctx: &ToolCtx,
    player: &str,
    from: Millis,
    to: Millis,
) -> Result<Coverage, Fail> {
    let store = &ctx.services.store;
    let before = store.log_read_before(player, from).await?;
    let reads = store.log_reads(player, from, to).await?;
    let after = store.log_read_from(player, to).await?;
    let gaps = store.gaps(player, from, to).await?;
    Ok(measure(
        from,
        to,
        before.as_ref(),
        &reads,
        after.as_ref(),
        &gaps,
    ))
}

/// The `completeness_note` of a window that meets a gap or the start of the record.
pub fn completeness_note(coverage: &Coverage) -> Option<String> {
    let gaps = coverage.gaps().count();
    match (coverage.recording_start, gaps) {
        (None, 0) => None,
        (Some(start), 0) => Some(format!(
            "The record starts at {} inside this window; nothing before it is known.",
            iso(start)
        )),
        (None, n) => Some(format!(
            "This window meets {n} coverage gap(s) where battles may be missing; elixir_coverage lists them."
        )),
        (Some(start), n) => Some(format!(
            "The record starts at {} inside this window and meets {n} coverage gap(s); elixir_coverage lists them.",
            iso(start)
        )),
    }
}

/// `applied.window` (SURFACE §3.1): UTC bounds (an unbounded start shows the subject's
/// `recorded_since`), source, zone, season rolls, the age of the season `to` falls in, and
/// `partial`/`covers` when the window starts before the record.
pub fn applied_window(w: &Window, recorded_since: Option<Millis>) -> Value {
    let to = w.to.as_millisecond();
    let from = w
        .from
        .map(|f| f.as_millisecond())
        .or(recorded_since)
        .unwrap_or(to);
    let mut v = json!({
        "from": iso(from),
        "to": iso(to),
        "source": serde_json::to_value(w.source).unwrap_or(Value::Null),
        "timezone": w.timezone,
    });
    let crosses = blocks::crosses(w);
    if !crosses.is_empty() {
        v["crosses"] = Value::Array(crosses);
    }
    if let Some(season) = elixir_record::calendar::season_at(w.to) {
        v["season_age_days"] = json!((to - season.starts_at.as_millisecond()).max(0) / 86_400_000);
    }
    if let Some(since) = recorded_since.filter(|s| *s > from) {
        v["partial"] = json!(true);
        v["covers"] = json!({"from": iso(since.min(to)), "to": iso(to)});
    }
    v
}

/// The window bounds in milliseconds (a bounded window always has a start).
pub fn bounds(w: &Window) -> (Millis, Millis) {
    let to = w.to.as_millisecond();
    (w.from.map_or(0, |f| f.as_millisecond()), to)
}

// ---- elixir_coverage ----

/// `battles` of a coverage answer: the battles recorded inside the window.
fn recorded(tally: &BattleTally) -> Value {
    json!({
        "recorded": tally.battles,
        "first_at": tally.first_at.map(iso),
        "last_at": tally.last_at.map(iso),
    })
}

fn coverage() -> ToolSpec {
    let mut params = blocks::player_params();
    params.extend(blocks::clan_params().into_iter().map(|p| {
        Param::new(
            p.name,
            blocks::tag_schema("A clan's tag instead of a player; not with player_tag."),
        )
    }));
    params.extend(blocks::window_params());
    ToolSpec {
        name: "elixir_coverage",
        group: Group::Service,
        title: "Coverage",
        description: "Player tool: how completely and how recently Elixir records a player (you when no tag is given), or a clan with clan_tag, over a window (default the last 30 days): the recording and its schedule, the battles recorded, and the measured and unknown intervals (coverage gaps, before recording, after the last read), plus each member's completeness for a clan.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W],
        params,
        compact_drops: None,
        output: vec![
            ("subject", shape::object("{type player|clan, tag, name}.", &["type", "tag", "name"]), true),
            ("recording", shape::object("{state active|paused|held, scope, since, last_polled_at, next_poll_at, cadence_reason}; null fields when nothing is scheduled.", &["state", "scope", "since", "last_polled_at", "next_poll_at", "cadence_reason"]), true),
            ("source_polls", shape::object("{player, battlelog, clan, currentriverrace, riverracelog, cards, board}, each {observed_at, freshness_seconds} or null.", &["player", "battlelog", "clan", "currentriverrace", "riverracelog", "cards", "board"]), true),
            ("battles", shape::object("{recorded, first_at, last_at}: recorded battles inside the window.", &["recorded", "first_at", "last_at"]), true),
            ("coverage", shape::object("{measured_hours, measured_intervals[] {from, to}, unknown_intervals[] {from, to, reason}}.", &["measured_hours", "measured_intervals", "unknown_intervals"]), true),
            ("members", shape::list("Clan subjects only: [{tag, name, coverage_complete}] of the current members.", &["tag", "name", "coverage_complete"]), false),
        ],
        docs: "tools-service#elixir-coverage".into(),
        too_large_hint: "elixir_coverage({\"days\": 7}) narrows the window.".into(),
        handler: handler(coverage_call),
    }
}

/// The recording of a subject's schedule row of `endpoint` (§2.8), `paused` without one.
fn recording_of(
    polls: &[crate::model::Poll],
    endpoint: PollEndpoint,
    scope: Option<&str>,
    now: Millis,
) -> Value {
    match polls.iter().find(|p| p.endpoint == endpoint) {
        Some(p) => {
            json!({
                "state": if p.is_held(now) { "held" } else { "active" },
                "scope": scope,
                "since": iso(p.created_at),
                "last_polled_at": p.last_read_at.map(iso),
                "next_poll_at": iso(p.next_at),
                "cadence_reason": p.reason,
            })
        }
        None => json!({
            "state": "paused", "scope": scope, "since": null, "last_polled_at": null,
            "next_poll_at": null, "cadence_reason": null,
        }),
    }
}

async fn coverage_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let player = blocks::player(&a, ctx.caller.kind)?;
    let clan = blocks::clan(&a)?;
    if clan.is_some() && player.player_tag.is_some() {
        return Err(bad_request(
            "player_tag and clan_tag were both sent; coverage is about one subject.",
            "elixir_coverage({\"clan_tag\": \"#9YJUPU9LY\"}) or elixir_coverage({\"player_tag\": \"#20JJJ2CCRU\"})",
        ));
    }
    if clan.is_some() && player.on_behalf_of.is_some() {
        return Err(bad_request(
            "on_behalf_of names a player, and clan_tag a clan; send one of them.",
            "elixir_coverage({\"clan_tag\": \"#9YJUPU9LY\"})",
        ));
    }
    let rules = window::default_for("elixir_coverage")
        .ok_or_else(|| Fail::Internal("elixir_coverage has no window rules".into()))?;
    let now = ctx.services.now();
    let w = blocks::window(&a, &rules, &ctx.caller.timezone, now)?;
    let verbosity = args::verbosity(&a).to_owned();
    let success = match clan {
        Some(clan) => clan_coverage(&ctx, &clan, &w, now).await?,
        None => {
            let tag = resolve_player(&ctx, &player).await?;
            player_coverage_answer(&ctx, &tag, &w, now).await?
        }
    };
    Ok(success
        .applied("verbosity", json!(verbosity))
        .meta("timezone_applied", json!(w.timezone)))
}

async fn player_coverage_answer(
    ctx: &ToolCtx,
    tag: &Tag,
    w: &Window,
    now: Millis,
) -> Result<Success, Fail> {
    let facts = PlayerFacts::read(ctx, tag).await?;
    if !facts.is_recorded() && facts.polls.is_empty() {
        return Err(facts.not_recorded());
    }
    let subject = tag.to_string();
    let (from, to) = bounds(w);
    let coverage = player_coverage(ctx, &subject, from, to).await?;
    let tally = ctx.services.store.battle_tally(&subject, from, to).await?;
    let meta = facts.meta(now, &[PollEndpoint::Battlelog]);
    let source_polls = meta
        .iter()
        .find(|(k, _)| *k == "source_polls")
        .map(|(_, v)| v.clone())
        .unwrap_or(Value::Null);
    let scope = (!facts.polls.is_empty()).then_some("player");
    let mut success = Success::new()
        .field(
            "subject",
            json!({"type": "player", "tag": subject, "name": facts.row.as_ref().map(|r| r.name.clone())}),
        )
        .field(
            "recording",
            recording_of(&facts.polls, PollEndpoint::Battlelog, scope, now),
        )
        .field("source_polls", source_polls)
        .field("battles", recorded(&tally))
        .field("coverage", coverage.to_json())
        .applied("window", applied_window(w, facts.recorded_since()));
    for (k, v) in meta {
        success = success.meta(k, v);
    }
    if let Some(note) = completeness_note(&coverage) {
        success = success.meta("completeness_note", json!(note));
    }
    if facts.polls.is_empty() {
        success = success.note(format!(
            "{subject} is not being read now: what is recorded came from other players' logs or an earlier recording."
        ));
    }
    Ok(success)
}

async fn clan_coverage(
    ctx: &ToolCtx,
    clan: &Tag,
    w: &Window,
    now: Millis,
) -> Result<Success, Fail> {
    let store = &ctx.services.store;
    let subject = clan.to_string();
    let row = store.clan(&subject).await?;
    let polls = store.polls_of(&subject).await?;
    if row.is_none() && polls.is_empty() {
        return Err(Fail::Tool(ToolError::new(
            ErrorCode::NotRecorded,
            format!("Nothing is recorded for the clan {subject} yet."),
            format!("elixir_track_clan({{\"clan_tag\": \"{subject}\"}}) starts recording it."),
        )));
    }
    let (from, to) = bounds(w);
    let scope = store
        .recorded_clans()
        .await?
        .into_iter()
        .find(|(tag, _, _)| *tag == subject)
        .map(|(_, _, scope)| scope);
    let members: Vec<_> = store
        .memberships(&subject, i64::MAX)
        .await?
        .into_iter()
        .filter(|m| m.left_observed_at.is_none())
        .collect();
    let mut measured: Option<Vec<Span>> = None;
    let mut rows = Vec::with_capacity(members.len());
    for m in &members {
        let c = player_coverage(ctx, &m.player_tag, from, to).await?;
        rows.push(json!({
            "tag": m.player_tag,
            "name": m.name,
            "coverage_complete": c.covers(from, to),
        }));
        measured = Some(match measured {
            None => c.measured.clone(),
            Some(so_far) => intersect(&so_far, &c.measured),
        });
    }
    let measured = measured.unwrap_or_default();
    let coverage = Coverage {
        unknown: complement(&measured, from, to)
            .into_iter()
            .map(|s| Unknown {
                from: s.from,
                to: s.to,
                reason: MEMBER_NOT_MEASURED.to_owned(),
            })
            .collect(),
        measured,
        recording_start: None,
    };
    let tally = store.clan_battle_tally(&subject, from, to).await?;
    let clan_poll = polls
        .iter()
        .find(|p| p.endpoint == PollEndpoint::Clan)
        .and_then(|p| p.last_read_at);
    let poll = |at: Option<Millis>| match at {
        Some(at) => json!({"observed_at": iso(at), "freshness_seconds": (now - at).max(0) / 1000}),
        None => Value::Null,
    };
    let source_polls = json!({
        "player": null, "battlelog": null, "clan": poll(clan_poll),
        "currentriverrace": null, "riverracelog": null, "cards": null, "board": null,
    });
    let mut success = Success::new()
        .field(
            "subject",
            json!({"type": "clan", "tag": subject, "name": row.as_ref().map(|r| r.name.clone())}),
        )
        .field(
            "recording",
            recording_of(&polls, PollEndpoint::Clan, scope.as_deref(), now),
        )
        .field("source_polls", source_polls.clone())
        .field("battles", recorded(&tally))
        .field("coverage", coverage.to_json())
        .field("members", Value::Array(rows))
        .applied(
            "window",
            applied_window(w, row.as_ref().map(|r| r.first_seen_at)),
        )
        .meta("source_polls", source_polls)
        .meta(
            "freshness_seconds",
            json!(clan_poll.map(|at| (now - at).max(0) / 1000)),
        );
    if let Some(first) = row.as_ref().map(|r| r.first_seen_at) {
        success = success.meta("recorded_since", json!(iso(first)));
    }
    if let Some(active) = polls.iter().map(|p| p.created_at).min() {
        success = success.meta("recording_active_since", json!(iso(active)));
    }
    if !coverage.unknown.is_empty() {
        success = success
            .meta(
                "completeness_note",
                json!("Some of this window is not measured for every current member; members[] says whose record is complete."),
            )
            .note("A clan's measured intervals are those every current member's battle log measures; battles counts the members' recorded battles for this clan.");
    }
    if members.is_empty() {
        success = success.note(format!(
            "No member list of {subject} is recorded yet, so nothing of its members is measured."
        ));
    }
    Ok(success)
}

// ---- elixir_data_insights ----

fn data_insights() -> ToolSpec {
    ToolSpec {
        name: "elixir_data_insights",
        group: Group::Service,
        title: "Data insights",
        description: "Reference tool: the size of Elixir's record and the health of its recorder: battles, players and clans recorded, active recordings and the first battle; the upstream request rate of the last hour, requests and 429 answers in the last 24 hours, the polls due now and how late the oldest is; and every recorded clan with its scope. Takes no arguments.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![],
        params: vec![],
        compact_drops: None,
        output: vec![
            ("corpus", shape::object("{battles, players, players_recorded, clans_recorded, recordings_active, first_battle_at, battles_last_24h}.", &["battles", "players", "players_recorded", "clans_recorded", "recordings_active", "first_battle_at", "battles_last_24h"]), true),
            ("recorder", shape::object("{upstream_rate_per_s (last hour), requests_24h, throttled_24h (HTTP 429), due_polls, oldest_due_s}.", &["upstream_rate_per_s", "requests_24h", "throttled_24h", "due_polls", "oldest_due_s"]), true),
            ("clans", shape::list("[{tag, name, scope activity|comprehensive}] of every tracked clan.", &["tag", "name", "scope"]), true),
        ],
        docs: "tools-service#elixir-data-insights".into(),
        too_large_hint: NO_HINT.into(),
        handler: handler(data_insights_call),
    }
}

async fn data_insights_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let store = &ctx.services.store;
    let now = ctx.services.now();
    let corpus = store.corpus_counts(now).await?;
    let upstream = store
        .upstream_tally(now - 86_400_000, now - 3_600_000)
        .await?;
    let clans = store.recorded_clans().await?;
    #[allow(clippy::cast_precision_loss)]
    let rate = (upstream.requests_1h as f64 / 3600.0 * 10_000.0).round() / 10_000.0;
    Ok(Success::new()
        .field(
            "corpus",
            json!({
                "battles": corpus.battles,
                "players": corpus.players,
                "players_recorded": corpus.players_recorded,
                "clans_recorded": corpus.clans_recorded,
                "recordings_active": corpus.recordings_active,
                "first_battle_at": corpus.first_battle_at.map(iso),
                "battles_last_24h": corpus.battles_last_24h,
            }),
        )
        .field(
            "recorder",
            json!({
                "upstream_rate_per_s": rate,
                "requests_24h": upstream.requests_24h,
                "throttled_24h": upstream.throttled_24h,
                "due_polls": corpus.due_polls,
                "oldest_due_s": corpus.oldest_due_at.map_or(0, |at| (now - at).max(0) / 1000),
            }),
        )
        .field(
            "clans",
            Value::Array(
                clans
                    .into_iter()
                    .map(|(tag, name, scope)| json!({"tag": tag, "name": name, "scope": scope}))
                    .collect(),
            ),
        )
        .applied("verbosity", json!(args::verbosity(&a))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Millis = 3_600_000;

    fn read(at: Millis, oldest: Option<Millis>) -> LogRead {
        LogRead {
            player_tag: "#P".into(),
            read_at: at,
            entries: 30,
            new_entries: 5,
            oldest_at: oldest,
            newest_at: Some(at - 1),
        }
    }

    fn gap(from: Millis, to: Millis) -> CoverageGap {
        CoverageGap {
            subject: "#P".into(),
            from_at: from,
            to_at: to,
            reason: "log_overflow".into(),
            detected_at: to,
        }
    }

    #[test]
    fn reads_chain_into_measured_spans_with_the_record_start_and_end_unknown() {
        let reads = [read(10 * H, Some(8 * H)), read(20 * H, Some(12 * H))];
        let c = measure(0, 30 * H, None, &reads, None, &[]);
        assert_eq!(
            c.measured,
            vec![Span {
                from: 8 * H,
                to: 20 * H
            }]
        );
        assert_eq!(c.recording_start, Some(8 * H));
        let reasons: Vec<(&str, Millis, Millis)> = c
            .unknown
            .iter()
            .map(|u| (u.reason.as_str(), u.from, u.to))
            .collect();
        assert_eq!(
            reasons,
            vec![
                (BEFORE_RECORDING, 0, 8 * H),
                (AFTER_LAST_READ, 20 * H, 30 * H)
            ]
        );
        assert_eq!(c.measured_hours(), 12.0);
        assert!(c.covers(9 * H, 19 * H) && !c.covers(7 * H, 9 * H));
        assert!(completeness_note(&c).unwrap().contains("starts at"));
    }

    #[test]
    fn gaps_are_cut_out_and_listed_with_their_reason() {
        let before = read(H, Some(0));
        let after = read(50 * H, None);
        let c = measure(
            10 * H,
            40 * H,
            Some(&before),
            &[read(20 * H, Some(15 * H))],
            Some(&after),
            &[gap(12 * H, 15 * H)],
        );
        assert_eq!(
            c.measured,
            vec![
                Span {
                    from: 10 * H,
                    to: 12 * H
                },
                Span {
                    from: 15 * H,
                    to: 40 * H
                }
            ]
        );
        assert_eq!(c.unknown.len(), 1);
        assert_eq!(c.unknown[0].reason, "log_overflow");
        assert_eq!(c.recording_start, None);
        assert!(!c.covers(11 * H, 16 * H));
        assert!(completeness_note(&c).unwrap().contains("1 coverage gap"));
    }

    #[test]
    fn no_reads_is_all_unknown_and_sets_no_note() {
        let c = measure(0, 10 * H, None, &[], None, &[]);
        assert!(c.measured.is_empty());
        assert_eq!(c.unknown[0].reason, BEFORE_RECORDING);
        assert_eq!((c.unknown[0].from, c.unknown[0].to), (0, 10 * H));
        assert_eq!(completeness_note(&c), None);
        assert_eq!(c.measured_hours(), 0.0);
    }

    #[test]
    fn intersections_keep_what_both_measure() {
        let a = [Span { from: 0, to: 10 }, Span { from: 20, to: 30 }];
        let b = [Span { from: 5, to: 25 }];
        assert_eq!(
            intersect(&a, &b),
            vec![Span { from: 5, to: 10 }, Span { from: 20, to: 25 }]
        );
        assert_eq!(
            complement(&a, 0, 40),
            vec![Span { from: 10, to: 20 }, Span { from: 30, to: 40 }]
        );
    }
}
