//! `battles_opponents` (SURFACE §2.4): what the subject meets, grouped by the opponents' card,
//! deck, player or clan, with the subject's results against each (the win rate is yours;
//! `players` counts distinct opponents), filtered by `min_battles`, sorted and paged by
//! offset, beside the subject's baseline. A battle counts once per row it falls in (a duel
//! with the duel's outcome); a tagless opponent has no player row, a clanless one no clan row.

use std::collections::BTreeSet;

use elixir_record::battle::Participant;
use elixir_record::stats::{Accumulator, RowKind, Stats};
use serde_json::{Map, Value, json};

use super::{
    Args, Grouped, Scope, at_least, baseline, baseline_output, bounded, by_losses, by_win_rate,
    common_params, docs_pointer, kinds, offset, offset_param, one_of, page, page_outputs,
    stats_fields, stats_row_schema,
};
use crate::mcp::args;
use crate::mcp::call::{Outcome, ToolCtx, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};

/// The tool's name.
pub const NAME: &str = "battles_opponents";
/// `group_by` values.
pub const GROUP_BY: [&str; 4] = ["card", "deck", "player", "clan"];
/// `sort` values.
pub const SORTS: [&str; 3] = ["losses", "battles", "win_rate"];

/// The `battles_opponents` declaration.
pub fn spec() -> ToolSpec {
    let mut params = common_params();
    params.extend([
        Param::new(
            "group_by",
            args::choice(
                "Rows by the opponents' card, deck, player or clan.",
                &GROUP_BY,
                Some("card"),
            ),
        ),
        Param::new(
            "min_battles",
            args::integer(
                "Only rows with at least this many battles (1-100).",
                1,
                100,
                3,
            ),
        ),
        Param::new(
            "sort",
            args::choice(
                "Order: most losses, most battles, or your best win rate.",
                &SORTS,
                Some("losses"),
            ),
        ),
        Param::new("limit", args::integer("Rows per page (1-50).", 1, 50, 20)),
        offset_param(),
    ]);
    ToolSpec {
        name: NAME,
        group: Group::Battles,
        title: "Opponents",
        description: "Player tool: what beats you and what you beat, by the opponents' card, deck, player or clan: each row's STATS are your results against it, and players counts distinct opponents. min_battles, sort (losses, battles, win_rate), limit and offset page the rows; baseline is your record over the window.".into(),
        scope: SCOPE_READ,
        kinds: kinds(),
        flags: vec![Flag::W, Flag::S, Flag::Co],
        params,
        compact_drops: None,
        output: [
            (
                "rows",
                json!({"type": "array", "description": "{key, STATS}: key is {id, name, form} (card), {deck_hash, cards[]} (deck), {tag, name} (player or clan).", "items": stats_row_schema("One opponent group.", json!({"key": {"type": "object"}}))}),
                true,
            ),
            baseline_output("{decided_battles, win_rate}: your record over every battle in the window."),
        ]
        .into_iter()
        .chain(page_outputs("Rows that pass min_battles."))
        .collect(),
        docs: docs_pointer(NAME),
        too_large_hint: "battles_opponents({\"limit\": 20}) pages fewer rows; min_battles, a shorter window (days, from, to) or a mode narrows it.".into(),
        handler: handler(call),
    }
}

/// An opponent's name for the `players` count: their tag, else their name.
fn who(p: &Participant) -> String {
    p.tag
        .as_ref()
        .map_or_else(|| p.name.clone(), |t| t.to_string())
}

