//! The SQLite backend, the embedded default: one WAL-mode file, foreign keys on, and every
//! write transaction opened with `BEGIN IMMEDIATE` so it takes the write lock up front and
//! waits out the busy timeout instead of failing on a lock upgrade. The statements are shared
//! with PostgreSQL ([`super::sql_store`]), and so are row decoding and error translation
//! ([`super::sql`]); opening the pool is [`sqlkit::open_sqlite`]'s.

use sqlkit::Embedded;
use sqlx::sqlite::SqlitePool;
use sqlx::{Sqlite, Transaction};

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
    (
        3,
        "session expiry",
        include_str!("../../migrations/sqlite/0003_session_expiry.sql"),
    ),
    (
        4,
        "login reservations",
        include_str!("../../migrations/sqlite/0004_login_reservations.sql"),
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
        Ok(Self {
            pool: sqlkit::open_sqlite(url, &options.pool_settings()).await?,
        })
    }

    /// Starts a write transaction holding SQLite's write lock (waiting up to the busy timeout),
    /// which is what serializes play operations: SQLite has no row locks.
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

sql_store!(SqliteStore, sqlx::sqlite::SqliteConnection, lock = "");
