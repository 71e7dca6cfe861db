//! `battles_performance` (SURFACE §2.4): the subject's results over a window (or their last N
//! battles), overall with three-crown wins, trophy change, crowns and level gap, split by
//! mode, grouped by ISO week, war week, season or mode, and their streaks. A duel counts once
//! with its outcome (§3.4). The arithmetic is `elixir_record::stats`'; which battles enter is
//! this file's.

use std::collections::BTreeMap;

use elixir_record::calendar;
use elixir_record::stats::{self, Accumulator, RowKind};
use elixir_record::{Mode, Side};
use serde_json::{Map, Value, json};

use super::{
    Args, Played, Scope, bounded, common_params, docs_pointer, kinds, mean, one_of, round_to, row,
    stats_properties, stats_row_schema,
};
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::call::{Outcome, ToolCtx, bad_request, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_performance";
/// `group_by` values.
pub const GROUP_BY: [&str; 5] = ["none", "week", "war_week", "season", "mode"];
/// The most battles `last_n_battles` takes.
pub const MAX_LAST_N: i64 = 500;

/// The `battles_performance` declaration.
pub fn spec() -> ToolSpec {
    let mut params = common_params();
    params.extend([
        Param::new(
            "deck_hash",
            args::pattern(
                "Only battles played with this deck (64 hex; a duel matches any round).",
                super::query::HEX64_PATTERN,
                64,
            ),
        ),
        Param::new(
            "last_n_battles",
            json!({"type": "integer", "minimum": 1, "maximum": MAX_LAST_N, "description": "Your last N battles (1-500) instead of a window; not with from, to, days, weeks or season."}),
        ),
        Param::new(
            "group_by",
            args::choice(
                "Groups: none, week (ISO, your timezone), war_week (Monday 10:00 UTC), season or mode.",
                &GROUP_BY,
                Some("none"),
            ),
        ),
    ]);
    let mut overall = stats_properties();
    for (k, t) in [
        ("three_crown_wins", json!({"type": "integer"})),
        ("trophy_change_sum", json!({"type": ["integer", "null"]})),
        ("avg_crowns_for", json!({"type": ["number", "null"]})),
        ("avg_crowns_against", json!({"type": ["number", "null"]})),
        ("mean_level_gap", json!({"type": ["number", "null"]})),
        ("level_gap_battles", json!({"type": "integer"})),
    ] {
        overall.insert(k.into(), t);
    }
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Performance",
        description: "Player tool: your results over a window or your last_n_battles: STATS with three-crown wins, trophy change, average crowns and mean level gap; by mode; optional groups by ISO week, war week, season or mode; and your longest and current win and loss streaks. A duel counts once with its outcome; deck_hash narrows to one deck.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S],
        params,
        compact_drops: None,
        output: vec![
            (
                "overall",
                json!({"type": "object", "description": "STATS plus three_crown_wins, trophy_change_sum, avg_crowns_for, avg_crowns_against, mean_level_gap, level_gap_battles.", "properties": overall, "required": ["battles", "wins", "losses", "win_rate", "three_crown_wins", "level_gap_battles"]}),
                true,
            ),
            (
                "by_mode",
                json!({"type": "array", "description": "{mode, STATS} per mode played, in SURFACE order.", "items": stats_row_schema("One mode.", json!({"mode": {"type": "string"}}))}),
                true,
            ),
            (
                "groups",
                json!({"type": "array", "description": "{key, from, to, STATS} per group, oldest first; [] with group_by none.", "items": stats_row_schema("One group.", json!({"key": {"type": "string"}, "from": {"type": "string"}, "to": {"type": "string"}}))}),
                true,
            ),
            (
                "streaks",
                json!({"type": "object", "description": "{longest_win, longest_loss, current {outcome, length}?}; a draw breaks a streak.", "required": ["longest_win", "longest_loss", "current"], "properties": {"longest_win": {"type": "integer"}, "longest_loss": {"type": "integer"}, "current": {"type": ["object", "null"]}}}),
                true,
            ),
        ],
        docs: docs_pointer(NAME),
        too_large_hint: "battles_performance({\"group_by\": \"none\"}) drops groups; a shorter window (days, from, to), last_n_battles or a mode narrows it.".into(),
        handler: handler(call),
    }
}

/// The group of one battle under `group_by`: (key, from, to).
fn group_of(by: &str, played: &Played, scope: &Scope) -> Option<(String, Millis, Millis)> {
    let at = played.battle.battle_time;
    match by {
        "week" => {
            let local = at.to_zoned(scope.zone.clone());
            let date = local.date();
            let monday = date
                .checked_sub(
                    jiff::Span::new().days(i64::from(date.weekday().to_monday_zero_offset())),
                )
                .ok()?;
            let start = monday.to_zoned(scope.zone.clone()).ok()?;
            let end = monday
                .checked_add(jiff::Span::new().days(7))
                .ok()?
                .to_zoned(scope.zone.clone())
                .ok()?;
            let week = date.iso_week_date();
            Some((
                format!("{}-W{:02}", week.year(), week.week()),
                start.timestamp().as_millisecond(),
                end.timestamp().as_millisecond(),
            ))
        }
        "war_week" => {
            let war = calendar::war_at(at)?;
            let season = calendar::season_at(at)?;
            Some((
                format!("{}-w{}", season.label(), war.week),
                war.week_starts_at.as_millisecond(),
                war.week_ends_at.as_millisecond(),
            ))
        }
        "season" => {
            let season = calendar::season_at(at)?;
            Some((
                season.label(),
                season.starts_at.as_millisecond(),
                season.ends_at.as_millisecond(),
            ))
        }
        "mode" => Some((
            played.battle.mode.as_str().to_owned(),
            scope.shown_from(),
            scope.window.to.as_millisecond(),
        )),
        _ => None,
    }
}

