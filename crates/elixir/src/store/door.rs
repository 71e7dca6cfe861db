//! The door area: what a door reads and writes on every call, each in one statement. The
//! caller, found from the presented credential with its owner and the replies waiting in its
//! feedback ledger (the door reads, over the accounts area's tables); a tool call's hour and
//! day metered together, atomically, with the day's live count and the card catalogue's stamp
//! read beside them ([`DoorStore::meter`]); and the refund of a call that failed on
//! Elixir's side. [`DoorStore`], its SQL and the row shapes of its reads; what a window's limit
//! is stays with `access::gate`, and the other usage counters are the metering area's.

use async_trait::async_trait;
use sqlkit::{Backend, Cols, sql};
use uuid::Uuid;

use super::rows::{self, ACCOUNT_COLUMNS, AGENT_COLUMNS, RESPONSE_PENDING};
use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::{DoorAccount, DoorAgent, Window};

/// The reads and writes of a door's call: who is calling, and its metering.
#[async_trait]
pub trait DoorStore: Send + Sync + 'static {
    /// The agent whose service key has this digest, with its owner and its waiting replies:
    /// what a door authenticates a service key with, in one statement.
    async fn door_agent_by_key_digest(&self, digest: &str)
    -> Result<Option<DoorAgent>, StoreError>;
    /// The agent whose door carries this public id, with its owner and its waiting replies:
    /// what an agent or integration door authenticates an OAuth token with, in one statement.
    async fn door_agent_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<DoorAgent>, StoreError>;
    /// The account with this id and the replies waiting in its own ledger: what the person
    /// door authenticates an OAuth token with, in one statement.
    async fn door_account(&self, id: Uuid) -> Result<Option<DoorAccount>, StoreError>;
    /// A tool call's metering in one atomic statement: spends the hour (unless full), then,
    /// only if the hour was spent, spends or reads the day as [`Meter::day_limit`] says; reads the
    /// day's live count and the stored card catalogue's `observed_at` beside them. A full
    /// hour spends nothing; a full day leaves the hour spent (as when the two were counted
    /// one after the other).
    async fn meter(&self, meter: &Meter<'_>) -> Result<Metered, StoreError>;
    /// Takes one back (a refunded call); never below zero.
    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError>;
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

/// What [`DoorStore::meter`] counted.
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

/// The column of a door read holding the caller's pending responses.
const PENDING_COLUMN: &str = "pending_responses";
/// The prefix of the owner account's columns in a door read of an agent.
const OWNER_PREFIX: &str = "owner_";

/// `columns` (a column list of `store/rows.rs`) qualified by `table`, each renamed `<prefix><column>`
/// when a prefix is given: one side's column list in a join.
fn columns_of(table: &str, columns: &str, prefix: &str) -> String {
    columns
        .split(',')
        .map(str::trim)
        .map(|c| match prefix {
            "" => format!("{table}.{c}"),
            _ => format!("{table}.{c} AS {prefix}{c}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The door read of an agent chosen by `agent_filter` (on `g`, with `$1`): the agent, its
/// owner (a left join: a missing owner reads as nulls) and the responses waiting in the
/// agent's ledger.
fn door_agent_read(agent_filter: &str) -> String {
    format!(
        "SELECT {}, {}, \
         (SELECT COUNT(*) FROM feedback f WHERE f.account_id = g.owner_account_id \
         AND f.agent_id = g.id AND {RESPONSE_PENDING}) AS {PENDING_COLUMN} \
         FROM agents g LEFT JOIN accounts o ON o.id = g.owner_account_id WHERE {agent_filter}",
        columns_of("g", AGENT_COLUMNS, ""),
        columns_of("o", ACCOUNT_COLUMNS, OWNER_PREFIX),
    )
}

/// A door read of an agent: its columns, its owner's under [`OWNER_PREFIX`] (null when the
/// owner is gone) and [`PENDING_COLUMN`].
fn door_agent(r: &impl Cols) -> Result<DoorAgent, StoreError> {
    let owner = match r.opt_text(&format!("{OWNER_PREFIX}id"))? {
        Some(_) => Some(rows::account_at(r, OWNER_PREFIX)?),
        None => None,
    };
    Ok(DoorAgent {
        agent: rows::agent(r)?,
        owner,
        pending_responses: r.int(PENDING_COLUMN)?,
    })
}

/// A door read of an account: its columns and [`PENDING_COLUMN`].
fn door_account(r: &impl Cols) -> Result<DoorAccount, StoreError> {
    Ok(DoorAccount {
        account: rows::account(r)?,
        pending_responses: r.int(PENDING_COLUMN)?,
    })
}

/// [`DoorStore::meter`] on PostgreSQL: the hour's guarded upsert, and the day's only
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

/// [`DoorStore::meter`] on SQLite, which has no data-modifying `WITH`: one upsert of the
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
impl DoorStore for SqlStore {
    async fn door_agent_by_key_digest(
        &self,
        digest: &str,
    ) -> Result<Option<DoorAgent>, StoreError> {
        // every call's first read: in place on SQLite (sqlkit::Db::read_first)
        let (row, _) = self
            .db
            .read_first(sql(door_agent_read("g.key_digest = $1")).bind(digest))
            .await?;
        row.as_ref().map(door_agent).transpose()
    }

    async fn door_agent_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<DoorAgent>, StoreError> {
        // every call's first read: in place on SQLite (sqlkit::Db::read_first)
        let (row, _) = self
            .db
            .read_first(sql(door_agent_read("g.public_id = $1")).bind(public_id))
            .await?;
        row.as_ref().map(door_agent).transpose()
    }

    async fn door_account(&self, id: Uuid) -> Result<Option<DoorAccount>, StoreError> {
        sql(format!(
            "SELECT {ACCOUNT_COLUMNS}, \
             (SELECT COUNT(*) FROM feedback f WHERE f.account_id = accounts.id \
             AND f.agent_id IS NULL AND {RESPONSE_PENDING}) AS {PENDING_COLUMN} \
             FROM accounts WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(door_account)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_side_of_a_join_names_every_column() {
        assert_eq!(
            columns_of("o", ACCOUNT_COLUMNS, OWNER_PREFIX),
            "o.id AS owner_id, o.email AS owner_email, o.tier AS owner_tier, \
             o.timezone AS owner_timezone, o.primary_player_tag AS owner_primary_player_tag, \
             o.created_at AS owner_created_at"
        );
        let agent = columns_of("g", AGENT_COLUMNS, "");
        assert!(
            agent.starts_with("g.id, g.public_id, g.owner_account_id, "),
            "{agent}"
        );
        assert!(agent.ends_with(", g.created_at, g.clan_tag"), "{agent}");
        assert_eq!(agent.matches("g.").count(), 11);
    }
}
