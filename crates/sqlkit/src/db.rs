//! One database handle for both backends, so a product store is plain Rust with each
//! statement written once: [`Db`] (a pool), [`Tx`] (a transaction), [`Row`] (read with
//! [`Cols`]) and running a [`Statement`] (SQL text and its arguments, built with [`sql`] in
//! `statement.rs`) on any of them. SQLite
//! accepts PostgreSQL's `$n` placeholders, `ON CONFLICT … DO UPDATE … WHERE` and
//! `RETURNING`, so the backends differ only where their SQL does: how a write transaction
//! begins (here) and whatever a store chooses by [`Db::backend`].
//!
//! Why an enum and not a trait generic over `sqlx::Database`: Rust does not carry a trait's
//! `where` clauses to its users, so generic store code would restate the executor, argument
//! and encode bounds of every bound type on every `impl`. Here those bounds are stated once,
//! in [`bind_all`], and a store names no sqlx type at all.

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use sqlx::pool::{MaybePoolConnection, PoolConnection};
use sqlx::postgres::PgRow;
use sqlx::query::Query;
use sqlx::sqlite::{SqliteConnection, SqlitePool, SqliteRow};
use sqlx::{Database, Encode, Postgres, Sqlite, Transaction, Type};
use uuid::Uuid;

use crate::inplace::{InPlace, OwnedRow};
use crate::pg::{PgGuard, PgHeld};
use crate::pg_pool::PgPool;
use crate::statement::{Arg, Statement, sql};
use crate::{Cols, DbFailure, Embedded, PoolSettings, open_postgres, open_sqlite};

/// Which database a [`Db`] or [`Tx`] talks to, for the few statements whose SQL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The suffix that locks the rows a `SELECT` reads inside a write transaction:
    /// ` FOR UPDATE` on PostgreSQL; nothing on SQLite, which has no row locks (a
    /// [`Db::begin_write`] transaction already holds the database's write lock).
    pub fn row_lock(self) -> &'static str {
        match self {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        }
    }
}

/// A pool of either backend. Cloning is cheap (the pool is shared). PostgreSQL's carries its
/// client-side rules: the deadline of each statement ([`PoolSettings::query_timeout`]) and
/// the checks of connections after a failure (see `pg.rs`); a SQLite file's, its in-place
/// read connections ([`Db::read_first`], see `inplace.rs`; none for an in-memory database,
/// which only its one pooled connection can see).
#[derive(Debug, Clone)]
pub enum Db {
    Sqlite(SqlitePool, Option<Arc<InPlace>>),
    Postgres(PgPool, PgGuard),
}

/// A transaction of either backend; dropped without [`Tx::commit`], it rolls back.
#[derive(Debug)]
pub enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(PgHeld),
}

/// One pooled connection of either backend, held for several statements outside a
/// transaction (reads that want one connection, not one per statement); dropped, it goes
/// back to the pool.
#[derive(Debug)]
pub enum Conn {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PgHeld),
}

/// A result row of either backend (or of a SQLite read answered in place,
/// [`Db::read_first`]); its columns are read with [`Cols`].
pub enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
    InPlace(OwnedRow),
}

/// What a statement that returns no rows did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    rows_affected: u64,
}

impl Done {
    /// How many rows the statement inserted, updated or deleted.
    pub fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

/// Running a statement: on a pool (`&db`), in a transaction (`&mut tx`) or on a held
/// connection (`&mut conn`).
impl Statement {
    /// Runs it on a pool (`&db`) or in a transaction (`&mut tx`).
    pub async fn execute(self, on: impl Runner) -> Result<Done, DbFailure> {
        on.execute(self).await
    }

    /// The first row, if any.
    pub async fn fetch_optional(self, on: impl Runner) -> Result<Option<Row>, DbFailure> {
        on.fetch_optional(self).await
    }

    /// The first row; none is [`DbFailure::NotFound`].
    pub async fn fetch_one(self, on: impl Runner) -> Result<Row, DbFailure> {
        on.fetch_optional(self).await?.ok_or(DbFailure::NotFound)
    }

    /// Every row.
    pub async fn fetch_all(self, on: impl Runner) -> Result<Vec<Row>, DbFailure> {
        on.fetch_all(self).await
    }
}

/// Where a [`Statement`] runs: `&Db` (a pooled connection per statement), `&mut Tx` or
/// `&mut Conn`. Each only lends its executor; the statements run in `Target`, once.
pub trait Runner: Send + Sized {
    /// The executor this runner lends (sqlkit's three runners only).
    #[doc(hidden)]
    fn lend<'s>(self) -> Target<'s>
    where
        Self: 's;

    fn execute(self, statement: Statement) -> impl Future<Output = Result<Done, DbFailure>> + Send {
        async move { self.lend().execute(statement).await }
    }
    fn fetch_optional(
        self,
        statement: Statement,
    ) -> impl Future<Output = Result<Option<Row>, DbFailure>> + Send {
        async move { self.lend().fetch_optional(statement).await }
    }
    fn fetch_all(
        self,
        statement: Statement,
    ) -> impl Future<Output = Result<Vec<Row>, DbFailure>> + Send {
        async move { self.lend().fetch_all(statement).await }
    }
}

/// The sqlx query of a statement, on any backend that takes the argument types of [`Arg`].
/// The sqlx bounds of the whole layer live in this one `where` clause.
fn bind_all<'q, DB>(statement: &'q Statement) -> Query<'q, DB, <DB as Database>::Arguments<'q>>
where
    DB: Database,
    Option<i64>: Encode<'q, DB> + Type<DB>,
    Option<&'q str>: Encode<'q, DB> + Type<DB>,
    Option<bool>: Encode<'q, DB> + Type<DB>,
    Option<f64>: Encode<'q, DB> + Type<DB>,
    Option<&'q [u8]>: Encode<'q, DB> + Type<DB>,
{
    statement
        .args
        .iter()
        .fold(sqlx::query(&statement.text), |query, arg| match arg {
            Arg::Int(v) => query.bind(*v),
            Arg::Text(v) => query.bind(v.as_deref()),
            Arg::Flag(v) => query.bind(*v),
            Arg::Float(v) => query.bind(*v),
            Arg::Bytes(v) => query.bind(v.as_deref()),
        })
}

