//! The one store type: [`SqlStore`], a [`sqlkit::Db`] of either backend. Its schema (the
//! migrations and the [`Lifecycle`] area: migrate, ping, pool use) is `schema`'s; the
//! statements of each area live in that area's file; the classification of database errors and
//! the pool settings are sqlkit's, used as they are ([`StoreError`], [`sqlkit::PoolSettings`]).

use sqlkit::{Db, Done, PoolSettings};

/// A storage failure, classified by what a caller can do about it: sqlkit's [`DbFailure`]
/// itself (not found, conflict, unavailable, internal), so no store maps it again.
///
/// [`DbFailure`]: sqlkit::DbFailure
pub use sqlkit::DbFailure as StoreError;
pub use sqlkit::Lifecycle;

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

/// An update of one row by id: no row touched means there was none.
pub(super) fn found(done: Done) -> Result<(), StoreError> {
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
