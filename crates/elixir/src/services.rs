//! What every door, tool and hook of one server shares: the store, the injected clock and
//! randomness, the parsed content and the audit writer. Nothing here is per request: what a
//! request learns travels with it (mcp-door's request extensions).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_door::Clock;
use mcp_oauth::AddressSource;
use uuid::Uuid;

use crate::access::kinds::{Kind, Random, Tier};
use crate::content::Content;
use crate::domain::Millis;
use crate::mcp::audit_writer::AuditWriter;
use crate::model::Ledger;
use crate::store::SharedStore;

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    ServiceKey,
    OAuth,
}

/// The agent or integration a door belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRef {
    pub id: Uuid,
    pub public_id: String,
    pub name: String,
    /// The clan the door answers for; `None` until the owner sets it.
    pub clan_tag: Option<String>,
}

/// Elixir's view of an authenticated caller, attached to the door's `Principal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub kind: Kind,
    /// The paying account: the person, or the agent's owner.
    pub account_id: Uuid,
    pub agent: Option<AgentRef>,
    /// The effective tier (an agent takes its owner's, capped at leader).
    pub tier: Tier,
    /// The caller's timezone: the account's, or the agent's own (UTC when unset).
    pub timezone: String,
    /// The person's primary player (never set on agent doors).
    pub primary_player_tag: Option<String>,
    pub credential: Credential,
    /// Operator responses waiting in the caller's feedback ledger, counted in the same read
    /// that authenticated it (`meta.feedback_responses_pending`; a call that delivers replies
    /// counts again after it).
    pub pending_responses: i64,
}

impl Caller {
    /// The hourly bucket: one per principal (every agent has its own).
    pub fn hour_subject(&self) -> String {
        match &self.agent {
            Some(a) => format!("agent:{}", a.id),
            None => format!("account:{}", self.account_id),
        }
    }

    /// The daily call counter of the paying account.
    pub fn calls_subject(&self) -> String {
        format!("calls:{}", self.account_id)
    }

    /// The daily live-fetch counter of the paying account.
    pub fn live_subject(&self) -> String {
        format!("live:{}", self.account_id)
    }

    /// The feedback ledger this caller reads and files into.
    pub fn ledger(&self) -> Ledger {
        Ledger {
            account_id: self.account_id,
            agent_id: self.agent.as_ref().map(|a| a.id),
        }
    }
}

/// Settings of one server.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The public origin, without a trailing slash (`https://elixir.poapkings.com`).
    pub public_url: String,
    /// Authenticated requests per principal per UTC clock hour.
    pub hourly_rate: i64,
    /// Where a request's client address (refusal counts, sign-in and registration limits)
    /// comes from: the TCP peer, or a header a trusted proxy sets.
    pub address_source: AddressSource,
    /// The key that signs `battles_query` cursors, derived from the OAuth secret.
    pub cursor_key: CursorKey,
    /// The one budget of a heavy (H) tool's whole aggregation (SURFACE §4.5): past it the
    /// database cancels the read and the call answers `query_timeout`, refunded.
    pub heavy_query_budget: Duration,
    /// Audit rows queued before a call's row waits in a task of its own for room
    /// (`mcp::audit_writer`).
    pub audit_queue: usize,
}

/// The heavy-query budget of SURFACE §4.5.
pub const HEAVY_QUERY_BUDGET: Duration = Duration::from_secs(18);

impl Settings {
    /// The client address of a request, per [`Settings::address_source`].
    pub fn client_address(&self, headers: &http::HeaderMap, peer: Option<IpAddr>) -> String {
        mcp_oauth::client_address(&self.address_source, headers, peer)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            public_url: "https://elixir.poapkings.com".into(),
            hourly_rate: 300,
            address_source: AddressSource::Peer,
            cursor_key: CursorKey::derive(DEVELOPMENT_SECRET),
            heavy_query_budget: HEAVY_QUERY_BUDGET,
            audit_queue: crate::mcp::audit_writer::DEFAULT_QUEUE,
        }
    }
}

/// What [`Settings::default`] derives its cursor key from: only tests and development use
/// it, since `serve` derives the key from the server's OAuth secret.
const DEVELOPMENT_SECRET: &[u8] = b"elixir-development-cursor-secret";

/// The fixed label the cursor key is derived under, so the key differs from the secret and
/// from any other key derived from it.
const CURSOR_KEY_LABEL: &[u8] = b"elixir/battles_query/cursor/v1";

/// The HMAC-SHA256 key of `battles_query` cursors: HMAC-SHA256 of a fixed label keyed by the
/// server's OAuth secret, so every instance sharing the secret signs alike and the secret
/// itself never signs anything. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct CursorKey([u8; 32]);

impl CursorKey {
    /// The key derived from `secret`.
    pub fn derive(secret: &[u8]) -> CursorKey {
        CursorKey(hmac_sha256(secret, &[CURSOR_KEY_LABEL]))
    }

    /// The MAC of `parts` (concatenated) under this key.
    pub fn sign(&self, parts: &[&[u8]]) -> [u8; 32] {
        hmac_sha256(&self.0, parts)
    }
}

/// HMAC-SHA256 of `parts`, concatenated, under `key`.
fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    // HMAC accepts keys of any length; the error branch cannot happen.
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(key) else {
        return [0; 32];
    };
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(<redacted>)")
    }
}

/// Everything shared.
pub struct Services {
    pub store: SharedStore,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn Random>,
    pub content: Arc<Content>,
    pub audit: AuditWriter,
    pub settings: Settings,
    /// The live lane `live: true` reads through (unconfigured without an API token).
    pub live: Arc<crate::recorder::live::LiveLane>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Services {
    pub fn now(&self) -> Millis {
        self.clock.now_millis()
    }
}
