//! The meta index's daily rollups (migration 2000006) on both backends: a corpus read, whose
//! whole days come from the rollups, answers exactly what the same window read from every
//! game answers (windows on and off day boundaries, inside one day, every mode list);
//! re-ingesting the same logs leaves them as they were; and a database recorded before the
//! meta index existed (migrations up to 2000004, then 2000005) is filled by the migration:
//! `battle_games` from the stored battles, the rollups from those games; the migration that
//! drops the observations' foreign keys keeps every row, index and answer, and the ingest
//! alone keeps every observation's battle.

use std::collections::BTreeMap;
use std::time::Duration;

use elixir::model::NewBattle;
use elixir::recorder::ingest::{new_battles, observer_name};
use elixir::store::{
    DeckGames, MetaQuery, MetaRows, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS, SegmentFilter,
    SharedStore,
};
use elixir_record::{Battle, Tag};
use sqlkit::{Cols, Db, Embedded, sql};
use testkit::cr_api::render::battle_json;
use testkit::cr_api::{World, WorldConfig};

use crate::on_both_backends;
use crate::support::T0;

const DAY: i64 = 86_400_000;
const BUDGET: Duration = Duration::from_secs(60);

async fn open(url: &str) -> SharedStore {
    let store = elixir::store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
}

/// Every tracked player's log of a small generated world ending at T0 (8 days), as rows.
fn logs(seed: u64, players: u32) -> Vec<(String, Option<String>, Vec<NewBattle>)> {
    let world = World::generate(WorldConfig::new(seed, players, 8, T0)).unwrap();
    let mut logs = Vec::new();
    for (i, p) in world.players().iter().enumerate() {
        let index = u32::try_from(i).unwrap();
        let tag = Tag::parse(&p.tag).unwrap();
        let battles: Vec<Battle> = world
            .battles_of(index)
            .iter()
            .map(|&b| &world.battles()[b as usize])
            .filter_map(|b| battle_json(&world, b, index))
            .map(|j| Battle::from_upstream(&j).unwrap())
            .collect();
        let name = observer_name(&tag, &battles).map(str::to_owned);
        logs.push((p.tag.clone(), name, new_battles(&tag, &battles).unwrap()));
    }
    logs
}

/// Records the logs in reads of `chunk` battles (each its own transaction).
async fn ingest(
    store: &SharedStore,
    logs: &[(String, Option<String>, Vec<NewBattle>)],
    chunk: usize,
) {
    for (tag, name, rows) in logs {
        for part in rows.chunks(chunk) {
            store
                .ingest_battles(tag, name.as_deref(), T0, part)
                .await
                .unwrap();
        }
    }
}

/// A read's rows in one order, for comparing.
fn sorted(mut rows: MetaRows) -> MetaRows {
    rows.games
        .sort_by(|a, b| (&a.deck_hash, &a.player_tag).cmp(&(&b.deck_hash, &b.player_tag)));
    rows
}

async fn read(store: &SharedStore, q: &MetaQuery) -> MetaRows {
    sorted(store.meta_rows(q, BUDGET).await.unwrap())
}

/// Windows on and off UTC day boundaries: `(from, to)`.
fn windows() -> Vec<(Option<i64>, i64)> {
    vec![
        (None, T0),
        (Some(T0 - 5 * DAY), T0),
        (Some(T0 - 5 * DAY + 3_600_000), T0),
        (Some(T0 - 6 * DAY + 1), T0 - DAY - 1),
        (None, T0 - 2 * DAY + 7_200_000),
        (Some(T0 - 3 * DAY + 60_000), T0 - 3 * DAY + 20 * 3_600_000),
        (Some(T0 - 3 * DAY), T0 - 2 * DAY),
        (Some(T0 + DAY), T0 + 2 * DAY),
    ]
}

fn mode_lists() -> Vec<Option<Vec<String>>> {
    vec![
        None,
        Some(vec!["ladder".into(), "path_of_legend".into()]),
        Some(vec!["war_duel".into()]),
        Some(Vec::new()),
    ]
}

