//! The SQLite backend, the embedded default: one WAL-mode file, foreign keys on, and every
//! write transaction opened with `BEGIN IMMEDIATE` so it takes the write lock up front.
//! Opening the pool is [`sqlkit::open_sqlite`]'s.

use sqlkit::Embedded;
use sqlx::sqlite::SqlitePool;
use sqlx::{Sqlite, Transaction};

use super::sql_store::oauth_sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
    (
        1_000_001,
        "mcp-oauth init",
        include_str!("../../migrations/sqlite/1000001_oauth.sql"),
    ),
    (
        1_000_002,
        "mcp-oauth client first use",
        include_str!("../../migrations/sqlite/1000002_client_first_use.sql"),
    ),
]);

/// The OAuth store on a SQLite file (or `sqlite::memory:`).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self::from_pool(
            sqlkit::open_sqlite(url, &options.pool_settings()).await?,
        ))
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
