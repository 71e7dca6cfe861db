//! Elixir's schema: the migrations of each backend, in order, and the [`sqlkit::Schema`] of
//! [`SqlStore`] that applies them and then runs the one-off fills they leave pending.

use sqlkit::{Db, Embedded};

use super::meta_reads::backfill_games;
use super::sql_store::{SqlStore, StoreError};

/// Elixir's SQLite migrations, in order.
pub const SQLITE_MIGRATIONS: Embedded = Embedded(&[
    (
        2_000_001,
        "elixir init",
        include_str!("../../migrations/sqlite/2000001_init.sql"),
    ),
    (
        2_000_002,
        "elixir upstream",
        include_str!("../../migrations/sqlite/2000002_upstream.sql"),
    ),
    (
        2_000_003,
        "audit by agent",
        include_str!("../../migrations/sqlite/2000003_audit_agent.sql"),
    ),
    (
        2_000_004,
        "the record",
        include_str!("../../migrations/sqlite/2000004_record.sql"),
    ),
    (
        2_000_005,
        "the meta index",
        include_str!("../../migrations/sqlite/2000005_meta.sql"),
    ),
    (
        2_000_006,
        "the meta rollups",
        include_str!("../../migrations/sqlite/2000006_meta_days.sql"),
    ),
    (
        2_000_007,
        "games by player",
        include_str!("../../migrations/sqlite/2000007_games_by_player.sql"),
    ),
    (
        2_000_008,
        "observations without foreign-key checks",
        include_str!("../../migrations/sqlite/2000008_observations_without_fk_checks.sql"),
    ),
]);

/// Elixir's PostgreSQL migrations, in order.
pub const POSTGRES_MIGRATIONS: Embedded = Embedded(&[
    (
        2_000_001,
        "elixir init",
        include_str!("../../migrations/postgres/2000001_init.sql"),
    ),
    (
        2_000_002,
        "elixir upstream",
        include_str!("../../migrations/postgres/2000002_upstream.sql"),
    ),
    (
        2_000_003,
        "audit by agent",
        include_str!("../../migrations/postgres/2000003_audit_agent.sql"),
    ),
    (
        2_000_004,
        "the record",
        include_str!("../../migrations/postgres/2000004_record.sql"),
    ),
    (
        2_000_005,
        "the meta index",
        include_str!("../../migrations/postgres/2000005_meta.sql"),
    ),
    (
        2_000_006,
        "the meta rollups",
        include_str!("../../migrations/postgres/2000006_meta_days.sql"),
    ),
    (
        2_000_007,
        "games by player",
        include_str!("../../migrations/postgres/2000007_games_by_player.sql"),
    ),
    (
        2_000_008,
        "battle bodies in lz4",
        include_str!("../../migrations/postgres/2000008_battle_bodies_lz4.sql"),
    ),
    (
        2_000_009,
        "observations without foreign-key checks",
        include_str!("../../migrations/postgres/2000009_observations_without_fk_checks.sql"),
    ),
]);

/// Elixir's schema. mcp-oauth's migrations share the database (and its `_sqlx_migrations`
/// table), so versions this store does not know are ignored; once the scripts are applied, the
/// one-off fills they leave pending run (the meta index of battles recorded before it existed).
/// Migrate, ping and pool use are sqlkit's one [`Lifecycle`] over it.
impl sqlkit::Schema for SqlStore {
    const SQLITE: sqlkit::Embedded = SQLITE_MIGRATIONS;
    const POSTGRES: sqlkit::Embedded = POSTGRES_MIGRATIONS;
    const SHARES_DATABASE: bool = true;

    fn db(&self) -> &Db {
        &self.db
    }

    async fn after_migrate(&self) -> Result<(), StoreError> {
        backfill_games(&self.db).await?;
        Ok(())
    }
}
