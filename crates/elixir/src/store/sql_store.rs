//! The one store type: [`SqlStore`], a [`sqlkit::Db`] of either backend, with Elixir's
//! migrations for each and the [`Lifecycle`] area (migrate, ping, pool use). The statements
//! of each area live in that area's file; the classification of database errors and the pool
//! settings are sqlkit's, used as they are ([`StoreError`], [`sqlkit::PoolSettings`]).

use sqlkit::{Db, Done, Embedded, PoolSettings};

/// A storage failure, classified by what a caller can do about it: sqlkit's [`DbFailure`]
/// itself (not found, conflict, unavailable, internal), so no store maps it again.
///
/// [`DbFailure`]: sqlkit::DbFailure
pub use sqlkit::DbFailure as StoreError;
pub use sqlkit::Lifecycle;

/// Elixir's SQLite migrations, in order.
pub const SQLITE_MIGRATIONS: Embedded = Embedded(&[
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
    (
        2_000_004,
        "the record",
        include_str!("../../migrations/sqlite/2000004_record.sql"),
    ),
    (
        2_000_005,
        "the meta index",
        include_str!("../../migrations/sqlite/2000005_meta.sql"),
    ),
    (
        2_000_006,
        "the meta rollups",
        include_str!("../../migrations/sqlite/2000006_meta_days.sql"),
    ),
    (
        2_000_007,
        "games by player",
        include_str!("../../migrations/sqlite/2000007_games_by_player.sql"),
    ),
]);

/// Elixir's PostgreSQL migrations, in order.
pub const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
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
    (
        2_000_004,
        "the record",
        include_str!("../../migrations/postgres/2000004_record.sql"),
    ),
    (
        2_000_005,
        "the meta index",
        include_str!("../../migrations/postgres/2000005_meta.sql"),
    ),
    (
        2_000_006,
        "the meta rollups",
        include_str!("../../migrations/postgres/2000006_meta_days.sql"),
    ),
    (
        2_000_007,
        "games by player",
        include_str!("../../migrations/postgres/2000007_games_by_player.sql"),
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
    /// Opens `url` (`sqlite://path`, `sqlite::memory:` or `postgres://…`; any other scheme is
    /// `Internal`) with the pool size and timeouts of `pool`. Does not migrate.
    pub async fn connect(url: &str, pool: &PoolSettings) -> Result<Self, StoreError> {
        Ok(Self {
            db: Db::open_checked(url, pool).await?,
        })
    }
}

/// Elixir's schema. mcp-oauth's migrations share the database (and its `_sqlx_migrations`
/// table), so versions this store does not know are ignored; once the scripts are applied, the
/// one-off fills they leave pending run (the meta index of battles recorded before it existed).
/// Migrate, ping and pool use are sqlkit's one [`Lifecycle`] over it.
impl sqlkit::Schema for SqlStore {
    const SQLITE: sqlkit::Embedded = SQLITE_MIGRATIONS;
    const POSTGRES: sqlkit::Embedded = POSTGRES_MIGRATIONS;
    const SHARES_DATABASE: bool = true;

    fn db(&self) -> &Db {
        &self.db
    }

    async fn after_migrate(&self) -> Result<(), StoreError> {
        super::meta_reads::backfill_games(&self.db).await?;
        Ok(())
    }
}

/// An update of one row by id: no row touched means there was none.
pub(super) fn found(done: Done) -> Result<(), StoreError> {
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
