//! The metering area: the usage counters behind the hourly rate and the daily quota.
//! [`MeteringStore`] and its SQL; what a window's limit is stays with `limits`. A tool call is
//! metered in one statement ([`MeteringStore::meter`]): its hour and its day counted together,
//! atomically, with the day's live count and the card catalogue's stamp read beside them.

use async_trait::async_trait;
use sqlkit::{Backend, Cols, sql};

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
    /// A tool call's metering in one atomic statement: spends the hour (unless full), then,
    /// only if the hour was spent, spends or reads the day as [`Meter::day`] says; reads the
    /// day's live count and the stored card catalogue's `observed_at` beside them. A full
    /// hour spends nothing; a full day leaves the hour spent (as when the two were counted
    /// one after the other).
    async fn meter(&self, meter: &Meter<'_>) -> Result<Metered, StoreError>;
    /// Takes one back (a refunded call); never below zero.
    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError>;
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

/// What one tool call's metering counts: its hour, and its day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meter<'a> {
    /// The hourly bucket (`agent:<id>` or `account:<id>`).
    pub hour_subject: &'a str,
    pub hour_start: Millis,
    pub hour_limit: i64,
    /// The paying account's daily call counter (`calls:<id>`).
    pub calls_subject: &'a str,
    /// The paying account's daily live counter (`live:<id>`), only read.
    pub live_subject: &'a str,
    pub day_start: Millis,
    /// `Some(limit)`: the call is metered and spends the day up to `limit`; `None`: a free
    /// (Help) call, whose day count is only read.
    pub day_limit: Option<i64>,
}

/// What [`MeteringStore::meter`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metered {
    /// The hour's count after this call; `None`: the hour was full and nothing was spent.
    pub hour: Option<i64>,
    /// The day's call count: after this call's spend (metered), or as read (free). `None`:
    /// the day was full (metered) or the hour refused the call.
    pub calls: Option<i64>,
    /// The day's live count.
    pub live: i64,
    /// The stored card catalogue's `observed_at`; `None` before the first read.
    pub catalogue_at: Option<Millis>,
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

/// [`MeteringStore::meter`] on PostgreSQL: the hour's guarded upsert, and the day's only
/// `FROM h` (so a full hour spends no day); each upsert locks its conflict row while its guard
/// is checked, and both run in the one statement's transaction. The outer select reads the
/// statement's snapshot: the day's count before this call (what a free call reports), the
/// live count and the catalogue's stamp.
/// `$1` hour subject, `$2` hour start, `$3` hour limit, `$4` calls subject, `$5` day start,
/// `$6` day limit, `$7` spend the day, `$8` live subject.
const METER_POSTGRES: &str = "WITH h AS (\
     INSERT INTO usage_counters (subject, window_kind, window_start, count) \
     VALUES ($1, 'hour', $2, 1) \
     ON CONFLICT (subject, window_kind, window_start) \
     DO UPDATE SET count = usage_counters.count + 1 WHERE usage_counters.count < $3 \
     RETURNING count), \
     d AS (\
     INSERT INTO usage_counters (subject, window_kind, window_start, count) \
     SELECT $4, 'day', $5, 1 FROM h WHERE $7 \
     ON CONFLICT (subject, window_kind, window_start) \
     DO UPDATE SET count = usage_counters.count + 1 WHERE usage_counters.count < $6 \
     RETURNING count) \
     SELECT 'hour' AS window_kind, (SELECT count FROM h) AS hour, (SELECT count FROM d) AS day, \
     COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = $4 \
     AND c.window_kind = 'day' AND c.window_start = $5), 0) AS calls, \
     COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = $8 \
     AND c.window_kind = 'day' AND c.window_start = $5), 0) AS live, \
     (SELECT k.observed_at FROM cards_catalogue k WHERE k.id = 1) AS catalogue_at";

/// [`MeteringStore::meter`] on SQLite, which has no data-modifying `WITH`: one upsert of the
/// hour row and (when metered) the day row, whose guards are judged in the `SELECT` before
/// anything is written (SQLite materializes a `SELECT` that reads the table it inserts into).
/// A writing statement holds the database's write lock from its first step, so no other
/// spend comes between the guards and the writes. The rows it wrote come back: none (the
/// hour was full), the hour's (a free call, or the day was full), or both. Parameters as
/// [`METER_POSTGRES`]'s.
const METER_SQLITE: &str = "INSERT INTO usage_counters (subject, window_kind, window_start, count) \
     SELECT v.subject, v.kind, v.start, 1 FROM (\
     SELECT $1 AS subject, 'hour' AS kind, $2 AS start \
     UNION ALL SELECT $4, 'day', $5 WHERE $7) v \
     WHERE COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = $1 \
     AND c.window_kind = 'hour' AND c.window_start = $2), 0) < $3 \
     AND (v.kind = 'hour' OR COALESCE((SELECT c.count FROM usage_counters c \
     WHERE c.subject = $4 AND c.window_kind = 'day' AND c.window_start = $5), 0) < $6) \
     ON CONFLICT (subject, window_kind, window_start) DO UPDATE SET count = usage_counters.count + 1 \
     RETURNING window_kind, count, \
     COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = $4 \
     AND c.window_kind = 'day' AND c.window_start = $5), 0) AS calls, \
     COALESCE((SELECT c.count FROM usage_counters c WHERE c.subject = $8 \
     AND c.window_kind = 'day' AND c.window_start = $5), 0) AS live, \
     (SELECT k.observed_at FROM cards_catalogue k WHERE k.id = 1) AS catalogue_at";

/// Reads either backend's answer to a meter statement: PostgreSQL's one row (`hour` and
/// `day` the counts its upserts returned, null when refused; `calls` the day as read),
/// SQLite's one row per counter written (none when the hour was full).
fn metered(
    backend: Backend,
    rows: &[sqlkit::Row],
    spends_day: bool,
) -> Result<Metered, StoreError> {
    let mut out = Metered {
        hour: None,
        calls: None,
        live: 0,
        catalogue_at: None,
    };
    let mut read_calls = None;
    let mut spent_day = None;
    for row in rows {
        let is_hour = row.text("window_kind")? == "hour";
        if is_hour {
            out.live = row.int("live")?;
            out.catalogue_at = row.opt_int("catalogue_at")?;
            read_calls = Some(row.int("calls")?);
        }
        match backend {
            Backend::Postgres => {
                out.hour = row.opt_int("hour")?;
                spent_day = row.opt_int("day")?;
            }
            Backend::Sqlite if is_hour => out.hour = Some(row.int("count")?),
            Backend::Sqlite => spent_day = Some(row.int("count")?),
        }
    }
    if out.hour.is_some() {
        out.calls = if spends_day { spent_day } else { read_calls };
    }
    Ok(out)
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

    async fn meter(&self, m: &Meter<'_>) -> Result<Metered, StoreError> {
        // The backends differ here: PostgreSQL chains the two upserts in a `WITH`, SQLite
        // (which has no data-modifying `WITH`) judges both guards before one upsert.
        let text = match self.db.backend() {
            Backend::Postgres => METER_POSTGRES,
            Backend::Sqlite => METER_SQLITE,
        };
        let rows = sql(text)
            .bind(m.hour_subject)
            .bind(m.hour_start)
            .bind(m.hour_limit)
            .bind(m.calls_subject)
            .bind(m.day_start)
            .bind(m.day_limit.unwrap_or(0))
            .bind(m.day_limit.is_some())
            .bind(m.live_subject)
            .fetch_all(&self.db)
            .await?;
        metered(self.db.backend(), &rows, m.day_limit.is_some())
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
