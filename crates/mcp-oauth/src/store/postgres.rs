//! The PostgreSQL backend, for several server instances on one database. Every guarantee
//! that must hold across instances is a single conditional statement or a transaction.
//! Opening the pool is [`sqlkit::open_postgres`]'s.

use sqlkit::Embedded;
use sqlx::postgres::PgPool;
use sqlx::{Postgres, Transaction};

use super::sql_store::oauth_sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
    (
        1_000_001,
        "mcp-oauth init",
        include_str!("../../migrations/postgres/1000001_oauth.sql"),
    ),
    (
        1_000_002,
        "mcp-oauth client first use",
        include_str!("../../migrations/postgres/1000002_client_first_use.sql"),
    ),
]);

/// The OAuth store on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`). Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self::from_pool(
            sqlkit::open_postgres(url, &options.pool_settings()).await?,
        ))
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
