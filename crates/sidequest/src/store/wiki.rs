//! The campaign wiki area (private to its owner): pages, their history, and the write guarded
//! by the expected version — the trait and its SQL. The page rules (slugs, search) are the
//! domain's ([`crate::domain::wiki`]).

use async_trait::async_trait;
use sqlkit::{Cols, Row, Tx, sql};
use uuid::Uuid;

use super::sql::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};

/// The owner's wiki pages and their versions.
#[async_trait]
pub trait Wiki: Send + Sync {
    /// The owner's pages, by slug.
    async fn wiki_pages(&self, owner_id: Uuid) -> Result<Vec<WikiPage>, StoreError>;
    async fn wiki_page(&self, owner_id: Uuid, slug: &str) -> Result<Option<WikiPage>, StoreError>;
    /// Writes a page if it is at `expected_version` (0: must not exist) as the next version,
    /// and adds that version to the history; one transaction. Of concurrent writers at the
    /// same version one writes and the others get `Conflict`.
    async fn write_wiki_page(
        &self,
        owner_id: Uuid,
        write: &WikiWrite,
        now: Millis,
    ) -> Result<WikiWriteOutcome, StoreError>;
    /// Every version of a page, the current one included, newest first.
    async fn wiki_history(&self, owner_id: Uuid, slug: &str) -> Result<Vec<WikiPage>, StoreError>;
}

const WIKI_COLUMNS: &str = "slug, title, body, version, updated_at";

/// The columns of [`WIKI_COLUMNS`].
fn wiki_page(r: &Row) -> Result<WikiPage, StoreError> {
    Ok(WikiPage {
        slug: r.text("slug")?,
        title: r.text("title")?,
        body: r.text("body")?,
        version: r.int("version")?,
        updated_at: r.int("updated_at")?,
    })
}

#[async_trait]
impl Wiki for SqlStore {
    async fn wiki_pages(&self, owner_id: Uuid) -> Result<Vec<WikiPage>, StoreError> {
        let rows = sql(format!(
            "SELECT {WIKI_COLUMNS} FROM wiki_pages WHERE owner_id = $1 ORDER BY slug"
        ))
        .bind(owner_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(wiki_page).collect()
    }

    async fn wiki_page(&self, owner_id: Uuid, slug: &str) -> Result<Option<WikiPage>, StoreError> {
        let row = sql(format!(
            "SELECT {WIKI_COLUMNS} FROM wiki_pages WHERE owner_id = $1 AND slug = $2"
        ))
        .bind(owner_id)
        .bind(slug)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(wiki_page).transpose()
    }

    async fn write_wiki_page(
        &self,
        owner_id: Uuid,
        write: &WikiWrite,
        now: Millis,
    ) -> Result<WikiWriteOutcome, StoreError> {
        let mut tx = self.db.begin_write().await?;
        // On an error the transaction is dropped, which rolls it back.
        let outcome = write_wiki_locked(&mut tx, owner_id, write, now).await?;
        if matches!(outcome, WikiWriteOutcome::Written(_)) {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        Ok(outcome)
    }

    async fn wiki_history(&self, owner_id: Uuid, slug: &str) -> Result<Vec<WikiPage>, StoreError> {
        let rows = sql(format!(
            "SELECT {WIKI_COLUMNS} FROM wiki_page_versions WHERE owner_id = $1 AND slug = $2 \
             ORDER BY version DESC"
        ))
        .bind(owner_id)
        .bind(slug)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(wiki_page).collect()
    }
}

/// The page's current version, if it exists; `lock` is appended to the `SELECT` (a row lock,
/// or nothing).
async fn current_version(
    tx: &mut Tx,
    owner_id: Uuid,
    slug: &str,
    lock: &str,
) -> Result<Option<i64>, StoreError> {
    sql(format!(
        "SELECT version FROM wiki_pages WHERE owner_id = $1 AND slug = $2{lock}"
    ))
    .bind(owner_id)
    .bind(slug)
    .fetch_optional(&mut *tx)
    .await?
    .map(|r| r.int("version"))
    .transpose()
}

/// The body of [`Wiki::write_wiki_page`] inside the write transaction; the caller commits a
/// `Written` outcome and rolls back anything else.
async fn write_wiki_locked(
    tx: &mut Tx,
    owner_id: Uuid,
    write: &WikiWrite,
    now: Millis,
) -> Result<WikiWriteOutcome, StoreError> {
    let lock = tx.backend().row_lock();
    let current = current_version(tx, owner_id, &write.slug, lock)
        .await?
        .unwrap_or(0);
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
        // No row to lock yet: a concurrent creator is stopped by the primary key. PostgreSQL
        // waits for it to commit, then inserts nothing.
        sql(
            "INSERT INTO wiki_pages (owner_id, slug, title, body, version, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (owner_id, slug) DO NOTHING",
        )
        .bind(owner_id)
        .bind(&page.slug)
        .bind(&page.title)
        .bind(&page.body)
        .bind(page.version)
        .bind(page.updated_at)
        .execute(&mut *tx)
        .await?
    } else {
        sql(
            "UPDATE wiki_pages SET title = $1, body = $2, version = $3, updated_at = $4 \
             WHERE owner_id = $5 AND slug = $6 AND version = $7",
        )
        .bind(&page.title)
        .bind(&page.body)
        .bind(page.version)
        .bind(page.updated_at)
        .bind(owner_id)
        .bind(&page.slug)
        .bind(current)
        .execute(&mut *tx)
        .await?
    };
    if written.rows_affected() != 1 {
        // Another writer got there first (a new statement, unlocked, sees its commit).
        let now_at = current_version(tx, owner_id, &write.slug, "").await?;
        return Ok(WikiWriteOutcome::Conflict {
            current: now_at.unwrap_or(current + 1),
        });
    }
    sql(
        "INSERT INTO wiki_page_versions (owner_id, slug, version, title, body, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(owner_id)
    .bind(&page.slug)
    .bind(page.version)
    .bind(&page.title)
    .bind(&page.body)
    .bind(page.updated_at)
    .execute(&mut *tx)
    .await?;
    Ok(WikiWriteOutcome::Written(page))
}
