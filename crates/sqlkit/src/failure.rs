//! The one classification of database errors: every `sqlx::Error` becomes a [`DbFailure`] here.
//! What a failure means on the wire (HTTP status, tool error code) is each product's business.

use sqlx::error::DatabaseError;
use sqlx::migrate::MigrateError;

/// A database failure, classified by what the caller can do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbFailure {
    /// The row asked for does not exist, or a row a write refers to (a foreign key) does not.
    #[error("not found")]
    NotFound,
    /// A unique constraint refused the write.
    #[error("conflict: {0}")]
    Conflict(String),
    /// Busy or gone: the pool timed out or closed, the connection failed, or the database
    /// answered with a transient condition. Worth retrying later (a 503, not a 500).
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else: a bug, or the schema and the code disagree.
    #[error("database error: {0}")]
    Internal(String),
    /// A [`BudgetedRead`](crate::BudgetedRead) ran past its budget (the duration given) and
    /// the database cancelled it.
    #[error("the read ran past its {0:?} budget and was cancelled")]
    Timeout(std::time::Duration),
}

impl From<sqlx::Error> for DbFailure {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::RowNotFound => DbFailure::NotFound,
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => DbFailure::Unavailable(err.to_string()),
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                DbFailure::Conflict(db.message().to_owned())
            }
            // The products only name other rows in inserts and updates (nothing deletes a
            // referenced row), so a violated foreign key means the row pointed at is missing.
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => DbFailure::NotFound,
            sqlx::Error::Database(db) if is_transient(&*db) => {
                DbFailure::Unavailable(db.message().to_owned())
            }
            // The migrator's own statements (acquiring a connection, locking, its bookkeeping
            // table) are classified like any other: an unreachable database stays
            // `Unavailable`. A failed script (`ExecuteMigration`) is a bug: `Internal`.
            sqlx::Error::Migrate(m) => match *m {
                MigrateError::Execute(inner) => inner.into(),
                other => DbFailure::Internal(format!("migration failed: {other}")),
            },
            other => DbFailure::Internal(other.to_string()),
        }
    }
}

impl From<MigrateError> for DbFailure {
    fn from(err: MigrateError) -> Self {
        sqlx::Error::Migrate(Box::new(err)).into()
    }
}

/// Whether a database error means "busy or gone, try again later" rather than a bug.
fn is_transient(db: &dyn DatabaseError) -> bool {
    if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        return is_transient_pg_code(pg.code());
    }
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        return is_transient_sqlite_code(db.code().as_deref());
    }
    false
}

/// PostgreSQL SQLSTATEs worth a retry: 08 connection exception, 53 insufficient resources,
/// 57P0x shutdown, 40001 serialization failure, 40P01 deadlock, 55P03 `lock_timeout`,
/// 57014 `statement_timeout`.
fn is_transient_pg_code(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("57P")
        || matches!(code, "40001" | "40P01" | "55P03" | "57014")
}

