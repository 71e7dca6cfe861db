//! The PostgreSQL connection pool: at most `max_connections` sqlx `PgConnection`s, lent one
//! at a time and given back without a round trip when nothing is left unsettled on them.
//!
//! Why not sqlx's `PgPool`: its `PoolConnection` pings every connection it gets back (one
//! round trip, `Sync` and `ReadyForQuery`) before lending it again, whatever was done on it,
//! as a guard against a statement future dropped halfway. For a request that is one
//! statement that doubles its round trips. Here the connection itself says whether it needs
//! that: [`Lent::unsettled`] is set while a step runs on it (and when a dropped transaction
//! queued its `ROLLBACK`) and cleared when the step's outcome is in, so a connection that
//! comes back settled goes straight to the idle list, and one that comes back unsettled is
//! flushed by one ping off the request path (a dropped transaction's locks released at
//! once) before it is lent again, or closed when that ping fails or misses the deadline.
//! Which statements run, and their deadlines, stay in `pg.rs` and `db.rs`.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::DbFailure;

/// How long connections live: closed instead of lent (or kept idle) once `max_lifetime` old,
/// and closed when unused for `idle_timeout`.
#[derive(Debug, Clone, Copy)]
struct Lifetimes {
    max_lifetime: Duration,
    idle_timeout: Duration,
}

/// sqlx's defaults: 30 minutes, 10 minutes.
const LIFETIMES: Lifetimes = Lifetimes {
    max_lifetime: Duration::from_secs(30 * 60),
    idle_timeout: Duration::from_secs(10 * 60),
};

/// A pool of PostgreSQL connections; cloning shares it.
#[derive(Clone)]
pub struct PgPool {
    shared: Arc<Shared>,
}

struct Shared {
    connect: PgConnectOptions,
    /// One permit per connection that may be open or opening.
    permits: Arc<Semaphore>,
    idle: Mutex<VecDeque<Idle>>,
    /// Connections open (idle, lent or being flushed or closed).
    open: AtomicU32,
    closed: AtomicBool,
    /// Wakes [`PgPool::close`] when a connection is gone.
    gone: Notify,
    lifetimes: Lifetimes,
    acquire_timeout: Duration,
    /// The deadline of the flush of an unsettled connection.
    flush_timeout: Duration,
}

struct Idle {
    conn: PgConnection,
    born: Instant,
    since: Instant,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (open, idle) = self.usage();
        f.debug_struct("PgPool")
            .field("open", &open)
            .field("idle", &idle)
            .field("closed", &self.shared.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl PgPool {
    /// A pool of at most `max_connections` (at least one) connections to `connect`. Opens
    /// one connection before returning, so a URL that cannot connect is refused here.
    pub async fn open(
        connect: PgConnectOptions,
        max_connections: u32,
        acquire_timeout: Duration,
        flush_timeout: Duration,
    ) -> Result<Self, DbFailure> {
        Self::open_with(
            connect,
            max_connections,
            acquire_timeout,
            flush_timeout,
            LIFETIMES,
        )
        .await
    }

    async fn open_with(
        connect: PgConnectOptions,
        max_connections: u32,
        acquire_timeout: Duration,
        flush_timeout: Duration,
        lifetimes: Lifetimes,
    ) -> Result<Self, DbFailure> {
        let pool = Self {
            shared: Arc::new(Shared {
                connect,
                permits: Arc::new(Semaphore::new(max_connections.max(1) as usize)),
                idle: Mutex::new(VecDeque::new()),
                open: AtomicU32::new(0),
                closed: AtomicBool::new(false),
                gone: Notify::new(),
                lifetimes,
                acquire_timeout,
                flush_timeout,
            }),
        };
        drop(pool.acquire().await?);
        Ok(pool)
    }

    /// The most recently used idle connection, else a new one, within the acquire timeout.
    pub async fn acquire(&self) -> Result<Lent, DbFailure> {
        let shared = &self.shared;
        let started = Instant::now();
        let permit = match tokio::time::timeout(
            shared.acquire_timeout,
            shared.permits.clone().acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(closed()),
            Err(_) => return Err(timed_out(shared.acquire_timeout)),
        };
        while let Some(idle) = shared.take_idle() {
            let Lifetimes {
                max_lifetime,
                idle_timeout,
            } = shared.lifetimes;
            if idle.born.elapsed() < max_lifetime && idle.since.elapsed() < idle_timeout {
                return Ok(self.lend(idle.conn, idle.born, permit));
            }
            shared.close_now(idle.conn).await;
        }
        let left = shared.acquire_timeout.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, PgConnection::connect_with(&shared.connect)).await {
            Ok(Ok(conn)) => {
                shared.open.fetch_add(1, Ordering::AcqRel);
                Ok(self.lend(conn, Instant::now(), permit))
            }
            Ok(Err(e)) => Err(e.into()),
            Err(_) => Err(timed_out(shared.acquire_timeout)),
        }
    }

    fn lend(&self, conn: PgConnection, born: Instant, permit: OwnedSemaphorePermit) -> Lent {
        Lent {
            conn: Some(conn),
            born,
            permit: Some(permit),
            shared: self.shared.clone(),
            unsettled: false,
        }
    }

    /// Connections open and idle.
    pub fn usage(&self) -> (u32, usize) {
        (
            self.shared.open.load(Ordering::Acquire),
            self.shared.lock_idle().len(),
        )
    }

    /// Refuses new acquires, closes the idle connections and waits for the lent ones to come
    /// back (each is closed as it does).
    pub async fn close(&self) {
        let shared = &self.shared;
        shared.closed.store(true, Ordering::Release);
        shared.permits.close();
        let idle: Vec<Idle> = shared.lock_idle().drain(..).collect();
        for idle in idle {
            shared.close_now(idle.conn).await;
        }
        loop {
            let gone = shared.gone.notified();
            if shared.open.load(Ordering::Acquire) == 0 {
                return;
            }
            gone.await;
        }
    }
}

impl Shared {
    fn lock_idle(&self) -> MutexGuard<'_, VecDeque<Idle>> {
        // a panic while holding this lock leaves a list that is still whole
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn take_idle(&self) -> Option<Idle> {
        self.lock_idle().pop_back()
    }

