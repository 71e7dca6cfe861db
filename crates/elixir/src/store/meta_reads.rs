//! The meta area: the index behind battles_meta_decks and battles_meta_cards (migration
//! 2000005: one `battle_games` row per game of an observation, one `decks` row per deck) —
//! written beside each new observation ([`insert_games`], called from the record area's
//! ingest transaction) — and [`MetaReads`], its reads: a segment's games over a window
//! grouped by deck and player, and the window's population, under one time budget the
//! database enforces (`sqlkit::BudgetedRead`). Which games a battle counts as, and the
//! rankings, shares and STATS built from these rows, are the tool's (`crate::tools::meta`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use async_trait::async_trait;
use sqlkit::{Arg, BudgetedRead, Cols, Db, Row, Statement, Tx, sql};

use super::batch;
use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::{NewDeck, NewGame};

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

/// A UTC day's number (`battle_time` ÷ 24 h): the rollups' key.
pub(super) const DAY_MS: i64 = 86_400_000;

/// The meta rollups' stand-in for an undisclosed deck (their keys cannot be NULL).
const UNDISCLOSED: &str = "";

/// The games one new observation counts as, for [`write_games`].
#[derive(Debug, Clone, Copy)]
pub(super) struct GamesOf<'a> {
    pub(super) battle_id: &'a str,
    pub(super) battle_time: Millis,
    pub(super) mode: &'a str,
    pub(super) games: &'a [NewGame],
}

/// The population rollup's additions of one ingest: battles new to the record and battles
/// newly decided, per UTC day and mode.
#[derive(Debug, Default)]
pub(super) struct BattleDays(BTreeMap<(i64, String), (i64, i64)>);

impl BattleDays {
    pub(super) fn add(&mut self, battle_time: Millis, mode: &str, battles: i64, decided: i64) {
        let entry = self
            .0
            .entry((battle_time.div_euclid(DAY_MS), mode.to_owned()))
            .or_default();
        entry.0 += battles;
        entry.1 += decided;
    }

    /// Adds them up in `meta_battle_days`, in key order (two writers lock rows in one order).
    pub(super) async fn write(self, tx: &mut Tx) -> Result<(), StoreError> {
        let rows: Vec<_> = self.0.into_iter().collect();
        batch::values(
            tx,
            "INSERT INTO meta_battle_days (utc_day, mode, battles, decided) VALUES ",
            4,
            " ON CONFLICT (utc_day, mode) DO UPDATE SET \
             battles = meta_battle_days.battles + excluded.battles, \
             decided = meta_battle_days.decided + excluded.decided",
            &rows,
            |((day, mode), (battles, decided))| {
                vec![
                    (*day).into(),
                    mode.as_str().into(),
                    (*battles).into(),
                    (*decided).into(),
                ]
            },
        )
        .await?;
        Ok(())
    }
}

