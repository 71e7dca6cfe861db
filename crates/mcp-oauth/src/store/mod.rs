//! The storage boundary: what the authorization server keeps. The contract is split by area
//! (`areas`: [`Clients`], [`Flows`], [`Grants`], [`Tokens`], [`Upkeep`], and their union
//! [`OAuthStore`]), the records it keeps are `records`', and [`SqlStore`] implements every
//! area once for both SQLite and PostgreSQL (`sql`, its rows decoded by `rows`), with each
//! backend's migrations. This file only declares and re-exports: the files below import one
//! another directly, never through it, so no import points back up here.

mod areas;
mod records;
mod rows;
mod sql;

pub use areas::{Clients, Flows, Grants, OAuthStore, StoreError, Tokens, Upkeep};
pub use records::{
    AccessRecord, AuthCodeRecord, ClientRecord, CodeUse, EmailCodeRecord, GrantRecord,
    GrantSubject, Millis, PendingRecord, RefreshRecord, RefusalCount, SessionRecord,
};
pub use sql::{MIGRATION_VERSION_BASE, SqlStore};