async fn corpus_rollups_answer_as_every_game(url: &str) {
    let store = open(url).await;
    let logs = logs(11, 40);
    // odd read sizes: pieces of every power of two, and battles split across reads
    ingest(&store, &logs, 37).await;
    let players: Vec<String> = logs.iter().map(|(tag, _, _)| tag.clone()).collect();
    let mut compared = 0;
    for (from, to) in windows() {
        for modes in mode_lists() {
            let corpus = MetaQuery {
                from,
                to,
                modes: modes.clone(),
                segment: SegmentFilter::Corpus,
            };
            let every_game = MetaQuery {
                segment: SegmentFilter::Players(players.clone()),
                ..corpus.clone()
            };
            let (a, b) = (read(&store, &corpus).await, read(&store, &every_game).await);
            assert_eq!(a, b, "window {from:?}..{to} modes {modes:?}");
            compared += usize::from(!a.games.is_empty());
        }
    }
    assert!(
        compared >= 15,
        "the world leaves most windows non-empty ({compared})"
    );
    // the same logs again (another read size): nothing new, the rollups unchanged
    let season = MetaQuery {
        from: Some(T0 - 7 * DAY + 1),
        to: T0 - 1,
        modes: None,
        segment: SegmentFilter::Corpus,
    };
    let before = read(&store, &season).await;
    ingest(&store, &logs, 250).await;
    assert_eq!(read(&store, &season).await, before);
    assert!(before.population.decided_battles > 0);
    assert!(before.population.battles_in_window >= before.population.decided_battles);
}

/// Elixir's migrations up to `version` on `db`'s backend, as the store embeds them.
async fn migrate_to(db: &Db, version: i64) {
    let upto = |all: &'static [(i64, &'static str, &'static str)]| {
        Embedded(&all[..all.iter().take_while(|m| m.0 <= version).count()])
    };
    db.migrate(upto(SQLITE_MIGRATIONS.0), upto(POSTGRES_MIGRATIONS.0), true)
        .await
        .unwrap();
}

