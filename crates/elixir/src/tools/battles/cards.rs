//! `battles_cards` (SURFACE §2.4): the subject's results per card they played (by id and
//! form), with the card's usage share and the baseline over every game, sorted and paged by
//! offset. A duel counts one game per round, with the round's cards and outcome (§3.4). The
//! games counted are those whose deck is known: an undisclosed deck has no cards to credit.

use elixir_record::battle::Form;
use elixir_record::stats::{Accumulator, RowKind};
use serde_json::{Map, Value, json};

use super::{
    Args, Grouped, Scope, baseline, baseline_output, bounded, by_losses, by_win_rate,
    common_params, docs_pointer, kinds, offset, offset_param, one_of, page, page_outputs, row,
    stats_row_schema,
};
use crate::mcp::args;
use crate::mcp::call::{Outcome, ToolCtx, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_cards";
/// `sort` values.
pub const SORTS: [&str; 3] = ["battles", "win_rate", "losses"];

/// The `battles_cards` declaration.
pub fn spec() -> ToolSpec {
    let mut params = common_params();
    params.extend([
        Param::new(
            "sort",
            args::choice(
                "Order: most games, best win rate, or most losses.",
                &SORTS,
                Some("battles"),
            ),
        ),
        Param::new(
            "limit",
            args::integer("Cards per page (1-120).", 1, 120, 30),
        ),
        offset_param(),
    ]);
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Card results",
        description: "Player tool: your results per card you played, by id and form (base, evolution, hero): usage_share of your games and STATS, beside the baseline over every game. A duel counts one game per round with the round's cards and outcome. sort (battles, win_rate, losses), limit and offset page the list.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S, Flag::Co],
        params,
        compact_drops: None,
        output: [
            (
                "cards",
                json!({"type": "array", "description": "{id, name, form, usage_share, STATS}.", "items": stats_row_schema("One card in one form.", json!({
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "form": {"type": ["string", "null"]},
                    "usage_share": {"type": "number"},
                }))}),
                true,
            ),
            baseline_output("{decided_battles, win_rate} over every game with a known deck."),
        ]
        .into_iter()
        .chain(page_outputs("Cards in the list."))
        .collect(),
        docs: docs_pointer(NAME),
        too_large_hint: "battles_cards({\"limit\": 30}) pages fewer rows; a shorter window (days, from, to) or a mode narrows it.".into(),
        handler: handler(call),
    }
}

#[derive(Debug, Clone)]
struct CardRow {
    id: i64,
    name: String,
    form: Option<Form>,
    acc: Accumulator,
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let sort = one_of(&a, "sort", &SORTS, "battles")?.to_owned();
    let limit = bounded(&a, "limit", 1, 120, 30)?;
    let offset = offset(&a)?;
    let scope = Scope::resolve(&ctx, shared).await?;
    let battles = scope.all_battles(&ctx).await?;
    let tag = &scope.tag;
    let mut base = Accumulator::new();
    let mut rows: Grouped<String, CardRow> = Grouped::default();
    for p in &battles {
        for game in p.battle.games_of(tag) {
            if game.cards.is_empty() {
                continue;
            }
            base.add_game(&game, tag.as_str());
            let mut seen: Vec<String> = Vec::new();
            for c in game.cards {
                let key = c.key();
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key.clone());
                rows.row(key, || CardRow {
                    id: c.id,
                    name: c.name.clone(),
                    form: c.form,
                    acc: Accumulator::new(),
                })
                .acc
                .add_game(&game, tag.as_str());
            }
        }
    }
    let mut rows = rows.into_rows();
    let games = base.stats(RowKind::SinglePlayer).battles;
    let stats = |r: &CardRow| r.acc.stats(RowKind::SinglePlayer);
    match sort.as_str() {
        "win_rate" => {
            rows.sort_by(|x, y| by_win_rate(&stats(x), &stats(y)).then(x.id.cmp(&y.id)));
        }
        "losses" => rows.sort_by(|x, y| by_losses(&stats(x), &stats(y)).then(x.id.cmp(&y.id))),
        _ => rows.sort_by(|x, y| {
            stats(y)
                .battles
                .cmp(&stats(x).battles)
                .then(x.id.cmp(&y.id))
        }),
    }
    let (shown, total, next_offset) = page(&rows, offset, limit);
    let cards: Vec<Value> = shown
        .iter()
        .map(|r| {
            #[allow(clippy::cast_precision_loss)]
            let share = if games == 0 {
                0.0
            } else {
                stats(r).battles as f64 / games as f64
            };
            row(
                json!({
                    "id": r.id,
                    "name": r.name,
                    "form": r.form,
                    "usage_share": elixir_record::stats::round4(share),
                }),
                &r.acc,
            )
        })
        .collect();
    let out = super::small_sample_note(scope.envelope(&ctx, NAME).await?, &cards);
    Ok(out
        .field("cards", Value::Array(cards))
        .field("baseline", baseline(&base))
        .field("total", json!(total))
        .field("next_offset", next_offset)
        .applied("sort", json!(sort))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset)))
}
