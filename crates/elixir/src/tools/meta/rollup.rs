//! The meta tools' answer: the store's per-deck-and-player rows rolled up into decks or
//! cards (distinct players exact), with pooled STATS, `usage_share` and `win_rate_low`, the
//! card filters, the `min_*` thresholds and their `excluded` counts, the sort and the page;
//! the page's decks read back for their cards and names.

use std::collections::HashMap;

use elixir_record::stats::{Accumulator, RowKind, round4};
use serde_json::{Value, json};

use super::Tool;
use super::args::{Request, Sort};
use crate::mcp::call::{Fail, Success, ToolCtx};
use crate::store::{DeckDetail, DeckGames, MetaRows};

/// Adds one of the store's per-player rows to a deck's or card's tally: the record's row
/// sample, so pooled STATS and `win_rate_low` are its arithmetic (a negative count, which the
/// store never returns, counts as none).
fn add_row(tally: &mut Accumulator, row: &DeckGames) {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    tally.add_counted(
        n(row.games),
        n(row.wins),
        n(row.losses),
        n(row.draws),
        &row.player_tag,
    );
}

/// A ranked row: its key, tally and usage share.
pub(super) struct Ranked {
    pub(super) key: String,
    pub(super) tally: Accumulator,
    pub(super) usage_share: f64,
}

/// `part ÷ whole` to four decimals (0 when nothing was played).
pub(super) fn share(part: u64, whole: u64) -> f64 {
    // game counts stay far below 2^53
    #[allow(clippy::cast_precision_loss)]
    if whole == 0 {
        0.0
    } else {
        round4(part as f64 / whole as f64)
    }
}

/// Orders rows by `sort`, highest first; ties by games, then key (stable pages).
pub(super) fn rank(rows: &mut [Ranked], sort: Sort) {
    let metric = |r: &Ranked| -> f64 {
        match sort {
            Sort::WinRateLow => r.tally.win_rate_low().unwrap_or(-1.0),
            Sort::Battles => 0.0,
            Sort::WinRate => r.tally.stats(RowKind::Pooled).win_rate.unwrap_or(-1.0),
            Sort::UsageShare => r.usage_share,
        }
    };
    rows.sort_by(|a, b| {
        metric(b)
            .total_cmp(&metric(a))
            .then(b.tally.battles().cmp(&a.tally.battles()))
            .then(a.key.cmp(&b.key))
    });
}

/// The card ids of a deck's keys (`"<id>:<form>"`).
pub(super) fn ids_of(card_keys: &str) -> impl Iterator<Item = i64> + '_ {
    card_keys
        .split(',')
        .filter_map(|k| k.split(':').next().and_then(|id| id.parse().ok()))
}

/// The rows that pass the thresholds, and the `excluded` counts.
pub(super) struct Kept {
    pub(super) rows: Vec<Ranked>,
    pub(super) considered: u64,
    pub(super) below_min_battles: u64,
    pub(super) below_min_players: u64,
}

/// The rows of `tallies` that pass the thresholds, ranked.
pub(super) fn keep(
    tallies: HashMap<String, Accumulator>,
    disclosed: u64,
    req: &Request,
    tool: Tool,
) -> Kept {
    let min_battles = u64::try_from(req.min_battles).unwrap_or(1);
    let min_players = match tool {
        Tool::Decks => usize::try_from(req.min_players).unwrap_or(1),
        Tool::Cards => 1,
    };
    let mut kept = Kept {
        rows: Vec::new(),
        considered: 0,
        below_min_battles: 0,
        below_min_players: 0,
    };
    for (key, tally) in tallies {
        kept.considered += 1;
        if tally.battles() < min_battles {
            kept.below_min_battles += 1;
        } else if tally.player_count() < min_players {
            kept.below_min_players += 1;
        } else {
            let usage_share = share(tally.battles(), disclosed);
            kept.rows.push(Ranked {
                key,
                tally,
                usage_share,
            });
        }
    }
    rank(&mut kept.rows, req.sort);
    kept
}

