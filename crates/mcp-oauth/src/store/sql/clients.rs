//! [`Clients`] in SQL: the `oauth_clients` table, and the registration counter its purge
//! recomputes.

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::SqlStore;
use crate::store::areas::{Clients, StoreError};
use crate::store::records::{ClientRecord, Millis};
use crate::store::rows;

#[async_trait]
impl Clients for SqlStore {
    async fn insert_client(&self, c: &ClientRecord) -> Result<(), StoreError> {
        sql(format!(
            "INSERT INTO oauth_clients ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            rows::CLIENT_COLUMNS
        ))
        .bind(&c.client_id)
        .bind(&c.client_name)
        .bind(rows::json_list(&c.redirect_uris))
        .bind(rows::json_list(&c.grant_types))
        .bind(&c.registered_from)
        .bind(c.created_at)
        .bind(c.last_used_at)
        .bind(c.first_used_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>, StoreError> {
        let row = sql(format!(
            "SELECT {} FROM oauth_clients WHERE client_id = $1",
            rows::CLIENT_COLUMNS
        ))
        .bind(client_id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(rows::client).transpose()
    }

    async fn touch_client(&self, client_id: &str, now: Millis) -> Result<(), StoreError> {
        sql("UPDATE oauth_clients SET last_used_at = $2 \
             WHERE client_id = $1 AND last_used_at < $2")
        .bind(client_id)
        .bind(now)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn first_use_client(
        &self,
        client_id: &str,
        now: Millis,
    ) -> Result<Option<Millis>, StoreError> {
        let row = sql("UPDATE oauth_clients SET first_used_at = $2 \
             WHERE client_id = $1 AND first_used_at IS NULL RETURNING created_at")
        .bind(client_id)
        .bind(now)
        .fetch_optional(&self.db)
        .await?;
        row.map(|r| r.int("created_at")).transpose()
    }

    async fn purge_unused_clients(
        &self,
        cutoff: Millis,
        bucket: &str,
        window_start: Millis,
        window_end: Millis,
    ) -> Result<u64, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let removed =
            sql("DELETE FROM oauth_clients WHERE first_used_at IS NULL AND created_at <= $1")
                .bind(cutoff)
                .execute(&mut tx)
                .await?
                .rows_affected();
        sql(
            "UPDATE oauth_rate_counters SET hits = (SELECT COUNT(*) FROM oauth_clients \
             WHERE first_used_at IS NULL AND created_at >= $2 AND created_at < $3) \
             WHERE bucket = $1 AND window_start = $2",
        )
        .bind(bucket)
        .bind(window_start)
        .bind(window_end)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(removed)
    }
}
