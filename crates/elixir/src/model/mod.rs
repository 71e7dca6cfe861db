//! Elixir's stored entities: accounts, agents, feedback and its ledgers, audit entries,
//! refusal counts, usage windows, upstream receipts and raw payloads, the stored card
//! catalogue and poll claims. Plain data with no database or HTTP types; how they are
//! written and read is `store`'s, what they mean to a caller is the tools' and pages'.

use uuid::Uuid;

use crate::access::kinds::{Kind, Tier};
use crate::domain::{FeedbackStatus, Millis};
use elixir_record::cards::Catalogue;

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
    /// The clan the door answers for (§1.1); `None` until the owner sets it.
    pub clan_tag: Option<String>,
}

/// An agent as its door authenticates it, from one read: the agent, its owner account and
/// the replies waiting in the agent's feedback ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoorAgent {
    pub agent: Agent,
    /// The owner account; `None` if it is gone.
    pub owner: Option<Account>,
    /// Operator responses in the agent's ledger not yet delivered.
    pub pending_responses: i64,
}

/// An account as the person door authenticates it, from one read: the account and the
/// replies waiting in its own feedback ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoorAccount {
    pub account: Account,
    /// Operator responses in the person's ledger not yet delivered.
    pub pending_responses: i64,
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

mod record;
pub use record::*;
