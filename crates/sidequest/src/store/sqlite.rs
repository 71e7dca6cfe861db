//! The SQLite backend, the embedded default: one WAL-mode file, foreign keys on, and every
//! write transaction opened with `BEGIN IMMEDIATE` so it takes the write lock up front and
//! waits out the busy timeout instead of failing on a lock upgrade. The statements are shared
//! with PostgreSQL ([`super::sql_store`]), and so are row decoding and error translation
//! ([`super::sql`]).

use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Sqlite, Transaction};

use super::sql::Embedded;
use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "humans",
        include_str!("../../migrations/sqlite/0002_humans.sql"),
    ),
]);

/// Sidequest's store on a SQLite file (or `sqlite::memory:`).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url`, e.g. `sqlite://sidequest.db` or
    /// `sqlite::memory:`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        let connect = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(options.statement_timeout);
        let pool = SqlitePoolOptions::new().acquire_timeout(options.acquire_timeout);
        let pool = if url.contains(":memory:") || url.contains("mode=memory") {
            // The database lives as long as its connection: keep exactly one, forever.
            pool.max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            pool.max_connections(options.max_connections.max(1))
        };
        Ok(Self {
            pool: pool.connect_with(connect).await?,
        })
    }

    /// Starts a write transaction holding SQLite's write lock (waiting up to the busy timeout),
    /// which is what serializes play operations: SQLite has no row locks.
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

sql_store!(SqliteStore, sqlx::sqlite::SqliteConnection, lock = "");
