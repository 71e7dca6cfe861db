//! [`Grants`] in SQL: `oauth_auth_codes` and `oauth_grants` (a new grant's first token pair
//! is written with `tokens`' statements, in the same transaction).

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::SqlStore;
use super::tokens::insert_pair;
use crate::scopes;
use crate::store::areas::{Grants, StoreError};
use crate::store::records::{
    AccessRecord, AuthCodeRecord, CodeUse, GrantRecord, Millis, RefreshRecord,
};
use crate::store::rows;

#[async_trait]
impl Grants for SqlStore {
    async fn insert_auth_code(&self, c: &AuthCodeRecord) -> Result<(), StoreError> {
        sql(format!(
            "INSERT INTO oauth_auth_codes ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
             $8, $9, $10, $11, $12, $13)",
            rows::CODE_COLUMNS
        ))
        .bind(&c.code_hash)
        .bind(&c.client_id)
        .bind(&c.client_name)
        .bind(&c.redirect_uri)
        .bind(&c.code_challenge)
        .bind(&c.resource)
        .bind(&c.subject.account_id)
        .bind(&c.subject.subject_kind)
        .bind(&c.subject.subject_id)
        .bind(c.subject.personal)
        .bind(scopes::join(&c.scopes))
        .bind(c.created_at)
        .bind(c.expires_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn auth_code_client(&self, code_hash: &str) -> Result<Option<String>, StoreError> {
        let row = sql("SELECT client_id FROM oauth_auth_codes WHERE code_hash = $1")
            .bind(code_hash)
            .fetch_optional(&self.db)
            .await?;
        row.map(|r| r.text("client_id")).transpose()
    }

    async fn consume_auth_code(&self, code_hash: &str, now: Millis) -> Result<CodeUse, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let fresh = sql(format!(
            "UPDATE oauth_auth_codes SET used_at = $2 \
             WHERE code_hash = $1 AND used_at IS NULL RETURNING {}",
            rows::CODE_COLUMNS
        ))
        .bind(code_hash)
        .bind(now)
        .fetch_optional(&mut tx)
        .await?;
        let outcome = if let Some(row) = fresh {
            CodeUse::Fresh(Box::new(rows::auth_code(&row)?))
        } else {
            let replay = sql("UPDATE oauth_auth_codes SET replayed_at = $2 \
                 WHERE code_hash = $1 RETURNING grant_id")
            .bind(code_hash)
            .bind(now)
            .fetch_optional(&mut tx)
            .await?;
            match replay {
                Some(row) => CodeUse::Replayed {
                    grant_id: row.opt_text("grant_id")?,
                },
                None => CodeUse::Unknown,
            }
        };
        tx.commit().await?;
        Ok(outcome)
    }

    async fn create_grant(
        &self,
        g: &GrantRecord,
        code_hash: Option<&str>,
        access: &AccessRecord,
        refresh: &RefreshRecord,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        if let Some(code_hash) = code_hash {
            let marked = sql("UPDATE oauth_auth_codes SET grant_id = $2 \
                 WHERE code_hash = $1 AND replayed_at IS NULL AND grant_id IS NULL")
            .bind(code_hash)
            .bind(&g.id)
            .execute(&mut tx)
            .await?;
            if marked.rows_affected() != 1 {
                return Ok(false);
            }
        }
        sql(
            "INSERT INTO oauth_grants (id, client_id, client_name, resource, \
             account_id, subject_kind, subject_id, personal, scopes, created_at, \
             updated_at, last_used_at, revoked_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(&g.id)
        .bind(&g.client_id)
        .bind(&g.client_name)
        .bind(&g.resource)
        .bind(&g.subject.account_id)
        .bind(&g.subject.subject_kind)
        .bind(&g.subject.subject_id)
        .bind(g.subject.personal)
        .bind(scopes::join(&g.scopes))
        .bind(g.created_at)
        .bind(g.updated_at)
        .bind(g.last_used_at)
        .bind(g.revoked_at)
        .execute(&mut tx)
        .await?;
        insert_pair(&mut tx, access, refresh).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn grant(&self, id: &str) -> Result<Option<GrantRecord>, StoreError> {
        let row = sql(format!(
            "SELECT {} FROM oauth_grants g WHERE g.id = $1",
            rows::GRANT_COLUMNS
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::grant).transpose()
    }

    async fn account_grants(&self, account_id: &str) -> Result<Vec<GrantRecord>, StoreError> {
        let found = sql(format!(
            "SELECT {} FROM oauth_grants g WHERE g.account_id = $1 \
             AND g.revoked_at IS NULL ORDER BY g.created_at, g.id",
            rows::GRANT_COLUMNS
        ))
        .bind(account_id)
        .fetch_all(&self.db)
        .await?;
        found.iter().map(rows::grant).collect()
    }

    async fn revoked_account_grants(
        &self,
        account_id: &str,
        since: Millis,
    ) -> Result<Vec<GrantRecord>, StoreError> {
        let found = sql(format!(
            "SELECT {} FROM oauth_grants g WHERE g.account_id = $1 \
             AND g.revoked_at >= $2 ORDER BY g.revoked_at DESC, g.id",
            rows::GRANT_COLUMNS
        ))
        .bind(account_id)
        .bind(since)
        .fetch_all(&self.db)
        .await?;
        found.iter().map(rows::grant).collect()
    }

    async fn set_grant_scopes(
        &self,
        id: &str,
        scopes: &[String],
        now: Millis,
    ) -> Result<bool, StoreError> {
        let done = sql("UPDATE oauth_grants SET scopes = $2, updated_at = $3 \
             WHERE id = $1 AND revoked_at IS NULL")
        .bind(id)
        .bind(scopes::join(scopes))
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn revoke_grant(&self, id: &str, now: Millis) -> Result<bool, StoreError> {
        let done = sql("UPDATE oauth_grants SET revoked_at = $2, updated_at = $2 \
             WHERE id = $1 AND revoked_at IS NULL")
        .bind(id)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn touch_grant(&self, id: &str, now: Millis) -> Result<(), StoreError> {
        sql("UPDATE oauth_grants SET last_used_at = $2 \
             WHERE id = $1 AND last_used_at < $2")
        .bind(id)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(())
    }
}
