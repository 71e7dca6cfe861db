//! The polls area: the upstream record's bookkeeping: append-only fetch receipts, raw
//! payloads kept for two hours, the latest card catalogue and the claims that let one
//! instance take each scheduled read. [`PollStore`] and its SQL; what to poll when is the
//! recorder's.

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::rows::{self, RAW_COLUMNS, RECEIPT_COLUMNS};
use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::{PollClaim, RawPayload, Receipt, StoredCatalogue};

/// Receipts, raw payloads, the card catalogue and poll claims.
#[async_trait]
pub trait PollStore: Send + Sync + 'static {
    /// Appends a fetch's receipt and, for a 200, keeps its raw JSON (replacing an identical
    /// payload's older copy); one transaction.
    async fn record_fetch(
        &self,
        receipt: &Receipt,
        raw: Option<&RawPayload>,
    ) -> Result<(), StoreError>;
    /// The latest receipts of an endpoint template, newest first.
    async fn receipts(&self, endpoint: &str, limit: i64) -> Result<Vec<Receipt>, StoreError>;
    /// A raw payload still within its two hours.
    async fn raw_payload(&self, sha256: &str) -> Result<Option<RawPayload>, StoreError>;
    /// Drops raw payloads last fetched before `before`; returns how many.
    async fn purge_raw(&self, before: Millis) -> Result<u64, StoreError>;
    /// Replaces the catalogue unless the stored one was observed later (instances racing).
    async fn put_cards_catalogue(&self, catalogue: &StoredCatalogue) -> Result<(), StoreError>;
    /// The latest catalogue; `None` before the first read.
    async fn cards_catalogue(&self) -> Result<Option<StoredCatalogue>, StoreError>;
    /// Claims `claim.slot` of `claim.job` for `claim.owner`: true when the job's last slot is
    /// older, or is this slot unfinished and either this owner's or lapsed. One statement, so
    /// two instances never both win.
    async fn claim_poll(&self, claim: &PollClaim) -> Result<bool, StoreError>;
    /// Runs `update` on the shared upstream budget's stored state (`None` before the first)
    /// with its row locked, and stores what it returns: every instance's check-and-spend is
    /// one transaction on one row.
    async fn update_budget(
        &self,
        at: Millis,
        update: &mut (dyn for<'s> FnMut(Option<&'s str>) -> String + Send),
    ) -> Result<(), StoreError>;
    /// Marks `owner`'s claim on `slot` done, so nobody reads that slot again.
    async fn finish_poll(
        &self,
        job: &str,
        slot: &str,
        owner: &str,
        at: Millis,
    ) -> Result<(), StoreError>;
}

#[async_trait]
impl PollStore for SqlStore {
    async fn update_budget(
        &self,
        at: Millis,
        update: &mut (dyn for<'s> FnMut(Option<&'s str>) -> String + Send),
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        // The row exists before it is locked, so two first updates cannot both insert.
        sql(
            "INSERT INTO upstream_budget (id, state, updated_at) VALUES (1, '', $1) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(at)
        .execute(&mut tx)
        .await?;
        let lock = tx.backend().row_lock();
        let stored = sql(format!(
            "SELECT state FROM upstream_budget WHERE id = 1{lock}"
        ))
        .fetch_one(&mut tx)
        .await?
        .text("state")?;
        let state = update(Some(stored.as_str()).filter(|s| !s.is_empty()));
        sql("UPDATE upstream_budget SET state = $1, updated_at = $2 WHERE id = 1")
            .bind(state)
            .bind(at)
            .execute(&mut tx)
            .await?;
        tx.commit().await
    }

