//! `battles_decks` (SURFACE §2.4): the subject's decks by `deck_hash`, each with its cards,
//! tower troop, average elixir, STATS and first and last play, filtered by `min_battles`,
//! sorted and paged by offset. A duel counts one game per round, with the round's deck and
//! outcome (§3.4); an undisclosed deck (no hash) is left out. War decks report no tower troop
//! and hash with `|0` (§6.2): their rows show `tower_troop: null`, and a note says so when
//! both kinds appear.

use elixir_record::battle::BattleCard;
use elixir_record::stats::{Accumulator, RowKind};
use serde_json::{Map, Value, json};

use super::{
    Args, Grouped, Scope, at_least, bounded, by_win_rate, common_params, docs_pointer, kinds, mean,
    offset, offset_param, one_of, page, page_outputs, round_to, row, stats_row_schema,
};
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::call::{Outcome, ToolCtx, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_decks";
/// `sort` values.
pub const SORTS: [&str; 3] = ["battles", "win_rate", "recent"];
/// The note when war decks and decks with a tower troop both appear.
pub const WAR_NOTE: &str = "War battles report no tower troop, so a war deck's deck_hash ends in |0 and differs from the same cards elsewhere; rows with tower_troop null are those.";

/// The `battles_decks` declaration.
pub fn spec() -> ToolSpec {
    let mut params = common_params();
    params.extend([
        Param::new(
            "min_battles",
            args::integer(
                "Only decks played at least this many games (1-100).",
                1,
                100,
                1,
            ),
        ),
        Param::new(
            "sort",
            args::choice(
                "Order: most games, best win rate, or most recently played.",
                &SORTS,
                Some("battles"),
            ),
        ),
        Param::new("limit", args::integer("Decks per page (1-50).", 1, 50, 10)),
        offset_param(),
    ]);
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Decks played",
        description: "Player tool: your decks by deck_hash, each with its cards, tower troop (null for war decks), average elixir, STATS and first and last play. A duel counts one game per round with the round's deck and outcome. min_battles, sort (battles, win_rate, recent), limit and offset page the list.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S, Flag::Co],
        params,
        compact_drops: None,
        output: [
            (
                "decks",
                json!({"type": "array", "description": "{deck_hash, cards[], tower_troop?, avg_elixir, STATS, first_played_at, last_played_at}.", "items": stats_row_schema("One deck.", json!({
                    "deck_hash": {"type": "string"},
                    "cards": {"type": "array"},
                    "tower_troop": {"type": ["object", "null"]},
                    "avg_elixir": {"type": ["number", "null"]},
                    "first_played_at": {"type": "string"},
                    "last_played_at": {"type": "string"},
                }))}),
                true,
            ),
        ]
        .into_iter()
        .chain(page_outputs("Decks that pass min_battles."))
        .collect(),
        docs: docs_pointer(NAME),
        too_large_hint: "battles_decks({\"limit\": 10}) pages fewer rows; min_battles, a shorter window (days, from, to) or a mode narrows it.".into(),
        handler: handler(call),
    }
}

/// One deck's row being collected.
#[derive(Debug, Clone)]
struct DeckRow {
    hash: String,
    cards: Vec<BattleCard>,
    tower_troop: Option<BattleCard>,
    acc: Accumulator,
    first: Millis,
    last: Millis,
}

/// A card of a deck row: what identifies it in the deck (level changes between games).
fn card_json(c: &BattleCard) -> Value {
    json!({"id": c.id, "name": c.name, "form": c.form, "elixir": c.elixir})
}

/// The mean elixir cost of the cards whose cost is known, one decimal; `None` if none is.
pub fn avg_elixir(cards: &[BattleCard]) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let costs: Vec<f64> = cards
        .iter()
        .filter_map(|c| c.elixir)
        .map(|e| e as f64)
        .collect();
    mean(&costs).map(|m| round_to(m, 1))
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let min_battles = bounded(&a, "min_battles", 1, 100, 1)?;
    let sort = one_of(&a, "sort", &SORTS, "battles")?.to_owned();
    let limit = bounded(&a, "limit", 1, 50, 10)?;
    let offset = offset(&a)?;
    let scope = Scope::resolve(&ctx, shared).await?;
    let battles = scope.all_battles(&ctx).await?;
    let tag = &scope.tag;
    let mut rows: Grouped<String, DeckRow> = Grouped::default();
    // newest first: the first game of a hash gives the row its cards
    for p in &battles {
        let at = p.time();
        for game in p.battle.games_of(tag) {
            let Some(hash) = game.deck_hash else { continue };
            let r = rows.row(hash.to_owned(), || DeckRow {
                hash: hash.to_owned(),
                cards: game.cards.to_vec(),
                tower_troop: game.tower_troop.cloned(),
                acc: Accumulator::new(),
                first: at,
                last: at,
            });
            r.acc.add_game(&game, tag.as_str());
            r.first = r.first.min(at);
            r.last = r.last.max(at);
        }
    }
    let rows = rows.into_rows();
    let war = rows.iter().any(|r| r.tower_troop.is_none());
    let other = rows.iter().any(|r| r.tower_troop.is_some());
    let stats = |r: &DeckRow| r.acc.stats(RowKind::SinglePlayer);
    let mut kept = at_least(rows, min_battles, |r| stats(r).battles);
    match sort.as_str() {
        "win_rate" => {
            kept.sort_by(|x, y| by_win_rate(&stats(x), &stats(y)).then(y.last.cmp(&x.last)));
        }
        "recent" => kept.sort_by(|x, y| y.last.cmp(&x.last).then(x.hash.cmp(&y.hash))),
        _ => kept.sort_by(|x, y| {
            stats(y)
                .battles
                .cmp(&stats(x).battles)
                .then(y.last.cmp(&x.last))
        }),
    }
    let (shown, total, next_offset) = page(&kept, offset, limit);
    let decks: Vec<Value> = shown
        .iter()
        .map(|r| {
            row(
                json!({
                    "deck_hash": r.hash,
                    "cards": r.cards.iter().map(card_json).collect::<Vec<_>>(),
                    "tower_troop": r.tower_troop.as_ref().map(|t| json!({"id": t.id, "name": t.name})),
                    "avg_elixir": avg_elixir(&r.cards),
                    "first_played_at": iso(r.first),
                    "last_played_at": iso(r.last),
                }),
                &r.acc,
            )
        })
        .collect();
    let out = super::small_sample_note(scope.envelope(&ctx, NAME).await?, &decks);
    let mut out = out
        .field("decks", Value::Array(decks))
        .field("total", json!(total))
        .field("next_offset", next_offset)
        .applied("sort", json!(sort))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset))
        .applied("min_battles", json!(min_battles));
    if war && other {
        out = out.note(WAR_NOTE);
    }
    Ok(out)
}
