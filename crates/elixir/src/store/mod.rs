//! The storage boundary: one `Store` trait, a SQLite backend (the embedded default) and a
//! PostgreSQL backend sharing their statements ([`sql_store`]). Database errors are translated
//! in [`sql`] and nowhere else. Elixir's migrations are numbered from 2_000_001 and run with
//! `ignore_missing`, because mcp-oauth's migrations share the database and its
//! `_sqlx_migrations` table.

pub mod postgres;
mod sql;
mod sql_store;
pub mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use uuid::Uuid;

use crate::cards::Catalogue;
use crate::domain::{FeedbackStatus, Kind, Millis, Tier};

/// A storage failure, already classified for the wire.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A unique constraint refused the write (duplicate email, public id, key digest).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached or timed out.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else; logged, never shown to a client.
    #[error("database error: {0}")]
    Internal(String),
}

/// An Elixir account: the payer and owner of agents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: Uuid,
    pub email: Option<String>,
    pub tier: Tier,
    pub timezone: String,
    pub primary_player_tag: Option<String>,
    pub created_at: Millis,
}

/// An agent or integration door and its service key (as a digest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub id: Uuid,
    pub public_id: String,
    pub owner_account_id: Uuid,
    pub name: String,
    /// `Kind::Agent` or `Kind::Integration`.
    pub kind: Kind,
    pub suspended: bool,
    pub key_digest: Option<String>,
    /// Space-separated capabilities of the key; empty means the five standard ones.
    pub key_scopes: String,
    /// The agent's own timezone (`None`: UTC).
    pub timezone: Option<String>,
    pub created_at: Millis,
}

/// A feedback report to file.
#[derive(Debug, Clone)]
pub struct NewFeedback {
    pub account_id: Uuid,
    pub agent_id: Option<Uuid>,
    pub principal_kind: Kind,
    pub on_behalf_of: Option<String>,
    pub category: String,
    pub message: String,
    pub context: Option<String>,
    pub request_id: Option<Uuid>,
    pub related_tools: Vec<String>,
    pub created_at: Millis,
}

/// A stored feedback report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    pub id: i64,
    pub account_id: Uuid,
    pub agent_id: Option<Uuid>,
    pub principal_kind: Kind,
    pub on_behalf_of: Option<String>,
    pub category: String,
    pub message: String,
    pub context: Option<String>,
    pub request_id: Option<Uuid>,
    pub status: FeedbackStatus,
    pub response: Option<String>,
    pub responded_at: Option<Millis>,
    pub shipped_in: Option<String>,
    pub related_tools: Vec<String>,
    pub created_at: Millis,
    /// When the current response was delivered on a `elixir_my_feedback` page.
    pub delivered_at: Option<Millis>,
}

/// Whose feedback ledger: a person's own reports (`agent_id` None) or one agent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ledger {
    pub account_id: Uuid,
    pub agent_id: Option<Uuid>,
}

/// A filtered read of a ledger, newest first.
#[derive(Debug, Clone)]
pub struct FeedbackQuery {
    pub ledger: Ledger,
    pub status: Option<FeedbackStatus>,
    /// Reports created, or answered, at or after this instant.
    pub since: Option<Millis>,
    pub offset: i64,
    pub limit: i64,
}

/// The operator's answer to a report.
#[derive(Debug, Clone)]
pub struct FeedbackReply {
    pub id: i64,
    pub status: FeedbackStatus,
    pub response: Option<String>,
    pub shipped_in: Option<String>,
    pub related_tools: Option<Vec<String>>,
    pub at: Millis,
}

/// One audited tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub request_id: Uuid,
    pub account_id: Option<Uuid>,
    pub agent_id: Option<Uuid>,
    pub door: String,
    pub tool: Option<String>,
    /// Trimmed at 4,000 bytes.
    pub arguments: Option<String>,
    /// Trimmed at 4,000 bytes.
    pub response: Option<String>,
    pub error_code: Option<String>,
    pub duration_ms: i64,
    pub created_at: Millis,
}

