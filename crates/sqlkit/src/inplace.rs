//! SQLite reads answered in place: a few read-only connections to the database file, owned
//! by its [`crate::Db`], on which a short read runs on the calling thread ([`InPlace::first_row`])
//! instead of going through sqlx-sqlite's worker threads. sqlx runs every SQLite connection on
//! a thread of its own and hands each statement, row and release ping across channels; for a
//! one-row indexed read those hand-offs (futex waits and wakes, two context switches a side)
//! cost several times the read itself (docs/benchmarks.md, "Quiet reruns, and reads in place on
//! SQLite").
//!
//! Why this is safe to run on an async worker: WAL readers never wait for the writer, and the
//! connections have no busy timeout, so a read that would have to wait (a checkpoint resetting
//! the log, a recovery) answers `SQLITE_BUSY` at once and the caller takes the pooled path
//! instead ([`InPlace::first_row`] returns `Ok(None)`); a connection already in use by another
//! thread is never waited for either (`try_lock`). Each connection is `query_only`, opened
//! without `CREATE` (the pool made the file), and keeps its prepared statements.

use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use uuid::Uuid;

use crate::cols::parse_uuid;
use crate::statement::{Arg, Statement};
use crate::{Cols, DbFailure};

/// The in-place read connections of one SQLite database file.
#[derive(Debug)]
pub struct InPlace {
    path: PathBuf,
    cache_kib: u32,
    /// Opened on first use; `None` again after [`InPlace::close`].
    slots: Vec<Mutex<Option<Connection>>>,
}

impl InPlace {
    /// Read connections to the file at `path`, one per CPU (at least two), opened when first
    /// used, each with `cache_kib` of page cache.
    pub(crate) fn new(path: PathBuf, cache_kib: u32) -> Self {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        Self {
            path,
            cache_kib,
            slots: (0..n).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// The first row of `statement` (a read), read on this thread; `Ok(None)` when it cannot
    /// be answered without waiting (every connection in use, or the database busy): the
    /// caller reads through the pool instead.
    pub(crate) fn first_row(
        &self,
        statement: &Statement,
    ) -> Result<Option<Option<OwnedRow>>, DbFailure> {
        for slot in &self.slots {
            let Ok(mut guard) = slot.try_lock() else {
                continue;
            };
            if guard.is_none() {
                *guard = Some(self.open()?);
            }
            let Some(conn) = guard.as_ref() else {
                continue;
            };
            return match first_row(conn, statement) {
                Ok(row) => Ok(Some(row)),
                Err(e) if is_busy(&e) => Ok(None),
                Err(e) => {
                    // a connection that failed otherwise is not trusted again
                    *guard = None;
                    Err(failure(e))
                }
            };
        }
        Ok(None)
    }

    /// Closes the connections (the pool is closing); later reads open new ones.
    pub(crate) fn close(&self) {
        for slot in &self.slots {
            if let Ok(mut guard) = slot.lock() {
                *guard = None;
            }
        }
    }

    fn open(&self) -> Result<Connection, DbFailure> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(failure)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(failure)?;
        conn.pragma_update(None, "cache_size", -i64::from(self.cache_kib))
            .map_err(failure)?;
        conn.busy_timeout(std::time::Duration::ZERO)
            .map_err(failure)?;
        Ok(conn)
    }
}

/// The first row of `statement` on `conn`, its `$n` placeholders bound by number as
/// sqlx-sqlite binds them.
fn first_row(conn: &Connection, statement: &Statement) -> rusqlite::Result<Option<OwnedRow>> {
    let mut prepared = conn.prepare_cached(statement.text())?;
    let args = statement.args();
    for index in 1..=prepared.parameter_count() {
        let position = prepared
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$').or_else(|| name.strip_prefix('?')))
            .and_then(|digits| digits.parse::<usize>().ok())
            .unwrap_or(index);
        let Some(arg) = position.checked_sub(1).and_then(|i| args.get(i)) else {
            return Err(rusqlite::Error::InvalidParameterCount(
                args.len(),
                prepared.parameter_count(),
            ));
        };
        prepared.raw_bind_parameter(index, value_of(arg))?;
    }
    let names: Vec<String> = prepared
        .column_names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut rows = prepared.raw_query();
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let values = (0..names.len())
        .map(|i| row.get::<_, Value>(i))
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(OwnedRow { names, values }))
}

