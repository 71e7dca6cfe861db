//! The store's contract, split by area so a caller names only what it needs: [`Clients`]
//! (registrations), [`Flows`] (what a sign-in holds while it runs: pending authorizations,
//! email codes, sessions, rate counters), [`Grants`] (authorization codes and the grants they
//! become), [`Tokens`] (access and refresh tokens, refusal counts) and [`Upkeep`] (migrations
//! and the purge that spans every area). [`OAuthStore`] is their union, the one trait object
//! the server holds. Every secret arrives here already hashed. Each method is one atomic step;
//! the ones that must not race (code redemption, refresh rotation, rate counters, single use)
//! are compare-and-set statements that hold across server instances. The SQL is `sql`'s.

use async_trait::async_trait;

use super::records::{
    AccessRecord, AuthCodeRecord, ClientRecord, CodeUse, EmailCodeRecord, GrantRecord, Millis,
    PendingRecord, RefreshRecord, RefusalCount, SessionRecord,
};

/// A storage failure, already classified: sqlkit's [`DbFailure`](sqlkit::DbFailure) itself, so
/// database errors are translated in one place (sqlkit's) and nothing converts between twins.
/// Lookups fetch optionally and say "none" in their results; the store answers
/// [`NotFound`](sqlkit::DbFailure::NotFound) only when a row a write names is missing (a
/// foreign key), which callers treat like any failure that is not `Unavailable`.
pub use sqlkit::DbFailure as StoreError;

/// Registered clients.
#[async_trait]
pub trait Clients: Send + Sync + 'static {
    /// Stores a new registration (a taken `client_id` is a conflict).
    async fn insert_client(&self, client: &ClientRecord) -> Result<(), StoreError>;
    /// The client registered as `client_id`, if any.
    async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>, StoreError>;
    /// Moves the client's `last_used_at` forward to `now` (never back).
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
}

/// What a sign-in holds while it runs: rate counters, pending authorizations, their email
/// codes, browser sessions.
#[async_trait]
pub trait Flows: Send + Sync + 'static {
    /// Adds one to the counter of `bucket` in the window starting at `window_start` unless it
    /// already reached `limit`; whether it was added.
    async fn take_rate(
        &self,
        bucket: &str,
        window_start: Millis,
        limit: i64,
    ) -> Result<bool, StoreError>;
    /// Gives back one taken by [`Flows::take_rate`].
    async fn return_rate(&self, bucket: &str, window_start: Millis) -> Result<(), StoreError>;

    /// Stores a new pending authorization.
    async fn insert_pending(&self, pending: &PendingRecord) -> Result<(), StoreError>;
    /// The pending authorization `id`, ended or not.
    async fn pending(&self, id: &str) -> Result<Option<PendingRecord>, StoreError>;
    /// Ends the flow; false when it had already ended.
    async fn finish_pending(&self, id: &str, now: Millis) -> Result<bool, StoreError>;

    /// Stores the pending authorization's code, replacing any earlier one (but keeping the
    /// flow's count of wrong entries), and records the address on the pending authorization.
    async fn replace_email_code(&self, code: &EmailCodeRecord) -> Result<(), StoreError>;
    /// The pending authorization's current code, spent or not.
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

    /// Stores a new browser session.
    async fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError>;
    /// The session whose cookie hashes to `id_hash`, expired or not.
    async fn session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Ends a session (signing out); nothing when there is none.
    async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError>;
}

/// Authorization codes and the grants they become.
#[async_trait]
pub trait Grants: Send + Sync + 'static {
    /// Stores an issued code.
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
    /// The grant `id`, revoked or not.
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
    /// Moves the grant's `last_used_at` forward to `now` (never back).
    async fn touch_grant(&self, id: &str, now: Millis) -> Result<(), StoreError>;
}

/// Access and refresh tokens, and the counts of refused presentations.
#[async_trait]
pub trait Tokens: Send + Sync + 'static {
    /// An access token and its grant.
    async fn access_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(AccessRecord, GrantRecord)>, StoreError>;
    /// A refresh token, rotated or not.
    async fn refresh_token(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError>;
    /// Rotates `old_hash` to the new pair; false when it was already rotated.
    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: Millis,
        access: &AccessRecord,
        refresh: &RefreshRecord,
    ) -> Result<bool, StoreError>;

    /// Counts one refused presentation of `credential` from `address` on `day`.
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
}

/// What keeps the store itself in shape: its schema and the purge across every area.
#[async_trait]
pub trait Upkeep: Send + Sync + 'static {
    /// Applies this crate's migrations (idempotent; other migrations in the same
    /// `_sqlx_migrations` table are ignored).
    async fn migrate(&self) -> Result<(), StoreError>;

    /// Deletes what can no longer be used: ended or expired flows and codes, expired sessions
    /// and tokens, old counters, revoked grants, clients unused since `client_cutoff`.
    /// Returns the number of rows removed.
    async fn purge(&self, now: Millis, client_cutoff: Millis) -> Result<u64, StoreError>;
}

/// Storage for the authorization server: every area. Implemented for SQLite and PostgreSQL by
/// [`SqlStore`](super::SqlStore); a product may bring its own by implementing the five area
/// traits (this one then comes with them).
pub trait OAuthStore: Clients + Flows + Grants + Tokens + Upkeep {}

impl<T: Clients + Flows + Grants + Tokens + Upkeep + ?Sized> OAuthStore for T {}
