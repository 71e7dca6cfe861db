//! The SQLite backend, the embedded default: one WAL-mode file, foreign keys on, and every
//! write transaction opened with `BEGIN IMMEDIATE` so it takes the write lock up front.

use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Sqlite, Transaction};

use super::sql::Embedded;
use super::sql_store::oauth_sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[(
    1_000_001,
    "mcp-oauth init",
    include_str!("../../migrations/sqlite/1000001_oauth.sql"),
)]);

/// The OAuth store on a SQLite file (or `sqlite::memory:`).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url`. Does not migrate.
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
        Ok(Self::from_pool(pool.connect_with(connect).await?))
    }

    /// Uses a pool the product already opened (one database for both). Foreign keys must be
    /// on for the pool's connections.
    pub fn from_pool(pool: SqlitePool) -> Self {
        Self { pool }
    }

    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

oauth_sql_store!(SqliteStore, sqlx::Sqlite);