/// Writes the games of new observations of `player` (and any deck not stored yet) inside the
/// ingest transaction, and adds the games it wrote to the daily rollup `meta_days`: one
/// multi-row statement per table.
pub(super) async fn write_games(
    tx: &mut Tx,
    player: &str,
    battles: &[GamesOf<'_>],
) -> Result<(), StoreError> {
    let mut decks: BTreeMap<&str, &NewDeck> = BTreeMap::new();
    let mut rows: Vec<(&GamesOf<'_>, &NewGame)> = Vec::new();
    for b in battles {
        for game in b.games {
            if let Some(deck) = &game.deck {
                decks.entry(deck.deck_hash.as_str()).or_insert(deck);
            }
            rows.push((b, game));
        }
    }
    let decks: Vec<&NewDeck> = decks.into_values().collect();
    batch::values(
        tx,
        "INSERT INTO decks (deck_hash, card_keys, cards, tower_troop) VALUES ",
        4,
        " ON CONFLICT (deck_hash) DO NOTHING",
        &decks,
        |d| {
            vec![
                d.deck_hash.as_str().into(),
                d.card_keys.as_str().into(),
                d.cards.as_str().into(),
                d.tower_troop.as_deref().into(),
            ]
        },
    )
    .await?;
    let written: HashSet<(String, i64)> = batch::values(
        tx,
        "INSERT INTO battle_games (player_tag, battle_id, round, battle_time, mode, outcome, \
         deck_hash) VALUES ",
        7,
        " ON CONFLICT (player_tag, battle_id, round) DO NOTHING RETURNING battle_id, round",
        &rows,
        |(b, game)| {
            vec![
                player.into(),
                b.battle_id.into(),
                game.round.into(),
                b.battle_time.into(),
                b.mode.into(),
                game.outcome.as_deref().into(),
                game.deck.as_ref().map(|d| d.deck_hash.as_str()).into(),
            ]
        },
    )
    .await?
    .iter()
    .map(|r| Ok((r.text("battle_id")?, r.int("round")?)))
    .collect::<Result<_, StoreError>>()?;
    // (day, mode, deck) -> (games, wins, losses, draws), in key order
    let mut days: BTreeMap<(i64, &str, &str), [i64; 4]> = BTreeMap::new();
    for (b, game) in &rows {
        if !written.contains(&(b.battle_id.to_owned(), game.round)) {
            continue;
        }
        let deck = game
            .deck
            .as_ref()
            .map_or(UNDISCLOSED, |d| d.deck_hash.as_str());
        let tally = days
            .entry((b.battle_time.div_euclid(DAY_MS), b.mode, deck))
            .or_default();
        tally[0] += 1;
        match game.outcome.as_deref() {
            Some("win") => tally[1] += 1,
            Some("loss") => tally[2] += 1,
            Some("draw") => tally[3] += 1,
            _ => {}
        }
    }
    let days: Vec<_> = days.into_iter().collect();
    batch::values(
        tx,
        "INSERT INTO meta_days (utc_day, mode, deck_hash, player_tag, games, wins, losses, \
         draws) VALUES ",
        8,
        " ON CONFLICT (utc_day, mode, deck_hash, player_tag) DO UPDATE SET \
         games = meta_days.games + excluded.games, wins = meta_days.wins + excluded.wins, \
         losses = meta_days.losses + excluded.losses, draws = meta_days.draws + excluded.draws",
        &days,
        |((day, mode, deck), [games, wins, losses, draws])| {
            vec![
                (*day).into(),
                (*mode).into(),
                (*deck).into(),
                player.into(),
                (*games).into(),
                (*wins).into(),
                (*losses).into(),
                (*draws).into(),
            ]
        },
    )
    .await?;
    Ok(())
}

/// Observations one transaction of [`backfill_games`] fills.
const BACKFILL_PAGE: i64 = 500;

/// The one-off fill of `battle_games` (and its rollup) for observations recorded before
/// migration 2000005, from their stored battles by the record's rules
/// ([`crate::recorder::ingest::stored_games`]); pending until it ran once
/// (`elixir_backfills`). A page per transaction, in key order; returns the observations
/// filled (0 when it was done before). Safe to run twice at once: every write is
/// `ON CONFLICT DO NOTHING` and the rollup counts only the games a run wrote.
pub(super) async fn backfill_games(db: &Db) -> Result<i64, StoreError> {
    let pending = sql(
        "SELECT name FROM elixir_backfills WHERE name = 'battle_games' \
         AND filled IS NULL",
    )
    .fetch_optional(db)
    .await?;
    if pending.is_none() {
        return Ok(0);
    }
    let (mut after, mut filled) = ((String::new(), String::new()), 0i64);
    loop {
        let mut tx = db.begin_write().await?;
        let page = sql(
            "SELECT bp.player_tag, bp.battle_id, bp.battle_time, bp.mode, b.body \
             FROM battle_players bp JOIN battles b ON b.battle_id = bp.battle_id \
             WHERE (bp.player_tag > $1 OR (bp.player_tag = $1 AND bp.battle_id > $2)) \
             AND NOT EXISTS (SELECT 1 FROM battle_games g \
                 WHERE g.player_tag = bp.player_tag AND g.battle_id = bp.battle_id) \
             ORDER BY bp.player_tag, bp.battle_id LIMIT $3",
        )
        .bind(&after.0)
        .bind(&after.1)
        .bind(BACKFILL_PAGE)
        .fetch_all(&mut tx)
        .await?;
        let Some(last) = page.last() else {
            break;
        };
        after = (last.text("player_tag")?, last.text("battle_id")?);
        let mut observations = Vec::with_capacity(page.len());
        for r in &page {
            let (player, body) = (r.text("player_tag")?, r.text("body")?);
            let games = crate::recorder::ingest::stored_games(&player, &body).unwrap_or_default();
            observations.push((
                player,
                r.text("battle_id")?,
                r.int("battle_time")?,
                r.text("mode")?,
                games,
            ));
        }
        let mut start = 0;
        while start < observations.len() {
            let player = &observations[start].0;
            let end = observations[start..]
                .iter()
                .position(|o| &o.0 != player)
                .map_or(observations.len(), |n| start + n);
            let of: Vec<GamesOf<'_>> = observations[start..end]
                .iter()
                .map(|(_, id, time, mode, games)| GamesOf {
                    battle_id: id,
                    battle_time: *time,
                    mode,
                    games,
                })
                .collect();
            write_games(&mut tx, player, &of).await?;
            start = end;
        }
        tx.commit().await?;
        filled += i64::try_from(page.len()).unwrap_or(i64::MAX);
    }
    sql("UPDATE elixir_backfills SET filled = $1 WHERE name = 'battle_games' AND filled IS NULL")
        .bind(filled)
        .execute(db)
        .await?;
    Ok(filled)
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

/// The segment's games in the window grouped by deck and player, read from every game.
async fn grouped_games(read: &mut BudgetedRead, q: &MetaQuery) -> Result<Vec<Row>, StoreError> {
    let (filter, args) = conditions(q, "t.player_tag");
    read.fetch_all(statement(
        format!(
            "SELECT t.deck_hash, t.player_tag, COUNT(*) AS games, \
             SUM(CASE WHEN t.outcome = 'win' THEN 1 ELSE 0 END) AS wins, \
             SUM(CASE WHEN t.outcome = 'loss' THEN 1 ELSE 0 END) AS losses, \
             SUM(CASE WHEN t.outcome = 'draw' THEN 1 ELSE 0 END) AS draws \
             FROM battle_games t WHERE {filter} GROUP BY t.deck_hash, t.player_tag"
        ),
        args,
    ))
    .await
}

/// The segment's battles in the window and how many were decided, read from every
/// observation: `(battles, decided)`.
async fn window_battles(read: &mut BudgetedRead, q: &MetaQuery) -> Result<(i64, i64), StoreError> {
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
    Ok((window.int("battles")?, window.int("decided")?))
}

/// The whole-day conditions of a rollup read over `t` (`utc_day` in `[first, end)`, modes).
fn day_conditions(q: &MetaQuery, first: Option<i64>, end: i64) -> (String, Vec<Arg>) {
    let mut args: Vec<Arg> = vec![Arg::from(end)];
    let mut text = "t.utc_day < $1".to_owned();
    if let Some(first) = first {
        args.push(Arg::from(first));
        text.push_str(&format!(" AND t.utc_day >= ${}", args.len()));
    }
    if let Some(modes) = &q.modes {
        text.push_str(&format!(" AND t.mode IN ({})", list(&mut args, modes)));
    }
    (text, args)
}

/// How a corpus window splits over the daily rollups: the whole UTC days `[first, end)` it
/// covers (`first` `None`: no lower bound), and the partial days at either edge, read from
/// every game. `None` when the window covers no whole day.
fn split_days(q: &MetaQuery) -> Option<(Option<i64>, i64, Vec<MetaQuery>)> {
    let end = q.to.div_euclid(DAY_MS);
    let first = q
        .from
        .map(|from| from.div_euclid(DAY_MS) + i64::from(from.rem_euclid(DAY_MS) != 0));
    if first.is_some_and(|first| first >= end) {
        return None;
    }
    let mut edges = Vec::new();
    if let (Some(from), Some(first)) = (q.from, first)
        && from < first * DAY_MS
    {
        edges.push(MetaQuery {
            from: Some(from),
            to: first * DAY_MS,
            ..q.clone()
        });
    }
    if end * DAY_MS < q.to {
        edges.push(MetaQuery {
            from: Some(end * DAY_MS),
            to: q.to,
            ..q.clone()
        });
    }
    Some((first, end, edges))
}

fn deck_games(r: &Row) -> Result<DeckGames, StoreError> {
    Ok(DeckGames {
        deck_hash: r.opt_text("deck_hash")?.filter(|h| h != UNDISCLOSED),
        player_tag: r.text("player_tag")?,
        games: r.int("games")?,
        wins: r.int("wins")?,
        losses: r.int("losses")?,
        draws: r.int("draws")?,
    })
}

/// The games and `(battles, decided)` of the window: for the corpus, its whole days from the
/// daily rollups and its partial days from every game; for a clan or a list of players (whose
/// members a rollup per day cannot know), from every game.
async fn window_rows(
    read: &mut BudgetedRead,
    q: &MetaQuery,
) -> Result<(Vec<DeckGames>, (i64, i64)), StoreError> {
    let split = match q.segment {
        SegmentFilter::Corpus => split_days(q),
        SegmentFilter::Players(_) | SegmentFilter::Clan(_) => None,
    };
    let Some((first, end, edges)) = split else {
        let games = grouped_games(read, q).await?;
        let games = games.iter().map(deck_games).collect::<Result<_, _>>()?;
        return Ok((games, window_battles(read, q).await?));
    };
    let (filter, args) = day_conditions(q, first, end);
    let mut rows = read
        .fetch_all(statement(
            format!(
                "SELECT t.deck_hash, t.player_tag, CAST(SUM(t.games) AS BIGINT) AS games, \
                 CAST(SUM(t.wins) AS BIGINT) AS wins, CAST(SUM(t.losses) AS BIGINT) AS losses, \
                 CAST(SUM(t.draws) AS BIGINT) AS draws FROM meta_days t WHERE {filter} \
                 GROUP BY t.deck_hash, t.player_tag"
            ),
            args,
        ))
        .await?;
    let (filter, args) = day_conditions(q, first, end);
    let days = read
        .fetch_one(statement(
            format!(
                "SELECT CAST(COALESCE(SUM(t.battles), 0) AS BIGINT) AS battles, \
                 CAST(COALESCE(SUM(t.decided), 0) AS BIGINT) AS decided \
                 FROM meta_battle_days t WHERE {filter}"
            ),
            args,
        ))
        .await?;
    let (mut battles, mut decided) = (days.int("battles")?, days.int("decided")?);
    for edge in &edges {
        rows.extend(grouped_games(read, edge).await?);
        let (b, d) = window_battles(read, edge).await?;
        battles += b;
        decided += d;
    }
    // the rollup's rows and the edges' rows of one deck and player add up
    let mut merged: HashMap<(Option<String>, String), DeckGames> = HashMap::new();
    for r in &rows {
        let g = deck_games(r)?;
        match merged.entry((g.deck_hash.clone(), g.player_tag.clone())) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let m = e.get_mut();
                m.games += g.games;
                m.wins += g.wins;
                m.losses += g.losses;
                m.draws += g.draws;
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(g);
            }
        }
    }
    Ok((merged.into_values().collect(), (battles, decided)))
}

async fn read_all(read: &mut BudgetedRead, q: &MetaQuery) -> Result<MetaRows, StoreError> {
    let (games, (battles_in_window, decided_battles)) = window_rows(read, q).await?;
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
            .collect::<HashSet<_>>()
            .len(),
    )
    .unwrap_or(i64::MAX);
    Ok(MetaRows {
        games,
        card_keys,
        population: Population {
            recorded_players: recorded.int("n")?,
            players_in_window,
            battles_in_window,
            decided_battles,
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
