//! Fresh databases for tests, one per test: a unique PostgreSQL database created on the server
//! named by `TEST_DATABASE_URL`, or a SQLite file in a unique temporary directory. Also the rule
//! for optional services: unset means "skip", unless `REQUIRE_SERVICES=1` makes it a failure.

use std::path::PathBuf;

use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;

/// Databases this kit created carry this prefix, then their creation time in Unix seconds.
const PREFIX: &str = "sq_test_";
/// Leftover test databases older than this are dropped by the next run.
const STALE_SECS: u64 = 3600;

/// Whether `REQUIRE_SERVICES=1`: a missing optional service then fails the test instead of
/// skipping it.
pub fn services_required() -> bool {
    std::env::var("REQUIRE_SERVICES").is_ok_and(|v| v == "1")
}

/// The value of `var`, or `None` when it is unset or empty; panics in that case when
/// `REQUIRE_SERVICES=1`, so CI cannot silently skip a backend.
pub fn service_env(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Some(value),
        _ if services_required() => {
            panic!("{var} is not set, and REQUIRE_SERVICES=1 requires it")
        }
        _ => None,
    }
}

/// Creates a uniquely named database on the server of `TEST_DATABASE_URL` and returns its URL;
/// `None` when `TEST_DATABASE_URL` is unset (see [`service_env`]). Databases left over from runs
/// more than an hour old are dropped on the way.
pub async fn fresh_postgres() -> Option<String> {
    let base = service_env("TEST_DATABASE_URL")?;
    let mut conn = PgConnection::connect(&base)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to TEST_DATABASE_URL: {e}"));
    let now = unix_secs();
    drop_stale(&mut conn, now).await;
    let name = format!("{PREFIX}{now}_{}", Uuid::new_v4().simple());
    conn.execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
        .await
        .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
    let _ = conn.close().await;
    Some(with_database(&base, &name))
}

/// Best effort: a failure here must not fail the test that happened to run first.
async fn drop_stale(conn: &mut PgConnection, now: u64) {
    let pattern = format!("{}%", PREFIX.replace('_', r"\_"));
    let Ok(names) =
        sqlx::query_scalar::<_, String>("SELECT datname FROM pg_database WHERE datname LIKE $1")
            .bind(pattern)
            .fetch_all(&mut *conn)
            .await
    else {
        return;
    };
    for name in names {
        let created = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('_').next())
            .and_then(|secs| secs.parse::<u64>().ok());
        if created.is_some_and(|c| c + STALE_SECS < now) {
            let _ = conn
                .execute(format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#).as_str())
                .await;
        }
    }
}

// Test databases are named by wall-clock time so a later run can tell stale ones apart.
#[allow(clippy::disallowed_methods)]
fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `url` with its database (path) replaced by `name`, keeping credentials, host and query.
pub fn with_database(url: &str, name: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (url, None),
    };
    let authority = head.find("://").map_or(0, |i| i + 3);
    let path = head[authority..]
        .find('/')
        .map_or(head.len(), |i| authority + i);
    let mut out = format!("{}/{name}", &head[..path]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// A unique temporary directory, removed (best effort) when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `<tmp>/<prefix><uuid>`.
    pub fn new(prefix: &str) -> Self {
        let path = std::env::temp_dir().join(format!("{prefix}{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        Self(path)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `sqlite://…/x.db` URL in a fresh temporary directory; keep the guard alive as long as the
/// database is in use.
pub fn fresh_sqlite_url() -> (TempDir, String) {
    let dir = TempDir::new("sq-test-");
    let url = format!("sqlite://{}", dir.path().join("x.db").display());
    (dir, url)
}

/// `TEST_REDIS_URL`, under the same rule as [`fresh_postgres`]; callers PING it themselves.
pub async fn redis_url() -> Option<String> {
    service_env("TEST_REDIS_URL")
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_only_the_database() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "sq_x"),
            "postgres://postgres@127.0.0.1:5432/sq_x"
        );
        assert_eq!(
            with_database("postgres://u:p@h", "sq_x"),
            "postgres://u:p@h/sq_x"
        );
        assert_eq!(
            with_database("postgresql://h/db?sslmode=disable&x=/y", "sq_x"),
            "postgresql://h/sq_x?sslmode=disable&x=/y"
        );
        assert_eq!(
            with_database("postgres:///db?host=/run/postgresql", "sq_x"),
            "postgres:///sq_x?host=/run/postgresql"
        );
    }
}

/// A database for one test: a fresh SQLite file or a fresh PostgreSQL database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh database of `backend` and its URL (with the SQLite file's directory guard);
/// `None` for PostgreSQL without `TEST_DATABASE_URL` (see [`service_env`]).
pub async fn fresh_url(backend: &Backend) -> Option<(Option<TempDir>, String)> {
    match backend {
        Backend::Sqlite => {
            let (dir, url) = fresh_sqlite_url();
            Some((Some(dir), url))
        }
        Backend::Postgres => fresh_postgres().await.map(|url| (None, url)),
    }
}

/// Generates `#[tokio::test]`s running `async fn $name(url: &str)` on a fresh SQLite file
/// (`mod sqlite`) and a fresh PostgreSQL database (`mod postgres`, skipped without
/// `TEST_DATABASE_URL` unless `REQUIRE_SERVICES=1`), on a two-worker runtime.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (_dir, url) = $crate::db::fresh_url(&$crate::db::Backend::Sqlite)
                        .await
                        .expect("sqlite");
                    super::$name(&url).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some((_dir, url)) =
                        $crate::db::fresh_url(&$crate::db::Backend::Postgres).await
                    else {
                        eprintln!("skipped: TEST_DATABASE_URL not set");
                        return;
                    };
                    super::$name(&url).await;
                }
            )+
        }
    };
}