/// Where one statement runs: the backend's own executor, a pool or a held connection (a
/// transaction's included). The three [`Runner`]s lend theirs; each statement kind is
/// written once below, one arm per executor. Public only because [`Runner::lend`] names
/// it; the crate does not export it.
///
/// PostgreSQL's carry the client-side deadline of the statement: a pool's connection is
/// acquired for the statement, so that one that misses it can be discarded (see [`PgHeld`]).
pub enum Target<'a> {
    SqlitePool(&'a SqlitePool),
    PostgresPool(&'a PgPool, &'a PgGuard),
    Sqlite(&'a mut SqliteConnection),
    Postgres(&'a mut PgHeld, Duration),
}

impl Target<'_> {
    async fn execute(self, s: Statement) -> Result<Done, DbFailure> {
        let rows_affected = match self {
            Target::SqlitePool(e) => bind_all::<Sqlite>(&s).execute(e).await?.rows_affected(),
            Target::Sqlite(e) => bind_all::<Sqlite>(&s).execute(e).await?.rows_affected(),
            Target::PostgresPool(pool, guard) => {
                let deadline = guard.query_timeout;
                let mut held = PgHeld::acquire(pool, guard).await?;
                pg_execute(&mut held, deadline, &s).await?
            }
            Target::Postgres(held, deadline) => pg_execute(held, deadline, &s).await?,
        };
        Ok(Done { rows_affected })
    }

    async fn fetch_optional(self, s: Statement) -> Result<Option<Row>, DbFailure> {
        Ok(match self {
            Target::SqlitePool(e) => bind_all::<Sqlite>(&s)
                .fetch_optional(e)
                .await?
                .map(Row::Sqlite),
            Target::Sqlite(e) => bind_all::<Sqlite>(&s)
                .fetch_optional(e)
                .await?
                .map(Row::Sqlite),
            Target::PostgresPool(pool, guard) => {
                let deadline = guard.query_timeout;
                let mut held = PgHeld::acquire(pool, guard).await?;
                pg_fetch_optional(&mut held, deadline, &s).await?
            }
            Target::Postgres(held, deadline) => pg_fetch_optional(held, deadline, &s).await?,
        })
    }

    async fn fetch_all(self, s: Statement) -> Result<Vec<Row>, DbFailure> {
        Ok(match self {
            Target::SqlitePool(e) => rows(bind_all::<Sqlite>(&s).fetch_all(e).await?, Row::Sqlite),
            Target::Sqlite(e) => rows(bind_all::<Sqlite>(&s).fetch_all(e).await?, Row::Sqlite),
            Target::PostgresPool(pool, guard) => {
                let deadline = guard.query_timeout;
                let mut held = PgHeld::acquire(pool, guard).await?;
                pg_fetch_all(&mut held, deadline, &s).await?
            }
            Target::Postgres(held, deadline) => pg_fetch_all(held, deadline, &s).await?,
        })
    }
}

async fn pg_execute(
    held: &mut PgHeld,
    deadline: Duration,
    s: &Statement,
) -> Result<u64, DbFailure> {
    let conn = held.conn()?;
    let outcome = tokio::time::timeout(deadline, bind_all::<Postgres>(s).execute(conn)).await;
    Ok(held.settle(outcome, deadline)?.rows_affected())
}

async fn pg_fetch_optional(
    held: &mut PgHeld,
    deadline: Duration,
    s: &Statement,
) -> Result<Option<Row>, DbFailure> {
    let conn = held.conn()?;
    let outcome =
        tokio::time::timeout(deadline, bind_all::<Postgres>(s).fetch_optional(conn)).await;
    Ok(held.settle(outcome, deadline)?.map(Row::Postgres))
}

async fn pg_fetch_all(
    held: &mut PgHeld,
    deadline: Duration,
    s: &Statement,
) -> Result<Vec<Row>, DbFailure> {
    let conn = held.conn()?;
    let outcome = tokio::time::timeout(deadline, bind_all::<Postgres>(s).fetch_all(conn)).await;
    Ok(rows(held.settle(outcome, deadline)?, Row::Postgres))
}

impl Runner for &Db {
    fn lend<'s>(self) -> Target<'s>
    where
        Self: 's,
    {
        match self {
            Db::Sqlite(pool, _) => Target::SqlitePool(pool),
            Db::Postgres(pool, guard) => Target::PostgresPool(pool, guard),
        }
    }
}

impl Runner for &mut Tx {
    fn lend<'s>(self) -> Target<'s>
    where
        Self: 's,
    {
        match self {
            Tx::Sqlite(tx) => Target::Sqlite(tx),
            Tx::Postgres(held) => {
                let deadline = held.query_timeout;
                Target::Postgres(held, deadline)
            }
        }
    }
}

impl Runner for &mut Conn {
    fn lend<'s>(self) -> Target<'s>
    where
        Self: 's,
    {
        match self {
            Conn::Sqlite(c) => Target::Sqlite(c),
            Conn::Postgres(held) => {
                let deadline = held.query_timeout;
                Target::Postgres(held, deadline)
            }
        }
    }
}

/// A transaction lent with a deadline of its own for each statement (a budgeted read's:
/// what is left of its budget and a grace), instead of the pool's `query_timeout`.
pub(crate) struct WithDeadline<'t>(pub(crate) &'t mut Tx, pub(crate) Duration);

impl Runner for WithDeadline<'_> {
    fn lend<'s>(self) -> Target<'s>
    where
        Self: 's,
    {
        match self.0 {
            Tx::Sqlite(tx) => Target::Sqlite(tx),
            Tx::Postgres(held) => Target::Postgres(held, self.1),
        }
    }
}

fn rows<R>(raw: Vec<R>, wrap: fn(R) -> Row) -> Vec<Row> {
    raw.into_iter().map(wrap).collect()
}

impl std::fmt::Debug for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Row::Sqlite(_) => "Row::Sqlite",
            Row::Postgres(_) => "Row::Postgres",
            Row::InPlace(_) => "Row::InPlace",
        })
    }
}