/// What `overall` adds to STATS, from the subject's side of each battle.
#[derive(Debug, Default)]
struct Extras {
    trophy_changes: Vec<i64>,
    crowns_for: Vec<f64>,
    crowns_against: Vec<f64>,
    level_gaps: Vec<f64>,
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let group_by = one_of(&a, "group_by", &GROUP_BY, "none")?.to_owned();
    let last_n = match a.get("last_n_battles") {
        None => None,
        Some(_) => Some(bounded(&a, "last_n_battles", 1, MAX_LAST_N, 1)?),
    };
    if last_n.is_some() && a.contains_key("season") {
        return Err(bad_request(
            "last_n_battles cannot be combined with season.",
            "Send last_n_battles alone, or season alone.",
        ));
    }
    let deck_hash = super::query::hex64_arg(&a, "deck_hash")?;
    let scope = Scope::resolve(&ctx, shared).await?;
    let mut battles: Vec<Played> = scope
        .all_battles(&ctx)
        .await?
        .into_iter()
        .filter(|p| {
            deck_hash
                .as_deref()
                .is_none_or(|h| super::query::played_with(p, &scope.tag, h))
        })
        .collect();
    if let Some(n) = last_n {
        battles.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    // oldest first from here: streaks and groups read in time order
    battles.reverse();
    let tag = &scope.tag;
    let mut overall = Accumulator::new();
    let mut extras = Extras::default();
    let mut modes: BTreeMap<Mode, Accumulator> = BTreeMap::new();
    let mut groups: Vec<((String, Millis, Millis), Accumulator)> = Vec::new();
    for p in &battles {
        let b = &p.battle;
        overall.add_battle(b, tag);
        modes.entry(b.mode).or_default().add_battle(b, tag);
        if let Some(key) = group_of(&group_by, p, &scope) {
            match groups.iter_mut().find(|(k, _)| k.0 == key.0) {
                Some((_, acc)) => {
                    acc.add_battle(b, tag);
                }
                None => {
                    let mut acc = Accumulator::new();
                    acc.add_battle(b, tag);
                    groups.push((key, acc));
                }
            }
        }
        let (mine, theirs) = (b.team.first(), b.opponent.first());
        if let Some(change) = b
            .participant(tag)
            .filter(|m| m.side == Side::Team)
            .and_then(|m| m.trophy_change)
        {
            extras.trophy_changes.push(change);
        }
        if let (Some(f), Some(g)) = (mine.and_then(|m| m.crowns), theirs.and_then(|t| t.crowns)) {
            #[allow(clippy::cast_precision_loss)]
            {
                extras.crowns_for.push(f as f64);
                extras.crowns_against.push(g as f64);
            }
        }
        if let Some(gap) = b.level_gap(tag) {
            extras.level_gaps.push(gap);
        }
    }
    if group_by == "mode" {
        groups.sort_by_key(|(k, _)| Mode::parse(&k.0));
    } else {
        groups.sort_by_key(|(k, _)| k.1);
    }
    let with = overall.stats_with_three_crowns(RowKind::SinglePlayer);
    let mut overall_json = match serde_json::to_value(&with) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    overall_json.insert(
        "trophy_change_sum".into(),
        if extras.trophy_changes.is_empty() {
            Value::Null
        } else {
            json!(extras.trophy_changes.iter().sum::<i64>())
        },
    );
    overall_json.insert(
        "avg_crowns_for".into(),
        json!(mean(&extras.crowns_for).map(|m| round_to(m, 2))),
    );
    overall_json.insert(
        "avg_crowns_against".into(),
        json!(mean(&extras.crowns_against).map(|m| round_to(m, 2))),
    );
    overall_json.insert(
        "mean_level_gap".into(),
        json!(mean(&extras.level_gaps).map(|m| round_to(m, 2))),
    );
    overall_json.insert("level_gap_battles".into(), json!(extras.level_gaps.len()));
    let by_mode: Vec<Value> = modes
        .iter()
        .map(|(m, acc)| row(json!({"mode": m.as_str()}), acc))
        .collect();
    let groups: Vec<Value> = groups
        .iter()
        .map(|((key, from, to), acc)| {
            row(json!({"key": key, "from": iso(*from), "to": iso(*to)}), acc)
        })
        .collect();
    let streaks = stats::streaks(battles.iter().map(Played::outcome));
    let overall_row = Value::Object(overall_json);
    let noted = super::small_sample_note(
        scope.envelope(&ctx, NAME).await?,
        std::slice::from_ref(&overall_row),
    );
    let mut out = noted
        .field("overall", overall_row)
        .field("by_mode", Value::Array(by_mode))
        .field("groups", Value::Array(groups))
        .field("streaks", json!(streaks))
        .applied("group_by", json!(group_by));
    if group_by == "week" {
        out = out.meta("timezone_applied", json!(scope.window.timezone));
    }
    if last_n.is_some()
        && let (Some(first), Some(last)) = (battles.first(), battles.last())
    {
        out = out.note(format!(
            "These are your last {} recorded battles, played from {} to {}.",
            battles.len(),
            iso(first.time()),
            iso(last.time())
        ));
    }
    if battles.is_empty() {
        out = out.note("No recorded battle matches this window and these filters.");
    }
    Ok(out)
}