    /// `Terminate` sent (within the flush deadline), the socket closed, the count down.
    async fn close_now(&self, conn: PgConnection) {
        let _ = tokio::time::timeout(self.flush_timeout, conn.close()).await;
        self.forget();
    }

    /// [`Shared::close_now`] on a task of its own; `permit` is given back once it is done,
    /// so a closing connection still counts against the pool's bound.
    fn close_in_background(
        self: &Arc<Self>,
        conn: PgConnection,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let shared = self.clone();
                runtime.spawn(async move {
                    shared.close_now(conn).await;
                    drop(permit);
                });
            }
            Err(_) => self.lose(conn),
        }
    }

    /// Drops `conn` without a word to the server (its socket closes) and forgets it.
    fn lose(&self, conn: PgConnection) {
        drop(conn);
        self.forget();
    }

    /// A connection is gone (closed, or dropped with its socket).
    fn forget(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.gone.notify_waiters();
    }

    /// A settled connection back on the idle list (or closed, the pool being closed).
    fn give_back(
        self: &Arc<Self>,
        conn: PgConnection,
        born: Instant,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        if self.closed.load(Ordering::Acquire) {
            self.close_in_background(conn, permit);
            return;
        }
        let stale: Vec<Idle> = {
            let mut idle = self.lock_idle();
            idle.push_back(Idle {
                conn,
                born,
                since: Instant::now(),
            });
            // the least recently used are at the front: those unused for the idle timeout
            // are closed, so a quiet pool shrinks back (acquires take from the back)
            let unused = idle
                .iter()
                .take_while(|i| i.since.elapsed() >= self.lifetimes.idle_timeout)
                .count();
            idle.drain(..unused).collect()
        };
        // after the push: whoever takes this permit finds the connection idle
        drop(permit);
        for idle in stale {
            self.close_in_background(idle.conn, None);
        }
    }
}

/// One connection lent by a [`PgPool`]; dropped, it goes back (see the module's docs).
pub struct Lent {
    conn: Option<PgConnection>,
    born: Instant,
    /// Held until the connection is idle again or gone.
    permit: Option<OwnedSemaphorePermit>,
    shared: Arc<Shared>,
    /// Something may be left in flight on the connection: a step that has not settled, or a
    /// `ROLLBACK` queued by a dropped transaction. Given back so, it is flushed first.
    pub(crate) unsettled: bool,
}

impl std::fmt::Debug for Lent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lent")
            .field("unsettled", &self.unsettled)
            .finish_non_exhaustive()
    }
}

impl Lent {
    /// Closes the socket at once and gives the slot back: for a connection whose state is
    /// unknown (a deadline passed in the middle of a step).
    pub(crate) fn discard(mut self) {
        if let Some(conn) = self.conn.take() {
            self.shared.lose(conn);
        }
    }
}

