//! `battles_levels` (SURFACE §2.4): how level gaps moved the subject's results. The gap of a
//! battle is the subject's deck's mean in-game level minus the opponents' (§6.4), known only
//! when both decks are fully known (`comparable`); battles fall in seven bands by the gap
//! rounded to a whole level (≤-3 … ≥+3). Per card the subject played: their level and the
//! mean level of the same card when opponents brought it (compact drops `cards[]`). Battle
//! logs carry no King Tower level, so `king_tower.yours` is the profile's and the opponents'
//! is unknown (`null`).

use elixir_record::stats::Accumulator;
use serde_json::{Map, Value, json};

use super::{
    Args, Grouped, Scope, common_params, docs_pointer, kinds, mean, round_to, row, stats_row_schema,
};
use crate::mcp::call::{Outcome, ToolCtx, handler};
use crate::mcp::spec::{Flag, Group, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_levels";
/// The bands, lowest gap first.
pub const BANDS: [&str; 7] = ["≤-3", "-2", "-1", "0", "+1", "+2", "≥+3"];
/// The note about King Tower levels.
pub const KING_TOWER_NOTE: &str = "Battle logs carry no King Tower level: king_tower.yours is your profile's latest, and the opponents' is unknown.";

/// The `battles_levels` declaration.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Level gaps",
        description: "Player tool: how card level gaps moved your results. The gap is your deck's mean in-game level minus your opponent's, known when both decks are fully known (comparable); bands from ≤-3 to ≥+3 carry STATS; cards[] compares your level of each card with opponents' when they played it.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S, Flag::V],
        params: common_params(),
        compact_drops: Some("cards[]"),
        output: vec![
            (
                "overall",
                json!({"type": "object", "description": "{battles, comparable, mean_level_gap?, king_tower {yours?, mean_opponent?}}.", "required": ["battles", "comparable", "mean_level_gap", "king_tower"], "properties": {
                    "battles": {"type": "integer"},
                    "comparable": {"type": "integer"},
                    "mean_level_gap": {"type": ["number", "null"]},
                    "king_tower": {"type": "object", "required": ["yours", "mean_opponent"], "properties": {"yours": {"type": ["integer", "null"]}, "mean_opponent": {"type": ["number", "null"]}}},
                }}),
                true,
            ),
            (
                "bands",
                json!({"type": "array", "description": "{gap, STATS} for the seven bands ≤-3, -2, -1, 0, +1, +2, ≥+3 (comparable battles only).", "items": stats_row_schema("One band.", json!({"gap": {"enum": BANDS}}))}),
                true,
            ),
            (
                "cards",
                json!({"type": "array", "description": "{id, name, your_level?, mean_opponent_level?, faced_battles} per card you played, most faced first (full size only).", "items": {"type": "object", "required": ["id", "name", "your_level", "mean_opponent_level", "faced_battles"]}}),
                false,
            ),
        ],
        docs: docs_pointer(NAME),
        too_large_hint: "battles_levels({\"verbosity\": \"compact\"}) drops cards[]; a shorter window or a mode narrows it.".into(),
        handler: handler(call),
    }
}

/// The band of a gap: rounded to a whole level, clamped to ±3.
pub fn band(gap: f64) -> usize {
    #[allow(clippy::cast_possible_truncation)]
    let whole = gap.round().clamp(-3.0, 3.0) as i64;
    usize::try_from(whole + 3).unwrap_or(3)
}

#[derive(Debug, Clone)]
struct CardLevels {
    id: i64,
    name: String,
    /// The level in the newest battle it was played with a known level.
    yours: Option<i64>,
    opponent_levels: Vec<f64>,
    faced: u64,
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let scope = Scope::resolve(&ctx, shared).await?;
    let battles = scope.all_battles(&ctx).await?;
    let tag = &scope.tag;
    let mut bands: Vec<Accumulator> = vec![Accumulator::new(); BANDS.len()];
    let mut gaps = Vec::new();
    let mut cards: Grouped<i64, CardLevels> = Grouped::default();
    // newest first, so the first level seen of a card is the newest
    for p in &battles {
        let b = &p.battle;
        if let Some(gap) = b.level_gap(tag) {
            gaps.push(gap);
            bands[band(gap)].add(p.outcome(), tag.as_str());
        }
        let Some(me) = super::me(p, tag) else {
            continue;
        };
        let mut seen = Vec::new();
        for c in &me.cards {
            if seen.contains(&c.id) {
                continue;
            }
            seen.push(c.id);
            let row = cards.row(c.id, || CardLevels {
                id: c.id,
                name: c.name.clone(),
                yours: None,
                opponent_levels: Vec::new(),
                faced: 0,
            });
            if row.yours.is_none() {
                row.yours = c.level;
            }
            let theirs: Vec<&elixir_record::BattleCard> = b
                .opponent
                .iter()
                .flat_map(|o| o.cards.iter())
                .filter(|o| o.id == c.id)
                .collect();
            if !theirs.is_empty() {
                row.faced += 1;
                #[allow(clippy::cast_precision_loss)]
                row.opponent_levels
                    .extend(theirs.iter().filter_map(|o| o.level).map(|l| l as f64));
            }
        }
    }
    let to = scope.window.to.as_millisecond();
    let yours = ctx
        .services
        .store
        // the newest profile read up to the window's end (a read at `to` included)
        .snapshots(tag.as_str(), 0, to + 1)
        .await?
        .iter()
        .rev()
        .find_map(|s| s.king_tower_level);
    let overall = json!({
        "battles": battles.len(),
        "comparable": gaps.len(),
        "mean_level_gap": mean(&gaps).map(|g| round_to(g, 2)),
        "king_tower": {"yours": yours, "mean_opponent": null},
    });
    let band_rows: Vec<Value> = BANDS
        .iter()
        .zip(&bands)
        .map(|(gap, acc)| row(json!({"gap": gap}), acc))
        .collect();
    let out = super::small_sample_note(scope.envelope(&ctx, NAME).await?, &band_rows);
    let mut out = out
        .field("overall", overall)
        .field("bands", Value::Array(band_rows))
        .note(KING_TOWER_NOTE);
    if !scope.compact() {
        let mut cards = cards.into_rows();
        cards.sort_by(|x, y| y.faced.cmp(&x.faced).then(x.id.cmp(&y.id)));
        let card_rows: Vec<Value> = cards
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "name": c.name,
                    "your_level": c.yours,
                    "mean_opponent_level": mean(&c.opponent_levels).map(|m| round_to(m, 2)),
                    "faced_battles": c.faced,
                })
            })
            .collect();
        out = out.field("cards", Value::Array(card_rows));
    }
    if gaps.len() < battles.len() {
        out = out.note(format!(
            "{} of {} battles are comparable; the others lack a fully known deck on one side.",
            gaps.len(),
            battles.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fall_in_whole_level_bands() {
        assert_eq!(BANDS[band(-7.2)], "≤-3");
        assert_eq!(BANDS[band(-2.5)], "≤-3");
        assert_eq!(BANDS[band(-2.49)], "-2");
        assert_eq!(BANDS[band(-0.4)], "0");
        assert_eq!(BANDS[band(0.0)], "0");
        assert_eq!(BANDS[band(0.5)], "+1");
        assert_eq!(BANDS[band(2.4)], "+2");
        assert_eq!(BANDS[band(9.0)], "≥+3");
    }
}
