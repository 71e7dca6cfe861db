//! `players_timeline` (SURFACE §2.3): a player's numbers per local day of the applied zone —
//! the day's last profile snapshot, and the day's recorded battles — with `complete` where the
//! record's battle-log reads measure the whole day. Never zero-filled: what nobody looked at
//! is null. Coverage is `tools::service`'s; the subject and shared helpers `tools::players`'.

use elixir_record::{time, window};
use jiff::tz::TimeZone;
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::Millis;
use crate::mcp::args;
use crate::mcp::blocks;
use crate::mcp::call::{Fail, Outcome as ToolOutcome, Success, ToolCtx, bad_request, handler};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};
use crate::model::{PlayerSnapshot, PollEndpoint, RecordedBattle};
use crate::store::BattleQuery;
use crate::tools::service::{self, Coverage};
use crate::tools::subject::recorded;

/// The metrics players_timeline can chart, in SURFACE order (the first four are the default).
pub const METRICS: [&str; 10] = [
    "trophies",
    "best_trophies",
    "pol_league",
    "pol_trophies",
    "battles",
    "wins",
    "losses",
    "king_tower_level",
    "collection_level",
    "donations",
];
// ---- players_timeline ----

pub fn timeline() -> ToolSpec {
    let mut params = blocks::player_params();
    params.extend(blocks::window_params());
    params.push(Param::new(
        "metrics",
        json!({
            "type": "array",
            "items": {"type": "string", "enum": METRICS},
            "minItems": 1,
            "maxItems": 10,
            "description": "1-10 of trophies, best_trophies, pol_league, pol_trophies, battles, wins, losses, king_tower_level, collection_level, donations; default the first four.",
        }),
    ));
    params.push(Param::new(
        "limit",
        args::integer("Days at most, newest kept (1-400).", 1, 400, 120),
    ));
    ToolSpec {
        name: "players_timeline",
        group: Group::Players,
        title: "Daily progress",
        description: "Player tool: a player's numbers day by day (you when no tag is given) over local days of the applied timezone (default the last 30): trophies, best trophies, Path of Legend league and trophies from the day's last profile read, and battles, wins and losses recorded that day. Unmeasured values are null, never zero; complete is false on a day the record does not wholly cover.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::W],
        params,
        compact_drops: None,
        output: vec![
            ("series", shape::list("[{day YYYY-MM-DD, values {metric: number|null}, complete}], oldest first.", &["day", "values", "complete"]), true),
        ],
        docs: "tools-players#players-timeline".into(),
        too_large_hint: "players_timeline({\"limit\": 30}) or fewer metrics narrow it.".into(),
        handler: handler(timeline_call),
    }
}

/// The metrics a call asked for: each named once, in the order sent; default the first four.
fn metrics(a: &Map<String, Value>) -> Result<Vec<&'static str>, Fail> {
    let Some(items) = a.get("metrics").and_then(Value::as_array) else {
        return Ok(METRICS[..4].to_vec());
    };
    let mut out = Vec::new();
    for item in items {
        let text = item.as_str().unwrap_or_default();
        let Some(metric) = METRICS.iter().find(|m| **m == text) else {
            return Err(bad_request(
                format!("metric {text:?} is not one of {}.", METRICS.join(", ")),
                "players_timeline({\"metrics\": [\"trophies\", \"battles\"]})",
            ));
        };
        if out.contains(metric) {
            return Err(bad_request(
                format!("metrics names {text} twice."),
                "players_timeline({\"metrics\": [\"trophies\", \"battles\"]}) — each metric once.",
            ));
        }
        out.push(*metric);
    }
    Ok(out)
}

fn snapshot_value(s: &PlayerSnapshot, metric: &str) -> Option<i64> {
    match metric {
        "trophies" => s.trophies,
        "best_trophies" => s.best_trophies,
        "pol_league" => s.pol_league,
        "pol_trophies" => s.pol_trophies,
        "king_tower_level" => s.king_tower_level,
        "collection_level" => s.collection_level,
        "donations" => s.donations,
        _ => None,
    }
}

/// One local day of the series: `[from, to)` clipped to the window.
#[derive(Debug, Clone)]
struct Day {
    label: String,
    from: Millis,
    to: Millis,
}

/// The local days of `[from, to)` in `zone`, oldest first.
fn local_days(from: Millis, to: Millis, zone: &TimeZone) -> Result<Vec<Day>, Fail> {
    let bad = |e: jiff::Error| Fail::Internal(format!("day arithmetic: {e}"));
    let mut days = Vec::new();
    let Some(mut date) = time::local_date(from, zone) else {
        return Ok(days);
    };
    loop {
        let start = date
            .to_zoned(zone.clone())
            .map_err(bad)?
            .timestamp()
            .as_millisecond();
        if start >= to {
            break;
        }
        let next = date.tomorrow().map_err(bad)?;
        let end = next
            .to_zoned(zone.clone())
            .map_err(bad)?
            .timestamp()
            .as_millisecond();
        days.push(Day {
            label: date.to_string(),
            from: start.max(from),
            to: end.min(to),
        });
        date = next;
    }
    Ok(days)
}

