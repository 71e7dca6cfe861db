//! Opening pools the way every product store wants them: SQLite as one WAL-mode file with
//! foreign keys on, PostgreSQL with per-connection timeouts on the server and a client-side
//! deadline per statement. The settings' defaults and where they come from (flags, config)
//! are each product's.
//!
//! What bounds a PostgreSQL that stops answering without closing the connection: the
//! client-side [`PoolSettings::query_timeout`] around every statement (see `pg.rs`) and the
//! acquire timeout around opening a connection. TCP keepalive and `TCP_USER_TIMEOUT` would
//! let the kernel notice a dead peer too, but sqlx 0.8 opens the socket itself and its
//! `PgConnectOptions` exposes no socket options; and a peer whose kernel still acknowledges
//! (a stuck server, a userland proxy) defeats both anyway, so the deadline is what counts.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteTransactionManager,
};
use sqlx::{Connection, TransactionManager};

use crate::DbFailure;
use crate::pg_pool::PgPool;

/// Pool size and timeouts, for both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// At most this many connections (at least 1; an in-memory SQLite database has exactly 1).
    pub max_connections: u32,
    /// How long to wait for a pooled connection before giving up as `Unavailable`.
    pub acquire_timeout: Duration,
    /// PostgreSQL `statement_timeout`; SQLite's busy timeout.
    pub statement_timeout: Duration,
    /// PostgreSQL `lock_timeout`; unused by SQLite.
    pub lock_timeout: Duration,
    /// PostgreSQL only: how long the client waits for the answer to one statement (`BEGIN`
    /// and `COMMIT` included) before it gives up as `Unavailable` and discards the
    /// connection. A little above what a request-path statement may take; budgeted reads
    /// ([`crate::BudgetedRead`]) wait for their own budget instead. SQLite needs none: its
    /// waits are bounded by the busy timeout and nothing stands between it and the disk.
    pub query_timeout: Duration,
    /// SQLite only: the page cache of each pooled connection, in KiB (`PRAGMA cache_size`;
    /// [`SQLITE_DEFAULT_CACHE_KIB`] unless a product needs more). It fills only with pages a
    /// connection reads, so a small database costs no more than its size.
    pub sqlite_cache_kib: u32,
}

/// About SQLite's own default page cache (2,000 KiB), in [`PoolSettings::sqlite_cache_kib`].
pub const SQLITE_DEFAULT_CACHE_KIB: u32 = 2_048;

/// `PRAGMA wal_autocheckpoint` of every SQLite file: the WAL is checkpointed into the database
/// once it holds this many pages (40 MiB of 4 KiB pages) instead of SQLite's 1,000. A page a
/// write touches again before the checkpoint is then copied back once, not once per 4 MiB
/// of WAL: a record ingest that updates index pages all over the file spent an eighth of its
/// time in checkpoints at the default (docs/benchmarks.md, "Ingest from both logs").
pub const SQLITE_WAL_AUTOCHECKPOINT_PAGES: u32 = 10_000;

#[cfg(test)]
impl PoolSettings {
    /// One connection and five seconds for every wait: the settings of this crate's tests.
    pub(crate) fn for_tests() -> Self {
        Self::for_tests_of(1)
    }

    /// [`PoolSettings::for_tests`] with `max_connections` connections.
    pub(crate) fn for_tests_of(max_connections: u32) -> Self {
        Self {
            max_connections,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_secs(5),
            query_timeout: Duration::from_secs(5),
            sqlite_cache_kib: SQLITE_DEFAULT_CACHE_KIB,
        }
    }
}

/// Opens (creating if missing) the SQLite database at `url`, e.g. `sqlite://app.db` or
/// `sqlite::memory:`: WAL journal checkpointed every [`SQLITE_WAL_AUTOCHECKPOINT_PAGES`],
/// foreign keys on, `statement_timeout` as the busy timeout, `sqlite_cache_kib` of page cache
/// per connection.
pub async fn open_sqlite(url: &str, settings: &PoolSettings) -> Result<SqlitePool, DbFailure> {
    let connect = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .foreign_keys(true)
        .busy_timeout(settings.statement_timeout)
        // negative: KiB rather than pages
        .pragma("cache_size", format!("-{}", settings.sqlite_cache_kib))
        .pragma(
            "wal_autocheckpoint",
            SQLITE_WAL_AUTOCHECKPOINT_PAGES.to_string(),
        );
    // No liveness ping when a connection leaves the pool: it costs a round trip per statement,
    // and a dead connection fails its first statement anyway (the caller answers 503, sqlx
    // drops the connection).
    let pool = SqlitePoolOptions::new()
        .test_before_acquire(false)
        .acquire_timeout(settings.acquire_timeout);
    let pool = if is_memory(url) {
        // The database lives as long as its connection: keep exactly one, forever.
        pool.max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
    } else {
        pool.max_connections(settings.max_connections.max(1))
            .after_release(|conn, _| {
                Box::pin(async move {
                    // SQLite ends a transaction by itself on some failures (a full disk rolls
                    // it back); sqlx's ROLLBACK then fails and the connection still believes
                    // it is inside one, so every later BEGIN on it would be refused. Such a
                    // connection is closed instead of reused. The depth is the worker
                    // thread's count, so a dropped transaction's queued ROLLBACK still shows
                    // as one: only then does a ping (a round trip to that thread) let it run
                    // before the depth is read again. A connection that was in no transaction
                    // goes back without it (sqlx's own release ping follows either way).
                    if SqliteTransactionManager::get_transaction_depth(conn) > 0 {
                        conn.ping().await?;
                    }
                    Ok(SqliteTransactionManager::get_transaction_depth(conn) == 0)
                })
            })
    };
    Ok(pool.connect_with(connect).await?)
}

