//! The one store type: [`SqlStore`], a [`sqlkit::Db`] of either backend, with Elixir's
//! migrations for each and the [`Lifecycle`] area (migrate, ping, pool use). The statements
//! of each area live in that area's file; the classification of database errors is
//! sqlkit's, used as is ([`StoreError`]).

use async_trait::async_trait;
use sqlkit::{Db, Done, Embedded};

/// A storage failure, classified by what a caller can do about it: sqlkit's [`DbFailure`]
/// itself (not found, conflict, unavailable, internal), so no store maps it again.
///
/// [`DbFailure`]: sqlkit::DbFailure
pub use sqlkit::DbFailure as StoreError;

const SQLITE_MIGRATIONS: Embedded = Embedded(&[
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

const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
    (
        2_000_001,
        "elixir init",
        include_str!("../../migrations/postgres/2000001_init.sql"),
    ),
    (
        2_000_002,
        "elixir upstream",
        include_str!("../../migrations/postgres/2000002_upstream.sql"),
    ),
    (
        2_000_003,
        "audit by agent",
        include_str!("../../migrations/postgres/2000003_audit_agent.sql"),
    ),
]);

/// Elixir's store on SQLite (one WAL-mode file, the embedded default, or `sqlite::memory:`)
/// or PostgreSQL (several server instances on one database). The schemas agree on types
/// (uuids as TEXT, instants as BIGINT milliseconds), so each statement is written once.
#[derive(Debug, Clone)]
pub struct SqlStore {
    pub(super) db: Db,
}

impl SqlStore {
    /// Opens `url` (`sqlite://path`, `sqlite::memory:` or `postgres://…`) with the pool size
    /// and timeouts of `options`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        let known = url.starts_with("sqlite:")
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://");
        if !known {
            return Err(StoreError::Internal(format!(
                "unsupported database URL scheme (expected sqlite: or postgres://): {}",
                url.split(':').next().unwrap_or_default()
            )));
        }
        Ok(Self {
            db: Db::open(url, &options.pool_settings()).await?,
        })
    }
}

/// The store's own upkeep: its schema, whether the database answers, the pool gauges.
#[async_trait]
pub trait Lifecycle: Send + Sync + 'static {
    /// Applies Elixir's migrations. mcp-oauth's share the database (and its
    /// `_sqlx_migrations` table), so versions this store does not know are ignored.
    async fn migrate(&self) -> Result<(), StoreError>;
    /// One round trip to the database.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Open and idle connections of the pool, for the metrics.
    fn pool_use(&self) -> mcp_door::PoolUse;
}

#[async_trait]
impl Lifecycle for SqlStore {
    async fn migrate(&self) -> Result<(), StoreError> {
        self.db
            .migrate(SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS, true)
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
    pub acquire_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`; SQLite busy timeout.
    pub statement_timeout: std::time::Duration,
    pub lock_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(23),
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

/// An update of one row by id: no row touched means there was none.
pub(super) fn found(done: Done) -> Result<(), StoreError> {
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
