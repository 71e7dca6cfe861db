//! The storage boundary, split by area so a caller names the area it needs: [`Lifecycle`]
//! (migrations, readiness, pool use), [`Accounts`], [`Scenarios`], [`Assignments`], [`Play`]
//! and [`Wiki`], with [`Store`] their union for the `Arc<dyn Store>` the server shares. One
//! implementation, [`SqlStore`], serves both backends (SQLite, the embedded default, and
//! PostgreSQL); each area file holds its trait, its records and its SQL. Database errors are
//! classified once, by sqlkit. The rules that decide a play operation are the domain's.

mod accounts;
mod assignments;
mod play;
mod scenarios;
mod sql;
mod states;
mod wiki;

use std::sync::Arc;

pub use accounts::{
    Accounts, AuthorGrant, AuthorTokenInfo, LoginReservation, NewAuthorToken, NewSession, NewUser,
    SessionRecord,
};
pub use assignments::{Assignments, CreateOutcome};
pub use play::{
    Applied, ApplyError, ContextSnapshot, Decide, JournalSnapshot, LiveToken, Load, Play,
};
pub use scenarios::{NewScenario, Scenarios};
pub use sql::{Lifecycle, SqlStore, StoreError};
pub use states::DEFAULT_STATE_CACHE_BYTES;
pub use wiki::Wiki;

/// A pooled connection a request holds from its play-token check on, so its later statements
/// (a read's snapshot, a turn's transaction) run on the same connection instead of a second
/// one from the pool. Dropped, it goes back to the pool.
pub type Held = sqlkit::Conn;

/// The domain's operation types, named here too because [`Play::apply`] takes and runs them.
pub use crate::domain::play::{Decided, Decision, OperationState, WritePlan};

/// Everything Sidequest persists: the union of the area traits. Both backends pass the same
/// suite (`tests/it/store.rs`).
pub trait Store: Lifecycle + Accounts + Scenarios + Assignments + Play + Wiki {}

impl<T> Store for T where T: Lifecycle + Accounts + Scenarios + Assignments + Play + Wiki + ?Sized {}

/// The store every part of the server shares.
pub type SharedStore = Arc<dyn Store>;

/// Connects to `url` (`sqlite://path` or `sqlite::memory:`, `postgres://…`; any other scheme
/// is `Internal`), without migrating.
pub async fn connect(url: &str, pool: &sqlkit::PoolSettings) -> Result<SharedStore, StoreError> {
    Ok(Arc::new(SqlStore::connect(url, pool).await?))
}