/// Writes a log's battles and observations the way the record did before the meta index
/// (and, with `games`, its games the way migration 2000005's ingest did).
async fn old_ingest(db: &Db, player: &str, rows: &[NewBattle], games: bool) {
    for b in rows {
        sql(
            "INSERT INTO battles (battle_id, battle_time, battle_type, mode, game_mode_id, \
             body, first_observed_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (battle_id) DO NOTHING",
        )
        .bind(&b.battle_id)
        .bind(b.battle_time)
        .bind(&b.battle_type)
        .bind(&b.mode)
        .bind(b.game_mode_id)
        .bind(&b.body)
        .bind(T0)
        .execute(db)
        .await
        .unwrap();
        let o = &b.observer;
        sql("INSERT INTO battle_players (player_tag, battle_id, battle_time, mode, \
             game_mode_id, side, outcome, crowns, trophy_change, deck_hash, opponent_tag, \
             clan_tag, observed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)")
        .bind(player)
        .bind(&b.battle_id)
        .bind(b.battle_time)
        .bind(&b.mode)
        .bind(b.game_mode_id)
        .bind(&o.side)
        .bind(o.outcome.as_deref())
        .bind(o.crowns)
        .bind(o.trophy_change)
        .bind(o.deck_hash.as_deref())
        .bind(o.opponent_tag.as_deref())
        .bind(o.clan_tag.as_deref())
        .bind(T0)
        .execute(db)
        .await
        .unwrap();
        if games {
            for g in &b.games {
                sql(
                    "INSERT INTO battle_games (player_tag, battle_id, round, battle_time, mode, \
                     outcome, deck_hash) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(player)
                .bind(&b.battle_id)
                .bind(g.round)
                .bind(b.battle_time)
                .bind(&b.mode)
                .bind(g.outcome.as_deref())
                .bind(g.deck.as_ref().map(|d| d.deck_hash.as_str()))
                .execute(db)
                .await
                .unwrap();
                if let Some(d) = &g.deck {
                    sql(
                        "INSERT INTO decks (deck_hash, card_keys, cards, tower_troop) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (deck_hash) DO NOTHING",
                    )
                    .bind(&d.deck_hash)
                    .bind(&d.card_keys)
                    .bind(&d.cards)
                    .bind(d.tower_troop.as_deref())
                    .execute(db)
                    .await
                    .unwrap();
                }
            }
        }
    }
}

/// What a corpus read over every mode must hold: per (deck, player), the games of `logs`.
fn expected_games(logs: &[(String, Option<String>, Vec<NewBattle>)]) -> Vec<DeckGames> {
    let mut by: BTreeMap<(Option<String>, String), [i64; 4]> = BTreeMap::new();
    for (tag, _, rows) in logs {
        for b in rows {
            for g in &b.games {
                let t = by
                    .entry((g.deck.as_ref().map(|d| d.deck_hash.clone()), tag.clone()))
                    .or_default();
                t[0] += 1;
                match g.outcome.as_deref() {
                    Some("win") => t[1] += 1,
                    Some("loss") => t[2] += 1,
                    Some("draw") => t[3] += 1,
                    _ => {}
                }
            }
        }
    }
    by.into_iter()
        .map(
            |((deck_hash, player_tag), [games, wins, losses, draws])| DeckGames {
                deck_hash,
                player_tag,
                games,
                wins,
                losses,
                draws,
            },
        )
        .collect()
}

async fn the_migration_fills_what_was_recorded_before_it(url: &str) {
    let logs = logs(5, 12);
    let (before, after) = logs.split_at(logs.len() / 2);
    let db = Db::open_checked(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    // recorded before the meta index existed
    migrate_to(&db, 2_000_004).await;
    for (tag, _, rows) in before {
        old_ingest(&db, tag, rows, false).await;
    }
    // recorded with the meta index, before its rollups
    migrate_to(&db, 2_000_005).await;
    for (tag, _, rows) in after {
        old_ingest(&db, tag, rows, true).await;
    }
    let store = open(url).await;
    let filled = sql("SELECT filled FROM elixir_backfills WHERE name = 'battle_games'")
        .fetch_one(&db)
        .await
        .unwrap();
    let observations: i64 = before.iter().map(|(_, _, rows)| rows.len() as i64).sum();
    assert_eq!(filled.opt_int("filled").unwrap(), Some(observations));
    let games = sql("SELECT COUNT(*) AS n FROM battle_games")
        .fetch_one(&db)
        .await
        .unwrap();
    let want: usize = logs
        .iter()
        .flat_map(|(_, _, rows)| rows.iter().map(|b| b.games.len()))
        .sum();
    assert_eq!(games.int("n").unwrap(), i64::try_from(want).unwrap());
    let q = MetaQuery {
        from: Some(T0 - 7 * DAY + 1),
        to: T0,
        modes: None,
        segment: SegmentFilter::Corpus,
    };
    let corpus = read(&store, &q).await;
    let every_game = read(
        &store,
        &MetaQuery {
            segment: SegmentFilter::Players(logs.iter().map(|l| l.0.clone()).collect()),
            ..q.clone()
        },
    )
    .await;
    assert_eq!(corpus.population, every_game.population);
    assert_eq!(corpus.games, every_game.games);
    let all = MetaQuery { from: None, ..q };
    let whole = read(&store, &all).await;
    assert_eq!(whole.games, expected_games(&logs));
    // a second migrate finds nothing pending and changes nothing
    store.migrate().await.unwrap();
    assert_eq!(read(&store, &all).await, whole);
    // new reads of the same logs through the store add no game and no battle (only the
    // players' rows, which the old writes above left out)
    ingest(&store, &logs, 50).await;
    let again = read(&store, &all).await;
    assert_eq!(again.games, whole.games);
    assert_eq!(
        (
            again.population.battles_in_window,
            again.population.decided_battles
        ),
        (
            whole.population.battles_in_window,
            whole.population.decided_battles
        )
    );
    let logged = logs.iter().filter(|(_, _, rows)| !rows.is_empty()).count();
    assert_eq!(
        again.population.recorded_players,
        i64::try_from(logged).unwrap()
    );
}

/// Foreign keys declared on a table of the record, as (table, referenced table).
async fn foreign_keys(db: &Db, url: &str) -> Vec<(String, String)> {
    let statement = if url.starts_with("sqlite") {
        "SELECT m.name AS child, f.\"table\" AS parent FROM sqlite_master m, \
         pragma_foreign_key_list(m.name) f \
         WHERE m.type = 'table' AND m.name IN ('battle_players', 'battle_games') \
         ORDER BY child"
    } else {
        "SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent \
         FROM pg_constraint c WHERE c.contype = 'f' \
         AND c.conrelid::regclass::text IN ('battle_players', 'battle_games') ORDER BY child"
    };
    sql(statement)
        .fetch_all(db)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.text("child").unwrap(), r.text("parent").unwrap()))
        .collect()
}

