//! The PostgreSQL backend, for several server instances on one database. Each connection
//! carries `statement_timeout` and `lock_timeout`. The schema mirrors SQLite's, so the
//! statements are shared ([`super::sql_store`]). Opening the pool is
//! [`sqlkit::open_postgres`]'s.

use sqlkit::Embedded;
use sqlx::postgres::PgPool;

use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[
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

/// Elixir's store on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` with the pool size and timeouts of `options`. Does not migrate.
    pub async fn connect(url: &str, options: &DbOptions) -> Result<Self, StoreError> {
        Ok(Self {
            pool: sqlkit::open_postgres(url, &options.pool_settings()).await?,
        })
    }
}

sql_store!(PgStore);
