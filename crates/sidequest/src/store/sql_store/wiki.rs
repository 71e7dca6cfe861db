//! The campaign wiki part of the SQL store: pages, their history, and the write guarded by
//! the expected version.

/// Emits `mod wiki` into [`sql_store!`](super::sql_store!)'s expansion: one function per
/// `Store` method of this area, with the store as its first argument.
macro_rules! sql_wiki {
    ($store:ident, $conn:ty, lock = $lock:literal) => {
        mod wiki {
            use uuid::Uuid;

            use super::super::$store;
            use crate::domain::Millis;
            use crate::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};
            use crate::store::{StoreError, sql};

            pub(super) async fn wiki_pages(
                store: &$store,
                owner_id: Uuid,
            ) -> Result<Vec<WikiPage>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::wiki_columns!(),
                    " FROM wiki_pages WHERE owner_id = $1 ORDER BY slug"
                ))
                .bind(owner_id.to_string())
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::wiki_page).collect()
            }

            pub(super) async fn wiki_page(
                store: &$store,
                owner_id: Uuid,
                slug: &str,
            ) -> Result<Option<WikiPage>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::wiki_columns!(),
                    " FROM wiki_pages WHERE owner_id = $1 AND slug = $2"
                ))
                .bind(owner_id.to_string())
                .bind(slug)
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::wiki_page).transpose()
            }

            pub(super) async fn write_wiki_page(
                store: &$store,
                owner_id: Uuid,
                write: &WikiWrite,
                now: Millis,
            ) -> Result<WikiWriteOutcome, StoreError> {
                let mut tx = store.begin_write().await?;
                // On an error the transaction is dropped, which rolls it back.
                let outcome =
                    write_wiki_locked(&mut tx, &owner_id.to_string(), write, now).await?;
                if matches!(outcome, WikiWriteOutcome::Written(_)) {
                    tx.commit().await?;
                } else {
                    tx.rollback().await?;
                }
                Ok(outcome)
            }

            pub(super) async fn wiki_history(
                store: &$store,
                owner_id: Uuid,
                slug: &str,
            ) -> Result<Vec<WikiPage>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::wiki_columns!(),
                    " FROM wiki_page_versions WHERE owner_id = $1 AND slug = $2 \
                     ORDER BY version DESC"
                ))
                .bind(owner_id.to_string())
                .bind(slug)
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::wiki_page).collect()
            }

            /// The body of [`write_wiki_page`] inside the write transaction; the caller
            /// commits a `Written` outcome and rolls back anything else.
            async fn write_wiki_locked(
                conn: &mut $conn,
                owner_id: &str,
                write: &WikiWrite,
                now: Millis,
            ) -> Result<WikiWriteOutcome, StoreError> {
                let current: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT version FROM wiki_pages WHERE owner_id = $1 AND slug = $2",
                    $lock
                ))
                .bind(owner_id)
                .bind(&write.slug)
                .fetch_optional(&mut *conn)
                .await?;
                let current = current.unwrap_or(0);
                if current != write.expected_version {
                    return Ok(WikiWriteOutcome::Conflict { current });
                }
                let page = WikiPage {
                    slug: write.slug.clone(),
                    title: write.title.clone(),
                    body: write.body.clone(),
                    version: current + 1,
                    updated_at: now,
                };
                let written = if current == 0 {
                    // No row to lock yet: a concurrent creator is stopped by the primary key.
                    // PostgreSQL waits for it to commit, then inserts nothing.
                    sqlx::query(
                        "INSERT INTO wiki_pages (owner_id, slug, title, body, version, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (owner_id, slug) DO NOTHING",
                    )
                    .bind(owner_id)
                    .bind(&page.slug)
                    .bind(&page.title)
                    .bind(&page.body)
                    .bind(page.version)
                    .bind(page.updated_at)
                    .execute(&mut *conn)
                    .await?
                } else {
                    sqlx::query(
                        "UPDATE wiki_pages SET title = $1, body = $2, version = $3, \
                         updated_at = $4 WHERE owner_id = $5 AND slug = $6 AND version = $7",
                    )
                    .bind(&page.title)
                    .bind(&page.body)
                    .bind(page.version)
                    .bind(page.updated_at)
                    .bind(owner_id)
                    .bind(&page.slug)
                    .bind(current)
                    .execute(&mut *conn)
                    .await?
                };
                if written.rows_affected() != 1 {
                    // Another writer got there first (a new statement sees its commit).
                    let now_at: Option<i64> = sqlx::query_scalar(
                        "SELECT version FROM wiki_pages WHERE owner_id = $1 AND slug = $2",
                    )
                    .bind(owner_id)
                    .bind(&write.slug)
                    .fetch_optional(&mut *conn)
                    .await?;
                    return Ok(WikiWriteOutcome::Conflict {
                        current: now_at.unwrap_or(current + 1),
                    });
                }
                sqlx::query(
                    "INSERT INTO wiki_page_versions (owner_id, slug, version, title, body, \
                     updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(owner_id)
                .bind(&page.slug)
                .bind(page.version)
                .bind(&page.title)
                .bind(&page.body)
                .bind(page.updated_at)
                .execute(&mut *conn)
                .await?;
                Ok(WikiWriteOutcome::Written(page))
            }
        }
    };
}
pub(crate) use sql_wiki;