fn day_values(
    day: &Day,
    metrics: &[&str],
    snapshots: &[PlayerSnapshot],
    battles: &[RecordedBattle],
    coverage: &Coverage,
) -> Value {
    let last_snapshot = snapshots
        .iter()
        .filter(|s| s.observed_at >= day.from && s.observed_at < day.to)
        .max_by_key(|s| s.observed_at);
    let of_day: Vec<&RecordedBattle> = battles
        .iter()
        .filter(|b| b.battle_time >= day.from && b.battle_time < day.to)
        .collect();
    // counts are known where the record looked, or where it holds a battle
    let looked = coverage.meets_measured(day.from, day.to) || !of_day.is_empty();
    let count = |outcome: Option<&str>| {
        looked.then(|| {
            of_day
                .iter()
                .filter(|b| outcome.is_none_or(|o| b.side.outcome.as_deref() == Some(o)))
                .count()
        })
    };
    let mut values = Map::new();
    for metric in metrics {
        let v = match *metric {
            "battles" => json!(count(None)),
            "wins" => json!(count(Some("win"))),
            "losses" => json!(count(Some("loss"))),
            other => json!(last_snapshot.and_then(|s| snapshot_value(s, other))),
        };
        values.insert((*metric).to_owned(), v);
    }
    Value::Object(values)
}

async fn timeline_call(ctx: ToolCtx, a: Map<String, Value>) -> ToolOutcome {
    let facts = recorded(&ctx, &a).await?;
    let metrics = metrics(&a)?;
    let limit = usize::try_from(args::int(&a, "limit", 120)).unwrap_or(120);
    let rules = window::default_for("players_timeline")
        .ok_or_else(|| Fail::Internal("players_timeline has no window rules".into()))?;
    let now = ctx.services.now();
    let w = blocks::window(&a, &rules, &ctx.caller.timezone, now)?;
    let (from, to) = service::bounds(&w);
    let subject_tag = facts.tag.to_string();
    let store = &ctx.services.store;
    let snapshots = store.snapshots(&subject_tag, from, to).await?;
    let battles = store
        .battles(
            &subject_tag,
            &BattleQuery {
                from: Some(from),
                to: Some(to),
                ..BattleQuery::default()
            },
        )
        .await?;
    let coverage = service::player_coverage(&ctx, &subject_tag, from, to).await?;
    let days = local_days(from, to, &w.zone())?;
    let total = days.len();
    let shown = &days[total.saturating_sub(limit)..];
    let series: Vec<Value> = shown
        .iter()
        .map(|d| {
            json!({
                "day": d.label,
                "values": day_values(d, &metrics, &snapshots, &battles, &coverage),
                "complete": coverage.covers(d.from, d.to),
            })
        })
        .collect();
    let mut success = Success::new()
        .field("series", Value::Array(series))
        .applied(
            "window",
            service::applied_window(&w, facts.recorded_since()),
        )
        .applied("limit", json!(limit))
        .applied("verbosity", json!(args::verbosity(&a)))
        .meta("timezone_applied", json!(w.timezone));
    success = success.metas(facts.meta(now, &[PollEndpoint::Battlelog, PollEndpoint::Player]));
    if total > shown.len() {
        success = success.note(format!(
            "Only the newest {} of the window's {total} days are shown; raise limit or narrow the window.",
            shown.len()
        ));
    }
    if metrics
        .iter()
        .any(|m| !["battles", "wins", "losses"].contains(m))
    {
        success = success.note(
            "Profile numbers are the day's last profile read; a day without a read shows null.",
        );
    }
    if let Some(note) = service::completeness_note(&coverage) {
        success = success.meta("completeness_note", json!(note));
    }
    Ok(success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn metrics_default_to_the_first_four_and_refuse_repeats() {
        assert_eq!(
            metrics(&obj(json!({}))).unwrap(),
            vec!["trophies", "best_trophies", "pol_league", "pol_trophies"]
        );
        assert_eq!(
            metrics(&obj(json!({"metrics": ["wins", "battles"]}))).unwrap(),
            vec!["wins", "battles"]
        );
        assert!(metrics(&obj(json!({"metrics": ["wins", "wins"]}))).is_err());
        assert!(metrics(&obj(json!({"metrics": ["elo"]}))).is_err());
    }

    #[test]
    fn local_days_follow_the_zone_and_clip_to_the_window() {
        // 2026-01-01T00:00Z .. 2026-01-03T12:00Z in Warsaw (UTC+1): days start 23:00Z
        let from = 1_767_225_600_000;
        let to = from + 60 * 3_600_000;
        let zone = TimeZone::get("Europe/Warsaw").unwrap();
        let days = local_days(from, to, &zone).unwrap();
        let labels: Vec<&str> = days.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["2026-01-01", "2026-01-02", "2026-01-03"]);
        assert_eq!(days[0].from, from);
        assert_eq!(days[0].to, from + 23 * 3_600_000);
        assert_eq!(days[2].to, to);
    }
}
