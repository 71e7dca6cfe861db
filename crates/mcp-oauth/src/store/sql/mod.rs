//! The one SQL implementation of the store, on either backend through [`sqlkit::Db`]: opening
//! it, its migrations (one list per backend), and [`Upkeep`]. The statements of each area
//! live beside it, one file per area trait, each written once: SQLite accepts PostgreSQL's
//! `$n` placeholders, `ON CONFLICT … DO UPDATE … WHERE` and `RETURNING`, and the schemas
//! agree on types, so the backends differ only in how a write transaction begins (sqlkit's
//! [`Db::begin_write`]: `BEGIN IMMEDIATE` on SQLite).

mod clients;
mod flows;
mod grants;
mod tokens;

use async_trait::async_trait;
use sqlkit::{Db, Embedded, PoolSettings, sql};

use super::areas::{StoreError, Upkeep};
use super::records::Millis;

/// The migration versions of this crate start here, far from any product's own, because
/// both share sqlx's `_sqlx_migrations` table when they share a database.
pub const MIGRATION_VERSION_BASE: i64 = 1_000_000;

const SQLITE_MIGRATIONS: Embedded = Embedded(&[
    (
        1_000_001,
        "mcp-oauth init",
        include_str!("../../../migrations/sqlite/1000001_oauth.sql"),
    ),
    (
        1_000_002,
        "mcp-oauth client first use",
        include_str!("../../../migrations/sqlite/1000002_client_first_use.sql"),
    ),
]);

const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
    (
        1_000_001,
        "mcp-oauth init",
        include_str!("../../../migrations/postgres/1000001_oauth.sql"),
    ),
    (
        1_000_002,
        "mcp-oauth client first use",
        include_str!("../../../migrations/postgres/1000002_client_first_use.sql"),
    ),
]);

/// Rate counters and refusal counts are kept this long (longer than any window).
const COUNTER_RETENTION: Millis = 40 * 24 * 3600 * 1000;

/// The OAuth store on SQLite (one WAL-mode file, or `sqlite::memory:`) or PostgreSQL (for
/// several server instances on one database: every guarantee that must hold across instances
/// is a single conditional statement or a transaction).
#[derive(Debug, Clone)]
pub struct SqlStore {
    db: Db,
}

impl SqlStore {
    /// The pool of a store opened on its own: 8 connections, 5 s to get one, a 5 s statement
    /// timeout (SQLite's busy timeout). `lock_timeout` is the statement timeout: a lock wait
    /// happens inside a statement whose own timer started earlier, so the statement timeout
    /// always fires first and PostgreSQL behaves as with no `lock_timeout` at all.
    pub const DEFAULT_POOL: PoolSettings = PoolSettings {
        max_connections: 8,
        acquire_timeout: std::time::Duration::from_secs(5),
        statement_timeout: std::time::Duration::from_secs(5),
        lock_timeout: std::time::Duration::from_secs(5),
        query_timeout: std::time::Duration::from_secs(6),
        sqlite_cache_kib: sqlkit::SQLITE_DEFAULT_CACHE_KIB,
    };

    /// Opens the database `url` names: `postgres://…` / `postgresql://…` on PostgreSQL,
    /// anything else (`sqlite://file.db`, created if missing) on SQLite, with `pool`'s size
    /// and timeouts (e.g. [`SqlStore::DEFAULT_POOL`]). Does not migrate.
    pub async fn connect(url: &str, pool: &PoolSettings) -> Result<Self, StoreError> {
        Ok(Self::from_db(Db::open(url, pool).await?))
    }

    /// Uses a database the product already opened (one database for both). On SQLite, foreign
    /// keys must be on for its connections (as [`Db::open`] sets them).
    pub fn from_db(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl Upkeep for SqlStore {
    async fn migrate(&self) -> Result<(), StoreError> {
        // Ignoring versions it does not list (sqlx 0.8 `validate_applied_migrations` returns
        // early on `ignore_missing`) lets a product's migrator share the `_sqlx_migrations`
        // table with this one; the product's must do the same.
        self.db
            .migrate(SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS, true)
            .await
    }

    async fn purge(&self, now: Millis, client_cutoff: Millis) -> Result<u64, StoreError> {
        let old_counters = now - COUNTER_RETENTION;
        let old_day = old_counters / (24 * 3600 * 1000);
        let statements: [(&'static str, Option<Millis>); 10] = [
            ("DELETE FROM oauth_pending WHERE expires_at < $1", Some(now)),
            (
                "DELETE FROM oauth_email_codes WHERE pending_id NOT IN \
                 (SELECT id FROM oauth_pending)",
                None,
            ),
            (
                "DELETE FROM oauth_sessions WHERE expires_at < $1",
                Some(now),
            ),
            // Kept a while past expiry so a late replay still revokes its grant.
            (
                "DELETE FROM oauth_auth_codes WHERE expires_at < $1",
                Some(now - 24 * 3600 * 1000),
            ),
            (
                "DELETE FROM oauth_access_tokens WHERE expires_at < $1",
                Some(now),
            ),
            (
                "DELETE FROM oauth_refresh_tokens WHERE expires_at < $1",
                Some(now),
            ),
            (
                "DELETE FROM oauth_grants WHERE revoked_at IS NOT NULL AND revoked_at < $1",
                Some(now - COUNTER_RETENTION),
            ),
            (
                "DELETE FROM oauth_rate_counters WHERE window_start < $1",
                Some(old_counters),
            ),
            ("DELETE FROM oauth_refusals WHERE day < $1", Some(old_day)),
            (
                "DELETE FROM oauth_clients WHERE last_used_at < $1",
                Some(client_cutoff),
            ),
        ];
        let mut removed = 0;
        for (text, arg) in statements {
            let statement = match arg {
                Some(arg) => sql(text).bind(arg),
                None => sql(text),
            };
            removed += statement.execute(&self.db).await?.rows_affected();
        }
        Ok(removed)
    }
}