/// SQLite reports the extended result code; its low byte is the primary code: SQLITE_BUSY (5)
/// once the busy timeout has run out, SQLITE_LOCKED (6), SQLITE_FULL (13: the disk is full;
/// SQLite rolled the statement back, and a write succeeds again once there is room).
fn is_transient_sqlite_code(code: Option<&str>) -> bool {
    let primary = code.and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
    matches!(primary, Some(5 | 6 | 13))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sqlx::{Executor, SqlitePool};

    use super::*;
    use crate::{PoolSettings, open_postgres, open_sqlite};

    const SETTINGS: PoolSettings = PoolSettings {
        max_connections: 2,
        acquire_timeout: Duration::from_secs(5),
        statement_timeout: Duration::from_secs(5),
        lock_timeout: Duration::from_secs(5),
        query_timeout: Duration::from_secs(5),
        sqlite_cache_kib: crate::pool::SQLITE_DEFAULT_CACHE_KIB,
    };

    async fn memory() -> SqlitePool {
        let pool = open_sqlite("sqlite::memory:", &SETTINGS).await.unwrap();
        pool.execute(
            "CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
             CREATE TABLE children (id INTEGER PRIMARY KEY,
                                    parent_id INTEGER NOT NULL REFERENCES parents (id));
             INSERT INTO parents (id, name) VALUES (1, 'ada');",
        )
        .await
        .unwrap();
        pool
    }

    #[tokio::test]
    async fn a_missing_row_is_not_found() {
        let pool = memory().await;
        let err = sqlx::query_scalar::<_, String>("SELECT name FROM parents WHERE id = 2")
            .fetch_one(&pool)
            .await
            .unwrap_err();
        assert!(matches!(DbFailure::from(err), DbFailure::NotFound));
    }

    #[tokio::test]
    async fn a_unique_violation_is_a_conflict_carrying_the_database_message() {
        let pool = memory().await;
        let err = sqlx::query("INSERT INTO parents (id, name) VALUES (2, 'ada')")
            .execute(&pool)
            .await
            .unwrap_err();
        match DbFailure::from(err) {
            DbFailure::Conflict(message) => assert!(message.contains("parents.name"), "{message}"),
            other => panic!("expected Conflict, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_foreign_key_violation_is_not_found() {
        let pool = memory().await;
        let err = sqlx::query("INSERT INTO children (id, parent_id) VALUES (1, 99)")
            .execute(&pool)
            .await
            .unwrap_err();
        assert!(matches!(DbFailure::from(err), DbFailure::NotFound));
    }

    #[tokio::test]
    async fn other_database_errors_are_internal() {
        let pool = memory().await;
        let err = sqlx::query("SELECT nope FROM parents")
            .execute(&pool)
            .await
            .unwrap_err();
        match DbFailure::from(err) {
            DbFailure::Internal(message) => assert!(message.contains("nope"), "{message}"),
            other => panic!("expected Internal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_closed_pool_is_unavailable() {
        let pool = memory().await;
        pool.close().await;
        let err = pool.acquire().await.unwrap_err();
        assert!(matches!(DbFailure::from(err), DbFailure::Unavailable(_)));
    }

    #[tokio::test]
    async fn sqlite_busy_after_the_busy_timeout_is_unavailable() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        let settings = PoolSettings {
            statement_timeout: Duration::from_millis(20),
            ..SETTINGS
        };
        let pool = open_sqlite(&url, &settings).await.unwrap();
        let mut holder = pool.acquire().await.unwrap();
        let mut waiter = pool.acquire().await.unwrap();
        holder.execute("BEGIN IMMEDIATE").await.unwrap();
        let err = waiter.execute("BEGIN IMMEDIATE").await.unwrap_err();
        match DbFailure::from(err) {
            DbFailure::Unavailable(message) => assert!(message.contains("locked"), "{message}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
        holder.execute("ROLLBACK").await.unwrap();
    }

    /// A write on a full disk fails as `Unavailable` (and succeeds again once there is room,
    /// transactions included: a connection SQLite rolled back is not reused half-believing
    /// it is still in a transaction),
    /// on a small tmpfs; skipped where mounting is not permitted, unless services are required.
    #[tokio::test]
    async fn sqlite_on_a_full_disk_is_unavailable_until_there_is_room() {
        let dir = testkit::db::TempDir::new("sqlkit-full-");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            assert!(
                !testkit::db::services_required(),
                "REQUIRE_SERVICES=1 but a tmpfs cannot be mounted"
            );
            eprintln!("skipped: cannot mount a tmpfs here");
            return;
        }
        let url = format!("sqlite://{}", dir.path().join("x.db").display());
        let pool = open_sqlite(&url, &SETTINGS).await.unwrap();
        pool.execute("CREATE TABLE t (x BLOB)").await.unwrap();
        let filler = dir.path().join("filler");
        {
            use std::io::Write;
            let mut file = std::fs::File::create(&filler).unwrap();
            while file.write_all(&[0u8; 4096]).is_ok() {}
            while file.write_all(&[0u8]).is_ok() {}
        }
        let insert = || sqlx::query("INSERT INTO t VALUES (zeroblob(65536))").execute(&pool);
        let full = insert().await.unwrap_err();
        let failure = DbFailure::from(full);
        // the same inside a transaction on the pool's only connection: SQLite rolls the
        // transaction back by itself, and the connection must not come back believing it is
        // still inside one
        let db = crate::Db::open(
            &url,
            &PoolSettings {
                max_connections: 1,
                ..SETTINGS
            },
        )
        .await
        .unwrap();
        let mut tx = db.begin_write().await.unwrap();
        let in_tx = match crate::sql("INSERT INTO t VALUES (zeroblob(65536))")
            .execute(&mut tx)
            .await
        {
            // (the page cache may hold the row: the write then fails at COMMIT)
            Ok(_) => tx.commit().await,
            Err(e) => Err(e),
        };
        std::fs::remove_file(&filler).unwrap();
        let after = insert().await;
        let begun = db.begin_write().await;
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(dir.path())
            .status();
        match failure {
            DbFailure::Unavailable(message) => assert!(message.contains("full"), "{message}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
        assert!(matches!(in_tx, Err(DbFailure::Unavailable(_))), "{in_tx:?}");
        // (without the pool's check, BEGIN on the one connection: InvalidSavePointStatement)
        after.unwrap();
        begun.unwrap().rollback().await.unwrap();
    }

    #[test]
    fn sqlite_busy_and_locked_are_transient_by_their_primary_code() {
        let cases = [
            (Some("5"), true),   // SQLITE_BUSY
            (Some("6"), true),   // SQLITE_LOCKED
            (Some("261"), true), // SQLITE_BUSY_RECOVERY
            (Some("262"), true), // SQLITE_LOCKED_SHAREDCACHE
            (Some("13"), true),  // SQLITE_FULL
            (Some("19"), false), // SQLITE_CONSTRAINT
            (Some("2067"), false),
            (Some("1"), false),
            (Some("x"), false),
            (None, false),
        ];
        for (code, transient) in cases {
            assert_eq!(is_transient_sqlite_code(code), transient, "{code:?}");
        }
    }

    #[test]
    fn transient_postgres_codes() {
        let cases = [
            ("08000", true),  // connection_exception
            ("08006", true),  // connection_failure
            ("08P01", true),  // protocol_violation
            ("53000", true),  // insufficient_resources
            ("53300", true),  // too_many_connections
            ("57P01", true),  // admin_shutdown
            ("57P03", true),  // cannot_connect_now
            ("40001", true),  // serialization_failure
            ("40P01", true),  // deadlock_detected
            ("55P03", true),  // lock_not_available (lock_timeout)
            ("57014", true),  // query_canceled (statement_timeout)
            ("23505", false), // unique_violation (classified before)
            ("23503", false), // foreign_key_violation (classified before)
            ("40000", false), // transaction_rollback, not one of the two retried
            ("42P01", false), // undefined_table
            ("55000", false), // object_not_in_prerequisite_state
            ("57000", false), // operator_intervention
            ("XX000", false), // internal_error
            ("", false),
        ];
        for (code, transient) in cases {
            assert_eq!(is_transient_pg_code(code), transient, "{code:?}");
        }
    }

    #[test]
    fn migration_bookkeeping_errors_are_internal() {
        let failure = DbFailure::from(MigrateError::VersionMissing(7));
        match failure {
            DbFailure::Internal(message) => {
                assert!(message.starts_with("migration failed: "), "{message}")
            }
            other => panic!("expected Internal, got {other:?}"),
        }
    }

    /// Real PostgreSQL errors through the same classification, when a server is configured.
    #[tokio::test]
    async fn postgres_errors_are_classified() {
        let Some(url) = testkit::db::service_env("TEST_DATABASE_URL") else {
            return;
        };
        let settings = PoolSettings {
            statement_timeout: Duration::from_millis(200),
            ..SETTINGS
        };
        let pool = open_postgres(&url, &settings).await.unwrap();
        let mut conn = pool.acquire().await.unwrap();
        conn.execute(
            "CREATE TEMPORARY TABLE parents (id INT PRIMARY KEY);
             CREATE TEMPORARY TABLE children (id INT PRIMARY KEY,
                                              parent_id INT NOT NULL REFERENCES parents (id));
             INSERT INTO parents (id) VALUES (1);",
        )
        .await
        .unwrap();

        let duplicate = conn
            .execute("INSERT INTO parents (id) VALUES (1)")
            .await
            .unwrap_err();
        assert!(matches!(DbFailure::from(duplicate), DbFailure::Conflict(_)));

        let dangling = conn
            .execute("INSERT INTO children (id, parent_id) VALUES (1, 99)")
            .await
            .unwrap_err();
        assert!(matches!(DbFailure::from(dangling), DbFailure::NotFound));

        let slow = conn.execute("SELECT pg_sleep(2)").await.unwrap_err();
        match DbFailure::from(slow) {
            DbFailure::Unavailable(message) => assert!(message.contains("timeout"), "{message}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }

        let typo = conn.execute("SELEKT 1").await.unwrap_err();
        assert!(matches!(DbFailure::from(typo), DbFailure::Internal(_)));
    }
}
