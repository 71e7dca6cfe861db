//! The one store implementation's handle: [`SqlStore`] over [`sqlkit::Db`] (either backend),
//! its migrations, [`Lifecycle`] and pool settings. Database errors are classified by sqlkit
//! ([`StoreError`] is its [`DbFailure`]); the statements live in the area files, and the one
//! place the backends' SQL differs, the row lock, is [`sqlkit::Backend::row_lock`].

use async_trait::async_trait;
use sqlkit::{Db, DbFailure, Embedded};

/// A storage failure, already classified for the wire: not found (or a row a write refers to
/// is missing), conflict (a unique constraint), unavailable (503) or internal. It is sqlkit's
/// classification itself, not a copy of it.
pub type StoreError = DbFailure;

const SQLITE_MIGRATIONS: Embedded = Embedded(&[
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

const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
    (
        1,
        "init",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "humans",
        include_str!("../../migrations/postgres/0002_humans.sql"),
    ),
    (
        3,
        "session expiry",
        include_str!("../../migrations/postgres/0003_session_expiry.sql"),
    ),
    (
        4,
        "login reservations",
        include_str!("../../migrations/postgres/0004_login_reservations.sql"),
    ),
]);

/// Sidequest's store on SQLite (the embedded default: one WAL file, every write transaction
/// `BEGIN IMMEDIATE`) or PostgreSQL (several instances on one database; a play operation locks
/// its assignment row with `SELECT … FOR UPDATE`). The schemas agree (uuids as TEXT), so each
/// statement is written once.
#[derive(Debug, Clone)]
pub struct SqlStore {
    pub(super) db: Db,
}

impl SqlStore {
    /// Opens the database `url` names (`sqlite://…`, `sqlite::memory:`, `postgres://…`) with
    /// the pool size and timeouts of `options`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self::new(Db::open(url, &options.pool_settings()).await?))
    }

    /// The store over an open database.
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// The database itself: schema, readiness and pool use.
#[async_trait]
pub trait Lifecycle: Send + Sync {
    /// Applies the backend's migrations (idempotent).
    async fn migrate(&self) -> Result<(), StoreError>;
    /// A cheap round trip, for readiness.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Open and idle connections of the pool, for the metrics.
    fn pool_use(&self) -> mcp_door::PoolUse;
}

#[async_trait]
impl Lifecycle for SqlStore {
    async fn migrate(&self) -> Result<(), StoreError> {
        self.db
            .migrate(SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS, false)
            .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.db.ping().await
    }

    fn pool_use(&self) -> mcp_door::PoolUse {
        let (size, idle) = self.db.pool_use();
        mcp_door::PoolUse {
            size,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
        }
    }
}

/// Pool and timeout settings shared by both backends.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub max_connections: u32,
    /// How long to wait for a pooled connection before answering 503.
    pub acquire_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`; SQLite busy timeout.
    pub statement_timeout: std::time::Duration,
    /// PostgreSQL `lock_timeout`.
    pub lock_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(10),
            lock_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl DbOptions {
    /// The same settings in [`sqlkit`]'s terms, for opening either backend's pool.
    pub(crate) fn pool_settings(&self) -> sqlkit::PoolSettings {
        sqlkit::PoolSettings {
            max_connections: self.max_connections,
            acquire_timeout: self.acquire_timeout,
            statement_timeout: self.statement_timeout,
            lock_timeout: self.lock_timeout,
        }
    }
}
