//! The meta area: the index behind battles_meta_decks and battles_meta_cards (migration
//! 2000005: one `battle_games` row per game of an observation, one `decks` row per deck) —
//! written beside each new observation ([`insert_games`], called from the record area's
//! ingest transaction) — and [`MetaReads`], its reads: a segment's games over a window
//! grouped by deck and player, and the window's population, under one time budget the
//! database enforces (`sqlkit::BudgetedRead`). Which games a battle counts as, and the
//! rankings, shares and STATS built from these rows, are the tool's (`crate::tools::meta`).

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use sqlkit::{Arg, BudgetedRead, Cols, Statement, Tx, sql};

use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::NewBattle;

/// Whose games a meta read counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentFilter {
    /// Every recorded player.
    Corpus,
    /// These players (normalized tags).
    Players(Vec<String>),
    /// The clan's recorded members over the window: every stint that overlaps it.
    Clan(String),
}

/// One meta read: a segment's games in `[from, to)` of some modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaQuery {
    /// `battle_time >= from`; `None` is no lower bound.
    pub from: Option<Millis>,
    /// `battle_time < to`.
    pub to: Millis,
    /// Stored mode names; `None` is every mode.
    pub modes: Option<Vec<String>>,
    pub segment: SegmentFilter,
}

/// One player's games with one deck in the window (`deck_hash` `None`: undisclosed decks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckGames {
    pub deck_hash: Option<String>,
    pub player_tag: String,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
}

/// Who and what a segment's window holds (SURFACE §2.4 `population`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Population {
    /// Segment players Elixir has a player row for.
    pub recorded_players: i64,
    /// Segment players with a battle in the window (and modes).
    pub players_in_window: i64,
    /// Distinct battles of segment players in the window; a battle between two of them once.
    pub battles_in_window: i64,
    /// Of those, the battles that ended in a win or a loss.
    pub decided_battles: i64,
}

/// What one meta read returns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaRows {
    /// Per deck and player, in no particular order.
    pub games: Vec<DeckGames>,
    /// Each deck of `games` by hash: its sorted `"<id>:<form>"` keys joined by `,`.
    pub card_keys: HashMap<String, String>,
    pub population: Population,
}

/// A deck's stored cards and tower troop (JSON, as [`crate::model::NewDeck`] wrote them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckDetail {
    pub deck_hash: String,
    pub card_keys: String,
    pub cards: String,
    pub tower_troop: Option<String>,
}

/// The meta tools' reads.
#[async_trait]
pub trait MetaReads: Send + Sync + 'static {
    /// The segment's games grouped by deck and player, each deck's card keys, and the
    /// window's population: one read transaction that the database cancels once `budget`
    /// is spent ([`StoreError::Timeout`]).
    async fn meta_rows(&self, query: &MetaQuery, budget: Duration) -> Result<MetaRows, StoreError>;
    /// The stored cards of these decks (unknown hashes are left out).
    async fn deck_details(&self, hashes: &[String]) -> Result<Vec<DeckDetail>, StoreError>;
}

/// Hashes per `IN (…)` list when reading decks back: far below either backend's limit on
/// bound parameters.
const DECKS_PER_STATEMENT: usize = 500;

