//! The player-reads area: the statements the Players and Service tools need beyond the
//! record area's — a player's or a clan's recorded battles counted over a window, the
//! battle-log reads on either side of a window (so coverage can say what was measured at its
//! edges), several player rows at once, and the upstream receipts of the last day.
//! [`PlayerReads`] and its SQL; what the numbers mean is the tools'.

use async_trait::async_trait;
use sqlkit::{Cols, sql};

use super::record::{PLAYER_COLUMNS, READ_COLUMNS, log_read, player_row};
use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::{LogRead, PlayerRow};

/// Recorded battles counted over a window, with the first and last battle times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BattleTally {
    /// Distinct battles.
    pub battles: i64,
    pub first_at: Option<Millis>,
    pub last_at: Option<Millis>,
}

/// The upstream receipts of the last day (SURFACE §7.5), for elixir_data_insights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UpstreamTally {
    /// Fetches sent in the last 24 h (answered or not).
    pub requests_24h: i64,
    /// Of them, answered HTTP 429.
    pub throttled_24h: i64,
    /// Fetches sent in the last hour, for the observed rate.
    pub requests_1h: i64,
}

/// What the Players and Service tools read besides the record area.
#[async_trait]
pub trait PlayerReads: Send + Sync + 'static {
    /// A player's recorded battles with `from <= battle_time < to`.
    async fn battle_tally(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError>;
    /// Distinct battles in `[from, to)` in which a recorded player played for `clan`.
    async fn clan_battle_tally(
        &self,
        clan: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError>;
    /// The player's newest battle-log read strictly before `at`.
    async fn log_read_before(
        &self,
        player: &str,
        at: Millis,
    ) -> Result<Option<LogRead>, StoreError>;
    /// The player's oldest battle-log read at or after `at`.
    async fn log_read_from(&self, player: &str, at: Millis) -> Result<Option<LogRead>, StoreError>;
    /// The stored rows of these tags (unknown tags are left out), by tag.
    async fn players_by_tags(&self, tags: &[String]) -> Result<Vec<PlayerRow>, StoreError>;
    /// The receipts since `day_from`, and those since `hour_from`.
    async fn upstream_tally(
        &self,
        day_from: Millis,
        hour_from: Millis,
    ) -> Result<UpstreamTally, StoreError>;
}

fn tally(r: &impl Cols) -> Result<BattleTally, StoreError> {
    Ok(BattleTally {
        battles: r.int("n")?,
        first_at: r.opt_int("first")?,
        last_at: r.opt_int("last")?,
    })
}

#[async_trait]
impl PlayerReads for SqlStore {
    async fn battle_tally(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError> {
        let r = sql(
            "SELECT COUNT(*) AS n, MIN(battle_time) AS first, MAX(battle_time) AS last \
             FROM battle_players WHERE player_tag = $1 AND battle_time >= $2 AND battle_time < $3",
        )
        .bind(player)
        .bind(from)
        .bind(to)
        .fetch_one(&self.db)
        .await?;
        tally(&r)
    }

    async fn clan_battle_tally(
        &self,
        clan: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError> {
        let r = sql(
            "SELECT COUNT(DISTINCT battle_id) AS n, MIN(battle_time) AS first, \
             MAX(battle_time) AS last FROM battle_players \
             WHERE clan_tag = $1 AND battle_time >= $2 AND battle_time < $3",
        )
        .bind(clan)
        .bind(from)
        .bind(to)
        .fetch_one(&self.db)
        .await?;
        tally(&r)
    }

    async fn log_read_before(
        &self,
        player: &str,
        at: Millis,
    ) -> Result<Option<LogRead>, StoreError> {
        sql(format!(
            "SELECT {READ_COLUMNS} FROM battlelog_reads WHERE player_tag = $1 AND read_at < $2 \
             ORDER BY read_at DESC LIMIT 1"
        ))
        .bind(player)
        .bind(at)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(log_read)
        .transpose()
    }

    async fn log_read_from(&self, player: &str, at: Millis) -> Result<Option<LogRead>, StoreError> {
        sql(format!(
            "SELECT {READ_COLUMNS} FROM battlelog_reads WHERE player_tag = $1 AND read_at >= $2 \
             ORDER BY read_at LIMIT 1"
        ))
        .bind(player)
        .bind(at)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(log_read)
        .transpose()
    }

    async fn players_by_tags(&self, tags: &[String]) -> Result<Vec<PlayerRow>, StoreError> {
        if tags.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (1..=tags.len()).map(|i| format!("${i}")).collect();
        let statement = sql(format!(
            "SELECT {PLAYER_COLUMNS} FROM players WHERE tag IN ({}) ORDER BY tag",
            marks.join(", ")
        ));
        tags.iter()
            .fold(statement, |s, tag| s.bind(tag.as_str()))
            .fetch_all(&self.db)
            .await?
            .iter()
            .map(player_row)
            .collect()
    }

    async fn upstream_tally(
        &self,
        day_from: Millis,
        hour_from: Millis,
    ) -> Result<UpstreamTally, StoreError> {
        // COUNT of a CASE rather than SUM: an integer on both backends, 0 over no rows.
        let r = sql(
            "SELECT COUNT(*) AS requests, COUNT(CASE WHEN status = 429 THEN 1 END) AS throttled, \
             COUNT(CASE WHEN fetched_at >= $2 THEN 1 END) AS recent \
             FROM upstream_receipts WHERE fetched_at >= $1",
        )
        .bind(day_from)
        .bind(hour_from)
        .fetch_one(&self.db)
        .await?;
        Ok(UpstreamTally {
            requests_24h: r.int("requests")?,
            throttled_24h: r.int("throttled")?,
            requests_1h: r.int("recent")?,
        })
    }
}
