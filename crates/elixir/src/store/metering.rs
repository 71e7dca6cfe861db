//! The metering area: the usage counters one at a time, behind a request the door meters
//! outside a tool call's one statement (its hour alone; the day when that statement failed
//! open), a live fetch's daily count, and the counts `meta.quota` reads when the gate left
//! none. [`MeteringStore`] and its SQL; a tool call's own metering and a refund are the door
//! area's (`store/door.rs`), what a window's limit is stays with `access::gate`.

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::Window;

/// Usage counters: spend and read.
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
    /// [`spend`](Self::spend) on `subject`, reading the counter `beside` of the same window in
    /// the same statement (the day's call count and the day's live count of one account):
    /// `(new count, beside's count)`, or `None` when the limit refused it. The check-and-count
    /// is [`spend`](Self::spend)'s one conditional upsert; the other counter is only read.
    async fn spend_reading(
        &self,
        subject: &str,
        beside: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<(i64, i64)>, StoreError>;
    /// The counter's value (zero before its first spend).
    async fn usage(&self, subject: &str, window: Window, start: Millis) -> Result<i64, StoreError>;
    /// The values of two counters of one window, in one statement.
    async fn usage_of_both(
        &self,
        first: &str,
        second: &str,
        window: Window,
        start: Millis,
    ) -> Result<(i64, i64), StoreError>;
}

/// The guarded increment of `spend` and `spend_reading`: the insert or the increment returns
/// the new count; a full counter matches no row, so a refusal spends nothing. SQLite and
/// PostgreSQL both run it as one atomic statement (the conflict row is locked, or the
/// database is, while the guard is checked), which `tests/it/limits.rs`'s burst holds.
const SPEND: &str = "INSERT INTO usage_counters (subject, window_kind, window_start, count) \
     VALUES ($1, $2, $3, 1) \
     ON CONFLICT (subject, window_kind, window_start) \
     DO UPDATE SET count = usage_counters.count + 1 \
     WHERE usage_counters.count < $4 \
     RETURNING count";

/// The count of the counter named by `$n`, in the window of `$2` and `$3`; zero when it has
/// none yet.
fn counter_of(n: usize) -> String {
    format!(
        "COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = ${n} \
         AND c.window_kind = $2 AND c.window_start = $3), 0)"
    )
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
        sql(SPEND)
            .bind(subject)
            .bind(window.as_str())
            .bind(start)
            .bind(limit)
            .fetch_optional(&self.db)
            .await?
            .map(|row| row.int("count"))
            .transpose()
    }

    async fn spend_reading(
        &self,
        subject: &str,
        beside: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        // The other counter is read in the RETURNING list: a scalar subquery both backends
        // allow there, on another row than the one the upsert locks.
        sql(format!("{SPEND}, {} AS beside", counter_of(5)))
            .bind(subject)
            .bind(window.as_str())
            .bind(start)
            .bind(limit)
            .bind(beside)
            .fetch_optional(&self.db)
            .await?
            .map(|row| Ok((row.int("count")?, row.int("beside")?)))
            .transpose()
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

    async fn usage_of_both(
        &self,
        first: &str,
        second: &str,
        window: Window,
        start: Millis,
    ) -> Result<(i64, i64), StoreError> {
        let row = sql(format!(
            "SELECT {} AS first, {} AS second",
            counter_of(1),
            counter_of(4)
        ))
        .bind(first)
        .bind(window.as_str())
        .bind(start)
        .bind(second)
        .fetch_one(&self.db)
        .await?;
        Ok((row.int("first")?, row.int("second")?))
    }
}
