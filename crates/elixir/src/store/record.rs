//! The record area: the recorder's schedule (due rows, leases, results), and the normalized
//! players, clans, memberships, battles and coverage it writes, with the reads the tools make.
//! [`RecordStore`] and its SQL. What a payload means is `elixir_record`'s and when to read
//! is the recorder's; this file only stores and selects.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use sqlkit::{Cols, Row, Tx, sql};

use super::batch;
use super::sql_store::{SqlStore, StoreError};
use crate::domain::{Millis, name_key};
use crate::model::{
    BattleSide, ClanRow, CorpusCounts, CoverageGap, Ingested, LogRead, MemberSeen, Membership,
    NewBattle, PlayerRow, PlayerSnapshot, Poll, PollDone, PollEndpoint, RecordedBattle,
};

/// The filters of a per-player battle read; `None` is no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BattleQuery {
    /// `battle_time >= from`.
    pub from: Option<Millis>,
    /// `battle_time < to`.
    pub to: Option<Millis>,
    /// Stored mode names.
    pub modes: Option<Vec<String>>,
    pub game_mode_id: Option<i64>,
    pub opponent_tag: Option<String>,
    /// `win`, `loss` or `draw`.
    pub outcome: Option<String>,
    pub deck_hash: Option<String>,
    pub battle_id: Option<String>,
    /// Strictly older than this `(battle_time, battle_id)`, newest first (a cursor).
    pub before: Option<(Millis, String)>,
    pub limit: Option<i64>,
}

