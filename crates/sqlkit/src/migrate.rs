//! Migration scripts compiled into the binary and the sqlx migrator over them. The scripts
//! themselves, and when to run them, belong to each product's store.

use std::borrow::Cow;
use std::pin::Pin;

use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::DbFailure;

type MigrationsFuture =
    Pin<Box<dyn Future<Output = Result<Vec<Migration>, sqlx::error::BoxDynError>> + Send>>;

/// Embedded migration scripts as `(version, description, sql)`, fed to sqlx's migrator (its
/// `migrate!` macro needs the `macros` feature, which we leave off for build time). Each script
/// runs in its own transaction.
#[derive(Debug, Clone, Copy)]
pub struct Embedded(pub &'static [(i64, &'static str, &'static str)]);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> MigrationsFuture {
        let migrations = self
            .0
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    false,
                )
            })
            .collect();
        Box::pin(async move { Ok(migrations) })
    }
}

impl Embedded {
    /// The migrator over these scripts. With `ignore_missing`, versions applied to the database
    /// that these scripts do not list (another component's, sharing the database and its
    /// `_sqlx_migrations` table) are ignored instead of failing the run.
    pub async fn migrator(self, ignore_missing: bool) -> Result<Migrator, DbFailure> {
        let mut migrator = Migrator::new(self).await?;
        migrator.set_ignore_missing(ignore_missing);
        Ok(migrator)
    }
}

#[cfg(test)]
mod tests {

    use sqlx::SqlitePool;
    use sqlx::migrate::MigrateError;

    use super::*;
    use crate::{PoolSettings, open_sqlite};

    const MINE: Embedded = Embedded(&[
        (
            1,
            "notes",
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
        ),
        (2, "tags", "ALTER TABLE notes ADD COLUMN tag TEXT"),
    ]);
    /// Another component's scripts in the same database, numbered apart.
    const THEIRS: Embedded = Embedded(&[(
        1_000_001,
        "clients",
        "CREATE TABLE clients (id TEXT PRIMARY KEY)",
    )]);

    async fn memory() -> SqlitePool {
        let settings = PoolSettings::for_tests();
        open_sqlite("sqlite::memory:", &settings).await.unwrap()
    }

    /// Runs `source`'s migrator on `pool`.
    async fn run(
        source: Embedded,
        ignore_missing: bool,
        pool: &SqlitePool,
    ) -> Result<(), MigrateError> {
        source
            .migrator(ignore_missing)
            .await
            .unwrap()
            .run(pool)
            .await
    }

    async fn applied(pool: &SqlitePool) -> Vec<(i64, String)> {
        sqlx::query_as("SELECT version, description FROM _sqlx_migrations ORDER BY version")
            .fetch_all(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn resolves_the_scripts_in_order_with_their_checksums() {
        let migrations = MINE.resolve().await.unwrap();
        let listed: Vec<_> = migrations
            .iter()
            .map(|m| (m.version, m.description.as_ref(), m.sql.as_ref()))
            .collect();
        assert_eq!(listed, MINE.0.to_vec());
        assert!(
            migrations
                .iter()
                .all(|m| !m.no_tx && m.checksum.len() == 48)
        );
        assert_ne!(migrations[0].checksum, migrations[1].checksum);
    }

    #[tokio::test]
    async fn runs_every_script_once() {
        let pool = memory().await;
        run(MINE, false, &pool).await.unwrap();
        run(MINE, false, &pool).await.unwrap();
        assert_eq!(
            applied(&pool).await,
            [(1, "notes".to_owned()), (2, "tags".to_owned())]
        );
        sqlx::query("INSERT INTO notes (body, tag) VALUES ('hello', 'x')")
            .execute(&pool)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn another_components_versions_fail_the_run_unless_ignored() {
        let pool = memory().await;
        run(THEIRS, true, &pool).await.unwrap();

        match run(MINE, false, &pool).await.map_err(DbFailure::from) {
            Err(DbFailure::Internal(message)) => {
                assert!(message.starts_with("migration failed: "), "{message}")
            }
            other => panic!("expected a missing-version failure, got {other:?}"),
        }

        run(MINE, true, &pool).await.unwrap();
        let versions: Vec<i64> = applied(&pool).await.into_iter().map(|(v, _)| v).collect();
        assert_eq!(versions, [1, 2, 1_000_001]);
    }

    #[tokio::test]
    async fn a_failing_script_is_internal_and_leaves_nothing_behind() {
        const DUPLICATE: Embedded = Embedded(&[(
            1,
            "seed",
            "CREATE TABLE names (name TEXT UNIQUE);
             INSERT INTO names VALUES ('a');
             INSERT INTO names VALUES ('a');",
        )]);
        let pool = memory().await;
        let err = run(DUPLICATE, false, &pool).await.unwrap_err();
        match DbFailure::from(err) {
            DbFailure::Internal(message) => assert!(
                message.starts_with("migration failed: while executing migration 1")
                    && message.contains("UNIQUE"),
                "{message}"
            ),
            other => panic!("expected Internal, got {other:?}"),
        }
        // The script ran in a transaction: nothing of it is left.
        let tables: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'names'")
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(tables, 0);
    }

    #[tokio::test]
    async fn an_unreachable_database_while_migrating_is_unavailable() {
        let pool = memory().await;
        pool.close().await;
        let err = run(MINE, false, &pool).await.unwrap_err();
        assert!(matches!(err, MigrateError::Execute(_)), "{err:?}");
        assert!(matches!(DbFailure::from(err), DbFailure::Unavailable(_)));
    }
}
