//! The SQLite backend, the embedded default: one WAL-mode file with foreign keys on. The
//! statements are shared with PostgreSQL ([`super::sql_store`]); opening the pool is
//! [`sqlkit::open_sqlite`]'s.

use sqlkit::Embedded;
use sqlx::sqlite::SqlitePool;

use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
    (
        2_000_001,
        "elixir init",
        include_str!("../../migrations/sqlite/2000001_init.sql"),
    ),
    (
        2_000_002,
        "elixir upstream",
        include_str!("../../migrations/sqlite/2000002_upstream.sql"),
    ),
    (
        2_000_003,
        "audit by agent",
        include_str!("../../migrations/sqlite/2000003_audit_agent.sql"),
    ),
]);

/// Elixir's store on a SQLite file (or `sqlite::memory:`).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self {
            pool: sqlkit::open_sqlite(url, &options.pool_settings()).await?,
        })
    }
}

sql_store!(SqliteStore);
