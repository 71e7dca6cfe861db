//! The PostgreSQL backend, for running several server instances on one database. Each
//! connection carries `statement_timeout` and `lock_timeout`; a play operation locks its
//! assignment row with `SELECT … FOR UPDATE`. The schema mirrors SQLite's (uuids as TEXT), so
//! the statements ([`super::sql_store`]), row decoding and error translation ([`super::sql`])
//! are shared. Opening the pool is [`sqlkit::open_postgres`]'s.

use sqlkit::Embedded;
use sqlx::postgres::PgPool;
use sqlx::{Postgres, Transaction};

use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
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

/// Sidequest's store on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`) with the pool size and timeouts of `options`.
    /// Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self {
            pool: sqlkit::open_postgres(url, &options.pool_settings()).await?,
        })
    }

    /// Starts a write transaction; play operations then lock their assignment row.
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }
}

sql_store!(PgStore, sqlx::postgres::PgConnection, lock = " FOR UPDATE");
