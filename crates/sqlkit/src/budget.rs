//! Reads under one time budget that the database itself enforces ([`Db::read_with_budget`],
//! [`BudgetedRead`]): one read transaction whose statements together may run for at most the
//! budget. PostgreSQL cancels a statement past it (`SET LOCAL statement_timeout` to what is
//! left, before each statement); SQLite interrupts it from a progress handler that checks the
//! deadline every few hundred virtual-machine steps. Either way the caller sees
//! [`DbFailure::Timeout`]. What a product answers then (a tool error, a refund) is its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::db::{Db, Row, Runner, Tx, WithDeadline};
use crate::failure::DbFailure;
use crate::statement::{Statement, sql};

/// Virtual-machine steps between two deadline checks on SQLite: small enough that a
/// cancelled scan stops within a millisecond, large enough that the check costs nothing.
const SQLITE_CHECK_EVERY: i32 = 500;

/// How long past the budget the client still waits for PostgreSQL's answer (its cancel is
/// sent at the deadline and must travel back) before it discards the connection as gone.
const POSTGRES_GRACE: Duration = Duration::from_secs(1);

/// A read transaction under a time budget; see the module docs. Finish it with
/// [`BudgetedRead::finish`]; dropped, it rolls back and its SQLite handler goes quiet.
#[derive(Debug)]
pub struct BudgetedRead {
    tx: Option<Tx>,
    deadline: Instant,
    budget: Duration,
    /// Whether the SQLite progress handler still enforces the deadline: cleared when the read
    /// ends, so a pooled connection that kept the handler never interrupts a later statement.
    active: Arc<AtomicBool>,
}

impl Db {
    /// Begins a read whose statements together may run for `budget` (measured from now).
    pub async fn read_with_budget(&self, budget: Duration) -> Result<BudgetedRead, DbFailure> {
        // the budget starts before the connection is acquired: waiting counts too
        let deadline = Instant::now() + budget;
        let active = Arc::new(AtomicBool::new(true));
        let mut tx = self.begin_read().await?;
        if let Tx::Sqlite(inner) = &mut tx {
            let flag = Arc::clone(&active);
            let mut handle = inner.lock_handle().await?;
            handle.set_progress_handler(SQLITE_CHECK_EVERY, move || {
                // true continues; false interrupts the statement (SQLITE_INTERRUPT)
                !(flag.load(Ordering::Relaxed) && Instant::now() >= deadline)
            });
        }
        Ok(BudgetedRead {
            tx: Some(tx),
            deadline,
            budget,
            active,
        })
    }
}

impl BudgetedRead {
    /// The whole budget this read was given.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// What is left of the budget (zero once spent).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Every row of `statement`, within what is left of the budget.
    pub async fn fetch_all(&mut self, statement: Statement) -> Result<Vec<Row>, DbFailure> {
        let result = match self.prepare().await {
            Ok((tx, deadline)) => WithDeadline(tx, deadline).fetch_all(statement).await,
            Err(e) => Err(e),
        };
        self.classify(result)
    }

    /// The first row of `statement`, if any, within what is left of the budget.
    pub async fn fetch_optional(&mut self, statement: Statement) -> Result<Option<Row>, DbFailure> {
        let result = match self.prepare().await {
            Ok((tx, deadline)) => WithDeadline(tx, deadline).fetch_optional(statement).await,
            Err(e) => Err(e),
        };
        self.classify(result)
    }

    /// The first row of `statement`; none is [`DbFailure::NotFound`].
    pub async fn fetch_one(&mut self, statement: Statement) -> Result<Row, DbFailure> {
        self.fetch_optional(statement)
            .await?
            .ok_or(DbFailure::NotFound)
    }

    /// Ends the read: the SQLite handler is removed from the connection, and the transaction
    /// (which wrote nothing) rolls back.
    pub async fn finish(mut self) -> Result<(), DbFailure> {
        self.active.store(false, Ordering::Relaxed);
        let Some(mut tx) = self.tx.take() else {
            return Ok(());
        };
        if let Tx::Sqlite(inner) = &mut tx {
            inner.lock_handle().await?.remove_progress_handler();
        }
        tx.rollback().await
    }