/// Writes the games of one new observation of `player` (and any deck not stored yet), inside
/// the ingest transaction.
pub(super) async fn insert_games(
    tx: &mut Tx,
    player: &str,
    battle: &NewBattle,
) -> Result<(), StoreError> {
    for game in &battle.games {
        if let Some(deck) = &game.deck {
            sql(
                "INSERT INTO decks (deck_hash, card_keys, cards, tower_troop) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (deck_hash) DO NOTHING",
            )
            .bind(&deck.deck_hash)
            .bind(&deck.card_keys)
            .bind(&deck.cards)
            .bind(deck.tower_troop.as_deref())
            .execute(&mut *tx)
            .await?;
        }
        sql(
            "INSERT INTO battle_games (player_tag, battle_id, round, battle_time, mode, \
             outcome, deck_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (player_tag, battle_id, round) DO NOTHING",
        )
        .bind(player)
        .bind(&battle.battle_id)
        .bind(game.round)
        .bind(battle.battle_time)
        .bind(&battle.mode)
        .bind(game.outcome.as_deref())
        .bind(game.deck.as_ref().map(|d| d.deck_hash.as_str()))
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// The `WHERE` conditions of a meta read over a table aliased `t` (time, modes, segment),
/// with their arguments numbered from `$1`; `tag_column` is where the table keeps the tag.
fn conditions(q: &MetaQuery, tag_column: &str) -> (String, Vec<Arg>) {
    let mut args: Vec<Arg> = vec![Arg::from(q.to)];
    let mut text = "t.battle_time < $1".to_owned();
    if let Some(from) = q.from {
        args.push(Arg::from(from));
        text.push_str(&format!(" AND t.battle_time >= ${}", args.len()));
    }
    if let Some(modes) = &q.modes {
        text.push_str(&format!(" AND t.mode IN ({})", list(&mut args, modes)));
    }
    if let Some(c) = segment_condition(q, tag_column, &mut args) {
        text.push_str(&format!(" AND {c}"));
    }
    (text, args)
}

/// The segment's condition on `tag_column`; `None` for the corpus.
fn segment_condition(q: &MetaQuery, tag_column: &str, args: &mut Vec<Arg>) -> Option<String> {
    match &q.segment {
        SegmentFilter::Corpus => None,
        SegmentFilter::Players(tags) => Some(format!("{tag_column} IN ({})", list(args, tags))),
        SegmentFilter::Clan(clan) => Some(format!(
            "{tag_column} IN ({})",
            clan_members(clan, q.from, q.to, args)
        )),
    }
}

/// The subquery of a clan's members whose stint overlaps `[from, to)`.
fn clan_members(clan: &str, from: Option<Millis>, to: Millis, args: &mut Vec<Arg>) -> String {
    args.push(Arg::from(clan));
    let clan_at = args.len();
    args.push(Arg::from(to));
    let to_at = args.len();
    let mut text = format!(
        "SELECT m.player_tag FROM clan_members m WHERE m.clan_tag = ${clan_at} \
         AND m.joined_observed_at < ${to_at}"
    );
    if let Some(from) = from {
        args.push(Arg::from(from));
        text.push_str(&format!(
            " AND (m.left_observed_at IS NULL OR m.left_observed_at >= ${})",
            args.len()
        ));
    }
    text
}

/// `$n, $n+1, …` for `values`, appended to `args`. An empty list reads as `NULL`, which
/// matches nothing.
fn list(args: &mut Vec<Arg>, values: &[String]) -> String {
    if values.is_empty() {
        return "NULL".to_owned();
    }
    values
        .iter()
        .map(|v| {
            args.push(Arg::from(v.as_str()));
            format!("${}", args.len())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn statement(text: String, args: Vec<Arg>) -> Statement {
    args.into_iter().fold(sql(text), Statement::bind)
}

async fn read_all(read: &mut BudgetedRead, q: &MetaQuery) -> Result<MetaRows, StoreError> {
    let (filter, args) = conditions(q, "t.player_tag");
    let grouped = read
        .fetch_all(statement(
            format!(
                "SELECT t.deck_hash, t.player_tag, COUNT(*) AS games, \
                 SUM(CASE WHEN t.outcome = 'win' THEN 1 ELSE 0 END) AS wins, \
                 SUM(CASE WHEN t.outcome = 'loss' THEN 1 ELSE 0 END) AS losses, \
                 SUM(CASE WHEN t.outcome = 'draw' THEN 1 ELSE 0 END) AS draws \
                 FROM battle_games t WHERE {filter} GROUP BY t.deck_hash, t.player_tag"
            ),
            args,
        ))
        .await?;
    let mut games = Vec::with_capacity(grouped.len());
    for r in &grouped {
        games.push(DeckGames {
            deck_hash: r.opt_text("deck_hash")?,
            player_tag: r.text("player_tag")?,
            games: r.int("games")?,
            wins: r.int("wins")?,
            losses: r.int("losses")?,
            draws: r.int("draws")?,
        });
    }
    let mut hashes: Vec<String> = games.iter().filter_map(|g| g.deck_hash.clone()).collect();
    hashes.sort();
    hashes.dedup();
    let mut card_keys = HashMap::with_capacity(hashes.len());
    for chunk in hashes.chunks(DECKS_PER_STATEMENT) {
        let mut args = Vec::new();
        let text = format!(
            "SELECT deck_hash, card_keys FROM decks WHERE deck_hash IN ({})",
            list(&mut args, chunk)
        );
        for r in read.fetch_all(statement(text, args)).await? {
            card_keys.insert(r.text("deck_hash")?, r.text("card_keys")?);
        }
    }
    let (filter, args) = conditions(q, "t.player_tag");
    let window = read
        .fetch_one(statement(
            format!(
                // one grouping by battle instead of three COUNT(DISTINCT …): each of those
                // sorts the window's observations apart (17 s of SQLite's 20 at a million)
                "SELECT COUNT(*) AS battles, COALESCE(SUM(x.decided), 0) AS decided FROM \
                 (SELECT t.battle_id, MAX(CASE WHEN t.outcome IN ('win', 'loss') THEN 1 \
                 ELSE 0 END) AS decided FROM battle_players t WHERE {filter} \
                 GROUP BY t.battle_id) x"
            ),
            args,
        ))
        .await?;
    let mut args = Vec::new();
    let recorded = match segment_condition(q, "p.tag", &mut args) {
        Some(c) => format!("SELECT COUNT(*) AS n FROM players p WHERE {c}"),
        None => "SELECT COUNT(*) AS n FROM players p".to_owned(),
    };
    let recorded = read.fetch_one(statement(recorded, args)).await?;
    let players_in_window = i64::try_from(
        games
            .iter()
            .map(|g| g.player_tag.as_str())
            .collect::<std::collections::HashSet<_>>()
            .len(),
    )
    .unwrap_or(i64::MAX);
    Ok(MetaRows {
        games,
        card_keys,
        population: Population {
            recorded_players: recorded.int("n")?,
            players_in_window,
            battles_in_window: window.int("battles")?,
            decided_battles: window.int("decided")?,
        },
    })
}

#[async_trait]
impl MetaReads for SqlStore {
    async fn meta_rows(&self, query: &MetaQuery, budget: Duration) -> Result<MetaRows, StoreError> {
        let mut read = self.db.read_with_budget(budget).await?;
        let rows = read_all(&mut read, query).await;
        // a finished read returns its connection clean; a failed one is dropped (rolled back)
        match rows {
            Ok(rows) => {
                read.finish().await?;
                Ok(rows)
            }
            Err(e) => Err(e),
        }
    }

    async fn deck_details(&self, hashes: &[String]) -> Result<Vec<DeckDetail>, StoreError> {
        let mut out = Vec::with_capacity(hashes.len());
        for chunk in hashes.chunks(DECKS_PER_STATEMENT) {
            let mut args = Vec::new();
            let text = format!(
                "SELECT deck_hash, card_keys, cards, tower_troop FROM decks \
                 WHERE deck_hash IN ({})",
                list(&mut args, chunk)
            );
            for r in statement(text, args).fetch_all(&self.db).await? {
                out.push(DeckDetail {
                    deck_hash: r.text("deck_hash")?,
                    card_keys: r.text("card_keys")?,
                    cards: r.text("cards")?,
                    tower_troop: r.opt_text("tower_troop")?,
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(segment: SegmentFilter) -> MetaQuery {
        MetaQuery {
            from: Some(10),
            to: 20,
            modes: Some(vec!["ladder".into(), "path_of_legend".into()]),
            segment,
        }
    }

    #[test]
    fn conditions_number_their_arguments_in_order() {
        let (text, args) = conditions(&query(SegmentFilter::Corpus), "t.player_tag");
        assert_eq!(
            text,
            "t.battle_time < $1 AND t.battle_time >= $2 AND t.mode IN ($3, $4)"
        );
        assert_eq!(args.len(), 4);
        let (text, args) = conditions(
            &query(SegmentFilter::Players(vec!["#A".into(), "#B".into()])),
            "t.player_tag",
        );
        assert!(text.ends_with("AND t.player_tag IN ($5, $6)"), "{text}");
        assert_eq!(args[5], Arg::from("#B"));
        let (text, args) = conditions(&query(SegmentFilter::Clan("#C".into())), "t.player_tag");
        assert!(
            text.ends_with(
                "t.player_tag IN (SELECT m.player_tag FROM clan_members m WHERE m.clan_tag = $5 \
                 AND m.joined_observed_at < $6 AND (m.left_observed_at IS NULL OR \
                 m.left_observed_at >= $7))"
            ),
            "{text}"
        );
        assert_eq!(args.len(), 7);
        let unbounded = MetaQuery {
            from: None,
            modes: None,
            ..query(SegmentFilter::Players(Vec::new()))
        };
        let (text, _) = conditions(&unbounded, "t.player_tag");
        assert_eq!(text, "t.battle_time < $1 AND t.player_tag IN (NULL)");
    }
}
