//! The PostgreSQL backend, for several server instances on one database. Every guarantee
//! that must hold across instances is a single conditional statement or a transaction.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use super::sql::Embedded;
use super::sql_store::oauth_sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[(
    1_000_001,
    "mcp-oauth init",
    include_str!("../../migrations/postgres/1000001_oauth.sql"),
)]);

/// The OAuth store on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`). Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        let timeout = format!("{}ms", options.statement_timeout.as_millis().max(1));
        let connect =
            PgConnectOptions::from_str(url)?.options([("statement_timeout", timeout.as_str())]);
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        Ok(Self::from_pool(pool))
    }

    /// Uses a pool the product already opened (one database for both).
    pub fn from_pool(pool: PgPool) -> Self {
        Self { pool }
    }

    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        Ok(self.pool.begin().await?)
    }
}

oauth_sql_store!(PgStore, sqlx::Postgres);
