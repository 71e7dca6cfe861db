//! [`Flows`] in SQL: `oauth_rate_counters`, `oauth_pending`, `oauth_email_codes` and
//! `oauth_sessions`.

use async_trait::async_trait;
use sqlkit::sql;

use super::SqlStore;
use crate::store::areas::{Flows, StoreError};
use crate::store::records::{EmailCodeRecord, Millis, PendingRecord, SessionRecord};
use crate::store::rows;

#[async_trait]
impl Flows for SqlStore {
    async fn take_rate(
        &self,
        bucket: &str,
        window_start: Millis,
        limit: i64,
    ) -> Result<bool, StoreError> {
        if limit <= 0 {
            return Ok(false);
        }
        let row = sql(
            "INSERT INTO oauth_rate_counters (bucket, window_start, hits) \
             VALUES ($1, $2, 1) ON CONFLICT (bucket, window_start) \
             DO UPDATE SET hits = oauth_rate_counters.hits + 1 \
             WHERE oauth_rate_counters.hits < $3 RETURNING hits",
        )
        .bind(bucket)
        .bind(window_start)
        .bind(limit)
        .fetch_optional(&self.db)
        .await?;
        Ok(row.is_some())
    }

    async fn return_rate(&self, bucket: &str, window_start: Millis) -> Result<(), StoreError> {
        sql("UPDATE oauth_rate_counters SET hits = hits - 1 \
             WHERE bucket = $1 AND window_start = $2 AND hits > 0")
        .bind(bucket)
        .bind(window_start)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn insert_pending(&self, p: &PendingRecord) -> Result<(), StoreError> {
        sql(format!(
            "INSERT INTO oauth_pending ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
             $8, $9, $10, $11, $12, $13, $14)",
            rows::PENDING_COLUMNS
        ))
        .bind(&p.id)
        .bind(&p.csrf_hash)
        .bind(&p.client_id)
        .bind(&p.client_name)
        .bind(&p.redirect_uri)
        .bind(p.state.as_deref())
        .bind(&p.code_challenge)
        .bind(&p.resource)
        .bind(p.requested_scope.as_deref())
        .bind(p.signed_in_account.as_deref())
        .bind(p.email.as_deref())
        .bind(p.created_at)
        .bind(p.expires_at)
        .bind(p.done_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn pending(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        let row = sql(format!(
            "SELECT {} FROM oauth_pending WHERE id = $1",
            rows::PENDING_COLUMNS
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::pending).transpose()
    }

    async fn finish_pending(&self, id: &str, now: Millis) -> Result<bool, StoreError> {
        let done = sql("UPDATE oauth_pending SET done_at = $2 WHERE id = $1 AND done_at IS NULL")
            .bind(id)
            .bind(now)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn replace_email_code(&self, c: &EmailCodeRecord) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        sql(format!(
            "INSERT INTO oauth_email_codes ({}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (pending_id) DO UPDATE SET email = $2, code_hash = $3, \
             created_at = $4, expires_at = $5, used_at = $7",
            rows::EMAIL_CODE_COLUMNS
        ))
        .bind(&c.pending_id)
        .bind(&c.email)
        .bind(&c.code_hash)
        .bind(c.created_at)
        .bind(c.expires_at)
        .bind(c.attempts)
        .bind(c.used_at)
        .execute(&mut tx)
        .await?;
        sql("UPDATE oauth_pending SET email = $2 WHERE id = $1")
            .bind(&c.pending_id)
            .bind(&c.email)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn email_code(&self, pending_id: &str) -> Result<Option<EmailCodeRecord>, StoreError> {
        let row = sql(format!(
            "SELECT {} FROM oauth_email_codes WHERE pending_id = $1",
            rows::EMAIL_CODE_COLUMNS
        ))
        .bind(pending_id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::email_code).transpose()
    }

    async fn reserve_code_attempt(
        &self,
        pending_id: &str,
        max: i64,
        now: Millis,
    ) -> Result<Option<EmailCodeRecord>, StoreError> {
        let row = sql(format!(
            "UPDATE oauth_email_codes SET attempts = attempts + 1 \
             WHERE pending_id = $1 AND attempts < $2 AND used_at IS NULL \
             AND expires_at > $3 AND NOT EXISTS (SELECT 1 FROM oauth_pending p \
             WHERE p.id = $1 AND p.done_at IS NOT NULL) RETURNING {}",
            rows::EMAIL_CODE_COLUMNS
        ))
        .bind(pending_id)
        .bind(max)
        .bind(now)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::email_code).transpose()
    }

    async fn use_email_code(&self, pending_id: &str, now: Millis) -> Result<bool, StoreError> {
        let done = sql("UPDATE oauth_email_codes SET used_at = $2 \
             WHERE pending_id = $1 AND used_at IS NULL")
        .bind(pending_id)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn insert_session(&self, s: &SessionRecord) -> Result<(), StoreError> {
        sql(
            "INSERT INTO oauth_sessions (id_hash, account_id, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(&s.id_hash)
        .bind(&s.account_id)
        .bind(s.created_at)
        .bind(s.expires_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError> {
        let row = sql("SELECT id_hash, account_id, created_at, expires_at \
             FROM oauth_sessions WHERE id_hash = $1")
        .bind(id_hash)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::session).transpose()
    }

    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError> {
        sql("DELETE FROM oauth_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(&self.db)
            .await?;
        Ok(())
    }
}
