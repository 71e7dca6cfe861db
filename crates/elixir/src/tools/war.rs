//! The War group of this build (SURFACE §2.6): `game_clock`, the game day, season, war week
//! and war day of an instant. A thin tool: it reads its arguments, asks
//! `elixir_record::calendar` (which owns every boundary) and renders the answer; it reads
//! no storage. The rest of the group (`war_current`, `war_history`, `war_rivals`) needs the
//! recorder's race data and is still coming.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::mcp::args;
use crate::mcp::call::{Fail, Outcome, Success, ToolCtx, bad_request, handler};
use crate::mcp::spec::{Group, Param, SCOPE_READ, ToolSpec};
use elixir_record::calendar::{self, GameClock};
use elixir_record::time::{from_millis, iso, zone};

/// The tool's `docs` pointer.
pub const DOCS: &str = "tools-war#game-clock";
/// `at` as the schema lets it through: `YYYY-MM-DD`, or an ISO instant with or without its
/// offset (without one it is read in `timezone`). Whether the date exists is the handler's.
pub const AT_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$";
/// The note of an answer to a date-only `at`.
pub const DATE_ONLY_NOTE: &str =
    "A date-only at means 10:00 UTC that day, when its game day starts, not midnight.";
const AT_HINT: &str = "game_clock({\"at\": \"2026-09-18\"}) — a date (10:00 UTC that day) or an instant such as 2026-09-18T19:34:12Z.";

/// The War tools of this build.
pub fn specs() -> Vec<ToolSpec> {
    vec![game_clock()]
}

fn object(description: &str, properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "description": description,
        "required": required,
        "properties": properties,
    })
}

/// The `game_clock` declaration.
pub fn game_clock() -> ToolSpec {
    let instant = json!({"type": "string"});
    ToolSpec {
        name: "game_clock",
        group: Group::War,
        title: "Game clock",
        description: "Reference tool: the game calendar at an instant (now when at is left out): its game day (10:00 UTC to 10:00 UTC), season (first Monday of the month 10:00 UTC, with its war number), war week and day (training, war_day or colosseum) and when the next game day, war day and season start. Computed, never read from the record.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![],
        params: vec![
            Param::new(
                "at",
                args::pattern(
                    "An ISO instant (no offset: read in timezone) or YYYY-MM-DD, meaning 10:00 UTC that day; now when left out.",
                    AT_PATTERN,
                    40,
                ),
            ),
            Param::new(
                "timezone",
                args::string(
                    "IANA zone that reads an at without offset; yours when left out.",
                    1,
                    64,
                ),
            ),
        ],
        compact_drops: None,
        output: vec![
            (
                "game_day",
                object(
                    "{date, starts_at, ends_at}: the game day, 10:00 UTC to 10:00 UTC.",
                    json!({"date": {"type": "string"}, "starts_at": instant, "ends_at": instant}),
                ),
                true,
            ),
            (
                "season",
                object(
                    "{id (war number), month (YYYY-MM), starts_at, ends_at, weeks}.",
                    json!({
                        "id": {"type": "integer"},
                        "month": {"type": "string"},
                        "starts_at": instant,
                        "ends_at": instant,
                        "weeks": {"type": "integer"},
                    }),
                ),
                true,
            ),
            (
                "war",
                object(
                    "{section_index (0-based), week (1-based), day_in_week (0 Monday), war_day (1-4, null on training days), period_type, is_colosseum}.",
                    json!({
                        "section_index": {"type": "integer"},
                        "week": {"type": "integer"},
                        "day_in_week": {"type": "integer"},
                        "war_day": {"type": ["integer", "null"]},
                        "period_type": {"enum": ["training", "war_day", "colosseum"]},
                        "is_colosseum": {"type": "boolean"},
                    }),
                ),
                true,
            ),
            (
                "next",
                object(
                    "{game_day_at, war_day_at, season_at}: when the next game day, war day and season start.",
                    json!({"game_day_at": instant, "war_day_at": instant, "season_at": instant}),
                ),
                true,
            ),
        ],
        docs: DOCS.into(),
        too_large_hint: "Report meta.request_id with elixir_feedback.".into(),
        handler: handler(game_clock_call),
    }
}

/// The zone an offsetless `at` is read in: the `timezone` argument, else the caller's.
fn applied_zone(a: &Map<String, Value>, caller_zone: &str) -> Result<TimeZone, Fail> {
    match args::text(a, "timezone") {
        Some(name) => zone(name).ok_or_else(|| {
            bad_request(
                format!("timezone {name:?} is not an IANA time zone."),
                "game_clock({\"timezone\": \"Europe/Warsaw\"}) — use a name from the IANA database.",
            )
        }),
        // The caller's zone was checked when it was set; UTC as it has always defaulted.
        None => Ok(zone(caller_zone).unwrap_or(TimeZone::UTC)),
    }
}

async fn game_clock_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let zone = applied_zone(&a, &ctx.caller.timezone)?;
    let at_text = args::text(&a, "at");
    let at: Timestamp = match at_text {
        Some(text) => calendar::parse_at(text, &zone).ok_or_else(|| {
            bad_request(
                format!("at {text:?} is not an ISO instant or a YYYY-MM-DD date."),
                AT_HINT,
            )
        })?,
        None => from_millis(ctx.services.now())
            .ok_or_else(|| Fail::Internal("the clock is outside the calendar".into()))?,
    };
    let clock = calendar::clock_at(at).ok_or_else(|| match at_text {
        Some(text) => bad_request(
            format!("at {text:?} is outside the range of the game calendar."),
            AT_HINT,
        ),
        // Only a clock set near the year 9999 gets here: a bug of the deployment, not the call.
        None => Fail::Internal("the clock is outside the game calendar".into()),
    })?;
    let mut answer = render(&clock);
    if at_text.is_some_and(|t| t.len() == 10) {
        answer = answer.note(DATE_ONLY_NOTE);
    }
    Ok(answer.applied("verbosity", json!(args::verbosity(&a))))
}

/// The answer's fields (SURFACE §2.6), every instant UTC to the second with `Z`.
fn render(clock: &GameClock) -> Success {
    let (day, season, war, next) = (&clock.game_day, &clock.season, &clock.war, &clock.next);
    Success::new()
        .field(
            "game_day",
            json!({
                "date": day.date.to_string(),
                "starts_at": iso(day.starts_at),
                "ends_at": iso(day.ends_at),
            }),
        )
        .field(
            "season",
            json!({
                "id": season.id,
                "month": season.label(),
                "starts_at": iso(season.starts_at),
                "ends_at": iso(season.ends_at),
                "weeks": season.weeks,
            }),
        )
        .field(
            "war",
            json!({
                "section_index": war.section_index,
                "week": war.week,
                "day_in_week": war.day_in_week,
                "war_day": war.war_day,
                "period_type": war.period_type.as_str(),
                "is_colosseum": war.is_colosseum,
            }),
        )
        .field(
            "next",
            json!({
                "game_day_at": iso(next.game_day_at),
                "war_day_at": iso(next.war_day_at),
                "season_at": iso(next.season_at),
            }),
        )
}