fn value_of(arg: &Arg) -> Value {
    let or_null = |v: Option<Value>| v.unwrap_or(Value::Null);
    match arg {
        Arg::Int(v) => or_null(v.map(Value::Integer)),
        Arg::Text(v) => or_null(v.clone().map(Value::Text)),
        Arg::Flag(v) => or_null(v.map(|b| Value::Integer(i64::from(b)))),
        Arg::Float(v) => or_null(v.map(Value::Real)),
        Arg::Bytes(v) => or_null(v.clone().map(Value::Blob)),
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// What a failed in-place read is: I/O and open failures are `Unavailable` (as sqlx's are),
/// anything else `Internal`.
fn failure(e: rusqlite::Error) -> DbFailure {
    use rusqlite::ErrorCode::{CannotOpen, DiskFull, SystemIoFailure};
    match e.sqlite_error_code() {
        Some(CannotOpen | DiskFull | SystemIoFailure) => {
            DbFailure::Unavailable(format!("SQLite: {e}"))
        }
        _ => DbFailure::Internal(format!("SQLite: {e}")),
    }
}

/// A row read in place: its columns by name, as SQLite returned them.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedRow {
    names: Vec<String>,
    values: Vec<Value>,
}

impl OwnedRow {
    fn value(&self, col: &str) -> Result<&Value, DbFailure> {
        self.names
            .iter()
            .position(|n| n == col)
            .and_then(|i| self.values.get(i))
            .ok_or_else(|| DbFailure::Internal(format!("no column {col}")))
    }

    fn wrong(col: &str, want: &str, got: &Value) -> DbFailure {
        DbFailure::Internal(format!(
            "column {col}: expected {want}, found {:?}",
            got.data_type()
        ))
    }
}

impl Cols for OwnedRow {
    fn text(&self, col: &str) -> Result<String, DbFailure> {
        self.opt_text(col)?
            .ok_or_else(|| Self::wrong(col, "TEXT", &Value::Null))
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, DbFailure> {
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s.clone())),
            other => Err(Self::wrong(col, "TEXT", other)),
        }
    }
    fn int(&self, col: &str) -> Result<i64, DbFailure> {
        self.opt_int(col)?
            .ok_or_else(|| Self::wrong(col, "INTEGER", &Value::Null))
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, DbFailure> {
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Integer(n) => Ok(Some(*n)),
            other => Err(Self::wrong(col, "INTEGER", other)),
        }
    }
    fn flag(&self, col: &str) -> Result<bool, DbFailure> {
        Ok(self.int(col)? != 0)
    }
    fn float(&self, col: &str) -> Result<f64, DbFailure> {
        self.opt_float(col)?
            .ok_or_else(|| Self::wrong(col, "REAL", &Value::Null))
    }
    fn opt_float(&self, col: &str) -> Result<Option<f64>, DbFailure> {
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Real(x) => Ok(Some(*x)),
            #[allow(clippy::cast_precision_loss)]
            Value::Integer(n) => Ok(Some(*n as f64)),
            other => Err(Self::wrong(col, "REAL", other)),
        }
    }
    fn bytes(&self, col: &str) -> Result<Vec<u8>, DbFailure> {
        self.opt_bytes(col)?
            .ok_or_else(|| Self::wrong(col, "BLOB", &Value::Null))
    }
    fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, DbFailure> {
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Blob(b) => Ok(Some(b.clone())),
            other => Err(Self::wrong(col, "BLOB", other)),
        }
    }
    fn uuid(&self, col: &str) -> Result<Uuid, DbFailure> {
        self.opt_uuid(col)?
            .ok_or_else(|| Self::wrong(col, "TEXT", &Value::Null))
    }
    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, DbFailure> {
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Text(s) => parse_uuid(s).map(Some),
            other => Err(Self::wrong(col, "TEXT", other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Cols, Db, DbFailure, PoolSettings, Row, sql};

    fn settings() -> PoolSettings {
        PoolSettings::for_tests_of(2)
    }

    async fn filled(url: &str) -> Db {
        let db = Db::open(url, &settings()).await.unwrap();
        sql(
            "CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT, on_ BOOLEAN, x DOUBLE PRECISION, \
             b BLOB, note TEXT)",
        )
        .execute(&db)
        .await
        .unwrap();
        sql("INSERT INTO t VALUES ('a', 7, TRUE, 1.5, x'0102', NULL), ('b', 8, FALSE, 2.0, NULL, 'hi')")
            .execute(&db)
            .await
            .unwrap();
        db
    }

    /// A SQLite file's short read runs in place (no pooled connection comes back), binds
    /// `$n` by number whatever their order in the text, and reads every column type.
    #[tokio::test]
    async fn a_sqlite_file_is_read_in_place() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        let db = filled(&url).await;
        let (row, conn) = db
            .read_first(
                sql("SELECT * FROM t WHERE n = $2 AND id = $1")
                    .bind("b")
                    .bind(8),
            )
            .await
            .unwrap();
        assert!(conn.is_none(), "nothing is held for an in-place read");
        let row = row.expect("the row");
        assert!(matches!(row, Row::InPlace(_)));
        assert_eq!(row.text("id").unwrap(), "b");
        assert_eq!(row.int("n").unwrap(), 8);
        assert!(!row.flag("on_").unwrap());
        assert!((row.float("x").unwrap() - 2.0).abs() < f64::EPSILON);
        assert_eq!(row.opt_bytes("b").unwrap(), None);
        assert_eq!(row.opt_text("note").unwrap().as_deref(), Some("hi"));
        assert!(matches!(row.int("id"), Err(DbFailure::Internal(_))));
        assert!(matches!(row.text("missing"), Err(DbFailure::Internal(_))));

        let (row, _) = db
            .read_first(sql("SELECT * FROM t WHERE id = $1").bind("a"))
            .await
            .unwrap();
        let row = row.unwrap();
        assert!(row.flag("on_").unwrap());
        assert_eq!(row.bytes("b").unwrap(), vec![1, 2]);
        assert_eq!(row.opt_text("note").unwrap(), None);

        let (none, conn) = db
            .read_first(sql("SELECT * FROM t WHERE id = $1").bind("zz"))
            .await
            .unwrap();
        assert!(none.is_none() && conn.is_none());
    }

    /// Uuids stored as TEXT are parsed from the row in place; NULL, another type or text
    /// that is not a uuid is refused as the schema disagreeing.
    #[tokio::test]
    async fn uuids_are_read_in_place() {
        const ID: &str = "6f1c1f0e-3b59-4c8e-9a55-0d7a2b9f4e11";
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        let db = filled(&url).await;
        let (row, _) = db
            .read_first(sql(format!(
                "SELECT '{ID}' AS u, NULL AS n, 7 AS i, 'not-a-uuid' AS bad"
            )))
            .await
            .unwrap();
        let row = row.expect("the row");
        assert!(matches!(row, Row::InPlace(_)));
        assert_eq!(row.uuid("u").unwrap().to_string(), ID);
        assert_eq!(row.opt_uuid("u").unwrap().unwrap().to_string(), ID);
        assert_eq!(row.opt_uuid("n").unwrap(), None);
        for refused in [
            row.uuid("n"),
            row.uuid("i"),
            row.uuid("bad"),
            row.uuid("none"),
        ] {
            assert!(
                matches!(refused, Err(DbFailure::Internal(_))),
                "{refused:?}"
            );
        }
    }

    /// The in-place connections only read: a write through them is refused and changes
    /// nothing.
    #[tokio::test]
    async fn an_in_place_connection_never_writes() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        let db = filled(&url).await;
        let refused = db
            .read_first(sql("DELETE FROM t WHERE id = $1 RETURNING id").bind("a"))
            .await;
        assert!(
            matches!(refused, Err(DbFailure::Internal(_))),
            "{refused:?}"
        );
        let count = sql("SELECT COUNT(*) AS c FROM t")
            .fetch_one(&db)
            .await
            .unwrap()
            .int("c")
            .unwrap();
        assert_eq!(count, 2);
    }

    /// A read that would wait is not waited for on the calling thread: with every in-place
    /// connection in use it goes through the pool and comes back with its pooled connection;
    /// SQLite's busy answers are what sends it there too.
    #[tokio::test]
    async fn a_read_that_would_wait_goes_through_the_pool() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        let db = filled(&url).await;
        let Db::Sqlite(_, Some(in_place)) = &db else {
            panic!("a SQLite file has in-place connections");
        };
        let taken: Vec<_> = in_place.slots.iter().map(|s| s.lock().unwrap()).collect();
        let (row, conn) = db
            .read_first(sql("SELECT n FROM t WHERE id = $1").bind("a"))
            .await
            .unwrap();
        assert!(conn.is_some(), "the pooled path answered");
        assert_eq!(row.unwrap().int("n").unwrap(), 7);
        drop(taken);
        let (_, conn) = db
            .read_first(sql("SELECT n FROM t WHERE id = $1").bind("a"))
            .await
            .unwrap();
        assert!(conn.is_none(), "in place again once a connection is free");

        let busy = |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        assert!(super::is_busy(&busy(rusqlite::ffi::SQLITE_BUSY)));
        assert!(super::is_busy(&busy(rusqlite::ffi::SQLITE_LOCKED)));
        assert!(!super::is_busy(&busy(rusqlite::ffi::SQLITE_IOERR)));
        assert!(matches!(
            super::failure(busy(rusqlite::ffi::SQLITE_IOERR)),
            DbFailure::Unavailable(_)
        ));
    }

    /// In-memory SQLite and PostgreSQL read on a pooled connection and hand it back.
    #[tokio::test]
    async fn other_databases_read_on_a_pooled_connection() {
        let mut urls = vec!["sqlite::memory:".to_owned()];
        if let Some(pg) = testkit::db::fresh_postgres().await {
            urls.push(pg);
        }
        for url in urls {
            let db = Db::open(&url, &settings()).await.unwrap();
            sql("CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT)")
                .execute(&db)
                .await
                .unwrap();
            sql("INSERT INTO t VALUES ('b', 8)")
                .execute(&db)
                .await
                .unwrap();
            let (row, conn) = db
                .read_first(sql("SELECT n FROM t WHERE id = $1").bind("b"))
                .await
                .unwrap();
            assert!(conn.is_some(), "{url}");
            assert_eq!(row.unwrap().int("n").unwrap(), 8, "{url}");
        }
    }
}