impl Db {
    /// Opens the database `url` names: `postgres://…` / `postgresql://…` on PostgreSQL,
    /// anything else (`sqlite://file.db`, `sqlite::memory:`) on SQLite.
    pub async fn open(url: &str, settings: &PoolSettings) -> Result<Self, DbFailure> {
        Ok(match backend_of(url) {
            Backend::Postgres => {
                let guard = PgGuard::new(settings.query_timeout, settings.max_connections);
                Db::Postgres(open_postgres(url, settings).await?, guard)
            }
            Backend::Sqlite => {
                let pool = open_sqlite(url, settings).await?;
                let in_place = if crate::pool::is_memory(url) {
                    None
                } else {
                    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?;
                    let path = options.get_filename().to_path_buf();
                    Some(Arc::new(InPlace::new(path, settings.sqlite_cache_kib)))
                };
                Db::Sqlite(pool, in_place)
            }
        })
    }

    /// [`Db::open`] for a URL a server is configured with: one that names neither backend
    /// (`sqlite:…`, `postgres://…`, `postgresql://…`) is refused as `Internal`, naming its
    /// scheme, instead of being taken for a SQLite file name.
    pub async fn open_checked(url: &str, settings: &PoolSettings) -> Result<Self, DbFailure> {
        let known = url.starts_with("sqlite:")
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://");
        if !known {
            return Err(DbFailure::Internal(format!(
                "unsupported database URL scheme (expected sqlite: or postgres://): {}",
                url.split(':').next().unwrap_or_default()
            )));
        }
        Self::open(url, settings).await
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(..) => Backend::Sqlite,
            Db::Postgres(..) => Backend::Postgres,
        }
    }

    /// A transaction that will write: on SQLite `BEGIN IMMEDIATE`, so it holds the write
    /// lock from its first statement (two writers never deadlock upgrading a read lock); on
    /// PostgreSQL a plain `BEGIN` (READ COMMITTED; row locks and conditional statements keep
    /// the guarantees).
    pub async fn begin_write(&self) -> Result<Tx, DbFailure> {
        Ok(match self {
            Db::Sqlite(pool, _) => Tx::Sqlite(pool.begin_with(SQLITE_BEGIN_WRITE).await?),
            Db::Postgres(pool, guard) => Tx::Postgres(PgHeld::begin(pool, guard).await?),
        })
    }

    /// One connection from the pool, for several statements on it without a transaction.
    pub async fn acquire(&self) -> Result<Conn, DbFailure> {
        Ok(match self {
            Db::Sqlite(pool, _) => Conn::Sqlite(pool.acquire().await?),
            Db::Postgres(pool, guard) => Conn::Postgres(PgHeld::acquire(pool, guard).await?),
        })
    }

    /// The first row of a short read (one indexed lookup, say) answered the cheapest way,
    /// with the connection it ran on when one is worth keeping: on a SQLite file by an
    /// in-place read connection on this thread (no hand-off to sqlx's worker threads, nothing
    /// held; `None`), unless that would wait, when it falls back to the pool; on PostgreSQL
    /// (and in-memory SQLite) on a pooled connection, handed back for the request's later
    /// statements. Never for a statement that writes: the in-place connections are
    /// `query_only`.
    pub async fn read_first(
        &self,
        statement: Statement,
    ) -> Result<(Option<Row>, Option<Conn>), DbFailure> {
        if let Db::Sqlite(_, Some(in_place)) = self
            && let Some(row) = in_place.first_row(&statement)?
        {
            return Ok((row.map(Row::InPlace), None));
        }
        let mut conn = self.acquire().await?;
        let row = statement.fetch_optional(&mut conn).await?;
        Ok((row, Some(conn)))
    }

    /// A transaction that reads one consistent snapshot on both backends: on SQLite a
    /// deferred `BEGIN` (WAL keeps the snapshot of its first read until it ends), on
    /// PostgreSQL `BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY` (a read-only transaction
    /// is never refused for serialization). For several reads whose answer is kept as one
    /// (a rendered answer cached per version).
    pub async fn begin_snapshot(&self) -> Result<Tx, DbFailure> {
        self.acquire().await?.begin_snapshot().await
    }

    /// A transaction that only reads (one consistent snapshot on SQLite; READ COMMITTED on
    /// PostgreSQL).
    pub async fn begin_read(&self) -> Result<Tx, DbFailure> {
        Ok(match self {
            Db::Sqlite(pool, _) => Tx::Sqlite(pool.begin().await?),
            Db::Postgres(pool, guard) => Tx::Postgres(PgHeld::begin(pool, guard).await?),
        })
    }

    /// Applies the backend's migrations (see [`Embedded::migrator`] for `ignore_missing`).
    pub async fn migrate(
        &self,
        sqlite: Embedded,
        postgres: Embedded,
        ignore_missing: bool,
    ) -> Result<(), DbFailure> {
        match self {
            Db::Sqlite(pool, _) => sqlite.migrator(ignore_missing).await?.run(pool).await?,
            Db::Postgres(pool, guard) => {
                let migrator = postgres.migrator(ignore_missing).await?;
                // the connection stays marked unsettled (no deadline settles it), so the pool
                // flushes it once when it goes back: a migration is rare
                let mut held = PgHeld::acquire(pool, guard).await?;
                migrator.run_direct(held.conn()?).await?;
            }
        }
        Ok(())
    }

    /// One round trip (`SELECT 1`): whether the database answers.
    pub async fn ping(&self) -> Result<(), DbFailure> {
        sql("SELECT 1").execute(self).await.map(|_| ())
    }

    /// Connections open and idle, for the pool gauges.
    pub fn pool_use(&self) -> (u32, usize) {
        match self {
            Db::Sqlite(pool, _) => (pool.size(), pool.num_idle()),
            Db::Postgres(pool, _) => pool.usage(),
        }
    }

    /// Closes every connection (waiting for those in use to come back).
    pub async fn close(&self) {
        match self {
            Db::Sqlite(pool, in_place) => {
                if let Some(in_place) = in_place {
                    in_place.close();
                }
                pool.close().await;
            }
            Db::Postgres(pool, _) => pool.close().await,
        }
    }
}

