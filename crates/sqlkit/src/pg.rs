//! PostgreSQL connections under a client-side deadline. The server's `statement_timeout`
//! only bounds a statement the server has seen; across a network that stops answering (a
//! black hole) nothing would bound it but the request's own deadline. Here every statement,
//! `BEGIN` and `COMMIT` included, must be answered within a deadline measured by the client;
//! past it the connection is discarded (its socket closed, never returned to the pool in the
//! middle of a statement) and the caller sees [`DbFailure::Unavailable`]. Which statements run
//! and how a transaction is used stay in [`crate::db`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use sqlx::postgres::{PgConnection, PgTransactionManager};
use sqlx::{Connection, TransactionManager};

use crate::DbFailure;
use crate::pg_pool::{Lent, PgPool};

/// The client-side rules of one PostgreSQL pool: the statement deadline, and how many of the
/// next connections to check (one round trip, `query_timeout` at most) before lending them.
/// Normally none: the check costs a round trip per statement. After a connection failed
/// (PostgreSQL restarted, the network cut) the pool's other idle connections are likely dead
/// too, so the next `max_connections` acquires check theirs, discard the dead ones and
/// take another — recovery is not paid for with one failed request per stale connection.
#[derive(Debug, Clone)]
pub struct PgGuard {
    pub(crate) query_timeout: Duration,
    checks: Arc<AtomicU32>,
    max_connections: u32,
}

impl PgGuard {
    pub(crate) fn new(query_timeout: Duration, max_connections: u32) -> Self {
        Self {
            query_timeout,
            checks: Arc::new(AtomicU32::new(0)),
            max_connections: max_connections.max(1),
        }
    }

    fn connection_failed(&self) {
        self.checks.store(self.max_connections, Ordering::Relaxed);
    }
}

/// Whether `e` says the connection itself failed (rather than the statement).
fn is_connection_failure(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::Tls(_)
    )
}

/// A pooled PostgreSQL connection held for one statement, a [`crate::Conn`] or a
/// [`crate::Tx`]. Each step on it marks it unsettled until its outcome is in. Dropped inside
/// a transaction, it queues the `ROLLBACK` (as sqlx's own transaction does) and goes back
/// unsettled, so the pool flushes it at once, off the request path; dropped after a deadline
/// passed or a connection failure, there is no connection left to return.
#[derive(Debug)]
pub struct PgHeld {
    conn: Option<Lent>,
    /// The deadline of each statement run on it (a budgeted read sets its own).
    pub(crate) query_timeout: Duration,
    guard: PgGuard,
    in_transaction: bool,
}

