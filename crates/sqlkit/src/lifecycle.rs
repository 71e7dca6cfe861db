//! A store's own upkeep — its schema, whether the database answers, the pool's use — written
//! once for every store over a [`Db`]: a store states its migrations ([`Schema`]) and gets
//! [`Lifecycle`] from the one implementation here; and opening a store ready for use
//! ([`open_migrated`]: connected, then migrated), which `serve` and every one-shot command do
//! first. The scripts and what a store fills after them stay in the product.

use async_trait::async_trait;

use crate::{Db, DbFailure, Embedded};

/// What a store over one [`Db`] declares about its schema; [`Lifecycle`] follows from it.
pub trait Schema: Send + Sync + 'static {
    /// The scripts on SQLite.
    const SQLITE: Embedded;
    /// The scripts on PostgreSQL.
    const POSTGRES: Embedded;
    /// Whether versions the scripts do not list are ignored: the database (and its
    /// `_sqlx_migrations` table) is shared with another component's migrations.
    const SHARES_DATABASE: bool;

    /// The database the store runs its statements on.
    fn db(&self) -> &Db;

    /// What runs once the scripts are applied (a one-off fill they leave pending); nothing
    /// by default.
    fn after_migrate(&self) -> impl Future<Output = Result<(), DbFailure>> + Send {
        async { Ok(()) }
    }
}

/// Connections of a pool, for its gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// Open connections.
    pub size: u32,
    /// Of those, idle.
    pub idle: u32,
}

impl PoolUse {
    /// What `db`'s pool holds now.
    pub fn of(db: &Db) -> Self {
        let (size, idle) = db.pool_use();
        Self {
            size,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
        }
    }
}

/// The store's own upkeep: its schema, whether the database answers, the pool gauges.
#[async_trait]
pub trait Lifecycle: Send + Sync {
    /// Applies the backend's migrations (idempotent), then what the store fills after them.
    async fn migrate(&self) -> Result<(), DbFailure>;
    /// One round trip to the database, for readiness.
    async fn ping(&self) -> Result<(), DbFailure>;
    /// Open and idle connections of the pool, for the metrics.
    fn pool_use(&self) -> PoolUse;
}

#[async_trait]
impl<T: Schema> Lifecycle for T {
    async fn migrate(&self) -> Result<(), DbFailure> {
        self.db()
            .migrate(T::SQLITE, T::POSTGRES, T::SHARES_DATABASE)
            .await?;
        self.after_migrate().await
    }

    async fn ping(&self) -> Result<(), DbFailure> {
        self.db().ping().await
    }

    fn pool_use(&self) -> PoolUse {
        PoolUse::of(self.db())
    }
}

/// Which step of [`open_migrated`] failed. Its text names the step; the [`DbFailure`] is its
/// source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The store could not connect.
    #[error("connecting to the database")]
    Connect(#[source] DbFailure),
    /// The store connected but its migrations (or what it fills after them) failed.
    #[error("migrating the database")]
    Migrate(#[source] DbFailure),
}

impl From<OpenError> for DbFailure {
    fn from(err: OpenError) -> Self {
        match err {
            OpenError::Connect(e) | OpenError::Migrate(e) => e,
        }
    }
}

/// The store `connect` opens (a product's own constructor, e.g. its `store::connect(url,
/// pool)`), migrated ([`Lifecycle::migrate`]): what a server does before it binds and a
/// one-shot command before it reads.
pub async fn open_migrated<S>(
    connect: impl Future<Output = Result<S, DbFailure>>,
) -> Result<S, OpenError>
where
    S: std::ops::Deref,
    S::Target: Lifecycle,
{
    let store = connect.await.map_err(OpenError::Connect)?;
    store.migrate().await.map_err(OpenError::Migrate)?;
    Ok(store)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::{Cols, PoolSettings, sql};

    const SCRIPTS: Embedded = Embedded(&[(1, "a table", "CREATE TABLE t (n BIGINT NOT NULL)")]);

    struct Store {
        db: Db,
        fills: AtomicU32,
    }

    impl Schema for Store {
        const SQLITE: Embedded = SCRIPTS;
        const POSTGRES: Embedded = SCRIPTS;
        const SHARES_DATABASE: bool = false;

        fn db(&self) -> &Db {
            &self.db
        }

        async fn after_migrate(&self) -> Result<(), DbFailure> {
            self.fills.fetch_add(1, Ordering::SeqCst);
            sql("INSERT INTO t (n) VALUES (7)")
                .execute(&self.db)
                .await?;
            Ok(())
        }
    }

    async fn migrate_applies_the_scripts_then_the_fill_and_ping_and_pool_use_answer(url: &str) {
        let settings = PoolSettings::for_tests();
        let store = Store {
            db: Db::open(url, &settings).await.unwrap(),
            fills: AtomicU32::new(0),
        };
        let dyn_store: &dyn Lifecycle = &store;
        dyn_store.migrate().await.unwrap();
        dyn_store.migrate().await.unwrap();
        assert_eq!(store.fills.load(Ordering::SeqCst), 2);
        let rows = sql("SELECT n FROM t").fetch_all(&store.db).await.unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].int("n").unwrap(), 7);
        dyn_store.ping().await.unwrap();
        assert_eq!(dyn_store.pool_use().size, 1);
    }

    testkit::on_both_backends!(
        migrate_applies_the_scripts_then_the_fill_and_ping_and_pool_use_answer
    );

    /// A store whose one script is not SQL.
    #[derive(Debug)]
    struct Broken(Db);

    impl Schema for Broken {
        const SQLITE: Embedded = Embedded(&[(1, "broken", "NOT SQL")]);
        const POSTGRES: Embedded = Broken::SQLITE;
        const SHARES_DATABASE: bool = false;

        fn db(&self) -> &Db {
            &self.0
        }
    }

    #[tokio::test]
    async fn open_migrated_names_the_step_that_failed() {
        let refused = open_migrated(async {
            Err::<Box<Broken>, _>(DbFailure::Unavailable("no route".into()))
        })
        .await
        .unwrap_err();
        assert_eq!(refused.to_string(), "connecting to the database");
        assert!(matches!(
            DbFailure::from(refused),
            DbFailure::Unavailable(m) if m == "no route"
        ));
        let settings = PoolSettings::for_tests();
        let db = Db::open("sqlite::memory:", &settings).await.unwrap();
        let broken = open_migrated(async { Ok(Box::new(Broken(db))) })
            .await
            .unwrap_err();
        assert_eq!(broken.to_string(), "migrating the database");
        assert!(matches!(broken, OpenError::Migrate(_)));
    }
}