/// The connection is only taken out of a `Lent` by `discard` and `drop`, which consume it.
#[allow(clippy::panic)]
fn unreachable_conn() -> ! {
    panic!("a lent connection is used after it was given back")
}

impl Deref for Lent {
    type Target = PgConnection;
    fn deref(&self) -> &PgConnection {
        match &self.conn {
            Some(conn) => conn,
            None => unreachable_conn(),
        }
    }
}

impl DerefMut for Lent {
    fn deref_mut(&mut self) -> &mut PgConnection {
        match &mut self.conn {
            Some(conn) => conn,
            None => unreachable_conn(),
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        let (shared, born, permit) = (self.shared.clone(), self.born, self.permit.take());
        if born.elapsed() >= shared.lifetimes.max_lifetime {
            shared.close_in_background(conn, permit);
            return;
        }
        if !self.unsettled {
            shared.give_back(conn, born, permit);
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            shared.lose(conn);
            return;
        };
        runtime.spawn(async move {
            // the permit stays taken until the connection is idle or gone
            match tokio::time::timeout(shared.flush_timeout, conn.ping()).await {
                Ok(Ok(())) => shared.give_back(conn, born, permit),
                _ => shared.lose(conn),
            }
        });
    }
}

fn closed() -> DbFailure {
    DbFailure::Unavailable("the PostgreSQL pool is closed".into())
}

fn timed_out(after: Duration) -> DbFailure {
    DbFailure::Unavailable(format!(
        "no PostgreSQL connection was free within {after:?} (pool timed out)"
    ))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::pg::tests::{answers, unavailable};
    use crate::{Db, DbFailure, PoolSettings, sql};

    fn settings(max_connections: u32) -> PoolSettings {
        PoolSettings {
            acquire_timeout: Duration::from_millis(400),
            ..PoolSettings::for_tests_of(max_connections)
        }
    }

    async fn open(max_connections: u32) -> Option<Db> {
        let url = testkit::db::fresh_postgres().await?;
        Some(Db::open(&url, &settings(max_connections)).await.unwrap())
    }

    /// A statement that settled gives its connection straight back: idle again before
    /// anything else runs, so no round trip was made to check it.
    #[tokio::test]
    async fn a_settled_connection_is_idle_again_at_once() {
        let Some(db) = open(2).await else {
            return;
        };
        for _ in 0..3 {
            assert_eq!(answers(&db).await, 7);
            assert_eq!(db.pool_use(), (1, 1));
        }
        let mut conn = db.acquire().await.unwrap();
        sql("SELECT 1").execute(&mut conn).await.unwrap();
        assert_eq!(db.pool_use(), (1, 0));
        drop(conn);
        assert_eq!(db.pool_use(), (1, 1));
        // a statement that failed settled too
        let failed = sql("SELECT * FROM no_such_table").execute(&db).await;
        assert!(matches!(failed, Err(DbFailure::Internal(_))), "{failed:?}");
        assert_eq!(db.pool_use(), (1, 1));
        assert_eq!(answers(&db).await, 7);
    }

    /// A transaction dropped without a commit releases its row locks at once (its
    /// connection is flushed off the request path), not when the connection is next used.
    #[tokio::test]
    async fn a_dropped_transaction_releases_its_locks_at_once() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let db = Db::open(&url, &settings(2)).await.unwrap();
        let other = Db::open(&url, &settings(1)).await.unwrap();
        sql("CREATE TABLE t (n BIGINT PRIMARY KEY)")
            .execute(&db)
            .await
            .unwrap();
        sql("INSERT INTO t VALUES (1)").execute(&db).await.unwrap();
        let mut tx = db.begin_write().await.unwrap();
        sql("SELECT n FROM t WHERE n = 1 FOR UPDATE")
            .execute(&mut tx)
            .await
            .unwrap();
        drop(tx);
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let mut probe = other.begin_write().await.unwrap();
            let locked = sql("SELECT n FROM t WHERE n = 1 FOR UPDATE NOWAIT")
                .execute(&mut probe)
                .await;
            probe.rollback().await.unwrap();
            match locked {
                Ok(_) => break,
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("the dropped transaction still holds its lock: {e:?}"),
            }
        }
        // and its connection is back, usable
        assert_eq!(answers(&db).await, 7);
        assert!(db.pool_use().0 <= 2);
    }

    /// A statement whose caller gave up halfway (a request dropped) leaves its connection
    /// unsettled: the next caller gets it flushed, with the right answer.
    #[tokio::test]
    async fn an_interrupted_statement_is_flushed_before_reuse() {
        let Some(db) = open(1).await else {
            return;
        };
        let given_up = tokio::time::timeout(
            Duration::from_millis(50),
            sql("SELECT pg_sleep(0.3)").execute(&db),
        )
        .await;
        assert!(given_up.is_err(), "the sleep finished within 50 ms");
        // the connection comes back once the sleep is over (within the acquire timeout)
        assert_eq!(answers(&db).await, 7);
        assert_eq!(db.pool_use(), (1, 1));
    }

    /// A burst of callers never opens more connections than the bound; each is served.
    #[tokio::test]
    async fn a_burst_never_opens_more_than_the_bound() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let patient = PoolSettings {
            acquire_timeout: Duration::from_secs(10),
            ..PoolSettings::for_tests_of(3)
        };
        let db = Db::open(&url, &patient).await.unwrap();
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..24 {
            let db = db.clone();
            calls.spawn(async move {
                sql("SELECT pg_sleep(0.02)").execute(&db).await.unwrap();
                db.pool_use().0
            });
        }
        let seen = calls.join_all().await;
        assert_eq!(seen.len(), 24);
        assert!(seen.iter().all(|open| *open <= 3), "{seen:?}");
        let (open, idle) = db.pool_use();
        assert!(open <= 3 && idle <= 3, "{open} {idle}");
    }

    /// With every connection lent, an acquire gives up after the acquire timeout.
    #[tokio::test]
    async fn an_acquire_waits_at_most_the_acquire_timeout() {
        let Some(db) = open(1).await else {
            return;
        };
        let held = db.acquire().await.unwrap();
        let started = Instant::now();
        let message = unavailable(db.acquire().await, "a second acquire");
        assert!(message.contains("pool timed out"), "{message}");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(350) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
        drop(held);
        assert_eq!(answers(&db).await, 7);
    }

    async fn pid(conn: &mut super::Lent) -> i32 {
        use sqlx::Row as _;
        sqlx::query("SELECT pg_backend_pid() AS pid")
            .fetch_one(&mut **conn)
            .await
            .unwrap()
            .get("pid")
    }

    /// Connections unused for the idle timeout are closed when another comes back, and one
    /// past its lifetime is replaced instead of lent.
    #[tokio::test]
    async fn idle_and_old_connections_are_closed() {
        let Some(url) = testkit::db::fresh_postgres().await else {
            return;
        };
        let connect: sqlx::postgres::PgConnectOptions = url.parse().unwrap();
        let lifetimes = super::Lifetimes {
            max_lifetime: Duration::from_millis(800),
            idle_timeout: Duration::from_millis(300),
        };
        let second = Duration::from_secs(1);
        let pool = super::PgPool::open_with(connect, 4, second, second, lifetimes)
            .await
            .unwrap();
        let (a, b) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
        drop(a);
        drop(b);
        assert_eq!(pool.usage(), (2, 2));
        tokio::time::sleep(Duration::from_millis(450)).await;
        // both were idle past the timeout: the acquire closes them and opens another
        let mut c = pool.acquire().await.unwrap();
        let first = pid(&mut c).await;
        drop(c);
        assert_eq!(pool.usage(), (1, 1));
        // used every 50 ms it is never idle that long, but past its lifetime it is closed
        // when it comes back, and the next acquire opens another
        let started = Instant::now();
        let mut seen = vec![first];
        while started.elapsed() < Duration::from_millis(1300) {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut conn = pool.acquire().await.unwrap();
            seen.push(pid(&mut conn).await);
        }
        assert_eq!(seen[1], first, "reused while young");
        assert_ne!(seen.last(), Some(&first), "replaced once old: {seen:?}");
        assert!(pool.usage().0 <= 2, "{:?}", pool.usage());
    }

    /// Closing waits for the lent connections, closes every one, and refuses acquires after.
    #[tokio::test]
    async fn close_waits_for_lent_connections_then_refuses() {
        let Some(db) = open(2).await else {
            return;
        };
        let held = db.acquire().await.unwrap();
        let closing = tokio::spawn({
            let db = db.clone();
            async move { db.close().await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !closing.is_finished(),
            "close did not wait for the lent connection"
        );
        drop(held);
        tokio::time::timeout(Duration::from_secs(3), closing)
            .await
            .expect("close finished")
            .unwrap();
        assert_eq!(db.pool_use(), (0, 0));
        let message = unavailable(db.acquire().await, "an acquire after close");
        assert!(message.contains("closed"), "{message}");
    }
}