/// The rows one battle falls in under `group_by`, each with the opponents it counts there.
fn keys_of(group_by: &str, opponents: &[Participant]) -> Vec<(String, Value, Vec<String>)> {
    let mut out: Vec<(String, Value, Vec<String>)> = Vec::new();
    let mut add = |id: String, key: Value, p: &Participant| match out.iter_mut().find(|k| k.0 == id)
    {
        Some(k) => k.2.push(who(p)),
        None => out.push((id, key, vec![who(p)])),
    };
    for p in opponents {
        match group_by {
            "card" => {
                for c in &p.cards {
                    add(
                        c.key(),
                        json!({"id": c.id, "name": c.name, "form": c.form}),
                        p,
                    );
                }
            }
            "deck" => {
                let decks: Vec<(&str, &[elixir_record::BattleCard])> = if p.rounds.is_empty() {
                    p.deck_hash
                        .as_deref()
                        .map(|h| (h, p.cards.as_slice()))
                        .into_iter()
                        .collect()
                } else {
                    p.rounds
                        .iter()
                        .filter_map(|r| r.deck_hash.as_deref().map(|h| (h, r.cards.as_slice())))
                        .collect()
                };
                for (hash, cards) in decks {
                    let cards: Vec<Value> = cards
                        .iter()
                        .map(|c| json!({"id": c.id, "name": c.name, "form": c.form}))
                        .collect();
                    add(
                        hash.to_owned(),
                        json!({"deck_hash": hash, "cards": cards}),
                        p,
                    );
                }
            }
            "player" => {
                if let Some(tag) = &p.tag {
                    add(
                        tag.to_string(),
                        json!({"tag": tag.to_string(), "name": p.name}),
                        p,
                    );
                }
            }
            _ => {
                if let Some(clan) = &p.clan {
                    add(
                        clan.tag.to_string(),
                        json!({"tag": clan.tag.to_string(), "name": clan.name}),
                        p,
                    );
                }
            }
        }
    }
    out
}

#[derive(Debug, Clone)]
struct OpponentRow {
    id: String,
    key: Value,
    acc: Accumulator,
    /// Distinct opponents (tag, else name): the row's `players`.
    players: BTreeSet<String>,
}

impl OpponentRow {
    fn stats(&self) -> Stats {
        let mut stats = self.acc.stats(RowKind::SinglePlayer);
        stats.players = u64::try_from(self.players.len()).unwrap_or(u64::MAX);
        stats
    }
}

async fn call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let shared = Args::read(&ctx, &a, NAME)?;
    let group_by = one_of(&a, "group_by", &GROUP_BY, "card")?.to_owned();
    let min_battles = bounded(&a, "min_battles", 1, 100, 3)?;
    let sort = one_of(&a, "sort", &SORTS, "losses")?.to_owned();
    let limit = bounded(&a, "limit", 1, 50, 20)?;
    let offset = offset(&a)?;
    let scope = Scope::resolve(&ctx, shared).await?;
    let battles = scope.all_battles(&ctx).await?;
    let tag = &scope.tag;
    let mut base = Accumulator::new();
    let mut rows: Grouped<String, OpponentRow> = Grouped::default();
    for p in &battles {
        let outcome = p.outcome();
        base.add(outcome, tag.as_str());
        for (id, key, opponents) in keys_of(&group_by, &p.battle.opponent) {
            let r = rows.row(id.clone(), || OpponentRow {
                id,
                key,
                acc: Accumulator::new(),
                players: BTreeSet::new(),
            });
            // once per battle; the row's players are every opponent met in it
            r.acc.add(outcome, tag.as_str());
            r.players.extend(opponents);
        }
    }
    let stats = OpponentRow::stats;
    let mut kept = at_least(rows.into_rows(), min_battles, |r| stats(r).battles);
    match sort.as_str() {
        "battles" => kept.sort_by(|x, y| {
            stats(y)
                .battles
                .cmp(&stats(x).battles)
                .then(x.id.cmp(&y.id))
        }),
        "win_rate" => {
            kept.sort_by(|x, y| by_win_rate(&stats(x), &stats(y)).then(x.id.cmp(&y.id)));
        }
        _ => kept.sort_by(|x, y| by_losses(&stats(x), &stats(y)).then(x.id.cmp(&y.id))),
    }
    let (shown, total, next_offset) = page(&kept, offset, limit);
    let out_rows: Vec<Value> = shown
        .iter()
        .map(|r| {
            let mut fields = Map::new();
            fields.insert("key".into(), r.key.clone());
            fields.extend(stats_fields(&r.stats()));
            Value::Object(fields)
        })
        .collect();
    let out = super::small_sample_note(scope.envelope(&ctx, NAME).await?, &out_rows);
    Ok(out
        .field("rows", Value::Array(out_rows))
        .field("baseline", baseline(&base))
        .field("total", json!(total))
        .field("next_offset", next_offset)
        .applied("group_by", json!(group_by))
        .applied("sort", json!(sort))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset))
        .applied("min_battles", json!(min_battles)))
}
