//! [`Tokens`] in SQL: `oauth_access_tokens`, `oauth_refresh_tokens` and `oauth_refusals`, and
//! the insert of a token pair that a new grant (`grants`) and a rotation share.

use async_trait::async_trait;
use sqlkit::{Tx, sql};

use super::SqlStore;
use crate::store::areas::{StoreError, Tokens};
use crate::store::records::{AccessRecord, GrantRecord, Millis, RefreshRecord, RefusalCount};
use crate::store::rows;

#[async_trait]
impl Tokens for SqlStore {
    async fn access_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(AccessRecord, GrantRecord)>, StoreError> {
        let row = sql(format!(
            "SELECT t.token_hash, t.grant_id, t.created_at AS token_created_at, \
             t.expires_at AS token_expires_at, {} FROM oauth_access_tokens t \
             JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = $1",
            rows::GRANT_COLUMNS
        ))
        .bind(token_hash)
        .fetch_optional(&self.db)
        .await?;
        match row {
            Some(row) => Ok(Some((rows::access(&row)?, rows::grant(&row)?))),
            None => Ok(None),
        }
    }

    async fn refresh_token(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError> {
        let row = sql(
            "SELECT token_hash, grant_id, created_at, expires_at, rotated_at, \
             successor_hash FROM oauth_refresh_tokens WHERE token_hash = $1",
        )
        .bind(token_hash)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::refresh).transpose()
    }

    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: Millis,
        access: &AccessRecord,
        refresh: &RefreshRecord,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let rotated = sql(
            "UPDATE oauth_refresh_tokens SET rotated_at = $2, successor_hash = $3 \
             WHERE token_hash = $1 AND rotated_at IS NULL",
        )
        .bind(old_hash)
        .bind(now)
        .bind(&refresh.token_hash)
        .execute(&mut tx)
        .await?;
        if rotated.rows_affected() != 1 {
            return Ok(false);
        }
        insert_pair(&mut tx, access, refresh).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn count_refusal(
        &self,
        credential: &str,
        address: &str,
        day: i64,
        reason: &str,
        now: Millis,
    ) -> Result<(), StoreError> {
        sql(
            "INSERT INTO oauth_refusals (credential, address, day, reason, hits, \
             last_at) VALUES ($1, $2, $3, $4, 1, $5) \
             ON CONFLICT (credential, address, day, reason) \
             DO UPDATE SET hits = oauth_refusals.hits + 1, last_at = $5",
        )
        .bind(credential)
        .bind(address)
        .bind(day)
        .bind(reason)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn refusals(
        &self,
        credential: &str,
        since_day: i64,
    ) -> Result<Vec<RefusalCount>, StoreError> {
        let found = sql("SELECT credential, address, day, reason, hits, last_at \
             FROM oauth_refusals WHERE credential = $1 AND day >= $2 \
             ORDER BY day DESC, last_at DESC")
        .bind(credential)
        .bind(since_day)
        .fetch_all(&self.db)
        .await?;
        found.iter().map(rows::refusal).collect()
    }
}

/// Inserts a grant's new access and refresh tokens inside `tx`.
pub(super) async fn insert_pair(
    tx: &mut Tx,
    a: &AccessRecord,
    r: &RefreshRecord,
) -> Result<(), StoreError> {
    sql(
        "INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(&a.token_hash)
    .bind(&a.grant_id)
    .bind(a.created_at)
    .bind(a.expires_at)
    .execute(&mut *tx)
    .await?;
    sql(
        "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, \
         expires_at, rotated_at, successor_hash) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&r.token_hash)
    .bind(&r.grant_id)
    .bind(r.created_at)
    .bind(r.expires_at)
    .bind(r.rotated_at)
    .bind(r.successor_hash.as_deref())
    .execute(&mut *tx)
    .await?;
    Ok(())
}