    async fn record_fetch(
        &self,
        receipt: &Receipt,
        raw: Option<&RawPayload>,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        sql(format!(
            "INSERT INTO upstream_receipts ({RECEIPT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
        ))
        .bind(&receipt.endpoint)
        .bind(receipt.subject.as_deref())
        .bind(receipt.fetched_at)
        .bind(receipt.status)
        .bind(receipt.payload_sha256.as_deref())
        .bind(&receipt.admission)
        .execute(&mut tx)
        .await?;
        if let Some(raw) = raw {
            sql(format!(
                "INSERT INTO upstream_raw ({RAW_COLUMNS}) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (payload_sha256) DO UPDATE SET \
                 endpoint = excluded.endpoint, subject = excluded.subject, \
                 fetched_at = excluded.fetched_at \
                 WHERE upstream_raw.fetched_at < excluded.fetched_at"
            ))
            .bind(&raw.payload_sha256)
            .bind(&raw.endpoint)
            .bind(raw.subject.as_deref())
            .bind(&raw.body)
            .bind(raw.fetched_at)
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await
    }

    async fn receipts(&self, endpoint: &str, limit: i64) -> Result<Vec<Receipt>, StoreError> {
        sql(format!(
            "SELECT {RECEIPT_COLUMNS} FROM upstream_receipts WHERE endpoint = $1 \
             ORDER BY id DESC LIMIT $2"
        ))
        .bind(endpoint)
        .bind(limit)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(rows::receipt)
        .collect()
    }

    async fn raw_payload(&self, sha256: &str) -> Result<Option<RawPayload>, StoreError> {
        sql(format!(
            "SELECT {RAW_COLUMNS} FROM upstream_raw WHERE payload_sha256 = $1"
        ))
        .bind(sha256)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::raw)
        .transpose()
    }

    async fn purge_raw(&self, before: Millis) -> Result<u64, StoreError> {
        let done = sql("DELETE FROM upstream_raw WHERE fetched_at < $1")
            .bind(before)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected())
    }

    async fn put_cards_catalogue(&self, c: &StoredCatalogue) -> Result<(), StoreError> {
        sql(
            "INSERT INTO cards_catalogue (id, catalogue, payload_sha256, observed_at) \
             VALUES (1, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET \
             catalogue = excluded.catalogue, \
             payload_sha256 = excluded.payload_sha256, \
             observed_at = excluded.observed_at \
             WHERE cards_catalogue.observed_at <= excluded.observed_at",
        )
        .bind(rows::json_text(&c.catalogue)?)
        .bind(&c.payload_sha256)
        .bind(c.observed_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn cards_catalogue(&self) -> Result<Option<StoredCatalogue>, StoreError> {
        sql("SELECT catalogue, payload_sha256, observed_at FROM cards_catalogue WHERE id = 1")
            .fetch_optional(&self.db)
            .await?
            .as_ref()
            .map(rows::catalogue)
            .transpose()
    }

    async fn claim_poll(&self, c: &PollClaim) -> Result<bool, StoreError> {
        // The guarded upsert decides in one statement (PostgreSQL re-checks the WHERE on the
        // locked row), so two instances never both claim a slot.
        let won = sql(
            "INSERT INTO poll_claims (job, slot, owner, claimed_at, done_at) \
             VALUES ($1, $2, $3, $4, NULL) \
             ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, \
             owner = excluded.owner, claimed_at = excluded.claimed_at, \
             done_at = NULL \
             WHERE poll_claims.slot < excluded.slot \
             OR (poll_claims.slot = excluded.slot AND poll_claims.done_at IS NULL \
             AND (poll_claims.owner = excluded.owner \
             OR poll_claims.claimed_at <= $5)) \
             RETURNING job",
        )
        .bind(&c.job)
        .bind(&c.slot)
        .bind(&c.owner)
        .bind(c.at)
        .bind(c.lapsed_before)
        .fetch_optional(&self.db)
        .await?;
        Ok(won.is_some())
    }

    async fn finish_poll(
        &self,
        job: &str,
        slot: &str,
        owner: &str,
        at: Millis,
    ) -> Result<(), StoreError> {
        sql("UPDATE poll_claims SET done_at = $1 WHERE job = $2 AND slot = $3 AND owner = $4")
            .bind(at)
            .bind(job)
            .bind(slot)
            .bind(owner)
            .execute(&self.db)
            .await?;
        Ok(())
    }
}