/// Connects to the PostgreSQL database at `url` (`postgres://…`): a [`PgPool`] of at most
/// `max_connections`, whose connections carry `statement_timeout` and `lock_timeout`, and
/// whose flush of an unsettled connection is bounded by `query_timeout`.
pub async fn open_postgres(url: &str, settings: &PoolSettings) -> Result<PgPool, DbFailure> {
    let connect = PgConnectOptions::from_str(url)?.options([
        ("statement_timeout", millis(settings.statement_timeout)),
        ("lock_timeout", millis(settings.lock_timeout)),
    ]);
    PgPool::open(
        connect,
        settings.max_connections,
        settings.acquire_timeout,
        settings.query_timeout,
    )
    .await
}

pub(crate) fn is_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

/// A duration as a PostgreSQL setting in milliseconds, rounded up to 1 ms: `0` would mean
/// "no limit".
fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

#[cfg(test)]
mod tests {
    use sqlx::Executor;

    use super::*;

    const SETTINGS: PoolSettings = PoolSettings {
        max_connections: 4,
        acquire_timeout: Duration::from_secs(5),
        statement_timeout: Duration::from_millis(1500),
        lock_timeout: Duration::from_millis(250),
        query_timeout: Duration::from_secs(5),
        sqlite_cache_kib: SQLITE_DEFAULT_CACHE_KIB,
    };

    #[test]
    fn postgres_timeouts_are_whole_milliseconds_never_zero() {
        assert_eq!(millis(Duration::from_millis(1500)), "1500ms");
        assert_eq!(millis(Duration::from_secs(10)), "10000ms");
        assert_eq!(millis(Duration::ZERO), "1ms");
        assert_eq!(millis(Duration::from_micros(1999)), "1ms");
    }

    #[tokio::test]
    async fn an_in_memory_database_keeps_its_one_connection() {
        let pool = open_sqlite("sqlite::memory:", &SETTINGS).await.unwrap();
        let options = pool.options();
        assert_eq!(options.get_max_connections(), 1);
        assert_eq!(options.get_min_connections(), 1);
        assert_eq!(options.get_idle_timeout(), None);
        assert_eq!(options.get_max_lifetime(), None);
        pool.execute("CREATE TABLE t (x INTEGER)").await.unwrap();
        pool.execute("INSERT INTO t VALUES (1)").await.unwrap();
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(n, 1);
    }

    async fn pragma<T>(pool: &SqlitePool, name: &str) -> T
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + Send + Unpin,
    {
        sqlx::query_scalar(&format!("PRAGMA {name}"))
            .fetch_one(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_sqlite_file_is_created_in_wal_mode_with_foreign_keys_on() {
        let (dir, url) = testkit::db::fresh_sqlite_url();
        let pool = open_sqlite(&url, &SETTINGS).await.unwrap();
        assert!(dir.path().join("x.db").exists());
        assert_eq!(pool.options().get_max_connections(), 4);
        assert_eq!(pragma::<String>(&pool, "journal_mode").await, "wal");
        assert_eq!(pragma::<i64>(&pool, "foreign_keys").await, 1);
        assert_eq!(pragma::<i64>(&pool, "busy_timeout").await, 1500);
        assert_eq!(pragma::<i64>(&pool, "wal_autocheckpoint").await, 10_000);
        // in KiB, written negative
        assert_eq!(pragma::<i64>(&pool, "cache_size").await, -2_048);
        let larger = PoolSettings {
            sqlite_cache_kib: 8 * 1024,
            ..SETTINGS
        };
        let pool = open_sqlite(&url, &larger).await.unwrap();
        assert_eq!(pragma::<i64>(&pool, "cache_size").await, -8 * 1024);
    }

    #[tokio::test]
    async fn a_bad_url_is_internal() {
        let failure = open_postgres("postgres://h:notaport/db", &SETTINGS)
            .await
            .unwrap_err();
        assert!(matches!(failure, DbFailure::Internal(_)), "{failure:?}");
    }

    #[tokio::test]
    async fn postgres_connections_carry_the_timeouts() {
        let Some(url) = testkit::db::service_env("TEST_DATABASE_URL") else {
            return;
        };
        let pool = open_postgres(&url, &SETTINGS).await.unwrap();
        let mut conn = pool.acquire().await.unwrap();
        for (setting, value) in [("statement_timeout", "1500ms"), ("lock_timeout", "250ms")] {
            let shown: String = sqlx::query_scalar(&format!("SHOW {setting}"))
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            assert_eq!(shown, value, "{setting}");
        }
    }
}
