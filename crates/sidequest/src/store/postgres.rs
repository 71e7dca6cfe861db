//! The PostgreSQL backend, for running several server instances on one database. Each
//! connection carries `statement_timeout` and `lock_timeout`; a play operation locks its
//! assignment row with `SELECT … FOR UPDATE`. The schema mirrors SQLite's (uuids as TEXT), so
//! the statements ([`super::sql_store`]), row decoding and error translation ([`super::sql`])
//! are shared.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use super::sql::Embedded;
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
        let connect = PgConnectOptions::from_str(url)?.options([
            ("statement_timeout", millis(options.statement_timeout)),
            ("lock_timeout", millis(options.lock_timeout)),
        ]);
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        Ok(Self { pool })
    }

    /// Starts a write transaction; play operations then lock their assignment row.
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }
}

/// A duration as a PostgreSQL setting in milliseconds, rounded up to 1 ms: `0` would mean
/// "no limit".
fn millis(d: std::time::Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

sql_store!(PgStore, sqlx::postgres::PgConnection, lock = " FOR UPDATE");
