//! The storage boundary: [`OAuthStore`], its records, and the SQLite and PostgreSQL backends
//! with their own migrations. Every secret arrives here already hashed. Each method is one
//! atomic step; the ones that must not race (code redemption, refresh rotation, rate
//! counters, single use) are compare-and-set statements that hold across server instances.

mod postgres;
mod sql;
mod sql_store;
mod sqlite;

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

use async_trait::async_trait;

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// A storage failure, already classified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A unique constraint refused the write.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached or is busy; the caller answers 503.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else; logged, never shown to a client.
    #[error("database error: {0}")]
    Internal(String),
}

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

/// Storage for the authorization server. Implemented for SQLite and PostgreSQL here; a
/// product may bring its own.
#[async_trait]
pub trait OAuthStore: Send + Sync + 'static {
    /// Applies this crate's migrations (idempotent; other migrations in the same
    /// `_sqlx_migrations` table are ignored).
    async fn migrate(&self) -> Result<(), StoreError>;

    async fn insert_client(&self, client: &ClientRecord) -> Result<(), StoreError>;
    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>, StoreError>;
    async fn touch_client(&self, client_id: &str, now: Millis) -> Result<(), StoreError>;
    /// Records the client's first use at `now` unless it was used before: its registration
    /// time (`created_at`) when this was its first use, `None` otherwise (or when unknown).
    async fn first_use_client(
        &self,
        client_id: &str,
        now: Millis,
    ) -> Result<Option<Millis>, StoreError>;
    /// Deletes the clients never used and registered at or before `cutoff`, and in the same
    /// transaction sets the counter of `bucket` for the window `[window_start, window_end)`
    /// (if it exists) to the never-used clients registered in that window: the slots of the
    /// deleted ones, and of any whose first use did not give its slot back, are free again.
    /// Returns the clients deleted.
    async fn purge_unused_clients(
        &self,
        cutoff: Millis,
        bucket: &str,
        window_start: Millis,
        window_end: Millis,
    ) -> Result<u64, StoreError>;

    /// Adds one to the counter of `bucket` in the window starting at `window_start` unless it
    /// already reached `limit`; whether it was added.
    async fn take_rate(
        &self,
        bucket: &str,
        window_start: Millis,
        limit: i64,
    ) -> Result<bool, StoreError>;
    /// Gives back one taken by [`OAuthStore::take_rate`].
    async fn return_rate(&self, bucket: &str, window_start: Millis) -> Result<(), StoreError>;

    async fn insert_pending(&self, pending: &PendingRecord) -> Result<(), StoreError>;
    async fn pending(&self, id: &str) -> Result<Option<PendingRecord>, StoreError>;
    /// Ends the flow; false when it had already ended.
    async fn finish_pending(&self, id: &str, now: Millis) -> Result<bool, StoreError>;

    /// Stores the pending authorization's code, replacing any earlier one (but keeping the
    /// flow's count of wrong entries), and records the address on the pending authorization.
    async fn replace_email_code(&self, code: &EmailCodeRecord) -> Result<(), StoreError>;
    async fn email_code(&self, pending_id: &str) -> Result<Option<EmailCodeRecord>, StoreError>;
    /// Reserves one attempt at the flow's code before it is compared, in one atomic step:
    /// the attempt is counted only while fewer than `max` were, the code is unspent and
    /// unexpired at `now`, and the flow has not ended. The code as it stands after the
    /// reservation (its `attempts` include this one), or `None` when nothing was reserved.
    /// Parallel attempts can therefore never outnumber `max`.
    async fn reserve_code_attempt(
        &self,
        pending_id: &str,
        max: i64,
        now: Millis,
    ) -> Result<Option<EmailCodeRecord>, StoreError>;
    /// Spends the code; false when it was already spent.
    async fn use_email_code(&self, pending_id: &str, now: Millis) -> Result<bool, StoreError>;

    async fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError>;
    async fn session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError>;
    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError>;

    async fn insert_auth_code(&self, code: &AuthCodeRecord) -> Result<(), StoreError>;
    /// The client a code was issued to, without spending it (`None`: no such code).
    async fn auth_code_client(&self, code_hash: &str) -> Result<Option<String>, StoreError>;
    /// Spends a code on its first presentation; marks later ones as replays.
    async fn consume_auth_code(&self, code_hash: &str, now: Millis) -> Result<CodeUse, StoreError>;

    /// Creates a grant with its first token pair. With `code_hash`, atomically records the
    /// grant on the code and creates nothing (returning false) if the code was replayed
    /// meanwhile.
    async fn create_grant(
        &self,
        grant: &GrantRecord,
        code_hash: Option<&str>,
        access: &AccessRecord,
        refresh: &RefreshRecord,
    ) -> Result<bool, StoreError>;
    async fn grant(&self, id: &str) -> Result<Option<GrantRecord>, StoreError>;
    /// Live (unrevoked) grants of an account, oldest first.
    async fn account_grants(&self, account_id: &str) -> Result<Vec<GrantRecord>, StoreError>;
    /// Grants of an account revoked at or after `since`, most recently revoked first.
    async fn revoked_account_grants(
        &self,
        account_id: &str,
        since: Millis,
    ) -> Result<Vec<GrantRecord>, StoreError>;
    /// Replaces a live grant's scopes; false when it is revoked or unknown.
    async fn set_grant_scopes(
        &self,
        id: &str,
        scopes: &[String],
        now: Millis,
    ) -> Result<bool, StoreError>;
    /// Revokes a grant (every token of it dies with it); false when already revoked or unknown.
    async fn revoke_grant(&self, id: &str, now: Millis) -> Result<bool, StoreError>;
    async fn touch_grant(&self, id: &str, now: Millis) -> Result<(), StoreError>;

    /// An access token and its grant.
    async fn access_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(AccessRecord, GrantRecord)>, StoreError>;
    async fn refresh_token(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError>;
    /// Rotates `old_hash` to the new pair; false when it was already rotated.
    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: Millis,
        access: &AccessRecord,
        refresh: &RefreshRecord,
    ) -> Result<bool, StoreError>;

    async fn count_refusal(
        &self,
        credential: &str,
        address: &str,
        day: i64,
        reason: &str,
        now: Millis,
    ) -> Result<(), StoreError>;
    /// Refusal counts of a credential from `since_day` on, newest first.
    async fn refusals(
        &self,
        credential: &str,
        since_day: i64,
    ) -> Result<Vec<RefusalCount>, StoreError>;

    /// Deletes what can no longer be used: ended or expired flows and codes, expired sessions
    /// and tokens, old counters, revoked grants, clients unused since `client_cutoff`.
    /// Returns the number of rows removed.
    async fn purge(&self, now: Millis, client_cutoff: Millis) -> Result<u64, StoreError>;
}

/// Pool and timeout settings of the SQL backends.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub max_connections: u32,
    pub acquire_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`; SQLite's busy timeout.
    pub statement_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 8,
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl DbOptions {
    /// The same settings in [`sqlkit`]'s terms, for opening either backend's pool.
    /// `lock_timeout` is the statement timeout: a lock wait happens inside a statement whose
    /// own timer started earlier, so the statement timeout always fires first and PostgreSQL
    /// behaves as with no `lock_timeout` at all.
    pub(crate) fn pool_settings(&self) -> sqlkit::PoolSettings {
        sqlkit::PoolSettings {
            max_connections: self.max_connections,
            acquire_timeout: self.acquire_timeout,
            statement_timeout: self.statement_timeout,
            lock_timeout: self.statement_timeout,
        }
    }
}

/// The migration versions of this crate start here, far from any product's own, because
/// both share sqlx's `_sqlx_migrations` table when they share a database.
pub const MIGRATION_VERSION_BASE: i64 = 1_000_000;