/// A refused credential to count.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub credential_hint: String,
    pub address: String,
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub door: String,
    pub reason: String,
    pub at: Millis,
}

/// A counted refusal, as the owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusalCount {
    pub credential_hint: String,
    pub address: String,
    pub day: String,
    pub door: String,
    pub reason: String,
    pub count: i64,
}

/// Which counter a usage row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// A UTC clock hour.
    Hour,
    /// A UTC day.
    Day,
}

impl Window {
    pub fn as_str(self) -> &'static str {
        match self {
            Window::Hour => "hour",
            Window::Day => "day",
        }
    }
}

/// The append-only receipt of one upstream fetch (SURFACE §7.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The path template (`/cards`, `/players/{tag}`).
    pub endpoint: String,
    /// The tag the read was about; `None` for subject-less endpoints.
    pub subject: Option<String>,
    pub fetched_at: Millis,
    /// The HTTP status; `None` when no answer came.
    pub status: Option<i64>,
    /// The archive address of a 200's payload.
    pub payload_sha256: Option<String>,
    /// How the budget let it through: `recorder`, `live`, `live_borrowed` or `probe`.
    pub admission: String,
}

/// A raw JSON payload, kept in the database for two hours (the archive keeps it for good).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPayload {
    pub payload_sha256: String,
    pub endpoint: String,
    pub subject: Option<String>,
    pub body: String,
    /// The latest fetch that returned it.
    pub fetched_at: Millis,
}

/// The latest card catalogue read from the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCatalogue {
    pub catalogue: Catalogue,
    /// The archived payload it was normalized from.
    pub payload_sha256: String,
    /// When that payload was read.
    pub observed_at: Millis,
}