/// The page of `kept` and its `excluded`, `total` and `next_offset` fields.
pub(super) fn page<'k>(success: Success, kept: &'k Kept, req: &Request) -> (Success, &'k [Ranked]) {
    let total = kept.rows.len();
    let offset = usize::try_from(req.offset).unwrap_or(0).min(total);
    let limit = usize::try_from(req.limit).unwrap_or(1);
    let end = (offset + limit).min(total);
    let next = (end < total).then_some(end);
    let success = success
        .field(
            "excluded",
            json!({
                "considered": kept.considered,
                "below_min_battles": kept.below_min_battles,
                "below_min_players": kept.below_min_players,
            }),
        )
        .field("total", json!(total))
        .field("next_offset", json!(next));
    (success, &kept.rows[offset..end])
}

pub(super) fn stats_json(t: &Accumulator) -> Value {
    serde_json::to_value(t.stats(RowKind::Pooled)).unwrap_or(Value::Null)
}

pub(super) async fn decks(ctx: &ToolCtx, rows: &MetaRows, req: &Request) -> Result<Success, Fail> {
    let mut tallies: HashMap<String, Accumulator> = HashMap::new();
    let mut disclosed = 0u64;
    for row in &rows.games {
        let Some(hash) = &row.deck_hash else { continue };
        disclosed += u64::try_from(row.games).unwrap_or(0);
        let keys = rows.card_keys.get(hash).map_or("", String::as_str);
        let ids: Vec<i64> = ids_of(keys).collect();
        let passes = req.containing.iter().all(|c| ids.contains(c))
            && !req.excluding.iter().any(|c| ids.contains(c));
        if passes {
            add_row(tallies.entry(hash.clone()).or_default(), row);
        }
    }
    let kept = keep(tallies, disclosed, req, Tool::Decks);
    let (success, shown) = page(Success::new(), &kept, req);
    let hashes: Vec<String> = shown.iter().map(|r| r.key.clone()).collect();
    let details: HashMap<String, DeckDetail> = ctx
        .services
        .store
        .deck_details(&hashes)
        .await?
        .into_iter()
        .map(|d| (d.deck_hash.clone(), d))
        .collect();
    let mut out = Vec::with_capacity(shown.len());
    let (mut with_troop, mut without_troop) = (false, false);
    for r in shown {
        let detail = details
            .get(&r.key)
            .ok_or_else(|| Fail::Internal(format!("deck {} has games but no row", r.key)))?;
        let cards: Value = serde_json::from_str(&detail.cards)
            .map_err(|e| Fail::Internal(format!("deck {} cards: {e}", r.key)))?;
        let tower_troop: Value = match &detail.tower_troop {
            Some(t) => serde_json::from_str(t)
                .map_err(|e| Fail::Internal(format!("deck {} tower troop: {e}", r.key)))?,
            None => Value::Null,
        };
        if tower_troop.is_null() {
            without_troop = true;
        } else {
            with_troop = true;
        }
        out.push(json!({
            "deck_hash": r.key,
            "avg_elixir": avg_elixir(&cards),
            "cards": cards,
            "tower_troop": tower_troop,
            "usage_share": r.usage_share,
            "win_rate_low": r.tally.win_rate_low(),
            "stats": stats_json(&r.tally),
        }));
    }
    let mut success = success.field("decks", Value::Array(out));
    if with_troop && without_troop {
        success = success.note("War battles report no tower troop, so a war deck (tower_troop null) hashes apart from the same eight cards on the ladder.");
    }
    Ok(success)
}

/// The mean elixir cost of a deck's cards whose cost is known, two decimals; null when none
/// is (Mirror has no fixed cost).
pub(super) fn avg_elixir(cards: &Value) -> Value {
    let costs: Vec<i64> = cards
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|card| card["elixir"].as_i64())
                .collect()
        })
        .unwrap_or_default();
    if costs.is_empty() {
        return Value::Null;
    }
    // a deck's few small costs are exact in f64
    #[allow(clippy::cast_precision_loss)]
    let mean = costs.iter().sum::<i64>() as f64 / costs.len() as f64;
    json!((mean * 100.0).round() / 100.0)
}