/// The backend a database URL names.
pub fn backend_of(url: &str) -> Backend {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

/// SQLite's `BEGIN` of a transaction that will write ([`Db::begin_write`],
/// [`Conn::write_guarded`]).
const SQLITE_BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// PostgreSQL's `BEGIN` of [`Db::begin_snapshot`].
const PG_BEGIN_SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

impl Conn {
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Conn::Sqlite(_) => Backend::Sqlite,
            Conn::Postgres(_) => Backend::Postgres,
        }
    }

    /// Optimistic concurrency's write: runs `guard` (an `UPDATE` of one row under a condition,
    /// a version check say) and, only if it changed that row, `writes`, all or nothing,
    /// without a transaction held open across round trips. `None` when the guard changed no
    /// row (nothing was written: the caller reads again and decides again), else how many
    /// rows each write affected.
    ///
    /// Each write is an `INSERT … SELECT …` without a `WHERE` clause, or an `UPDATE` or
    /// `DELETE` whose last `WHERE` clause is its own (not a subquery's). On PostgreSQL all
    /// of it is one statement, committed on its own (one round trip): `WITH w0 AS (guard
    /// RETURNING 1), w1 AS (write … RETURNING 1), … SELECT` the counts, each write's `WHERE`
    /// clause joined by `EXISTS (SELECT 1 FROM w0)` (see `guarded_writes`); under READ
    /// COMMITTED a row changed by a transaction that committed meanwhile fails the guard's
    /// condition when rechecked, and so writes nothing. None of the writes may read what
    /// another writes, nor two write one row: they all see the rows as they were before the
    /// statement. On SQLite a `BEGIN IMMEDIATE` transaction: the guard, then the writes if it
    /// held, then `COMMIT`. On PostgreSQL past the statement's deadline the outcome is unknown
    /// to the client, as with a `COMMIT`: the caller sees `Unavailable`, and an idempotent
    /// retry finds out.
    pub async fn write_guarded(
        &mut self,
        guard: Statement,
        writes: Vec<Statement>,
    ) -> Result<Option<Vec<u64>>, DbFailure> {
        match self {
            Conn::Postgres(held) => {
                let deadline = held.query_timeout;
                let n = writes.len();
                let row = pg_fetch_optional(held, deadline, &guarded_writes(guard, writes))
                    .await?
                    .ok_or_else(|| DbFailure::Internal("a guarded write answered no row".into()))?;
                if row.int("n0")? != 1 {
                    return Ok(None);
                }
                let (mut numbers, mut name) = (itoa::Buffer::new(), String::with_capacity(4));
                (1..=n)
                    .map(|i| {
                        name.clear();
                        name.push('n');
                        name.push_str(numbers.format(i));
                        Ok(u64::try_from(row.int(&name)?).unwrap_or(0))
                    })
                    .collect::<Result<_, _>>()
                    .map(Some)
            }
            Conn::Sqlite(conn) => {
                let mut tx = sqlite_begin(&mut **conn, SQLITE_BEGIN_WRITE).await?;
                if Target::Sqlite(&mut tx)
                    .execute(guard)
                    .await?
                    .rows_affected()
                    != 1
                {
                    tx.rollback().await?;
                    return Ok(None);
                }
                let mut affected = Vec::with_capacity(writes.len());
                for write in writes {
                    affected.push(
                        Target::Sqlite(&mut tx)
                            .execute(write)
                            .await?
                            .rows_affected(),
                    );
                }
                tx.commit().await?;
                Ok(Some(affected))
            }
        }
    }

    /// [`Db::begin_snapshot`] on this connection.
    pub async fn begin_snapshot(self) -> Result<Tx, DbFailure> {
        Ok(match self {
            Conn::Sqlite(c) => Tx::Sqlite(sqlite_begin(c, "BEGIN").await?),
            Conn::Postgres(held) => Tx::Postgres(held.begin_on(Some(PG_BEGIN_SNAPSHOT)).await?),
        })
    }
}

/// The shape of a guarded write whose texts are all `'static`: each statement's text (its
/// address and length: a `'static` text is never freed, so one address is one text for the
/// process's life) and how many arguments it binds, which move the placeholders after it.
type Shape = Vec<(usize, usize, usize)>;

/// How many shapes [`guarded_writes`] keeps written: a product has a handful (a turn's writes
/// with 0–10 consequences, a finish, reviews of 1–n decisions), and one more than the bound
/// is only written again.
const GUARDED_SHAPES: u64 = 512;

/// The combined text of each [`Shape`] written so far, shared by every pool of the process.
static GUARDED_TEXTS: LazyLock<moka::sync::Cache<Shape, Arc<str>>> =
    LazyLock::new(|| moka::sync::Cache::new(GUARDED_SHAPES));

/// PostgreSQL's one statement of [`Conn::write_guarded`] (see [`guarded_text`]), its arguments
/// those of the guard and then of each write, in order. When every text is `'static` (as a
/// store's are) the combined text is written once per [`Shape`] and kept: a commit sends it
/// on every turn.
fn guarded_writes(guard: Statement, writes: Vec<Statement>) -> Statement {
    let shape: Option<Shape> = std::iter::once(&guard)
        .chain(&writes)
        .map(|s| match &s.text {
            Cow::Borrowed(t) => Some((t.as_ptr() as usize, t.len(), s.args.len())),
            Cow::Owned(_) => None,
        })
        .collect();
    let text: Cow<'static, str> = match shape {
        Some(shape) => Cow::Owned(
            GUARDED_TEXTS
                .get_with(shape, || guarded_text(&guard, &writes).into())
                .to_string(),
        ),
        None => Cow::Owned(guarded_text(&guard, &writes)),
    };
    let mut args = guard.args;
    for write in writes {
        args.extend(write.args);
    }
    Statement { text, args }
}

