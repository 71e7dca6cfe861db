//! The metering area: the usage counters behind the hourly rate and the daily quota.
//! [`MeteringStore`] and its SQL; what a window's limit is stays with `limits`.

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::Window;

/// Usage counters: spend, refund, read.
#[async_trait]
pub trait MeteringStore: Send + Sync + 'static {
    /// Adds one to a usage counter unless it already holds `limit`; returns the new count, or
    /// `None` when the limit refused it (and nothing was spent).
    async fn spend(
        &self,
        subject: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<i64>, StoreError>;
    /// Takes one back (a refunded call); never below zero.
    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError>;
    /// The counter's value (zero before its first spend).
    async fn usage(&self, subject: &str, window: Window, start: Millis) -> Result<i64, StoreError>;
}

#[async_trait]
impl MeteringStore for SqlStore {
    async fn spend(
        &self,
        subject: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<i64>, StoreError> {
        // One statement: the insert or the guarded increment returns the new count; a full
        // counter matches no row, so a refusal spends nothing.
        sql(
            "INSERT INTO usage_counters (subject, window_kind, window_start, count) \
             VALUES ($1, $2, $3, 1) \
             ON CONFLICT (subject, window_kind, window_start) \
             DO UPDATE SET count = usage_counters.count + 1 \
             WHERE usage_counters.count < $4 \
             RETURNING count",
        )
        .bind(subject)
        .bind(window.as_str())
        .bind(start)
        .bind(limit)
        .fetch_optional(&self.db)
        .await?
        .map(|row| row.int("count"))
        .transpose()
    }

    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError> {
        sql(
            "UPDATE usage_counters SET count = count - 1 WHERE subject = $1 \
             AND window_kind = $2 AND window_start = $3 AND count > 0",
        )
        .bind(subject)
        .bind(window.as_str())
        .bind(start)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn usage(&self, subject: &str, window: Window, start: Millis) -> Result<i64, StoreError> {
        let count = sql("SELECT count FROM usage_counters WHERE subject = $1 \
             AND window_kind = $2 AND window_start = $3")
        .bind(subject)
        .bind(window.as_str())
        .bind(start)
        .fetch_optional(&self.db)
        .await?
        .map(|row| row.int("count"))
        .transpose()?;
        Ok(count.unwrap_or(0))
    }
}
