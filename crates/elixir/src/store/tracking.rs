//! The tracking area: what each account (and each of its agents) tracks, nicknames, the
//! `on_behalf_of` identities of agent doors, and the schedule rows tracking creates.
//! [`TrackingStore`] and its SQL. Slot checks run in the write transaction that takes the
//! slot, with the account's row locked, so a burst of track calls never passes the allowance.

use async_trait::async_trait;
use sqlkit::{Cols, Tx, sql};
use uuid::Uuid;

use super::sql_store::{SqlStore, StoreError};
use crate::domain::Millis;
use crate::model::{
    ClanScope, Principal, Relationship, SlotUse, TrackClan, TrackPlayer, TrackResult, TrackedClan,
    TrackedPlayer,
};

/// One `on_behalf_of` binding of an agent door.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub external_id: String,
    pub player_tag: String,
    pub display_name: Option<String>,
    pub bound_at: Millis,
}

/// What binding an identity did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    Created(Identity),
    /// The same binding existed (its display name may have been filled).
    Existing(Identity),
    /// The id is bound to another player (write-once).
    Conflict(Identity),
}

/// Tracking, nicknames and identities.
#[async_trait]
pub trait TrackingStore: Send + Sync + 'static {
    /// Tracks a player (or changes its relationship) within the allowance; a new primary
    /// demotes the old one to alt and becomes the account's primary; a new subject is
    /// scheduled for an immediate read.
    async fn track_player(&self, request: &TrackPlayer) -> Result<TrackResult, StoreError>;
    /// Stops tracking; false when it was not tracked. A subject nobody tracks any more
    /// leaves the schedule (its record stays).
    async fn untrack_player(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError>;
    /// Sets notify; `None` when the player is not tracked, else whether it changed.
    async fn set_player_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError>;
    /// A principal's tracked players, primary first, then by tag.
    async fn tracked_players(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedPlayer>, StoreError>;
    /// Tracks a clan within its scope's allowance, scheduling it for an immediate read.
    async fn track_clan(&self, request: &TrackClan) -> Result<TrackResult, StoreError>;
    /// Stops tracking a clan; false when it was not tracked.
    async fn untrack_clan(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError>;
    /// Sets a clan's notify; `None` when not tracked, else whether it changed.
    async fn set_clan_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError>;
    /// A principal's tracked clans, by tag.
    async fn tracked_clans(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedClan>, StoreError>;
    /// The slots the account uses, over all its principals.
    async fn slot_use(&self, account: Uuid) -> Result<SlotUse, StoreError>;
    /// Sets (or with `None` clears) a nickname; returns the previous one.
    async fn set_nickname(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        nickname: Option<&str>,
        at: Millis,
    ) -> Result<Option<String>, StoreError>;
    /// A principal's nicknames, as (tag, nickname).
    async fn nicknames(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<(String, String)>, StoreError>;
    /// Binds `external_id` to a player, write-once.
    async fn bind_identity(&self, agent: Uuid, identity: &Identity) -> Result<Bound, StoreError>;
    /// The binding of one `on_behalf_of`.
    async fn identity(
        &self,
        agent: Uuid,
        external_id: &str,
    ) -> Result<Option<Identity>, StoreError>;
    /// One page of an agent's bindings, newest first, and the total.
    async fn identities(
        &self,
        agent: Uuid,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Identity>, i64), StoreError>;
    /// Sets the clan an agent door answers for.
    async fn set_agent_clan(&self, agent: Uuid, clan_tag: Option<&str>) -> Result<(), StoreError>;
}

const TRACKED_PLAYER_SELECT: &str = "SELECT t.player_tag, t.relationship, t.notify, \
     t.created_at, p.name, p.clan_tag, p.clan_name, p.trophies \
     FROM tracked_players t LEFT JOIN players p ON p.tag = t.player_tag \
     WHERE t.account_id = $1 AND t.principal = $2 \
     ORDER BY CASE t.relationship WHEN 'primary' THEN 0 WHEN 'alt' THEN 1 \
     WHEN 'friend' THEN 2 ELSE 3 END, t.player_tag";

fn tracked_player(r: &impl Cols) -> Result<TrackedPlayer, StoreError> {
    let relationship = r.text("relationship")?;
    Ok(TrackedPlayer {
        player_tag: r.text("player_tag")?,
        relationship: Relationship::parse(&relationship)
            .ok_or_else(|| StoreError::Internal(format!("relationship {relationship:?}")))?,
        notify: r.flag("notify")?,
        created_at: r.int("created_at")?,
        name: r.opt_text("name")?,
        clan_tag: r.opt_text("clan_tag")?,
        clan_name: r.opt_text("clan_name")?,
        trophies: r.opt_int("trophies")?,
    })
}

/// The columns [`identity_row`] reads.
const IDENTITY_COLUMNS: &str = "external_id, player_tag, display_name, bound_at";

fn identity_row(r: &impl Cols) -> Result<Identity, StoreError> {
    Ok(Identity {
        external_id: r.text("external_id")?,
        player_tag: r.text("player_tag")?,
        display_name: r.opt_text("display_name")?,
        bound_at: r.int("bound_at")?,
    })
}

/// Locks the account's row for the rest of the transaction (PostgreSQL; SQLite's write
/// transaction already holds the database), so slot checks of one account run one at a time.
async fn lock_account(tx: &mut Tx, account: Uuid) -> Result<(), StoreError> {
    let lock = tx.backend().row_lock();
    sql(format!("SELECT id FROM accounts WHERE id = $1{lock}"))
        .bind(account)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    Ok(())
}

/// Schedules an immediate first read of each endpoint unless the subject is scheduled.
async fn schedule(
    tx: &mut Tx,
    endpoints: &[&str],
    subject: &str,
    at: Millis,
) -> Result<(), StoreError> {
    for endpoint in endpoints {
        sql(
            "INSERT INTO polls (endpoint, subject, next_at, reason, created_at) \
             VALUES ($1, $2, $3, 'first_read', $3) ON CONFLICT (endpoint, subject) DO NOTHING",
        )
        .bind(*endpoint)
        .bind(subject)
        .bind(at)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// Drops a player's schedule when nobody tracks them and no comprehensive clan lists them.
async fn unschedule_player(tx: &mut Tx, tag: &str) -> Result<(), StoreError> {
    sql(
        "DELETE FROM polls WHERE endpoint IN ('battlelog', 'player') AND subject = $1 \
         AND NOT EXISTS (SELECT 1 FROM tracked_players WHERE player_tag = $1) \
         AND NOT EXISTS (SELECT 1 FROM clan_members m JOIN tracked_clans c \
             ON c.clan_tag = m.clan_tag AND c.scope = 'comprehensive' \
             WHERE m.player_tag = $1 AND m.left_observed_at IS NULL)",
    )
    .bind(tag)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

async fn count(tx: &mut Tx, statement: sqlkit::Statement) -> Result<i64, StoreError> {
    statement.fetch_one(&mut *tx).await?.int("n")
}

/// The text `column` of the row `statement` finds (or returns), `None` when it finds none.
async fn found_text(
    tx: &mut Tx,
    statement: sqlkit::Statement,
    column: &str,
) -> Result<Option<String>, StoreError> {
    statement
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| r.text(column))
        .transpose()
}

/// Opens a track call's write transaction: the account's row locked (see [`lock_account`]),
/// then the principal's row of `table` keyed by `column` read for its `value` column
/// (`None` when the subject is not tracked yet).
async fn begin_track(
    store: &SqlStore,
    (table, column, value): (&str, &str, &str),
    account: Uuid,
    principal: &str,
    tag: &str,
) -> Result<(Tx, Option<String>), StoreError> {
    let mut tx = store.db.begin_write().await?;
    lock_account(&mut tx, account).await?;
    let existing = found_text(
        &mut tx,
        sql(format!(
            "SELECT {value} FROM {table} \
             WHERE account_id = $1 AND principal = $2 AND {column} = $3"
        ))
        .bind(account)
        .bind(principal)
        .bind(tag),
        value,
    )
    .await?;
    Ok((tx, existing))
}

#[async_trait]
impl TrackingStore for SqlStore {
    async fn track_player(&self, q: &TrackPlayer) -> Result<TrackResult, StoreError> {
        let principal = q.principal.key();
        let (mut tx, existing) = begin_track(
            self,
            ("tracked_players", "player_tag", "relationship"),
            q.account_id,
            &principal,
            &q.player_tag,
        )
        .await?;
        if existing.as_deref() == Some(q.relationship.as_str()) {
            return Ok(TrackResult::Unchanged);
        }
        if existing.is_none()
            && let Some(max) = q.max_players
        {
            let used = count(
                &mut tx,
                sql("SELECT COUNT(*) AS n FROM tracked_players WHERE account_id = $1")
                    .bind(q.account_id),
            )
            .await?;
            if used >= max {
                return Ok(TrackResult::NoSlot);
            }
        }
        let mut demoted = None;
        if q.relationship == Relationship::Primary {
            demoted = found_text(
                &mut tx,
                sql("UPDATE tracked_players SET relationship = 'alt' \
                 WHERE account_id = $1 AND principal = $2 AND relationship = 'primary' \
                 AND player_tag <> $3 RETURNING player_tag")
                .bind(q.account_id)
                .bind(&principal)
                .bind(&q.player_tag),
                "player_tag",
            )
            .await?;
            sql("UPDATE accounts SET primary_player_tag = $2 WHERE id = $1")
                .bind(q.account_id)
                .bind(&q.player_tag)
                .execute(&mut tx)
                .await?;
        } else if existing.as_deref() == Some("primary") {
            sql("UPDATE accounts SET primary_player_tag = NULL WHERE id = $1")
                .bind(q.account_id)
                .execute(&mut tx)
                .await?;
        }
        sql("INSERT INTO tracked_players \
             (account_id, principal, player_tag, relationship, notify, created_at) \
             VALUES ($1, $2, $3, $4, TRUE, $5) \
             ON CONFLICT (account_id, principal, player_tag) \
             DO UPDATE SET relationship = excluded.relationship")
        .bind(q.account_id)
        .bind(&principal)
        .bind(&q.player_tag)
        .bind(q.relationship.as_str())
        .bind(q.at)
        .execute(&mut tx)
        .await?;
        schedule(&mut tx, &["battlelog", "player"], &q.player_tag, q.at).await?;
        tx.commit().await?;
        Ok(TrackResult::Changed { demoted })
    }

    async fn untrack_player(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let removed = found_text(
            &mut tx,
            sql("DELETE FROM tracked_players \
             WHERE account_id = $1 AND principal = $2 AND player_tag = $3 \
             RETURNING relationship")
            .bind(account)
            .bind(principal.key())
            .bind(tag),
            "relationship",
        )
        .await?;
        let Some(relationship) = removed else {
            return Ok(false);
        };
        if relationship == "primary" {
            sql("UPDATE accounts SET primary_player_tag = NULL WHERE id = $1")
                .bind(account)
                .execute(&mut tx)
                .await?;
        }
        unschedule_player(&mut tx, tag).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn set_player_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError> {
        set_notify(
            self,
            "tracked_players",
            "player_tag",
            account,
            principal,
            tag,
            notify,
        )
        .await
    }

    async fn tracked_players(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedPlayer>, StoreError> {
        sql(TRACKED_PLAYER_SELECT)
            .bind(account)
            .bind(principal.key())
            .fetch_all(&self.db)
            .await?
            .iter()
            .map(tracked_player)
            .collect()
    }

    async fn track_clan(&self, q: &TrackClan) -> Result<TrackResult, StoreError> {
        let principal = q.principal.key();
        let (mut tx, existing) = begin_track(
            self,
            ("tracked_clans", "clan_tag", "scope"),
            q.account_id,
            &principal,
            &q.clan_tag,
        )
        .await?;
        if existing.as_deref() == Some(q.scope.as_str()) {
            return Ok(TrackResult::Unchanged);
        }
        if let Some(max) = q.max_of_scope {
            let used = count(
                &mut tx,
                sql("SELECT COUNT(*) AS n FROM tracked_clans WHERE account_id = $1 AND scope = $2")
                    .bind(q.account_id)
                    .bind(q.scope.as_str()),
            )
            .await?;
            if used >= max {
                return Ok(TrackResult::NoSlot);
            }
        }
        sql("INSERT INTO tracked_clans (account_id, principal, clan_tag, scope, notify, created_at) \
             VALUES ($1, $2, $3, $4, TRUE, $5) \
             ON CONFLICT (account_id, principal, clan_tag) DO UPDATE SET scope = excluded.scope")
        .bind(q.account_id)
        .bind(&principal)
        .bind(&q.clan_tag)
        .bind(q.scope.as_str())
        .bind(q.at)
        .execute(&mut tx)
        .await?;
        schedule(&mut tx, &["clan"], &q.clan_tag, q.at).await?;
        tx.commit().await?;
        Ok(TrackResult::Changed { demoted: None })
    }

    async fn untrack_clan(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let done = sql("DELETE FROM tracked_clans \
             WHERE account_id = $1 AND principal = $2 AND clan_tag = $3")
        .bind(account)
        .bind(principal.key())
        .bind(tag)
        .execute(&mut tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        sql(
            "DELETE FROM polls WHERE endpoint = 'clan' AND subject = $1 \
             AND NOT EXISTS (SELECT 1 FROM tracked_clans WHERE clan_tag = $1)",
        )
        .bind(tag)
        .execute(&mut tx)
        .await?;
        // Members read only for this clan's comprehensive scope leave the schedule.
        let members = sql("SELECT player_tag FROM clan_members \
             WHERE clan_tag = $1 AND left_observed_at IS NULL")
        .bind(tag)
        .fetch_all(&mut tx)
        .await?;
        for member in &members {
            unschedule_player(&mut tx, &member.text("player_tag")?).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn set_clan_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError> {
        set_notify(
            self,
            "tracked_clans",
            "clan_tag",
            account,
            principal,
            tag,
            notify,
        )
        .await
    }

    async fn tracked_clans(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedClan>, StoreError> {
        sql(
            "SELECT t.clan_tag, t.scope, t.notify, t.created_at, c.name \
             FROM tracked_clans t LEFT JOIN clans c ON c.tag = t.clan_tag \
             WHERE t.account_id = $1 AND t.principal = $2 ORDER BY t.clan_tag",
        )
        .bind(account)
        .bind(principal.key())
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(|r| {
            let scope = r.text("scope")?;
            Ok(TrackedClan {
                clan_tag: r.text("clan_tag")?,
                scope: ClanScope::parse(&scope)
                    .ok_or_else(|| StoreError::Internal(format!("clan scope {scope:?}")))?,
                notify: r.flag("notify")?,
                created_at: r.int("created_at")?,
                name: r.opt_text("name")?,
            })
        })
        .collect()
    }

    async fn slot_use(&self, account: Uuid) -> Result<SlotUse, StoreError> {
        let r = sql("SELECT \
             (SELECT COUNT(*) FROM tracked_players WHERE account_id = $1) AS players, \
             (SELECT COUNT(*) FROM tracked_clans WHERE account_id = $1 AND scope = 'activity') \
                 AS activity, \
             (SELECT COUNT(*) FROM tracked_clans WHERE account_id = $1 \
                 AND scope = 'comprehensive') AS comprehensive")
        .bind(account)
        .fetch_one(&self.db)
        .await?;
        Ok(SlotUse {
            players: r.int("players")?,
            clans_activity: r.int("activity")?,
            clans_comprehensive: r.int("comprehensive")?,
        })
    }

    async fn set_nickname(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        nickname: Option<&str>,
        at: Millis,
    ) -> Result<Option<String>, StoreError> {
        let principal = principal.key();
        let mut tx = self.db.begin_write().await?;
        let previous = found_text(
            &mut tx,
            sql("DELETE FROM nicknames \
             WHERE account_id = $1 AND principal = $2 AND player_tag = $3 RETURNING nickname")
            .bind(account)
            .bind(&principal)
            .bind(tag),
            "nickname",
        )
        .await?;
        if let Some(nickname) = nickname {
            sql(
                "INSERT INTO nicknames (account_id, principal, player_tag, nickname, updated_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(account)
            .bind(&principal)
            .bind(tag)
            .bind(nickname)
            .bind(at)
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await?;
        Ok(previous)
    }

    async fn nicknames(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<(String, String)>, StoreError> {
        sql("SELECT player_tag, nickname FROM nicknames \
             WHERE account_id = $1 AND principal = $2 ORDER BY player_tag")
        .bind(account)
        .bind(principal.key())
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(|r| Ok((r.text("player_tag")?, r.text("nickname")?)))
        .collect()
    }

    async fn bind_identity(&self, agent: Uuid, id: &Identity) -> Result<Bound, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let inserted = sql("INSERT INTO identities \
             (agent_id, external_id, player_tag, display_name, bound_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_id, external_id) DO NOTHING")
        .bind(agent)
        .bind(&id.external_id)
        .bind(&id.player_tag)
        .bind(id.display_name.as_deref())
        .bind(id.bound_at)
        .execute(&mut tx)
        .await?;
        if inserted.rows_affected() == 1 {
            tx.commit().await?;
            return Ok(Bound::Created(id.clone()));
        }
        let lock = tx.backend().row_lock();
        let stored = sql(format!(
            "SELECT {IDENTITY_COLUMNS} FROM identities WHERE agent_id = $1 AND external_id = $2{lock}"
        ))
        .bind(agent)
        .bind(&id.external_id)
        .fetch_one(&mut tx)
        .await
        .and_then(|r| identity_row(&r))?;
        if stored.player_tag != id.player_tag {
            return Ok(Bound::Conflict(stored));
        }
        let mut stored = stored;
        if stored.display_name.is_none() && id.display_name.is_some() {
            sql("UPDATE identities SET display_name = $3 WHERE agent_id = $1 AND external_id = $2")
                .bind(agent)
                .bind(&id.external_id)
                .bind(id.display_name.as_deref())
                .execute(&mut tx)
                .await?;
            stored.display_name = id.display_name.clone();
        }
        tx.commit().await?;
        Ok(Bound::Existing(stored))
    }

    async fn identity(
        &self,
        agent: Uuid,
        external_id: &str,
    ) -> Result<Option<Identity>, StoreError> {
        sql(format!(
            "SELECT {IDENTITY_COLUMNS} FROM identities WHERE agent_id = $1 AND external_id = $2"
        ))
        .bind(agent)
        .bind(external_id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(identity_row)
        .transpose()
    }

    async fn identities(
        &self,
        agent: Uuid,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Identity>, i64), StoreError> {
        let rows = sql(format!(
            "SELECT {IDENTITY_COLUMNS}, COUNT(*) OVER () AS total FROM identities \
             WHERE agent_id = $1 ORDER BY bound_at DESC, external_id LIMIT $2 OFFSET $3"
        ))
        .bind(agent)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.db)
        .await?;
        let total = match rows.first() {
            Some(r) => r.int("total")?,
            None => sql("SELECT COUNT(*) AS n FROM identities WHERE agent_id = $1")
                .bind(agent)
                .fetch_one(&self.db)
                .await?
                .int("n")?,
        };
        let identities = rows.iter().map(identity_row).collect::<Result<_, _>>()?;
        Ok((identities, total))
    }

    async fn set_agent_clan(&self, agent: Uuid, clan_tag: Option<&str>) -> Result<(), StoreError> {
        super::sql_store::found(
            sql("UPDATE agents SET clan_tag = $2 WHERE id = $1")
                .bind(agent)
                .bind(clan_tag)
                .execute(&self.db)
                .await?,
        )
    }
}

/// The notify flag of one tracked row of `table` (keyed by `column`): read, then changed
/// only when it differs, in one write transaction.
async fn set_notify(
    store: &SqlStore,
    table: &str,
    column: &str,
    account: Uuid,
    principal: Principal,
    tag: &str,
    notify: bool,
) -> Result<Option<bool>, StoreError> {
    let principal = principal.key();
    let mut tx = store.db.begin_write().await?;
    let lock = tx.backend().row_lock();
    let Some(before) = sql(format!(
        "SELECT notify FROM {table} WHERE account_id = $1 AND principal = $2 AND {column} = $3{lock}"
    ))
    .bind(account)
    .bind(&principal)
    .bind(tag)
    .fetch_optional(&mut tx)
    .await?
    .map(|r| r.flag("notify"))
    .transpose()?
    else {
        return Ok(None);
    };
    if before == notify {
        return Ok(Some(false));
    }
    sql(format!(
        "UPDATE {table} SET notify = $4 WHERE account_id = $1 AND principal = $2 AND {column} = $3"
    ))
    .bind(account)
    .bind(&principal)
    .bind(tag)
    .bind(notify)
    .execute(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(Some(true))
}
