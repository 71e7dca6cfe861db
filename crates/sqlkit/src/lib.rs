//! sqlkit: the sqlx plumbing every product store shares, so it exists once. It owns the
//! classification of `sqlx::Error` ([`DbFailure`]), embedded migrations ([`Embedded`]), typed
//! column access ([`Cols`]), opening SQLite and PostgreSQL pools ([`open_sqlite`],
//! [`open_postgres`]: PostgreSQL's is [`PgPool`], which lends a settled connection again without
//! a round trip; its statements run under a client-side deadline, see
//! [`PoolSettings::query_timeout`]) and the one database handle every store runs its statements through
//! ([`Db`], [`Tx`], [`Row`], [`sql`]) and reads under a time budget the database enforces
//! ([`BudgetedRead`]), short SQLite reads answered in place on the calling thread
//! ([`Db::read_first`]), a store's upkeep written once over its migrations ([`Schema`] gives [`Lifecycle`]: migrate, ping, pool use; [`open_migrated`] opens a store ready for use) and online copies of a SQLite database ([`backup_sqlite`]), so a store is plain Rust with each statement once. Statements, schemas, row types and each product's `StoreError` stay in
//! the products.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backup;
mod budget;
mod cols;
mod db;
mod failure;
mod inplace;
mod lifecycle;
mod migrate;
mod pg;
mod pg_pool;
mod pool;
mod statement;

pub use backup::{Backup, BackupError, backup_sqlite};
pub use budget::BudgetedRead;
pub use cols::Cols;
pub use db::{Backend, Conn, Db, Done, Row, Runner, Tx, backend_of};
pub use failure::DbFailure;
pub use inplace::{InPlace, OwnedRow};
pub use lifecycle::{Lifecycle, OpenError, PoolUse, Schema, open_migrated};
pub use migrate::Embedded;
pub use pg_pool::PgPool;
pub use pool::{
    PoolSettings, SQLITE_DEFAULT_CACHE_KIB, SQLITE_WAL_AUTOCHECKPOINT_PAGES, open_postgres,
    open_sqlite,
};
pub use statement::{Arg, Statement, sql};