/// A claim on one slot of a scheduled job (the `/cards` read of one game day), so that one
/// instance reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollClaim {
    pub job: String,
    /// Ordered text: a later slot is a greater string (`YYYY-MM-DD`).
    pub slot: String,
    /// The claiming instance.
    pub owner: String,
    pub at: Millis,
    /// An unfinished claim of another owner made at or before this instant has lapsed.
    pub lapsed_before: Millis,
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    async fn migrate(&self) -> Result<(), StoreError>;
    async fn ping(&self) -> Result<(), StoreError>;
    /// Open and idle connections of the pool, for the metrics.
    fn pool_use(&self) -> mcp_door::PoolUse;

    async fn create_account(&self, account: &Account) -> Result<(), StoreError>;
    async fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError>;
    async fn account_by_email(&self, email: &str) -> Result<Option<Account>, StoreError>;
    async fn set_account_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError>;
    async fn set_account_tier(&self, id: Uuid, tier: Tier) -> Result<(), StoreError>;

    async fn create_agent(&self, agent: &Agent) -> Result<(), StoreError>;
    async fn agent(&self, id: Uuid) -> Result<Option<Agent>, StoreError>;
    async fn agent_by_public_id(&self, public_id: &str) -> Result<Option<Agent>, StoreError>;
    async fn agent_by_key_digest(&self, digest: &str) -> Result<Option<Agent>, StoreError>;
    async fn agents_of(&self, owner: Uuid) -> Result<Vec<Agent>, StoreError>;
    /// Replaces (or with `None` revokes) the agent's key.
    async fn set_agent_key(&self, id: Uuid, digest: Option<&str>) -> Result<(), StoreError>;
    async fn set_agent_suspended(&self, id: Uuid, suspended: bool) -> Result<(), StoreError>;
    async fn set_agent_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError>;

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
    async fn usage(&self, subject: &str, window: Window, start: Millis) -> Result<i64, StoreError>;

    async fn record_refusal(&self, refusal: &Refusal) -> Result<(), StoreError>;
    /// Every count of `day` (`YYYY-MM-DD`).
    async fn refusals(&self, day: &str) -> Result<Vec<RefusalCount>, StoreError>;
    /// The counts of `credentials` (credential hints) on `since_day` and later, newest day
    /// first: what one owner may see.
    async fn refusals_of(
        &self,
        credentials: &[String],
        since_day: &str,
    ) -> Result<Vec<RefusalCount>, StoreError>;
    /// Deletes the counts of days before `before_day`; returns how many went.
    async fn purge_refusals(&self, before_day: &str) -> Result<u64, StoreError>;

    async fn insert_audit(&self, entry: &AuditEntry) -> Result<(), StoreError>;
    async fn audit(&self, request_id: Uuid) -> Result<Option<AuditEntry>, StoreError>;

    async fn insert_feedback(&self, feedback: &NewFeedback) -> Result<Feedback, StoreError>;
    async fn feedback(&self, id: i64) -> Result<Option<Feedback>, StoreError>;
    /// One page of a ledger (at most `limit` rows) and the number matching the filter.
    async fn feedback_page(
        &self,
        query: &FeedbackQuery,
    ) -> Result<(Vec<Feedback>, i64), StoreError>;
    /// Marks the current responses of `ids` delivered (only rows with an undelivered response).
    async fn mark_delivered(&self, ids: &[i64], at: Millis) -> Result<(), StoreError>;
    /// Responses in the ledger not yet delivered.
    async fn pending_responses(&self, ledger: Ledger) -> Result<i64, StoreError>;
    /// Every report, newest first, optionally with one status (the operator's queue).
    async fn all_feedback(
        &self,
        status: Option<FeedbackStatus>,
        limit: i64,
    ) -> Result<Vec<Feedback>, StoreError>;
    /// Records the operator's status and response; a new response is undelivered again.
    async fn reply_feedback(&self, reply: &FeedbackReply) -> Result<Feedback, StoreError>;

    // --- The account pages (Agents, Activity) ---

    /// Replaces the capabilities of the agent's service key (space-separated; empty = all five).
    async fn set_agent_key_scopes(&self, id: Uuid, scopes: &str) -> Result<(), StoreError>;
    /// The account's most recent audited calls (its own and its agents'), newest first.
    async fn recent_audit(
        &self,
        account_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;
    /// One agent's most recent audited calls at its door, newest first.
    async fn recent_agent_audit(
        &self,
        agent_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;

    // --- The upstream record: receipts, raw payloads, the card catalogue, poll claims ---

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
    /// Marks `owner`'s claim on `slot` done, so nobody reads that slot again.
    async fn finish_poll(
        &self,
        job: &str,
        slot: &str,
        owner: &str,
        at: Millis,
    ) -> Result<(), StoreError>;
}

/// The store every part of the server shares.
pub type SharedStore = Arc<dyn Store>;

/// Pool and timeout settings shared by both backends.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub max_connections: u32,
    pub acquire_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`; SQLite busy timeout.
    pub statement_timeout: std::time::Duration,
    pub lock_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(23),
            lock_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl DbOptions {
    /// The same settings in [`sqlkit`]'s terms, for opening either backend's pool.
    pub(crate) fn pool_settings(&self) -> sqlkit::PoolSettings {
        sqlkit::PoolSettings {
            max_connections: self.max_connections,
            acquire_timeout: self.acquire_timeout,
            statement_timeout: self.statement_timeout,
            lock_timeout: self.lock_timeout,
        }
    }
}

/// Connects to `url` (`sqlite://path`, `sqlite::memory:` or `postgres://…`), without migrating.
pub async fn connect(url: &str, options: &DbOptions) -> Result<SharedStore, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url, options).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStore::connect(url, options).await?))
    } else {
        Err(StoreError::Internal(format!(
            "unsupported database URL scheme (expected sqlite: or postgres://): {}",
            url.split(':').next().unwrap_or_default()
        )))
    }
}
