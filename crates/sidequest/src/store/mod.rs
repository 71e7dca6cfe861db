//! The storage boundary: one `Store` trait, a SQLite backend (the embedded default) and a
//! PostgreSQL backend. Database errors are translated here and nowhere else.

pub mod postgres;
mod sql;
mod sql_store;
pub mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use uuid::Uuid;

use crate::domain::play::DomainError;
use crate::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};
use crate::domain::{
    Assignment, Consequence, ConsequenceStatus, JournalEvent, Millis, Node, PlayStatus,
    PlayTokenGrant, Receipt, Scenario, User,
};

/// A storage failure, already classified for the wire.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The row asked for does not exist, or a row a write refers to (its user, scenario, ...)
    /// does not.
    #[error("not found")]
    NotFound,
    /// A unique constraint refused the write (duplicate username, assignment id, ...).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached or timed out; the caller answers 503.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else; logged, never shown to a client.
    #[error("database error: {0}")]
    Internal(String),
}

/// A failure of [`Store::apply`]: either the domain refused the operation or the store failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A user to create.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    /// An argon2id PHC string, when the user can sign in with a password.
    pub password_hash: Option<String>,
    pub is_gm: bool,
    pub created_at: Millis,
}

/// A scenario to create, with the nodes of its first published source version (1).
#[derive(Debug, Clone)]
pub struct NewScenario {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub title: String,
    pub nodes: Vec<Node>,
    pub created_at: Millis,
}

/// A browser session to store (the cookie value and CSRF token are kept as SHA-256 digests).
#[derive(Debug, Clone)]
pub struct NewSession {
    pub digest: String,
    pub user_id: Uuid,
    pub csrf_digest: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// The failure rows one login attempt holds while its password is checked. A wrong password
/// leaves them: they are its recorded failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginReservation {
    /// Per key, in the order given: the key and the id of the failure row reserved for it.
    pub rows: Vec<(String, i64)>,
    /// The most failures any key has in the window, this attempt's included.
    pub failures: i64,
}

/// A live session and its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub user: User,
    pub csrf_digest: String,
    pub expires_at: Millis,
}

/// An author personal token to store.
#[derive(Debug, Clone)]
pub struct NewAuthorToken {
    pub id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    pub digest: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// What the owner sees of an author token (never the token).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuthorTokenInfo {
    pub id: Uuid,
    pub name: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub revoked_at: Option<Millis>,
}

/// What the store knows about a presented author token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorGrant {
    pub token_id: Uuid,
    pub user: User,
    pub expires_at: Millis,
    pub revoked: bool,
}

/// The outcome of an idempotent assignment creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    /// A new assignment was inserted.
    Created,
    /// The same id was created before with the same creation hash: this is it.
    Existing(Box<Assignment>),
    /// The same id exists with a different creation hash.
    Conflict,
}

/// What [`Store::apply`] shows the domain inside the locked transaction.
#[derive(Debug)]
pub struct OperationState<'a> {
    /// The assignment row, locked for the rest of the transaction.
    pub assignment: &'a Assignment,
    /// The receipt already stored for this operation id on this assignment, if any.
    pub receipt: Option<&'a Receipt>,
    /// The consequences named by the operation that belong to this assignment (reviews).
    pub consequences: &'a [Consequence],
    /// How many of the assignment's consequences are pending, when [`Load::pending`] asked.
    pub pending: Option<i64>,
}

/// What [`Store::apply`] loads besides the assignment and the receipt.
#[derive(Debug, Clone, Copy)]
pub struct Load<'a> {
    /// Consequences the operation names (only those of this assignment are loaded).
    pub consequences: &'a [Uuid],
    /// Count the assignment's pending consequences inside the transaction.
    pub pending: bool,
}

impl Load<'static> {
    /// Nothing beyond the assignment and the receipt.
    pub const NOTHING: Load<'static> = Load {
        consequences: &[],
        pending: false,
    };
    /// The pending count as well (a finish reports it).
    pub const PENDING: Load<'static> = Load {
        consequences: &[],
        pending: true,
    };
}