/// The rows of `table`.
async fn count(db: &Db, table: &str) -> i64 {
    sql(format!("SELECT COUNT(*) AS n FROM {table}"))
        .fetch_one(db)
        .await
        .unwrap()
        .int("n")
        .unwrap()
}

/// Observations and games whose battle row is missing (none may exist).
async fn orphans(db: &Db) -> i64 {
    sql(
        "SELECT (SELECT COUNT(*) FROM battle_players o WHERE NOT EXISTS \
         (SELECT 1 FROM battles b WHERE b.battle_id = o.battle_id)) + \
         (SELECT COUNT(*) FROM battle_games g WHERE NOT EXISTS \
         (SELECT 1 FROM battles b WHERE b.battle_id = g.battle_id)) AS n",
    )
    .fetch_one(db)
    .await
    .unwrap()
    .int("n")
    .unwrap()
}

/// The migration that drops the observations' foreign keys (PostgreSQL 2000009, SQLite
/// 2000008, which rebuilds both tables) keeps every row, every index and every answer.
async fn the_observations_lose_their_foreign_keys_and_nothing_else(url: &str) {
    let logs = logs(6, 10);
    let db = Db::open_checked(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    let before = if url.starts_with("sqlite") {
        2_000_007
    } else {
        2_000_008
    };
    migrate_to(&db, before).await;
    assert_eq!(
        foreign_keys(&db, url).await,
        [
            ("battle_games".to_owned(), "battles".to_owned()),
            ("battle_players".to_owned(), "battles".to_owned())
        ]
    );
    // recorded by the store on the schema before the migration
    let store = elixir::store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    ingest(&store, &logs, 250).await;
    let rows = (
        count(&db, "battle_players").await,
        count(&db, "battle_games").await,
    );
    assert!(rows.0 > 0 && rows.1 >= rows.0, "{rows:?}");
    let all = MetaQuery {
        from: None,
        to: T0,
        modes: None,
        segment: SegmentFilter::Corpus,
    };
    let answer = read(&store, &all).await;
    assert_eq!(answer.games, expected_games(&logs));
    store.migrate().await.unwrap();
    assert_eq!(foreign_keys(&db, url).await, []);
    assert_eq!(
        (
            count(&db, "battle_players").await,
            count(&db, "battle_games").await
        ),
        rows
    );
    assert_eq!(read(&store, &all).await, answer);
    let indexes = sql(if url.starts_with("sqlite") {
        "SELECT name FROM sqlite_master WHERE type = 'index' \
         AND tbl_name IN ('battle_players', 'battle_games') AND sql IS NOT NULL ORDER BY name"
    } else {
        "SELECT indexname AS name FROM pg_indexes WHERE tablename IN \
         ('battle_players', 'battle_games') AND indexname NOT LIKE '%pkey' ORDER BY name"
    })
    .fetch_all(&db)
    .await
    .unwrap()
    .iter()
    .map(|r| r.text("name").unwrap())
    .collect::<Vec<_>>();
    assert_eq!(
        indexes,
        [
            "battle_games_player",
            "battle_games_window",
            "battle_players_battle",
            "battle_players_clan",
            "battle_players_time",
            "battle_players_window"
        ]
    );
    assert_eq!(orphans(&db).await, 0);
}

/// Without foreign keys the ingest itself holds the invariant: every observation and every
/// game has its battle row, the world's logs recorded in reads of several sizes.
async fn every_observation_has_its_battle(url: &str) {
    let logs = logs(7, 16);
    let store = open(url).await;
    ingest(&store, &logs, 7).await;
    ingest(&store, &logs, 250).await;
    let db = Db::open_checked(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    assert_eq!(orphans(&db).await, 0);
    let observations: usize = logs.iter().map(|(_, _, rows)| rows.len()).sum();
    assert_eq!(
        count(&db, "battle_players").await,
        i64::try_from(observations).unwrap()
    );
}

on_both_backends!(
    corpus_rollups_answer_as_every_game,
    the_migration_fills_what_was_recorded_before_it,
    the_observations_lose_their_foreign_keys_and_nothing_else,
    every_observation_has_its_battle,
);
