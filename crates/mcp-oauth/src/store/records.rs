//! The records the store keeps and hands back, one per table (plus what a code presentation
//! found). Plain data: how they are stored is `sql`'s, which methods read and write them is
//! `areas`'.

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// A registered client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRecord {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    pub registered_from: String,
    pub created_at: Millis,
    pub last_used_at: Millis,
    /// When a consent first issued it an authorization code; `None` while it never was (it
    /// then holds one of its registration day's slots, and the purge deletes it after
    /// [`RegistrationPolicy::unused_client_ttl`](crate::RegistrationPolicy)).
    pub first_used_at: Option<Millis>,
}

/// An authorization request between the first page and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRecord {
    pub id: String,
    /// SHA-256 of the CSRF token the page carries.
    pub csrf_hash: String,
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    /// The `scope` the client named, canonical and space-joined; `None` when it named none.
    pub requested_scope: Option<String>,
    /// The account the browser was signed in as when the page was shown (the signed-in path).
    pub signed_in_account: Option<String>,
    /// The address a code was last sent to.
    pub email: Option<String>,
    pub created_at: Millis,
    pub expires_at: Millis,
    /// Set once the flow ended (code issued, denied, or dead after too many wrong codes).
    pub done_at: Option<Millis>,
}

/// The one live email code of a pending authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailCodeRecord {
    pub pending_id: String,
    pub email: String,
    /// HMAC-SHA256 (server secret) of the pending id and the code.
    pub code_hash: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub attempts: i64,
    pub used_at: Option<Millis>,
}

/// A browser session (the cookie's SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub id_hash: String,
    pub account_id: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// Who a grant (or the code that will become one) is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSubject {
    pub account_id: String,
    pub subject_kind: String,
    pub subject_id: String,
    pub personal: bool,
}

/// An issued authorization code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthCodeRecord {
    pub code_hash: String,
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub subject: GrantSubject,
    pub scopes: Vec<String>,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// What presenting an authorization code found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeUse {
    /// First presentation: the code is now spent.
    Fresh(Box<AuthCodeRecord>),
    /// Presented before; `grant_id` is the grant its first redemption created, if any.
    Replayed { grant_id: Option<String> },
    /// No such code.
    Unknown,
}

/// A grant: one client's access to one door for one subject, with its current scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRecord {
    pub id: String,
    pub client_id: String,
    pub client_name: String,
    pub resource: String,
    pub subject: GrantSubject,
    pub scopes: Vec<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub last_used_at: Millis,
    pub revoked_at: Option<Millis>,
}

/// An access token (by hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRecord {
    pub token_hash: String,
    pub grant_id: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// A refresh token (by hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRecord {
    pub token_hash: String,
    pub grant_id: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    /// When it was exchanged for its successor.
    pub rotated_at: Option<Millis>,
    pub successor_hash: Option<String>,
}

/// Refused presentations of one credential from one address on one day.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusalCount {
    pub credential: String,
    pub address: String,
    /// Days since the Unix epoch (UTC).
    pub day: i64,
    pub reason: String,
    pub count: i64,
    pub last_at: Millis,
}
