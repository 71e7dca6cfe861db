//! The one store implementation's handle: [`SqlStore`] over [`sqlkit::Db`] (either backend),
//! its migrations and [`Lifecycle`]; the pool settings are sqlkit's [`sqlkit::PoolSettings`]. Database errors are classified by sqlkit
//! ([`StoreError`] is its [`DbFailure`]); the statements live in the area files, and the one
//! place the backends' SQL differs, the row lock, is [`sqlkit::Backend::row_lock`].

use sqlkit::{Db, DbFailure, Embedded, PoolSettings};

use super::states::{DEFAULT_STATE_CACHE_BYTES, States};

/// A storage failure, already classified for the wire: not found (or a row a write refers to
/// is missing), conflict (a unique constraint), unavailable (503) or internal. It is sqlkit's
/// classification itself, not a copy of it.
pub type StoreError = DbFailure;
pub use sqlkit::Lifecycle;

const SQLITE_MIGRATIONS: Embedded = Embedded(&[
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "humans",
        include_str!("../../migrations/sqlite/0002_humans.sql"),
    ),
    (
        3,
        "session expiry",
        include_str!("../../migrations/sqlite/0003_session_expiry.sql"),
    ),
    (
        4,
        "login reservations",
        include_str!("../../migrations/sqlite/0004_login_reservations.sql"),
    ),
]);

const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
    (
        1,
        "init",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "humans",
        include_str!("../../migrations/postgres/0002_humans.sql"),
    ),
    (
        3,
        "session expiry",
        include_str!("../../migrations/postgres/0003_session_expiry.sql"),
    ),
    (
        4,
        "login reservations",
        include_str!("../../migrations/postgres/0004_login_reservations.sql"),
    ),
]);

/// Sidequest's store on SQLite (the embedded default: one WAL file, every write transaction
/// `BEGIN IMMEDIATE`) or PostgreSQL (several instances on one database; a play operation's
/// write is one statement that locks its assignment row by updating it, only at the version
/// the operation was decided on). The schemas agree (uuids as TEXT), so each statement is
/// written once.
#[derive(Debug, Clone)]
pub struct SqlStore {
    pub(super) db: Db,
    /// The assignment rows this instance last wrote (see [`super::states`]).
    pub(super) states: States,
}

impl SqlStore {
    /// Opens the database `url` names (`sqlite://…`, `sqlite::memory:`, `postgres://…`; any
    /// other scheme is `Internal`) with the pool size and timeouts of `pool`. Does not migrate.
    pub async fn connect(url: &str, pool: &PoolSettings) -> Result<Self, StoreError> {
        Ok(Self::new(Db::open_checked(url, pool).await?))
    }

    /// The store over an open database.
    pub fn new(db: Db) -> Self {
        Self {
            db,
            states: States::new(DEFAULT_STATE_CACHE_BYTES),
        }
    }
}

/// Sidequest's schema: its own migrations, alone in the database. Migrate, ping and pool use
/// are sqlkit's one [`Lifecycle`] over it.
impl sqlkit::Schema for SqlStore {
    const SQLITE: sqlkit::Embedded = SQLITE_MIGRATIONS;
    const POSTGRES: sqlkit::Embedded = POSTGRES_MIGRATIONS;
    const SHARES_DATABASE: bool = false;

    fn db(&self) -> &Db {
        &self.db
    }
}
