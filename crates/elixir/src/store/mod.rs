//! The storage boundary: the area traits a caller names ([`AccountStore`], [`DoorStore`]
//! (what a door reads and writes on every call: the caller, a tool call's metering, a
//! refund), [`MeteringStore`], [`LedgerStore`], [`PollStore`], [`TrackingStore`],
//! [`RecordStore`], [`PlayerReads`], [`MetaReads`], plus the store's own [`Lifecycle`]),
//! [`Store`] their union for the [`SharedStore`] every part of the server holds, and one
//! implementation, [`SqlStore`], over SQLite (the embedded default) and PostgreSQL with each
//! statement written once. The entities are `crate::model`'s; database errors are classified
//! by sqlkit ([`StoreError`]). Elixir's migrations are numbered from 2_000_001 and run with
//! `ignore_missing`, because mcp-oauth's migrations share the database and its
//! `_sqlx_migrations` table.

mod accounts;
mod batch;
mod door;
mod ledger;
mod meta_reads;
mod metering;
mod player_reads;
mod polls;
mod record;
mod rows;
mod schema;
mod sql_store;
mod tracking;

use std::sync::Arc;

pub use accounts::AccountStore;
pub use door::{DoorStore, Meter, Metered};
pub use ledger::{AUDIT_BATCH, LedgerStore};
pub use meta_reads::{
    DeckDetail, DeckGames, MetaQuery, MetaReads, MetaRows, Population, SegmentFilter,
};
pub use metering::MeteringStore;
pub use player_reads::{BattleTally, PlayerReads, UpstreamTally};
pub use polls::PollStore;
pub use record::{BattleQuery, RecordStore};
pub use schema::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
pub use sql_store::{Lifecycle, SqlStore, StoreError};
pub use tracking::{Bound, Identity, TrackingStore};

/// Every area at once: what the server shares. Implemented for anything that implements
/// them all, so a caller that needs one area can name just that trait.
pub trait Store:
    Lifecycle
    + AccountStore
    + DoorStore
    + MeteringStore
    + LedgerStore
    + PollStore
    + TrackingStore
    + RecordStore
    + PlayerReads
    + MetaReads
{
}

impl<T> Store for T where
    T: Lifecycle
        + AccountStore
        + DoorStore
        + MeteringStore
        + LedgerStore
        + PollStore
        + TrackingStore
        + RecordStore
        + PlayerReads
        + MetaReads
{
}

/// The store every part of the server shares.
pub type SharedStore = Arc<dyn Store>;

/// Connects to `url` (`sqlite://path`, `sqlite::memory:` or `postgres://…`), without migrating.
pub async fn connect(url: &str, pool: &sqlkit::PoolSettings) -> Result<SharedStore, StoreError> {
    Ok(Arc::new(SqlStore::connect(url, pool).await?))
}
