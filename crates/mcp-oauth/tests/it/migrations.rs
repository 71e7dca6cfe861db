//! The crate's migrations share sqlx's `_sqlx_migrations` table with a product's own: its
//! versions live from 1_000_001 on and its migrator ignores rows it does not know.

use std::borrow::Cow;

use mcp_oauth::SqlStore;
use mcp_oauth::store::{MIGRATION_VERSION_BASE, Upkeep};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use testkit::db::{fresh_postgres, fresh_sqlite_url};

/// A product's migrator: versions 1 and 2, ignoring the crate's rows as it must.
fn product_migrator() -> Migrator {
    let migration = |version: i64, sql: &'static str| {
        Migration::new(
            version,
            Cow::Borrowed("product"),
            MigrationType::Simple,
            Cow::Borrowed(sql),
            false,
        )
    };
    Migrator {
        migrations: Cow::Owned(vec![
            migration(1, "CREATE TABLE product_a (id TEXT PRIMARY KEY)"),
            migration(2, "CREATE TABLE product_b (id TEXT PRIMARY KEY)"),
        ]),
        ignore_missing: true,
        ..Migrator::DEFAULT
    }
}

#[tokio::test]
async fn shares_the_migrations_table_with_a_product_on_sqlite() {
    let (_dir, url) = fresh_sqlite_url();
    let pool = sqlx::SqlitePool::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    product_migrator().run(&pool).await.unwrap();
    let store = SqlStore::connect(&url, &SqlStore::DEFAULT_POOL)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store.migrate().await.unwrap();
    product_migrator().run(&pool).await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        versions,
        [1, 2, MIGRATION_VERSION_BASE + 1, MIGRATION_VERSION_BASE + 2]
    );
}

#[tokio::test]
async fn shares_the_migrations_table_with_a_product_on_postgres() {
    let Some(url) = fresh_postgres().await else {
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let store = SqlStore::connect(&url, &SqlStore::DEFAULT_POOL)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    product_migrator().run(&pool).await.unwrap();
    store.migrate().await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        versions,
        [1, 2, MIGRATION_VERSION_BASE + 1, MIGRATION_VERSION_BASE + 2]
    );
}
