//! The SQLite backend, the embedded default: one WAL-mode file with foreign keys on. The
//! statements are shared with PostgreSQL ([`super::sql_store`]).

use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::sql::Embedded;
use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[(
    2_000_001,
    "elixir init",
    include_str!("../../migrations/sqlite/2000001_init.sql"),
)]);

/// Elixir's store on a SQLite file (or `sqlite::memory:`).
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
        Ok(Self {
            pool: pool.connect_with(connect).await?,
        })
    }
}

sql_store!(SqliteStore);