impl PgHeld {
    /// One connection from `pool` (each wait bounded by the pool's acquire timeout), checked
    /// first when the guard says so.
    pub(crate) async fn acquire(pool: &PgPool, guard: &PgGuard) -> Result<Self, DbFailure> {
        // every connection of the pool, and one more
        for _ in 0..=guard.max_connections {
            let mut conn = pool.acquire().await?;
            let pending = guard.checks.load(Ordering::Relaxed);
            if pending > 0 {
                conn.unsettled = true;
                let alive = tokio::time::timeout(guard.query_timeout, conn.ping()).await;
                if !matches!(alive, Ok(Ok(()))) {
                    conn.discard();
                    guard.connection_failed();
                    continue;
                }
                conn.unsettled = false;
                let _ = guard.checks.compare_exchange(
                    pending,
                    pending - 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            return Ok(Self {
                conn: Some(conn),
                query_timeout: guard.query_timeout,
                guard: guard.clone(),
                in_transaction: false,
            });
        }
        Err(DbFailure::Unavailable(
            "no PostgreSQL connection answered".into(),
        ))
    }

    /// One connection from `pool` with a transaction begun on it (`BEGIN` under the deadline).
    pub(crate) async fn begin(pool: &PgPool, guard: &PgGuard) -> Result<Self, DbFailure> {
        Self::acquire(pool, guard).await?.begin_on(None).await
    }

    /// A transaction begun (`statement`, else a plain `BEGIN`, under the deadline) on this
    /// held connection.
    pub(crate) async fn begin_on(
        mut self,
        statement: Option<&'static str>,
    ) -> Result<Self, DbFailure> {
        let query_timeout = self.query_timeout;
        let conn = self.conn()?;
        let begun = tokio::time::timeout(
            query_timeout,
            PgTransactionManager::begin(conn, statement.map(std::borrow::Cow::Borrowed)),
        )
        .await;
        self.settle(begun, query_timeout)?;
        self.in_transaction = true;
        Ok(self)
    }

    /// `COMMIT` under the deadline. Past it the outcome is unknown to the client: the caller
    /// sees `Unavailable`, and an idempotent retry finds out (its receipt, or none).
    pub(crate) async fn commit(mut self) -> Result<(), DbFailure> {
        let deadline = self.query_timeout;
        let conn = self.conn()?;
        let done = tokio::time::timeout(deadline, PgTransactionManager::commit(conn)).await;
        self.settle(done, deadline)?;
        self.in_transaction = false;
        Ok(())
    }

    /// `ROLLBACK` under the deadline.
    pub(crate) async fn rollback(mut self) -> Result<(), DbFailure> {
        let deadline = self.query_timeout;
        let conn = self.conn()?;
        let done = tokio::time::timeout(deadline, PgTransactionManager::rollback(conn)).await;
        self.settle(done, deadline)?;
        self.in_transaction = false;
        Ok(())
    }

    /// The connection for one step, marked unsettled until [`PgHeld::settle`] has its
    /// outcome; unless an earlier deadline or failure discarded it.
    pub(crate) fn conn(&mut self) -> Result<&mut PgConnection, DbFailure> {
        match self.conn.as_mut() {
            Some(lent) => {
                lent.unsettled = true;
                Ok(lent)
            }
            None => Err(DbFailure::Unavailable(
                "the connection was discarded after a timeout or a connection failure".into(),
            )),
        }
    }

    /// The connection goes, its socket closed at once (its state is unknown).
    fn discard(&mut self) {
        if let Some(lent) = self.conn.take() {
            lent.discard();
        }
    }

    /// The outcome of one step run under `deadline`: past it, the connection is discarded.
    pub(crate) fn settle<T>(
        &mut self,
        outcome: Result<Result<T, sqlx::Error>, tokio::time::error::Elapsed>,
        deadline: Duration,
    ) -> Result<T, DbFailure> {
        match outcome {
            Ok(Err(e)) if is_connection_failure(&e) => {
                self.guard.connection_failed();
                self.discard();
                Err(e.into())
            }
            Ok(done) => {
                // the step's outcome is in (an error's pending `ReadyForQuery` is read by
                // the next step before it starts)
                if let Some(lent) = self.conn.as_mut() {
                    lent.unsettled = false;
                }
                Ok(done?)
            }
            Err(_) => {
                self.guard.connection_failed();
                // the socket closes at once, the pool may open a replacement, and nothing
                // waits on a peer that does not answer
                self.discard();
                Err(DbFailure::Unavailable(format!(
                    "PostgreSQL did not answer within {deadline:?}; the connection was discarded"
                )))
            }
        }
    }
}

impl Drop for PgHeld {
    fn drop(&mut self) {
        if self.in_transaction
            && let Some(lent) = self.conn.as_mut()
        {
            PgTransactionManager::start_rollback(lent);
            lent.unsettled = true;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::{Duration, Instant};

    use testkit::proxy::{Proxy, target_of};

    use crate::{Cols, Db, DbFailure, PoolSettings, sql};

    const SETTINGS: PoolSettings = PoolSettings {
        max_connections: 4,
        acquire_timeout: Duration::from_millis(500),
        statement_timeout: Duration::from_secs(5),
        lock_timeout: Duration::from_secs(5),
        query_timeout: Duration::from_millis(300),
        sqlite_cache_kib: crate::pool::SQLITE_DEFAULT_CACHE_KIB,
    };

    /// Generous against a loaded machine, far below the server's 5 s statement timeout.
    const SOON: Duration = Duration::from_millis(1500);

    /// The message of an `Unavailable` failure; anything else fails the test, naming `what`.
    pub(crate) fn unavailable<T: std::fmt::Debug>(
        result: Result<T, DbFailure>,
        what: &str,
    ) -> String {
        match result {
            Err(DbFailure::Unavailable(message)) => message,
            other => panic!("{what}: expected Unavailable, got {other:?}"),
        }
    }

    /// The answer of a one-row statement: 7.
    pub(crate) async fn answers(db: &Db) -> i64 {
        sql("SELECT CAST(7 AS BIGINT) AS n")
            .fetch_one(db)
            .await
            .unwrap()
            .int("n")
            .unwrap()
    }

    /// A PostgreSQL behind a black hole is given up on the client's deadline, on every path
    /// (pool, held connection, transaction, commit), its connections are discarded, and the
    /// pool serves again as soon as the network does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_black_hole_is_bounded_by_the_client_deadline() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let (target, _) = target_of(&url, 5432, None).await;
        let proxy = Proxy::start(target).await;
        let (_, via) = target_of(&url, 5432, Some(proxy.addr)).await;
        let db = Db::open(&via, &SETTINGS).await.unwrap();
        sql("CREATE TABLE t (n BIGINT)").execute(&db).await.unwrap();
        assert_eq!(answers(&db).await, 7);
        let mut tx = db.begin_write().await.unwrap();
        sql("INSERT INTO t VALUES (1)")
            .execute(&mut tx)
            .await
            .unwrap();
        let mut conn = db.acquire().await.unwrap();

        proxy.black_hole().await;
        let started = Instant::now();
        // (from the pool: the deadline, or the acquire timeout when no idle connection is
        // left and a new one cannot open)
        unavailable(sql("SELECT 1").execute(&db).await, "pool");
        let message = unavailable(sql("SELECT 1").execute(&mut conn).await, "held connection");
        assert!(message.contains("did not answer within 300ms"), "{message}");
        unavailable(
            sql("INSERT INTO t VALUES (2)").execute(&mut tx).await,
            "transaction",
        );
        // the transaction's connection is gone: it says so at once, and its commit fails
        let gone = unavailable(sql("SELECT 1").execute(&mut tx).await, "after");
        assert!(gone.contains("discarded"), "{gone}");
        unavailable(tx.commit().await, "commit");
        unavailable(db.begin_write().await.map(|_| ()), "begin");
        let budgeted = db.read_with_budget(Duration::from_millis(200)).await;
        unavailable(budgeted.map(|_| ()), "budgeted read");
        assert!(started.elapsed() < 6 * SOON, "{:?}", started.elapsed());
        drop(conn);

        // the network heals: the pool answers again by itself, and the insert of the
        // transaction that never committed is not there
        proxy.resume().await;
        let deadline = Instant::now() + 5 * SOON;
        loop {
            match sql("SELECT COUNT(*) AS c FROM t").fetch_one(&db).await {
                Ok(row) => {
                    assert_eq!(row.int("c").unwrap(), 0);
                    break;
                }
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("no recovery after the black hole: {e:?}"),
            }
        }
        assert_eq!(answers(&db).await, 7);
        let mut tx = db.begin_write().await.unwrap();
        sql("INSERT INTO t VALUES (3)")
            .execute(&mut tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let (size, _) = db.pool_use();
        assert!(size <= SETTINGS.max_connections, "{size}");
    }

    /// After PostgreSQL went away and came back, the pool's stale idle connections cost one
    /// failed statement in all, not one each: the next acquires check theirs first.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stale_connections_after_a_cut_cost_one_failure() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let (target, _) = target_of(&url, 5432, None).await;
        let proxy = Proxy::start(target).await;
        let (_, via) = target_of(&url, 5432, Some(proxy.addr)).await;
        let db = Db::open(&via, &SETTINGS).await.unwrap();
        // four idle connections
        let held: Vec<_> = hold_four(&db).await;
        drop(held);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(db.pool_use().0, 4);
        proxy.cut().await;
        proxy.resume().await;
        let mut failures = 0;
        for _ in 0..8 {
            if answers_or_fails(&db).await.is_err() {
                failures += 1;
            }
        }
        assert_eq!(failures, 1, "stale connections each failed a statement");
    }

    async fn answers_or_fails(db: &Db) -> Result<(), DbFailure> {
        sql("SELECT 1").execute(db).await.map(|_| ())
    }

    /// Four connections held at once.
    async fn hold_four(db: &Db) -> Vec<crate::Conn> {
        let mut held = Vec::new();
        for _ in 0..4 {
            held.push(db.acquire().await.unwrap());
        }
        held
    }

    /// A commit after a statement that failed normally still rolls back on drop, and the
    /// connection goes back to the pool usable (nothing timed out, nothing discarded).
    #[tokio::test]
    async fn a_dropped_transaction_rolls_back_and_its_connection_is_reused() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let settings = PoolSettings {
            max_connections: 1,
            ..SETTINGS
        };
        let db = Db::open(&url, &settings).await.unwrap();
        sql("CREATE TABLE t (n BIGINT PRIMARY KEY)")
            .execute(&db)
            .await
            .unwrap();
        for _ in 0..3 {
            let mut tx = db.begin_write().await.unwrap();
            sql("INSERT INTO t VALUES (1)")
                .execute(&mut tx)
                .await
                .unwrap();
            drop(tx);
        }
        let row = sql("SELECT COUNT(*) AS c FROM t")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(row.int("c").unwrap(), 0);
        assert_eq!(db.pool_use().0, 1);
    }
}