/// `WITH w0 AS (guard RETURNING 1), w1 AS (write WHERE (its condition) AND EXISTS (SELECT 1
/// FROM w0) RETURNING 1), … SELECT (SELECT COUNT(*) FROM w0) AS n0, …`, each statement's `$k`
/// moved past the arguments of those before it. Written into one string sized up front.
fn guarded_text(guard: &Statement, writes: &[Statement]) -> String {
    const CONDITION: &str = "EXISTS (SELECT 1 FROM w0)";
    let n = writes.len() + 1;
    let mut numbers = itoa::Buffer::new();
    let mut text = String::with_capacity(
        guard.text.len() + writes.iter().map(|s| s.text.len() + 80).sum::<usize>() + n * 48,
    );
    text.push_str("WITH w0 AS (");
    shift_placeholders_into(&mut text, &guard.text, 0);
    text.push_str(" RETURNING 1)");
    let mut shift = guard.args.len();
    for (i, write) in (1..).zip(writes) {
        text.push_str(", w");
        text.push_str(numbers.format(i));
        text.push_str(" AS (");
        let body = write.text.as_ref();
        // An UPDATE's or DELETE's own condition is kept whole; an INSERT … SELECT gets one.
        match body
            .rfind(" WHERE ")
            .filter(|_| !body.starts_with("INSERT"))
        {
            Some(at) => {
                let (head, condition) = body.split_at(at + " WHERE ".len());
                shift_placeholders_into(&mut text, head, shift);
                text.push('(');
                shift_placeholders_into(&mut text, condition, shift);
                text.push_str(") AND ");
            }
            None => {
                shift_placeholders_into(&mut text, body, shift);
                text.push_str(" WHERE ");
            }
        }
        text.push_str(CONDITION);
        text.push_str(" RETURNING 1)");
        shift += write.args.len();
    }
    text.push_str(" SELECT ");
    for i in 0..n {
        if i > 0 {
            text.push_str(", ");
        }
        let i = numbers.format(i);
        for piece in ["(SELECT COUNT(*) FROM w", i, ") AS n", i] {
            text.push_str(piece);
        }
    }
    text
}

/// `text` with each placeholder `$k` outside a quoted literal or name written `$(k + by)`.
#[cfg(test)]
fn shift_placeholders(text: &str, by: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    shift_placeholders_into(&mut out, text, by);
    out
}

/// Appends `text` to `out` with each placeholder `$k` outside a quoted literal or name
/// written `$(k + by)`. Scanned as bytes (the quotes, `$` and digits are ASCII, never part of
/// a multi-byte character), jumping from one `$` or quote to the next and copying the runs
/// between placeholders.
fn shift_placeholders_into(out: &mut String, text: &str, by: usize) {
    let bytes = text.as_bytes();
    let mut numbers = itoa::Buffer::new();
    // `text[copied..]` is not in `out` yet; `text[i..]` is not scanned yet.
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = memchr::memchr3(b'$', b'\'', b'"', &bytes[i..]) {
        let at = i + found;
        let after = at + 1;
        if bytes[at] == b'$' {
            let end = after
                + bytes[after..]
                    .iter()
                    .take_while(|d| d.is_ascii_digit())
                    .count();
            if let Ok(k) = text[after..end].parse::<usize>() {
                out.push_str(&text[copied..after]);
                out.push_str(numbers.format(k + by));
                copied = end;
            }
            i = end;
        } else {
            // A quoted literal or name: nothing in it until the same quote closes it.
            match memchr::memchr(bytes[at], &bytes[after..]) {
                Some(close) => i = after + close + 1,
                None => break,
            }
        }
    }
    out.push_str(&text[copied..]);
}

/// A transaction begun with `statement` on a connection, owned (a pooled one) or borrowed.
/// sqlx's `Pool::begin_with` does exactly this after acquiring; `Transaction::begin` is public
/// but hidden from its docs.
async fn sqlite_begin<'c>(
    conn: impl Into<MaybePoolConnection<'c, Sqlite>>,
    statement: &'static str,
) -> Result<Transaction<'c, Sqlite>, DbFailure> {
    Ok(Transaction::begin(conn, Some(Cow::Borrowed(statement))).await?)
}

impl Tx {
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Tx::Sqlite(_) => Backend::Sqlite,
            Tx::Postgres(_) => Backend::Postgres,
        }
    }

    /// Makes the transaction's writes durable and visible.
    pub async fn commit(self) -> Result<(), DbFailure> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(held) => held.commit().await?,
        }
        Ok(())
    }

    /// Discards the transaction's writes (what dropping it does, but awaited).
    pub async fn rollback(self) -> Result<(), DbFailure> {
        match self {
            Tx::Sqlite(tx) => tx.rollback().await?,
            Tx::Postgres(held) => held.rollback().await?,
        }
        Ok(())
    }
}

impl Row {
    /// The backend's own row, whose [`Cols`] do the reading.
    fn cols(&self) -> &dyn Cols {
        match self {
            Row::Sqlite(r) => r,
            Row::Postgres(r) => r,
            Row::InPlace(r) => r,
        }
    }
}