pub(super) async fn cards(ctx: &ToolCtx, rows: &MetaRows, req: &Request) -> Result<Success, Fail> {
    let mut tallies: HashMap<String, Accumulator> = HashMap::new();
    // a deck holding each card, to read its name and form back
    let mut holder: HashMap<String, (String, usize)> = HashMap::new();
    let mut disclosed = 0u64;
    for row in &rows.games {
        let Some(hash) = &row.deck_hash else { continue };
        disclosed += u64::try_from(row.games).unwrap_or(0);
        let Some(keys) = rows.card_keys.get(hash) else {
            continue;
        };
        for (i, key) in keys.split(',').filter(|k| !k.is_empty()).enumerate() {
            add_row(tallies.entry(key.to_owned()).or_default(), row);
            holder
                .entry(key.to_owned())
                .or_insert_with(|| (hash.clone(), i));
        }
    }
    let kept = keep(tallies, disclosed, req, Tool::Cards);
    let (success, shown) = page(Success::new(), &kept, req);
    let mut hashes: Vec<String> = shown
        .iter()
        .filter_map(|r| holder.get(&r.key).map(|(h, _)| h.clone()))
        .collect();
    hashes.sort();
    hashes.dedup();
    let decks: HashMap<String, Value> = ctx
        .services
        .store
        .deck_details(&hashes)
        .await?
        .into_iter()
        .map(|d| {
            let cards = serde_json::from_str(&d.cards).unwrap_or(Value::Null);
            (d.deck_hash, cards)
        })
        .collect();
    let mut out = Vec::with_capacity(shown.len());
    for r in shown {
        let card = holder
            .get(&r.key)
            .and_then(|(hash, i)| decks.get(hash).and_then(|cards| cards.get(*i)))
            .ok_or_else(|| Fail::Internal(format!("card {} has games but no deck row", r.key)))?;
        out.push(json!({
            "id": card["id"],
            "name": card["name"],
            "form": card["form"],
            "usage_share": r.usage_share,
            "win_rate_low": r.tally.win_rate_low(),
            "stats": stats_json(&r.tally),
        }));
    }
    Ok(success
        .field("cards", Value::Array(out))
        .note("A card's usage_share is the share of games with a known deck that held it, so the shares add up to about eight."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `wins` and `losses` by the first of `players`; the others counted with no games.
    fn tally(wins: u64, losses: u64, players: &[&str]) -> Accumulator {
        let mut t = Accumulator::new();
        for (i, p) in players.iter().enumerate() {
            let (w, l) = if i == 0 { (wins, losses) } else { (0, 0) };
            t.add_counted(w + l, w, l, 0, p);
        }
        t
    }

    fn ranked(key: &str, t: Accumulator, usage_share: f64) -> Ranked {
        Ranked {
            key: key.into(),
            tally: t,
            usage_share,
        }
    }

    #[test]
    fn wilson_order_puts_a_large_sample_above_a_perfect_small_one() {
        let mut rows = vec![
            ranked("small", tally(3, 0, &["a"]), 0.1),
            ranked("large", tally(60, 20, &["a", "b"]), 0.5),
            ranked("empty", tally(0, 0, &["a"]), 0.0),
        ];
        rank(&mut rows, Sort::WinRateLow);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["large", "small", "empty"]);
        rank(&mut rows, Sort::WinRate);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["small", "large", "empty"]);
        rank(&mut rows, Sort::Battles);
        assert_eq!(rows[0].key, "large");
        // ties by games, then key: pages stay stable
        let mut tied = vec![
            ranked("b", tally(1, 1, &["a"]), 0.2),
            ranked("a", tally(1, 1, &["a"]), 0.2),
        ];
        rank(&mut tied, Sort::UsageShare);
        assert_eq!(tied[0].key, "a");
    }

    #[test]
    fn pooled_rows_need_twenty_decided_games() {
        let pooled = |t: Accumulator| t.stats(RowKind::Pooled);
        assert!(pooled(tally(10, 9, &["a"])).insufficient_sample);
        assert!(!pooled(tally(10, 10, &["a"])).insufficient_sample);
        assert_eq!(pooled(tally(3, 1, &["a", "b"])).players, 2);
    }

    #[test]
    fn shares_and_elixir_round_and_card_ids_parse() {
        assert_eq!(share(1, 3), 0.3333);
        assert_eq!(share(0, 0), 0.0);
        assert_eq!(
            ids_of("26000000:0,26000010:1,28000000:0").collect::<Vec<_>>(),
            [26_000_000, 26_000_010, 28_000_000]
        );
        let cards = json!([{"elixir": 3}, {"elixir": 4}, {"elixir": null}]);
        assert_eq!(avg_elixir(&cards), json!(3.5));
        assert_eq!(avg_elixir(&json!([{"elixir": null}])), Value::Null);
    }
}