impl<'a> Load<'a> {
    /// These consequences as well (a review decides them).
    pub fn consequences(ids: &'a [Uuid]) -> Self {
        Load {
            consequences: ids,
            pending: false,
        }
    }
}

/// A GM decision to write on one consequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub id: Uuid,
    pub status: ConsequenceStatus,
    pub note: Option<String>,
    pub decided_at: Millis,
}

/// Everything one operation writes, in one transaction.
#[derive(Debug, Clone)]
pub struct WritePlan {
    pub version: i64,
    pub status: PlayStatus,
    pub memory: String,
    pub current_scene: Option<String>,
    pub summary: Option<String>,
    pub updated_at: Millis,
    pub events: Vec<JournalEvent>,
    pub consequences: Vec<Consequence>,
    pub decisions: Vec<Decided>,
    pub receipt: Receipt,
}

/// The domain's verdict on an operation, taken while the assignment row is locked.
#[derive(Debug)]
pub enum Decision {
    /// An identical operation was already committed: answer with its receipt, write nothing.
    Replay(Receipt),
    /// Write this plan (and the receipt inside it) atomically.
    Write(Box<WritePlan>),
}

/// The rule the store runs inside the transaction; pure, no I/O.
pub type Decide =
    Box<dyn for<'a> FnOnce(OperationState<'a>) -> Result<Decision, DomainError> + Send>;

/// What [`Store::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    Committed(Receipt),
    Replayed(Receipt),
}