impl Cols for Row {
    fn text(&self, col: &str) -> Result<String, DbFailure> {
        self.cols().text(col)
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, DbFailure> {
        self.cols().opt_text(col)
    }
    fn int(&self, col: &str) -> Result<i64, DbFailure> {
        self.cols().int(col)
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, DbFailure> {
        self.cols().opt_int(col)
    }
    fn flag(&self, col: &str) -> Result<bool, DbFailure> {
        self.cols().flag(col)
    }
    fn float(&self, col: &str) -> Result<f64, DbFailure> {
        self.cols().float(col)
    }
    fn opt_float(&self, col: &str) -> Result<Option<f64>, DbFailure> {
        self.cols().opt_float(col)
    }
    fn bytes(&self, col: &str) -> Result<Vec<u8>, DbFailure> {
        self.cols().bytes(col)
    }
    fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, DbFailure> {
        self.cols().opt_bytes(col)
    }
    fn uuid(&self, col: &str) -> Result<Uuid, DbFailure> {
        self.cols().uuid(col)
    }
    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, DbFailure> {
        self.cols().opt_uuid(col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PoolSettings {
        PoolSettings::for_tests_of(4)
    }

    #[tokio::test]
    async fn open_checked_refuses_a_url_naming_no_backend() {
        for url in ["mysql://localhost/x", "x.db"] {
            let err = Db::open_checked(url, &settings()).await.err();
            match err {
                Some(DbFailure::Internal(text)) => {
                    assert!(
                        text.starts_with("unsupported database URL scheme"),
                        "{text}"
                    );
                    assert!(text.ends_with(url.split(':').next().unwrap()), "{text}");
                }
                other => panic!("{url}: {other:?}"),
            }
        }
        let db = Db::open_checked("sqlite::memory:", &settings())
            .await
            .unwrap();
        assert_eq!(db.backend(), Backend::Sqlite);
        db.ping().await.unwrap();
    }

    /// Every statement kind, argument type and transaction path on one database.
    async fn round_trip(db: &Db) {
        sql("CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT, f BOOLEAN, x DOUBLE PRECISION, b BYTEA)"
            .replace("BYTEA", if db.backend() == Backend::Sqlite { "BLOB" } else { "BYTEA" }))
        .execute(db)
        .await
        .unwrap();
        let id = Uuid::from_u128(7);
        let done = sql("INSERT INTO t (id, n, f, x, b) VALUES ($1, $2, $3, $4, $5)")
            .bind(id)
            .bind(42i64)
            .bind(true)
            .bind(1.5f64)
            .bind(vec![1u8, 2, 3])
            .execute(db)
            .await
            .unwrap();
        assert_eq!(done.rows_affected(), 1);
        sql("INSERT INTO t (id, n, f, x, b) VALUES ($1, $2, $3, $4, $5)")
            .bind("nulls")
            .bind(None::<i64>)
            .bind(None::<bool>)
            .bind(None::<f64>)
            .bind(None::<Vec<u8>>)
            .execute(db)
            .await
            .unwrap();
        let row = sql("SELECT id, n, f, x, b FROM t WHERE id = $1")
            .bind(id)
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(row.uuid("id").unwrap(), id);
        assert_eq!(row.int("n").unwrap(), 42);
        assert!(row.flag("f").unwrap());
        assert_eq!(row.float("x").unwrap(), 1.5);
        assert_eq!(row.bytes("b").unwrap(), vec![1, 2, 3]);
        let nulls = sql("SELECT n, f, x, b FROM t WHERE id = 'nulls'")
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(nulls.opt_int("n").unwrap(), None);
        assert_eq!(nulls.opt_float("x").unwrap(), None);
        assert_eq!(nulls.opt_bytes("b").unwrap(), None);
        assert!(matches!(
            sql("SELECT id FROM t WHERE id = 'absent'")
                .fetch_one(db)
                .await,
            Err(DbFailure::NotFound)
        ));
        assert_eq!(
            sql("SELECT id FROM t").fetch_all(db).await.unwrap().len(),
            2
        );
        assert!(matches!(
            sql("INSERT INTO t (id) VALUES ($1)")
                .bind(id)
                .execute(db)
                .await,
            Err(DbFailure::Conflict(_))
        ));

        // A rolled-back transaction leaves nothing; a committed one stays.
        let mut tx = db.begin_write().await.unwrap();
        assert_eq!(tx.backend(), db.backend());
        sql("DELETE FROM t").execute(&mut tx).await.unwrap();
        assert!(
            sql("SELECT id FROM t")
                .fetch_all(&mut tx)
                .await
                .unwrap()
                .is_empty()
        );
        tx.rollback().await.unwrap();
        assert_eq!(
            sql("SELECT id FROM t").fetch_all(db).await.unwrap().len(),
            2
        );
        let mut tx = db.begin_write().await.unwrap();
        let locked = sql(format!(
            "SELECT n FROM t WHERE id = $1{}",
            tx.backend().row_lock()
        ))
        .bind(id)
        .fetch_one(&mut tx)
        .await
        .unwrap();
        assert_eq!(locked.int("n").unwrap(), 42);
        let gone = sql("DELETE FROM t WHERE id = $1 RETURNING n")
            .bind(id)
            .fetch_optional(&mut tx)
            .await
            .unwrap();
        assert_eq!(gone.unwrap().int("n").unwrap(), 42);
        tx.commit().await.unwrap();
        assert_eq!(
            sql("SELECT id FROM t").fetch_all(db).await.unwrap().len(),
            1
        );
        db.ping().await.unwrap();
        assert!(db.pool_use().0 >= 1);

        // A held connection runs statements outside any transaction: each is its own commit.
        let mut conn = db.acquire().await.unwrap();
        sql("INSERT INTO t (id, n) VALUES ('held', 9)")
            .execute(&mut conn)
            .await
            .unwrap();
        let held = sql("SELECT n FROM t WHERE id = 'held'")
            .fetch_optional(&mut conn)
            .await
            .unwrap();
        assert_eq!(held.unwrap().int("n").unwrap(), 9);
        assert_eq!(
            sql("SELECT id FROM t")
                .fetch_all(&mut conn)
                .await
                .unwrap()
                .len(),
            2
        );
        drop(conn);
        assert_eq!(
            sql("SELECT id FROM t").fetch_all(db).await.unwrap().len(),
            2
        );
    }

    #[tokio::test]
    async fn sqlite_round_trip() {
        let db = Db::open("sqlite::memory:", &settings()).await.unwrap();
        assert_eq!(db.backend(), Backend::Sqlite);
        round_trip(&db).await;
    }

    #[tokio::test]
    async fn postgres_round_trip() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let db = Db::open(&url, &settings()).await.unwrap();
        assert_eq!(db.backend(), Backend::Postgres);
        round_trip(&db).await;
    }

    /// Optimistic writes: the writes happen only with the guard, all or nothing, and each
    /// statement's own count comes back in order.
    async fn guarded(db: &Db) {
        sql("CREATE TABLE g (id BIGINT PRIMARY KEY, version BIGINT NOT NULL)")
            .execute(db)
            .await
            .unwrap();
        sql("CREATE TABLE w (id BIGINT PRIMARY KEY, v TEXT)")
            .execute(db)
            .await
            .unwrap();
        sql("INSERT INTO g VALUES (1, 1)")
            .execute(db)
            .await
            .unwrap();
        sql("INSERT INTO w VALUES (1, 'a'), (2, 'b')")
            .execute(db)
            .await
            .unwrap();
        let bump = |from: i64| {
            sql("UPDATE g SET version = $1 WHERE id = $2 AND version = $3")
                .bind(from + 1)
                .bind(1i64)
                .bind(from)
        };
        // The guarded row's version and the written table's rows.
        let state = || async {
            let version = sql("SELECT version FROM g WHERE id = 1")
                .fetch_one(db)
                .await
                .unwrap()
                .int("version")
                .unwrap();
            let rows = sql("SELECT id, v FROM w ORDER BY id")
                .fetch_all(db)
                .await
                .unwrap();
            let rows: Vec<(i64, String)> = rows
                .iter()
                .map(|r| (r.int("id").unwrap(), r.text("v").unwrap()))
                .collect();
            (version, rows)
        };
        let mut conn = db.acquire().await.unwrap();
        let counts = conn
            .write_guarded(
                bump(1),
                vec![
                    sql("UPDATE w SET v = $1 WHERE id = $2 OR id = $3")
                        .bind("a'$1")
                        .bind(1i64)
                        .bind(99i64),
                    sql("INSERT INTO w (id, v) SELECT * FROM (VALUES ($1, $2), ($3, $4)) AS v")
                        .bind(3i64)
                        .bind("c")
                        .bind(4i64)
                        .bind("d"),
                    sql("UPDATE w SET v = $1 WHERE id = $2")
                        .bind("none")
                        .bind(99i64),
                    sql("DELETE FROM w WHERE id = $1").bind(2i64),
                ],
            )
            .await
            .unwrap();
        assert_eq!(counts, Some(vec![1, 2, 0, 1]));
        let after = [(1, "a'$1"), (3, "c"), (4, "d")].map(|(i, v)| (i, v.to_owned()));
        assert_eq!(state().await, (2, after.to_vec()));

        // A stale guard (the version moved on): nothing written.
        let stale = conn
            .write_guarded(
                bump(1),
                vec![
                    sql("INSERT INTO w (id, v) SELECT $1, $2")
                        .bind(5i64)
                        .bind("e"),
                    sql("UPDATE w SET v = $1 WHERE id = $2")
                        .bind("x")
                        .bind(1i64),
                    sql("DELETE FROM w WHERE id = $1").bind(3i64),
                ],
            )
            .await
            .unwrap();
        assert_eq!(stale, None);
        assert_eq!(state().await, (2, after.to_vec()));

        // A write that fails (a duplicate key) takes the guard's change with it.
        let failed = conn
            .write_guarded(
                bump(2),
                vec![
                    sql("INSERT INTO w (id, v) SELECT $1, $2")
                        .bind(3i64)
                        .bind("again"),
                ],
            )
            .await;
        assert!(matches!(failed, Err(DbFailure::Conflict(_))), "{failed:?}");
        assert_eq!(state().await, (2, after.to_vec()));
        // ... and the connection is usable afterwards, outside any transaction.
        assert_eq!(
            conn.write_guarded(bump(2), Vec::new()).await.unwrap(),
            Some(Vec::new())
        );
        assert_eq!(state().await.0, 3);
    }

    /// A burst of writers, each reading the version and writing under it, again when it lost:
    /// every write lands exactly once, each on its own version.
    async fn guarded_burst(db: &Db) {
        sql("CREATE TABLE g (id BIGINT PRIMARY KEY, version BIGINT NOT NULL)")
            .execute(db)
            .await
            .unwrap();
        sql("CREATE TABLE log (version BIGINT PRIMARY KEY, writer BIGINT NOT NULL)")
            .execute(db)
            .await
            .unwrap();
        sql("INSERT INTO g VALUES (1, 0)")
            .execute(db)
            .await
            .unwrap();
        let writers: i64 = 16;
        let tasks: Vec<_> = (0..writers)
            .map(|writer| {
                let db = db.clone();
                tokio::spawn(async move {
                    let mut lost = 0u32;
                    loop {
                        let mut conn = db.acquire().await.unwrap();
                        let seen = sql("SELECT version FROM g WHERE id = 1")
                            .fetch_one(&mut conn)
                            .await
                            .unwrap()
                            .int("version")
                            .unwrap();
                        let written = conn
                            .write_guarded(
                                sql("UPDATE g SET version = $1 WHERE id = 1 AND version = $2")
                                    .bind(seen + 1)
                                    .bind(seen),
                                vec![
                                    sql("INSERT INTO log (version, writer) SELECT $1, $2")
                                        .bind(seen + 1)
                                        .bind(writer),
                                ],
                            )
                            .await
                            .unwrap();
                        match written {
                            Some(counts) => {
                                assert_eq!(counts, vec![1]);
                                return lost;
                            }
                            None => lost += 1,
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let rows = sql("SELECT version, writer FROM log ORDER BY version")
            .fetch_all(db)
            .await
            .unwrap();
        let versions: Vec<i64> = rows.iter().map(|r| r.int("version").unwrap()).collect();
        assert_eq!(versions, (1..=writers).collect::<Vec<_>>());
        let mut each: Vec<i64> = rows.iter().map(|r| r.int("writer").unwrap()).collect();
        each.sort_unstable();
        assert_eq!(each, (0..writers).collect::<Vec<_>>());
        let version = sql("SELECT version FROM g WHERE id = 1")
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(version.int("version").unwrap(), writers);
    }

    #[tokio::test]
    async fn sqlite_guarded_writes() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        guarded(&Db::open(&url, &settings()).await.unwrap()).await;
    }

    #[tokio::test]
    async fn postgres_guarded_writes() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        guarded(&Db::open(&url, &settings()).await.unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite_guarded_writes_hold_under_a_burst() {
        let (_dir, url) = testkit::db::fresh_sqlite_url();
        guarded_burst(&Db::open(&url, &settings()).await.unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres_guarded_writes_hold_under_a_burst() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        guarded_burst(&Db::open(&url, &settings()).await.unwrap()).await;
    }

    #[test]
    fn a_kept_guarded_text_is_the_one_written_for_its_shape() {
        const GUARD: &str = "UPDATE k SET version = $1 WHERE id = $2";
        const WRITE: &str = "INSERT INTO kw (k, v) SELECT $1, $2";
        let combined = |write_args: &[i64], owned: bool| {
            let guard = if owned {
                sql(GUARD.to_owned())
            } else {
                sql(GUARD)
            };
            let write = write_args.iter().fold(sql(WRITE), |s, a| s.bind(*a));
            guarded_writes(guard.bind(2i64).bind("k"), vec![write])
        };
        // written, then kept: the same text, and the arguments of this call
        let first = combined(&[7, 8], false);
        let kept = combined(&[9, 10], false);
        assert_eq!(kept.text(), first.text());
        assert_eq!(kept.text(), combined(&[9, 10], true).text());
        assert_eq!(
            kept.text(),
            "WITH w0 AS (UPDATE k SET version = $1 WHERE id = $2 RETURNING 1), \
             w1 AS (INSERT INTO kw (k, v) SELECT $3, $4 WHERE EXISTS (SELECT 1 FROM w0) \
             RETURNING 1) SELECT (SELECT COUNT(*) FROM w0) AS n0, (SELECT COUNT(*) FROM w1) AS n1"
        );
        assert_eq!(&kept.args()[2..], [Arg::Int(Some(9)), Arg::Int(Some(10))]);
        // the same texts binding a different number of arguments are another shape
        let mut guard = sql(GUARD).bind(2i64).bind("k").bind(3i64);
        guard = guard.bind(4i64);
        let wider = guarded_writes(guard, vec![sql(WRITE).bind(1i64).bind(2i64)]);
        assert!(
            wider.text().contains("SELECT $5, $6 WHERE"),
            "{}",
            wider.text()
        );
    }

    #[test]
    fn guarded_writes_are_one_statement_with_their_arguments_in_order() {
        let combined = guarded_writes(
            sql("UPDATE g SET version = $1 WHERE id = $2 AND version = $3")
                .bind(2i64)
                .bind("g")
                .bind(1i64),
            vec![
                sql("UPDATE a SET v = $2 WHERE id = $1 OR id = $3")
                    .bind("x")
                    .bind(1i64)
                    .bind(3i64),
                sql("INSERT INTO b (k, note) SELECT $1, '$1 stays'").bind(2i64),
                sql(
                    "DELETE FROM c WHERE k = $1 OR k = $2 OR k = $3 OR k = $4 OR k = $5 \
                     OR k = $6 OR k = $7 OR k = $8 OR k = $9 OR k = $10",
                )
                .bind(3i64),
            ],
        );
        assert_eq!(
            combined.text(),
            "WITH w0 AS (UPDATE g SET version = $1 WHERE id = $2 AND version = $3 RETURNING 1), \
             w1 AS (UPDATE a SET v = $5 WHERE (id = $4 OR id = $6) \
             AND EXISTS (SELECT 1 FROM w0) RETURNING 1), \
             w2 AS (INSERT INTO b (k, note) SELECT $7, '$1 stays' \
             WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1), \
             w3 AS (DELETE FROM c WHERE (k = $8 OR k = $9 OR k = $10 OR k = $11 OR k = $12 \
             OR k = $13 OR k = $14 OR k = $15 OR k = $16 OR k = $17) \
             AND EXISTS (SELECT 1 FROM w0) RETURNING 1) \
             SELECT (SELECT COUNT(*) FROM w0) AS n0, (SELECT COUNT(*) FROM w1) AS n1, \
             (SELECT COUNT(*) FROM w2) AS n2, (SELECT COUNT(*) FROM w3) AS n3"
        );
        assert_eq!(
            combined.args(),
            [
                Arg::Int(Some(2)),
                Arg::Text(Some("g".into())),
                Arg::Int(Some(1)),
                Arg::Text(Some("x".into())),
                Arg::Int(Some(1)),
                Arg::Int(Some(3)),
                Arg::Int(Some(2)),
                Arg::Int(Some(3))
            ]
        );
    }

    #[test]
    fn placeholders_move_past_the_earlier_arguments_and_literals_stay() {
        assert_eq!(
            shift_placeholders("a = $1 AND b IN ($2, $10) AND c = '$1' AND \"$2\" = $3", 4),
            "a = $5 AND b IN ($6, $14) AND c = '$1' AND \"$2\" = $7"
        );
        assert_eq!(shift_placeholders("x = $1", 0), "x = $1");
        assert_eq!(shift_placeholders("it''s $1 $", 1), "it''s $2 $");
        assert_eq!(
            shift_placeholders("ż = $1, \"ą$2\" = $2", 1),
            "ż = $2, \"ą$2\" = $3"
        );
    }

    /// The rule written the plain way, character by character: the oracle of the scan above.
    fn shift_placeholders_by_chars(text: &str, by: usize) -> String {
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            out.push(c);
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '$') => {
                    let mut digits = String::new();
                    while let Some(d) = chars.next_if(char::is_ascii_digit) {
                        digits.push(d);
                    }
                    match digits.parse::<usize>() {
                        Ok(k) => out.push_str(&(k + by).to_string()),
                        Err(_) => out.push_str(&digits),
                    }
                }
                (None, _) => {}
            }
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(testkit::prop::config())]
        #[test]
        fn the_byte_scan_shifts_exactly_as_the_character_rule(
            text in "[a-z $0-9'\",()ż]{0,60}",
            by in 0usize..40,
        ) {
            proptest::prop_assert_eq!(
                shift_placeholders(&text, by),
                shift_placeholders_by_chars(&text, by)
            );
        }
    }

    #[test]
    fn only_postgres_locks_rows() {
        assert_eq!(Backend::Postgres.row_lock(), " FOR UPDATE");
        assert_eq!(Backend::Sqlite.row_lock(), "");
    }

    #[test]
    fn urls_name_their_backend() {
        assert_eq!(backend_of("postgres://u@h/db"), Backend::Postgres);
        assert_eq!(backend_of("postgresql://u@h/db"), Backend::Postgres);
        assert_eq!(backend_of("sqlite://a.db"), Backend::Sqlite);
        assert_eq!(backend_of("sqlite::memory:"), Backend::Sqlite);
    }
}
