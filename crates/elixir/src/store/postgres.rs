//! The PostgreSQL backend, for several server instances on one database. Each connection
//! carries `statement_timeout` and `lock_timeout`. The schema mirrors SQLite's, so the
//! statements are shared ([`super::sql_store`]).

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use super::sql::Embedded;
use super::sql_store::sql_store;
use super::{DbOptions, StoreError};

const MIGRATIONS: Embedded = Embedded(&[(
    2_000_001,
    "elixir init",
    include_str!("../../migrations/postgres/2000001_init.sql"),
)]);

/// Elixir's store on PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `url` with the pool size and timeouts of `options`. Does not migrate.
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
}

/// A duration as a PostgreSQL setting in milliseconds, at least 1 (0 would mean "no limit").
fn millis(d: std::time::Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

sql_store!(PgStore);