/// Everything Sidequest persists. Both backends pass the same suite (`tests/it/store.rs`).
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Applies the backend's migrations (idempotent).
    async fn migrate(&self) -> Result<(), StoreError>;
    /// A cheap round trip, for readiness.
    async fn ping(&self) -> Result<(), StoreError>;
    /// Open and idle connections of the pool, for the metrics.
    fn pool_use(&self) -> mcp_door::PoolUse;

    /// Creates a user; a taken username is `Conflict`.
    async fn create_user(&self, user: &NewUser) -> Result<User, StoreError>;
    async fn user_by_username(&self, username: &str) -> Result<Option<User>, StoreError>;
    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>, StoreError>;
    /// Sets the active flag; an unknown user is `NotFound`.
    async fn set_user_active(&self, id: Uuid, active: bool) -> Result<(), StoreError>;

    /// Creates a scenario with its nodes frozen as source version 1, and the same nodes as its
    /// draft (one transaction).
    async fn create_scenario(&self, scenario: &NewScenario) -> Result<Scenario, StoreError>;
    async fn scenario(&self, id: Uuid) -> Result<Option<Scenario>, StoreError>;
    /// The owner's scenario with this exact title, if any (oldest first).
    async fn scenario_by_title(
        &self,
        owner_id: Uuid,
        title: &str,
    ) -> Result<Option<Scenario>, StoreError>;
    /// The nodes of one source version, ordered by id.
    async fn nodes(&self, scenario_id: Uuid, version: i64) -> Result<Vec<Node>, StoreError>;

    /// Inserts a new assignment; an existing id is `Conflict`.
    async fn create_assignment(&self, assignment: &Assignment) -> Result<(), StoreError>;
    async fn assignment(&self, id: Uuid) -> Result<Option<Assignment>, StoreError>;

    /// Stores a new play token digest for the assignment and revokes every earlier token of it,
    /// in one transaction.
    async fn issue_play_token(
        &self,
        assignment_id: Uuid,
        digest: &str,
        now: Millis,
        expires_at: Millis,
    ) -> Result<(), StoreError>;
    /// Revokes the assignment's live tokens; returns how many were live.
    async fn revoke_play_tokens(&self, assignment_id: Uuid, now: Millis)
    -> Result<u64, StoreError>;
    /// Looks a token up by its SHA-256 digest (hex), with the activity of its player and GM.
    async fn play_token(&self, digest: &str) -> Result<Option<PlayTokenGrant>, StoreError>;

    /// One page of the journal ordered by version ascending, and the total it pages over.
    /// `player_view` keeps only the kinds the player sees.
    async fn journal_page(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        offset: i64,
        limit: i64,
    ) -> Result<(i64, Vec<JournalEvent>), StoreError>;
    /// The newest `n` events (ascending by version).
    /// What `get_play_context` reads, on one connection: the assignment and its scenario's
    /// title, the newest `events` player-visible journal events (oldest first) and the newest
    /// `consequences` consequences. `None` when the assignment does not exist.
    async fn context_snapshot(
        &self,
        assignment_id: Uuid,
        events: i64,
        consequences: i64,
    ) -> Result<Option<ContextSnapshot>, StoreError>;
    async fn recent_journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        n: i64,
    ) -> Result<Vec<JournalEvent>, StoreError>;
    /// Every event (ascending by version).
    async fn journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
    ) -> Result<Vec<JournalEvent>, StoreError>;
    /// The newest `n` consequences, newest first (by version, then creation order).
    async fn recent_consequences(
        &self,
        assignment_id: Uuid,
        n: i64,
    ) -> Result<Vec<Consequence>, StoreError>;
    /// Counts the assignment's consequences that are still pending.
    async fn pending_count(&self, assignment_id: Uuid) -> Result<i64, StoreError>;
    async fn receipt(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
    ) -> Result<Option<Receipt>, StoreError>;

    /// The one write path of play: locks the assignment row, loads its receipt for
    /// `operation_id` and what `load` names, runs `decide`, and writes its plan
    /// atomically. An unknown assignment is `Domain(NotFound)`.
    async fn apply(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
        load: Load<'_>,
        decide: Decide,
    ) -> Result<Applied, ApplyError>;

    // ---- accounts and sessions (REST) ----

    /// The user's argon2id PHC string, if they can sign in with a password.
    async fn password_hash(&self, user_id: Uuid) -> Result<Option<String>, StoreError>;
    /// Sets (or clears) the user's password hash; unknown user → `NotFound`.
    async fn set_password_hash(&self, user_id: Uuid, hash: Option<&str>) -> Result<(), StoreError>;
    /// Stores a new session and deletes every session expired by its `created_at`.
    async fn create_session(&self, session: &NewSession) -> Result<(), StoreError>;
    /// The session with this digest and its user (expired ones are returned too; the caller
    /// checks `expires_at` against its clock).
    async fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError>;
    async fn delete_session(&self, digest: &str) -> Result<(), StoreError>;
    /// Ends every session of a user (on deactivation).
    async fn delete_sessions_of(&self, user_id: Uuid) -> Result<u64, StoreError>;
    /// Reserves one failed login at `at` for each of `keys` (distinct; a username and an
    /// address) before a password is checked, in one write transaction: it locks the keys'
    /// rows (in [`login::lock_slots`](crate::domain::login::lock_slots) order), counts each
    /// key's failures at or after `since`, and only if every count is under `max` inserts one
    /// failure row per key. `None`, with nothing written, when a key is at the limit. However
    /// many attempts race, on however many instances of one database, at most `max` are
    /// reserved per key and window. Failures older than a day are pruned as attempts arrive.
    async fn reserve_login_attempt(
        &self,
        keys: &[String],
        at: Millis,
        since: Millis,
        max: i64,
    ) -> Result<Option<LoginReservation>, StoreError>;
    /// After the right password: deletes the reservation's rows and, for `clear_key` (the
    /// username), every failure reserved before this one. Rows of the other keys recorded
    /// before stay, and so do attempts reserved after this one.
    async fn release_login_reservation(
        &self,
        reservation: &LoginReservation,
        clear_key: &str,
    ) -> Result<(), StoreError>;
    /// Failed logins for `key` at or after `since`, for operators and tests. The login path
    /// never reads this before deciding: [`Store::reserve_login_attempt`] counts and records
    /// in one transaction.
    async fn login_failures_since(&self, key: &str, since: Millis) -> Result<i64, StoreError>;

    // ---- scenario authoring ----

    /// The owner's scenarios, oldest first.
    async fn scenarios_of(&self, owner_id: Uuid) -> Result<Vec<Scenario>, StoreError>;
    /// Creates a scenario with no published version yet (version 0) and no nodes.
    async fn create_draft_scenario(
        &self,
        id: Uuid,
        owner_id: Uuid,
        title: &str,
        now: Millis,
    ) -> Result<Scenario, StoreError>;
    /// The editable (draft) nodes, ordered by id. `create_scenario` seeds them with its nodes.
    async fn draft_nodes(&self, scenario_id: Uuid) -> Result<Vec<Node>, StoreError>;
    /// Inserts or replaces one draft node; an unknown scenario is `NotFound`.
    async fn put_draft_node(&self, scenario_id: Uuid, node: &Node) -> Result<(), StoreError>;
    /// Deletes one draft node; whether it existed.
    async fn delete_draft_node(&self, scenario_id: Uuid, node_id: &str)
    -> Result<bool, StoreError>;
    /// Freezes the draft nodes as the next source version (one transaction); returns it. An
    /// unknown scenario is `NotFound`.
    async fn publish_scenario(&self, scenario_id: Uuid) -> Result<i64, StoreError>;

    // ---- assignments for humans ----

    /// Inserts the assignment unless its id exists: same `creation_hash` → `Existing`, another
    /// → `Conflict`. Concurrent identical creates yield one assignment.
    async fn create_assignment_once(
        &self,
        assignment: &Assignment,
        creation_hash: &str,
    ) -> Result<CreateOutcome, StoreError>;
    /// Assignments where the user is GM or player, newest first, at most `limit`.
    async fn assignments_of(
        &self,
        user_id: Uuid,
        limit: i64,
    ) -> Result<Vec<Assignment>, StoreError>;
    /// Every consequence of the assignment, by version then position.
    async fn consequences(&self, assignment_id: Uuid) -> Result<Vec<Consequence>, StoreError>;

    // ---- author personal tokens ----

    async fn create_author_token(&self, token: &NewAuthorToken) -> Result<(), StoreError>;
    /// The user's author tokens, newest first.
    async fn author_tokens(&self, user_id: Uuid) -> Result<Vec<AuthorTokenInfo>, StoreError>;
    /// Revokes one of the user's tokens; whether it was found (and not yet revoked).
    async fn revoke_author_token(
        &self,
        user_id: Uuid,
        token_id: Uuid,
        now: Millis,
    ) -> Result<bool, StoreError>;
    /// Looks an author token up by digest, with its user.
    async fn author_token(&self, digest: &str) -> Result<Option<AuthorGrant>, StoreError>;

    // ---- the campaign wiki (private to its owner) ----

    /// The owner's pages, by slug.
    async fn wiki_pages(&self, owner_id: Uuid) -> Result<Vec<WikiPage>, StoreError>;
    async fn wiki_page(&self, owner_id: Uuid, slug: &str) -> Result<Option<WikiPage>, StoreError>;
    /// Writes a page if it is at `expected_version` (0: must not exist) as the next version,
    /// and adds that version to the history; one transaction. Of concurrent writers at the
    /// same version one writes and the others get `Conflict`.
    async fn write_wiki_page(
        &self,
        owner_id: Uuid,
        write: &WikiWrite,
        now: Millis,
    ) -> Result<WikiWriteOutcome, StoreError>;
    /// Every version of a page, the current one included, newest first.
    async fn wiki_history(&self, owner_id: Uuid, slug: &str) -> Result<Vec<WikiPage>, StoreError>;
}

/// [`Store::context_snapshot`]'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSnapshot {
    pub assignment: Assignment,
    /// `None` only if the scenario row is gone (scenarios are never deleted).
    pub scenario_title: Option<String>,
    pub events: Vec<JournalEvent>,
    pub consequences: Vec<Consequence>,
}

/// The store every part of the server shares.
pub type SharedStore = Arc<dyn Store>;

/// Connects to `url` (`sqlite://path` or `sqlite::memory:`, `postgres://…`), without migrating.
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

/// Pool and timeout settings shared by both backends.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub max_connections: u32,
    /// How long to wait for a pooled connection before answering 503.
    pub acquire_timeout: std::time::Duration,
    /// PostgreSQL `statement_timeout`; SQLite busy timeout.
    pub statement_timeout: std::time::Duration,
    /// PostgreSQL `lock_timeout`.
    pub lock_timeout: std::time::Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(10),
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