/// The recorder's schedule and the record.
#[async_trait]
pub trait RecordStore: Send + Sync + 'static {
    /// Schedule rows due at `now` and not leased, soonest first.
    async fn due_polls(&self, now: Millis, limit: i64) -> Result<Vec<Poll>, StoreError>;
    /// Leases one due row to `owner` until `until`: true when this call won it. One
    /// conditional UPDATE, so two recorders never both win.
    async fn lease_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        now: Millis,
        until: Millis,
    ) -> Result<bool, StoreError>;
    /// Records a read's result on its row and releases `owner`'s lease.
    async fn finish_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        done: &PollDone,
    ) -> Result<(), StoreError>;
    /// A live read of a scheduled subject landed at `at`: its row's last read moves (the
    /// schedule keeps its next read).
    async fn note_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        at: Millis,
    ) -> Result<(), StoreError>;
    /// Every schedule row of a subject.
    async fn polls_of(&self, subject: &str) -> Result<Vec<Poll>, StoreError>;
    /// Schedules endpoints of a subject for an immediate read unless already scheduled.
    async fn schedule(
        &self,
        endpoints: &[PollEndpoint],
        subject: &str,
        at: Millis,
        reason: &str,
    ) -> Result<(), StoreError>;
    /// A player named in a call: read at least hourly until `until` (if scheduled).
    async fn demand(&self, subject: &str, at: Millis, until: Millis) -> Result<(), StoreError>;
    /// Stores one battle-log read of `player`: new battles, the player's observations, the
    /// read itself; one transaction.
    async fn ingest_battles(
        &self,
        player: &str,
        player_name: Option<&str>,
        read_at: Millis,
        battles: &[NewBattle],
    ) -> Result<Ingested, StoreError>;
    /// Stores a profile read and its snapshot.
    async fn put_player(
        &self,
        row: &PlayerRow,
        snapshot: &PlayerSnapshot,
    ) -> Result<(), StoreError>;
    async fn player(&self, tag: &str) -> Result<Option<PlayerRow>, StoreError>;
    /// Recorded players whose name contains `query` (compared as [`name_key`]).
    async fn search_players(&self, query: &str, limit: i64) -> Result<Vec<PlayerRow>, StoreError>;
    /// Stores a clan read and its member list: stints open for new members and close for
    /// departed ones. Returns (joined, left) tags.
    async fn put_clan(
        &self,
        row: &ClanRow,
        members: &[MemberSeen],
        at: Millis,
    ) -> Result<(Vec<String>, Vec<String>), StoreError>;
    async fn clan(&self, tag: &str) -> Result<Option<ClanRow>, StoreError>;
    /// The clan's stints: current members, and those who left since `left_since`.
    async fn memberships(
        &self,
        clan: &str,
        left_since: Millis,
    ) -> Result<Vec<Membership>, StoreError>;
    /// The current (open) stints of a player.
    async fn clans_of(&self, player: &str) -> Result<Vec<Membership>, StoreError>;
    async fn add_gap(&self, gap: &CoverageGap) -> Result<(), StoreError>;
    /// Gaps of a subject overlapping `[from, to)`.
    async fn gaps(
        &self,
        subject: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<CoverageGap>, StoreError>;
    /// Battle-log reads of a player in `[from, to)`, oldest first.
    async fn log_reads(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<LogRead>, StoreError>;
    /// A player's recorded battles matching `query`, newest first.
    async fn battles(
        &self,
        player: &str,
        query: &BattleQuery,
    ) -> Result<Vec<RecordedBattle>, StoreError>;
    /// How many of a player's battles match `query` (its cursor and limit ignored).
    async fn count_battles(&self, player: &str, query: &BattleQuery) -> Result<i64, StoreError>;
    /// `(first, last)` battle times recorded for a player.
    async fn battle_span(&self, player: &str) -> Result<Option<(Millis, Millis)>, StoreError>;
    /// Profile snapshots of a player in `[from, to)`, oldest first.
    async fn snapshots(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<PlayerSnapshot>, StoreError>;
    /// The corpus and schedule figures of elixir_data_insights.
    async fn corpus_counts(&self, now: Millis) -> Result<CorpusCounts, StoreError>;
    /// Every tracked clan with its widest scope, by tag: (tag, name, scope).
    async fn recorded_clans(&self) -> Result<Vec<(String, Option<String>, String)>, StoreError>;
}

const POLL_COLUMNS: &str = "endpoint, subject, next_at, reason, lease_owner, lease_until, \
     last_read_at, last_status, failures, empty_reads, held_until, not_found, demand_until, \
     fastest_fill_ms, created_at";
pub(super) const PLAYER_COLUMNS: &str = "tag, name, clan_tag, clan_name, role, trophies, profile, \
     observed_at, first_seen_at, last_battle_at";
const SNAPSHOT_COLUMNS: &str = "player_tag, observed_at, trophies, best_trophies, pol_league, \
     pol_trophies, king_tower_level, collection_level, donations, battle_count, wins, losses";
const MEMBERSHIP_COLUMNS: &str =
    "clan_tag, player_tag, name, role, joined_observed_at, left_observed_at, last_seen_at";
const SIDE_COLUMNS: &str = "bp.battle_id, bp.battle_time, bp.mode, bp.player_tag, bp.side, \
     bp.outcome, bp.crowns, bp.trophy_change, bp.deck_hash, bp.opponent_tag, bp.clan_tag";

fn poll(r: &impl Cols) -> Result<Poll, StoreError> {
    let endpoint = r.text("endpoint")?;
    Ok(Poll {
        endpoint: PollEndpoint::parse(&endpoint)
            .ok_or_else(|| StoreError::Internal(format!("poll endpoint {endpoint:?}")))?,
        subject: r.text("subject")?,
        next_at: r.int("next_at")?,
        reason: r.text("reason")?,
        lease_owner: r.opt_text("lease_owner")?,
        lease_until: r.opt_int("lease_until")?,
        last_read_at: r.opt_int("last_read_at")?,
        last_status: r.opt_int("last_status")?,
        failures: r.int("failures")?,
        empty_reads: r.int("empty_reads")?,
        held_until: r.opt_int("held_until")?,
        not_found: r.flag("not_found")?,
        demand_until: r.opt_int("demand_until")?,
        fastest_fill_ms: r.opt_int("fastest_fill_ms")?,
        created_at: r.int("created_at")?,
    })
}

/// The columns of `battlelog_reads`, in [`LogRead`]'s order.
pub(super) const READ_COLUMNS: &str =
    "player_tag, read_at, entries, new_entries, oldest_at, newest_at";

pub(super) fn log_read(r: &impl Cols) -> Result<LogRead, StoreError> {
    Ok(LogRead {
        player_tag: r.text("player_tag")?,
        read_at: r.int("read_at")?,
        entries: r.int("entries")?,
        new_entries: r.int("new_entries")?,
        oldest_at: r.opt_int("oldest_at")?,
        newest_at: r.opt_int("newest_at")?,
    })
}

pub(super) fn player_row(r: &impl Cols) -> Result<PlayerRow, StoreError> {
    Ok(PlayerRow {
        tag: r.text("tag")?,
        name: r.text("name")?,
        clan_tag: r.opt_text("clan_tag")?,
        clan_name: r.opt_text("clan_name")?,
        role: r.opt_text("role")?,
        trophies: r.opt_int("trophies")?,
        profile: r.opt_text("profile")?,
        observed_at: r.opt_int("observed_at")?,
        first_seen_at: r.int("first_seen_at")?,
        last_battle_at: r.opt_int("last_battle_at")?,
    })
}

fn snapshot(r: &impl Cols) -> Result<PlayerSnapshot, StoreError> {
    Ok(PlayerSnapshot {
        player_tag: r.text("player_tag")?,
        observed_at: r.int("observed_at")?,
        trophies: r.opt_int("trophies")?,
        best_trophies: r.opt_int("best_trophies")?,
        pol_league: r.opt_int("pol_league")?,
        pol_trophies: r.opt_int("pol_trophies")?,
        king_tower_level: r.opt_int("king_tower_level")?,
        collection_level: r.opt_int("collection_level")?,
        donations: r.opt_int("donations")?,
        battle_count: r.opt_int("battle_count")?,
        wins: r.opt_int("wins")?,
        losses: r.opt_int("losses")?,
    })
}

fn membership(r: &impl Cols) -> Result<Membership, StoreError> {
    Ok(Membership {
        clan_tag: r.text("clan_tag")?,
        player_tag: r.text("player_tag")?,
        name: r.text("name")?,
        role: r.opt_text("role")?,
        joined_observed_at: r.int("joined_observed_at")?,
        left_observed_at: r.opt_int("left_observed_at")?,
        last_seen_at: r.opt_int("last_seen_at")?,
    })
}

fn side(r: &impl Cols) -> Result<BattleSide, StoreError> {
    Ok(BattleSide {
        player_tag: r.text("player_tag")?,
        side: r.text("side")?,
        outcome: r.opt_text("outcome")?,
        crowns: r.opt_int("crowns")?,
        trophy_change: r.opt_int("trophy_change")?,
        deck_hash: r.opt_text("deck_hash")?,
        opponent_tag: r.opt_text("opponent_tag")?,
        clan_tag: r.opt_text("clan_tag")?,
    })
}

fn recorded(r: &Row) -> Result<RecordedBattle, StoreError> {
    Ok(RecordedBattle {
        battle_id: r.text("battle_id")?,
        battle_time: r.int("battle_time")?,
        mode: r.text("mode")?,
        side: side(r)?,
        body: r.text("body")?,
    })
}

fn gap(r: &impl Cols) -> Result<CoverageGap, StoreError> {
    Ok(CoverageGap {
        subject: r.text("subject")?,
        from_at: r.int("from_at")?,
        to_at: r.int("to_at")?,
        reason: r.text("reason")?,
        detected_at: r.int("detected_at")?,
    })
}

/// The `WHERE` clause of a [`BattleQuery`] on `battle_players bp` for the player in `$1`,
/// and the statement with its arguments bound after `$1`.
fn battle_filter(select: &str, player: &str, q: &BattleQuery, paged: bool) -> sqlkit::Statement {
    let mut clauses = vec!["bp.player_tag = $1".to_owned()];
    let mut args: Vec<sqlkit::Arg> = vec![player.into()];
    let mut push = |clause: &str, arg: sqlkit::Arg, args: &mut Vec<sqlkit::Arg>| {
        args.push(arg);
        clauses.push(clause.replace('?', &format!("${}", args.len())));
    };
    if let Some(from) = q.from {
        push("bp.battle_time >= ?", from.into(), &mut args);
    }
    if let Some(to) = q.to {
        push("bp.battle_time < ?", to.into(), &mut args);
    }
    if let Some(id) = q.game_mode_id {
        push("bp.game_mode_id = ?", id.into(), &mut args);
    }
    if let Some(tag) = &q.opponent_tag {
        push("bp.opponent_tag = ?", tag.into(), &mut args);
    }
    if let Some(outcome) = &q.outcome {
        push("bp.outcome = ?", outcome.into(), &mut args);
    }
    if let Some(hash) = &q.deck_hash {
        push("bp.deck_hash = ?", hash.into(), &mut args);
    }
    if let Some(id) = &q.battle_id {
        push("bp.battle_id = ?", id.into(), &mut args);
    }
    if paged && let Some((time, id)) = &q.before {
        args.push((*time).into());
        let t = args.len();
        args.push(id.into());
        clauses.push(format!(
            "(bp.battle_time < ${t} OR (bp.battle_time = ${t} AND bp.battle_id < ${}))",
            t + 1
        ));
    }
    if let Some(modes) = &q.modes {
        let mut marks = Vec::new();
        for mode in modes {
            args.push(mode.into());
            marks.push(format!("${}", args.len()));
        }
        if marks.is_empty() {
            clauses.push("FALSE".to_owned());
        } else {
            clauses.push(format!("bp.mode IN ({})", marks.join(", ")));
        }
    }
    let mut text = format!("{select} WHERE {}", clauses.join(" AND "));
    if paged {
        text.push_str(" ORDER BY bp.battle_time DESC, bp.battle_id DESC");
        if let Some(limit) = q.limit {
            args.push(limit.into());
            text.push_str(&format!(" LIMIT ${}", args.len()));
        }
    }
    args.into_iter().fold(sql(text), |s, a| s.bind(a))
}

/// Opens a stint for each listed member not in the clan, refreshes the listed ones, and
/// closes the stints of members no longer listed.
async fn write_members(
    tx: &mut Tx,
    clan: &str,
    members: &[MemberSeen],
    at: Millis,
) -> Result<(Vec<String>, Vec<String>), StoreError> {
    let current: Vec<String> =
        sql("SELECT player_tag FROM clan_members WHERE clan_tag = $1 AND left_observed_at IS NULL")
            .bind(clan)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| r.text("player_tag"))
            .collect::<Result<_, _>>()?;
    let mut joined = Vec::new();
    for m in members {
        if !current.contains(&m.player_tag) {
            joined.push(m.player_tag.clone());
        }
        sql(
            "INSERT INTO clan_members (clan_tag, player_tag, name, role, joined_observed_at, \
             left_observed_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, NULL, $6) \
             ON CONFLICT (clan_tag, player_tag) DO UPDATE SET name = excluded.name, \
             role = excluded.role, last_seen_at = excluded.last_seen_at, \
             joined_observed_at = CASE WHEN clan_members.left_observed_at IS NULL \
                 THEN clan_members.joined_observed_at ELSE excluded.joined_observed_at END, \
             left_observed_at = NULL",
        )
        .bind(clan)
        .bind(&m.player_tag)
        .bind(&m.name)
        .bind(m.role.as_deref())
        .bind(at)
        .bind(m.last_seen_at)
        .execute(&mut *tx)
        .await?;
    }
    let mut left = Vec::new();
    for tag in current {
        if !members.iter().any(|m| m.player_tag == tag) {
            sql("UPDATE clan_members SET left_observed_at = $3 \
                 WHERE clan_tag = $1 AND player_tag = $2")
            .bind(clan)
            .bind(&tag)
            .bind(at)
            .execute(&mut *tx)
            .await?;
            left.push(tag);
        }
    }
    Ok((joined, left))
}

#[async_trait]
impl RecordStore for SqlStore {
    async fn due_polls(&self, now: Millis, limit: i64) -> Result<Vec<Poll>, StoreError> {
        sql(format!(
            "SELECT {POLL_COLUMNS} FROM polls WHERE next_at <= $1 \
             AND (lease_until IS NULL OR lease_until < $1) ORDER BY next_at LIMIT $2"
        ))
        .bind(now)
        .bind(limit)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(poll)
        .collect()
    }

    async fn lease_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        now: Millis,
        until: Millis,
    ) -> Result<bool, StoreError> {
        let done = sql("UPDATE polls SET lease_owner = $3, lease_until = $5 \
             WHERE endpoint = $1 AND subject = $2 AND next_at <= $4 \
             AND (lease_until IS NULL OR lease_until < $4)")
        .bind(endpoint.as_str())
        .bind(subject)
        .bind(owner)
        .bind(now)
        .bind(until)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn finish_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        d: &PollDone,
    ) -> Result<(), StoreError> {
        sql(
            "UPDATE polls SET next_at = $4, reason = $5, last_read_at = $6, last_status = $7, \
             failures = $8, empty_reads = $9, held_until = $10, not_found = $11, \
             fastest_fill_ms = $12, lease_owner = NULL, lease_until = NULL \
             WHERE endpoint = $1 AND subject = $2 AND lease_owner = $3",
        )
        .bind(endpoint.as_str())
        .bind(subject)
        .bind(owner)
        .bind(d.next_at)
        .bind(&d.reason)
        .bind(d.read_at)
        .bind(d.status)
        .bind(d.failures)
        .bind(d.empty_reads)
        .bind(d.held_until)
        .bind(d.not_found)
        .bind(d.fastest_fill_ms)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn note_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        at: Millis,
    ) -> Result<(), StoreError> {
        sql("UPDATE polls SET last_read_at = $3, last_status = 200 \
             WHERE endpoint = $1 AND subject = $2 \
             AND (last_read_at IS NULL OR last_read_at < $3)")
        .bind(endpoint.as_str())
        .bind(subject)
        .bind(at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn polls_of(&self, subject: &str) -> Result<Vec<Poll>, StoreError> {
        sql(format!(
            "SELECT {POLL_COLUMNS} FROM polls WHERE subject = $1 ORDER BY endpoint"
        ))
        .bind(subject)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(poll)
        .collect()
    }

    async fn schedule(
        &self,
        endpoints: &[PollEndpoint],
        subject: &str,
        at: Millis,
        reason: &str,
    ) -> Result<(), StoreError> {
        for endpoint in endpoints {
            sql(
                "INSERT INTO polls (endpoint, subject, next_at, reason, created_at) \
                 VALUES ($1, $2, $3, $4, $3) ON CONFLICT (endpoint, subject) DO NOTHING",
            )
            .bind(endpoint.as_str())
            .bind(subject)
            .bind(at)
            .bind(reason)
            .execute(&self.db)
            .await?;
        }
        Ok(())
    }

    async fn demand(&self, subject: &str, at: Millis, until: Millis) -> Result<(), StoreError> {
        // At least hourly from now on: pull a later next read in to the hour.
        sql("UPDATE polls SET demand_until = $3, \
             next_at = CASE WHEN next_at > $2 + 3600000 THEN $2 + 3600000 ELSE next_at END, \
             reason = CASE WHEN next_at > $2 + 3600000 THEN 'demand' ELSE reason END \
             WHERE subject = $1 AND endpoint = 'battlelog' \
             AND (demand_until IS NULL OR demand_until < $3)")
        .bind(subject)
        .bind(at)
        .bind(until)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn ingest_battles(
        &self,
        player: &str,
        player_name: Option<&str>,
        read_at: Millis,
        battles: &[NewBattle],
    ) -> Result<Ingested, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let previous_newest =
            sql("SELECT MAX(battle_time) AS newest FROM battle_players WHERE player_tag = $1")
                .bind(player)
                .fetch_one(&mut tx)
                .await?
                .opt_int("newest")?;
        let mut report = Ingested {
            previous_newest,
            ..Ingested::default()
        };
        // A log re-read mostly repeats what this player's observations hold: one read of them
        // over the log's span leaves only the new entries to write.
        let oldest = battles.iter().map(|b| b.battle_time).min().unwrap_or(0);
        let known: HashSet<String> =
            sql("SELECT battle_id FROM battle_players WHERE player_tag = $1 AND battle_time >= $2")
                .bind(player)
                .bind(oldest)
                .fetch_all(&mut tx)
                .await?
                .iter()
                .map(|r| r.text("battle_id"))
                .collect::<Result<_, _>>()?;
        let mut listed = HashSet::new();
        let fresh: Vec<&NewBattle> = battles
            .iter()
            .filter(|b| !known.contains(&b.battle_id) && listed.insert(b.battle_id.as_str()))
            .collect();
        if !fresh.is_empty() {
            report = write_fresh(&mut tx, player, read_at, &fresh, report).await?;
        }
        let newest = battles.iter().map(|b| b.battle_time).max();
        let oldest = battles.iter().map(|b| b.battle_time).min();
        sql(
            "INSERT INTO battlelog_reads (player_tag, read_at, entries, new_entries, oldest_at, \
             newest_at) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (player_tag, read_at) DO NOTHING",
        )
        .bind(player)
        .bind(read_at)
        .bind(battles.len() as i64)
        .bind(report.new_observations as i64)
        .bind(oldest)
        .bind(newest)
        .execute(&mut tx)
        .await?;
        let name = player_name.unwrap_or(player);
        sql(
            "INSERT INTO players (tag, name, name_key, first_seen_at, last_battle_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tag) DO UPDATE SET \
             last_battle_at = CASE WHEN players.last_battle_at IS NULL \
                 OR players.last_battle_at < excluded.last_battle_at \
                 THEN excluded.last_battle_at ELSE players.last_battle_at END",
        )
        .bind(player)
        .bind(name)
        .bind(name_key(name))
        .bind(read_at)
        .bind(newest)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(report)
    }

    async fn put_player(&self, p: &PlayerRow, s: &PlayerSnapshot) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        sql(
            "INSERT INTO players (tag, name, name_key, clan_tag, clan_name, role, trophies, \
             profile, observed_at, first_seen_at, last_battle_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL) \
             ON CONFLICT (tag) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, \
             clan_tag = excluded.clan_tag, clan_name = excluded.clan_name, role = excluded.role, \
             trophies = excluded.trophies, profile = excluded.profile, \
             observed_at = excluded.observed_at \
             WHERE players.observed_at IS NULL OR players.observed_at <= excluded.observed_at",
        )
        .bind(&p.tag)
        .bind(&p.name)
        .bind(name_key(&p.name))
        .bind(p.clan_tag.as_deref())
        .bind(p.clan_name.as_deref())
        .bind(p.role.as_deref())
        .bind(p.trophies)
        .bind(p.profile.as_deref())
        .bind(p.observed_at)
        .bind(p.first_seen_at)
        .execute(&mut tx)
        .await?;
        sql(format!(
            "INSERT INTO player_snapshots ({SNAPSHOT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (player_tag, observed_at) DO NOTHING"
        ))
        .bind(&s.player_tag)
        .bind(s.observed_at)
        .bind(s.trophies)
        .bind(s.best_trophies)
        .bind(s.pol_league)
        .bind(s.pol_trophies)
        .bind(s.king_tower_level)
        .bind(s.collection_level)
        .bind(s.donations)
        .bind(s.battle_count)
        .bind(s.wins)
        .bind(s.losses)
        .execute(&mut tx)
        .await?;
        tx.commit().await
    }

    async fn player(&self, tag: &str) -> Result<Option<PlayerRow>, StoreError> {
        sql(format!(
            "SELECT {PLAYER_COLUMNS} FROM players WHERE tag = $1"
        ))
        .bind(tag)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(player_row)
        .transpose()
    }

    async fn search_players(&self, query: &str, limit: i64) -> Result<Vec<PlayerRow>, StoreError> {
        let key = name_key(query).replace(['%', '_', '\\'], "");
        sql(format!(
            "SELECT {PLAYER_COLUMNS} FROM players WHERE name_key LIKE $1 \
             ORDER BY CASE WHEN name_key = $2 THEN 0 ELSE 1 END, \
             last_battle_at DESC NULLS LAST, tag LIMIT $3"
        ))
        .bind(format!("%{key}%"))
        .bind(&key)
        .bind(limit)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(player_row)
        .collect()
    }

    async fn put_clan(
        &self,
        c: &ClanRow,
        members: &[MemberSeen],
        at: Millis,
    ) -> Result<(Vec<String>, Vec<String>), StoreError> {
        let mut tx = self.db.begin_write().await?;
        sql(
            "INSERT INTO clans (tag, name, profile, observed_at, first_seen_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tag) DO UPDATE SET name = excluded.name, \
             profile = excluded.profile, observed_at = excluded.observed_at",
        )
        .bind(&c.tag)
        .bind(&c.name)
        .bind(c.profile.as_deref())
        .bind(c.observed_at)
        .bind(c.first_seen_at)
        .execute(&mut tx)
        .await?;
        let changes = write_members(&mut tx, &c.tag, members, at).await?;
        tx.commit().await?;
        Ok(changes)
    }

    async fn clan(&self, tag: &str) -> Result<Option<ClanRow>, StoreError> {
        sql("SELECT tag, name, profile, observed_at, first_seen_at FROM clans WHERE tag = $1")
            .bind(tag)
            .fetch_optional(&self.db)
            .await?
            .map(|r| {
                Ok(ClanRow {
                    tag: r.text("tag")?,
                    name: r.text("name")?,
                    profile: r.opt_text("profile")?,
                    observed_at: r.opt_int("observed_at")?,
                    first_seen_at: r.int("first_seen_at")?,
                })
            })
            .transpose()
    }

    async fn memberships(
        &self,
        clan: &str,
        left_since: Millis,
    ) -> Result<Vec<Membership>, StoreError> {
        sql(format!(
            "SELECT {MEMBERSHIP_COLUMNS} FROM clan_members WHERE clan_tag = $1 \
             AND (left_observed_at IS NULL OR left_observed_at >= $2) ORDER BY player_tag"
        ))
        .bind(clan)
        .bind(left_since)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(membership)
        .collect()
    }

    async fn clans_of(&self, player: &str) -> Result<Vec<Membership>, StoreError> {
        sql(format!(
            "SELECT {MEMBERSHIP_COLUMNS} FROM clan_members WHERE player_tag = $1 \
             AND left_observed_at IS NULL ORDER BY joined_observed_at DESC"
        ))
        .bind(player)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(membership)
        .collect()
    }

    async fn add_gap(&self, g: &CoverageGap) -> Result<(), StoreError> {
        sql(
            "INSERT INTO coverage_gaps (subject, from_at, to_at, reason, detected_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (subject, from_at, to_at) DO NOTHING",
        )
        .bind(&g.subject)
        .bind(g.from_at)
        .bind(g.to_at)
        .bind(&g.reason)
        .bind(g.detected_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn gaps(
        &self,
        subject: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<CoverageGap>, StoreError> {
        sql(
            "SELECT subject, from_at, to_at, reason, detected_at FROM coverage_gaps \
             WHERE subject = $1 AND to_at > $2 AND from_at < $3 ORDER BY from_at",
        )
        .bind(subject)
        .bind(from)
        .bind(to)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(gap)
        .collect()
    }

    async fn log_reads(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<LogRead>, StoreError> {
        sql(format!(
            "SELECT {READ_COLUMNS} FROM battlelog_reads \
             WHERE player_tag = $1 AND read_at >= $2 AND read_at < $3 ORDER BY read_at"
        ))
        .bind(player)
        .bind(from)
        .bind(to)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(log_read)
        .collect()
    }

    async fn battles(
        &self,
        player: &str,
        q: &BattleQuery,
    ) -> Result<Vec<RecordedBattle>, StoreError> {
        let select = format!(
            "SELECT {SIDE_COLUMNS}, b.body FROM battle_players bp \
             JOIN battles b ON b.battle_id = bp.battle_id"
        );
        battle_filter(&select, player, q, true)
            .fetch_all(&self.db)
            .await?
            .iter()
            .map(recorded)
            .collect()
    }

    async fn count_battles(&self, player: &str, q: &BattleQuery) -> Result<i64, StoreError> {
        battle_filter(
            "SELECT COUNT(*) AS n FROM battle_players bp",
            player,
            q,
            false,
        )
        .fetch_one(&self.db)
        .await?
        .int("n")
    }

    async fn battle_span(&self, player: &str) -> Result<Option<(Millis, Millis)>, StoreError> {
        let r = sql(
            "SELECT MIN(battle_time) AS first, MAX(battle_time) AS last \
             FROM battle_players WHERE player_tag = $1",
        )
        .bind(player)
        .fetch_one(&self.db)
        .await?;
        Ok(r.opt_int("first")?.zip(r.opt_int("last")?))
    }

    async fn snapshots(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<PlayerSnapshot>, StoreError> {
        sql(format!(
            "SELECT {SNAPSHOT_COLUMNS} FROM player_snapshots WHERE player_tag = $1 \
             AND observed_at >= $2 AND observed_at < $3 ORDER BY observed_at"
        ))
        .bind(player)
        .bind(from)
        .bind(to)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(snapshot)
        .collect()
    }

    async fn corpus_counts(&self, now: Millis) -> Result<CorpusCounts, StoreError> {
        let r = sql("SELECT \
             (SELECT COUNT(*) FROM battles) AS battles, \
             (SELECT COUNT(*) FROM players) AS players, \
             (SELECT COUNT(DISTINCT player_tag) FROM battlelog_reads) AS players_recorded, \
             (SELECT COUNT(DISTINCT clan_tag) FROM tracked_clans) AS clans_recorded, \
             (SELECT COUNT(DISTINCT subject) FROM polls) AS recordings_active, \
             (SELECT MIN(battle_time) FROM battles) AS first_battle_at, \
             (SELECT COUNT(*) FROM battles WHERE battle_time >= $1) AS battles_last_24h, \
             (SELECT COUNT(*) FROM polls WHERE next_at <= $2) AS due_polls, \
             (SELECT MIN(next_at) FROM polls WHERE next_at <= $2) AS oldest_due_at")
        .bind(now - 86_400_000)
        .bind(now)
        .fetch_one(&self.db)
        .await?;
        Ok(CorpusCounts {
            battles: r.int("battles")?,
            players: r.int("players")?,
            players_recorded: r.int("players_recorded")?,
            clans_recorded: r.int("clans_recorded")?,
            recordings_active: r.int("recordings_active")?,
            first_battle_at: r.opt_int("first_battle_at")?,
            battles_last_24h: r.int("battles_last_24h")?,
            due_polls: r.int("due_polls")?,
            oldest_due_at: r.opt_int("oldest_due_at")?,
        })
    }

    async fn recorded_clans(&self) -> Result<Vec<(String, Option<String>, String)>, StoreError> {
        // 'comprehensive' sorts after 'activity': the widest scope any tracker chose.
        sql(
            "SELECT t.clan_tag, MAX(c.name) AS name, MAX(t.scope) AS scope \
             FROM tracked_clans t LEFT JOIN clans c ON c.tag = t.clan_tag \
             GROUP BY t.clan_tag ORDER BY t.clan_tag",
        )
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(|r| Ok((r.text("clan_tag")?, r.opt_text("name")?, r.text("scope")?)))
        .collect()
    }
}

/// Whether a stored outcome decides a battle (a win or a loss).
fn decides(outcome: Option<&str>) -> bool {
    matches!(outcome, Some("win" | "loss"))
}

/// Writes the battles of one log that `player`'s observations do not hold yet: one
/// multi-row statement per table (the battles, the observations, the re-sighted bodies the
/// new log completes, the meta index and its daily rollups). A battle new to the record is
/// one row with this observation; a battle another log brought in gains this observation and
/// only the fields its stored body lacks.
async fn write_fresh(
    tx: &mut Tx,
    player: &str,
    read_at: Millis,
    fresh: &[&NewBattle],
    mut report: Ingested,
) -> Result<Ingested, StoreError> {
    // The stored ones first, locked (PostgreSQL) before anything reads their other
    // observations, so two logs that re-sight one battle at once take turns. With each body
    // comes whether another observer already decided the battle (the population's rollup
    // counts a battle decided once): a lookup of its observations by `battle_id`, per battle,
    // so the plan is that index's on both backends whatever the statistics say (an `IN (…)`
    // list over the observations was planned as a full scan by a PostgreSQL that had not
    // analyzed them yet). Only the battles not stored yet are sent to be inserted, in key
    // order: a re-sighting's body does not travel to the database twice.
    let mut stored = StoredBattles::default();
    let ids: Vec<&str> = fresh.iter().map(|b| b.battle_id.as_str()).collect();
    stored.read(tx, &ids).await?;
    let mut unseen: Vec<&&NewBattle> = fresh
        .iter()
        .filter(|b| !stored.bodies.contains_key(&b.battle_id))
        .collect();
    unseen.sort_by(|a, b| a.battle_id.cmp(&b.battle_id));
    // The battle rows before the observations, which reference them.
    let new_ids: HashSet<String> = batch::values(
        tx,
        "INSERT INTO battles (battle_id, battle_time, battle_type, mode, game_mode_id, body, \
         first_observed_at) VALUES ",
        7,
        " ON CONFLICT (battle_id) DO NOTHING RETURNING battle_id",
        &unseen,
        |b| {
            vec![
                b.battle_id.as_str().into(),
                b.battle_time.into(),
                b.battle_type.as_str().into(),
                b.mode.as_str().into(),
                b.game_mode_id.into(),
                b.body.as_str().into(),
                read_at.into(),
            ]
        },
    )
    .await?
    .iter()
    .map(|r| r.text("battle_id"))
    .collect::<Result<_, _>>()?;
    // Stored by another writer between the read and the insert: read (and lock) them too.
    let raced: Vec<&str> = unseen
        .iter()
        .map(|b| b.battle_id.as_str())
        .filter(|id| !new_ids.contains(*id))
        .collect();
    stored.read(tx, &raced).await?;
    let StoredBattles {
        bodies: stored,
        decided: decided_before,
    } = stored;
    let observed: HashSet<String> = batch::values(
        tx,
        "INSERT INTO battle_players (player_tag, battle_id, battle_time, mode, game_mode_id, \
         side, outcome, crowns, trophy_change, deck_hash, opponent_tag, clan_tag, \
         observed_at) VALUES ",
        13,
        " ON CONFLICT (player_tag, battle_id) DO NOTHING RETURNING battle_id",
        fresh,
        |b| {
            let o = &b.observer;
            vec![
                player.into(),
                b.battle_id.as_str().into(),
                b.battle_time.into(),
                b.mode.as_str().into(),
                b.game_mode_id.into(),
                o.side.as_str().into(),
                o.outcome.as_deref().into(),
                o.crowns.into(),
                o.trophy_change.into(),
                o.deck_hash.as_deref().into(),
                o.opponent_tag.as_deref().into(),
                o.clan_tag.as_deref().into(),
                read_at.into(),
            ]
        },
    )
    .await?
    .iter()
    .map(|r| r.text("battle_id"))
    .collect::<Result<_, _>>()?;
    let mut filled: Vec<(&str, String)> = Vec::new();
    let mut days = super::meta_reads::BattleDays::default();
    let mut games = Vec::with_capacity(observed.len());
    for b in fresh.iter().filter(|b| observed.contains(&b.battle_id)) {
        report.new_observations += 1;
        let decided = decides(b.observer.outcome.as_deref());
        if new_ids.contains(&b.battle_id) {
            report.new_battles += 1;
            days.add(b.battle_time, &b.mode, 1, i64::from(decided));
        } else {
            if decided && !decided_before.contains(&b.battle_id) {
                days.add(b.battle_time, &b.mode, 0, 1);
            }
            // Most re-sightings carry what the first observer's log did: the stored body is
            // then this log's battle turned to that observer, and there is nothing to fill.
            if let Some(body) = stored
                .get(&b.battle_id)
                .filter(|s| !b.views.contains(s))
                .and_then(|s| filled_body(s, b))
            {
                filled.push((b.battle_id.as_str(), body));
            }
        }
        games.push(super::meta_reads::GamesOf {
            battle_id: &b.battle_id,
            battle_time: b.battle_time,
            mode: &b.mode,
            games: &b.games,
        });
    }
    batch::values(
        tx,
        "UPDATE battles SET body = v.column2 FROM (VALUES ",
        2,
        ") AS v WHERE battles.battle_id = v.column1",
        &filled,
        |(id, body)| vec![(*id).into(), body.as_str().into()],
    )
    .await?;
    super::meta_reads::write_games(tx, player, &games).await?;
    days.write(tx).await?;
    Ok(report)
}

/// Stored battles of a log, read by [`StoredBattles::read`]: their bodies, and which of them
/// another observer already decided.
#[derive(Default)]
struct StoredBattles {
    bodies: HashMap<String, String>,
    decided: HashSet<String>,
}

impl StoredBattles {
    /// Adds the stored ones of `ids`, locked on PostgreSQL until the transaction ends.
    async fn read(&mut self, tx: &mut Tx, ids: &[&str]) -> Result<(), StoreError> {
        let lock = tx.backend().row_lock();
        for r in batch::keyed(
            tx,
            "SELECT b.battle_id, b.body, EXISTS (SELECT 1 FROM battle_players d \
             WHERE d.battle_id = b.battle_id AND d.outcome IN ('win', 'loss')) AS decided \
             FROM battles b WHERE b.battle_id IN (",
            &format!("){lock}"),
            ids,
        )
        .await?
        {
            let id = r.text("battle_id")?;
            if r.flag("decided")? {
                self.decided.insert(id.clone());
            }
            self.bodies.insert(id, r.text("body")?);
        }
        Ok(())
    }
}

/// A re-sighting of a stored battle (from another player's log) fills only what the stored
/// body lacks: JSON nulls and absent keys, matching participants by tag. `None` when it
/// fills nothing (or either body is not JSON).
fn filled_body(stored: &str, b: &NewBattle) -> Option<String> {
    let (Ok(mut body), Ok(seen)) = (
        serde_json::from_str::<serde_json::Value>(stored),
        serde_json::from_str::<serde_json::Value>(&b.body),
    ) else {
        return None;
    };
    crate::domain::fill_missing_battle(&mut body, &seen).then(|| body.to_string())
}