    /// The transaction, with PostgreSQL's statement timeout set to what is left, and the
    /// client-side deadline of the next statement; a spent budget is [`DbFailure::Timeout`]
    /// before anything runs.
    async fn prepare(&mut self) -> Result<(&mut Tx, Duration), DbFailure> {
        let left = self.remaining();
        let tx = self
            .tx
            .as_mut()
            .ok_or_else(|| DbFailure::Internal("budgeted read used after finish".into()))?;
        if left.is_zero() {
            return Err(DbFailure::Timeout(self.budget));
        }
        if let Tx::Postgres(_) = tx {
            // rounded up: PostgreSQL cancels at, never before, the deadline (0 would mean
            // no limit at all)
            let ms = left.as_micros().div_ceil(1000).max(1);
            sql(format!("SET LOCAL statement_timeout = {ms}"))
                .execute(&mut *tx)
                .await?;
        }
        Ok((tx, left + POSTGRES_GRACE))
    }

    /// A failure after the deadline is the budget's doing: PostgreSQL's cancel (57014) and
    /// SQLite's interrupt both arrive only then.
    fn classify<T>(&self, result: Result<T, DbFailure>) -> Result<T, DbFailure> {
        match result {
            Err(e) if !matches!(e, DbFailure::Timeout(_)) && Instant::now() >= self.deadline => {
                Err(DbFailure::Timeout(self.budget))
            }
            other => other,
        }
    }
}

impl Drop for BudgetedRead {
    fn drop(&mut self) {
        self.active.store(false, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cols, PoolSettings};

    fn settings() -> PoolSettings {
        PoolSettings::for_tests_of(2)
    }

    /// A statement that takes far longer than a millisecond on either backend.
    const SLOW: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
         WHERE i < 5000000) SELECT COUNT(*) AS c FROM n";

    async fn budgets(db: &Db) {
        // within the budget: answers as usual, and the connection stays usable afterwards
        let mut read = db.read_with_budget(Duration::from_secs(10)).await.unwrap();
        let row = read
            .fetch_one(sql("SELECT CAST(41 + 1 AS BIGINT) AS n"))
            .await
            .unwrap();
        assert_eq!(row.int("n").unwrap(), 42);
        assert!(read.remaining() <= read.budget());
        read.finish().await.unwrap();

        // past it: the database cancels the statement
        let mut read = db.read_with_budget(Duration::from_millis(5)).await.unwrap();
        let started = Instant::now();
        match read.fetch_one(sql(SLOW)).await {
            Err(DbFailure::Timeout(b)) => assert_eq!(b, Duration::from_millis(5)),
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(2), "cancelled late");
        // a spent budget refuses the next statement before it runs
        assert!(matches!(
            read.fetch_one(sql("SELECT 1 AS n")).await,
            Err(DbFailure::Timeout(_))
        ));
        read.finish().await.unwrap();

        // a dropped read leaves no deadline behind on its pooled connection
        let read = db.read_with_budget(Duration::from_millis(1)).await.unwrap();
        drop(read);
        tokio::time::sleep(Duration::from_millis(5)).await;
        for _ in 0..3 {
            let row = sql(SLOW.replace("5000000", "200000"))
                .fetch_one(db)
                .await
                .unwrap();
            assert_eq!(row.int("c").unwrap(), 200_000);
        }
    }

    #[tokio::test]
    async fn sqlite_cancels_past_the_budget() {
        let db = Db::open("sqlite::memory:", &settings()).await.unwrap();
        budgets(&db).await;
    }

    #[tokio::test]
    async fn postgres_cancels_past_the_budget() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let db = Db::open(&url, &settings()).await.unwrap();
        budgets(&db).await;
    }
}
