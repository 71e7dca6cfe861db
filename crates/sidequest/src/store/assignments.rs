//! The assignments area: assignments created (as given, or once per id and creation hash),
//! looked up and listed for a user, and their play tokens — the trait, its records and its
//! SQL. What happens in play (and the assignment row's columns, which play locks and writes)
//! is the play area's.

use async_trait::async_trait;
use sqlkit::{Cols, Row, sql};
use uuid::Uuid;

use super::Held;
use super::play::{ASSIGNMENT_COLUMNS, assignment, assignment_on, json_text, stored};
use super::sql::{SqlStore, StoreError};
use crate::domain::{Assignment, Language, Millis, PlayTokenGrant};

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

/// Assignments and their play tokens.
#[async_trait]
pub trait Assignments: Send + Sync {
    /// Inserts a new assignment; an existing id is `Conflict`.
    async fn create_assignment(&self, assignment: &Assignment) -> Result<(), StoreError>;
    async fn assignment(&self, id: Uuid) -> Result<Option<Assignment>, StoreError>;
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
    /// [`Assignments::play_token`] read the cheapest way (`sqlkit::Db::read_first`): on
    /// PostgreSQL on a connection taken from the pool and handed back with the answer, for the
    /// request's later statements ([`Held`]); on a SQLite file in place on the calling thread,
    /// nothing held (a later statement takes a pooled connection then). One statement:
    /// digest, expiry, revocation, both people's activity and the assignment's current
    /// version.
    async fn play_token_held(
        &self,
        digest: &str,
    ) -> Result<(Option<PlayTokenGrant>, Option<Held>), StoreError>;
    /// When the assignment's live token (not revoked, not expired at `now`) expires; `None`
    /// when it has none. Issuing revokes the earlier ones, so there is at most one.
    async fn live_play_token_expiry(
        &self,
        assignment_id: Uuid,
        now: Millis,
    ) -> Result<Option<Millis>, StoreError>;
}

/// A token joined to its assignment (with its current version) and both users.
const PLAY_TOKEN: &str = "SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, \
     (t.revoked_at IS NOT NULL) AS revoked, p.active AS player_active, \
     g.active AS gm_active, a.language, a.scenario_id, a.source_version, a.version \
     FROM play_tokens t \
     JOIN assignments a ON a.id = t.assignment_id \
     JOIN users p ON p.id = a.player_id \
     JOIN users g ON g.id = a.gm_id \
     WHERE t.digest = $1";

/// The columns of [`PLAY_TOKEN`].
fn grant(r: &Row) -> Result<PlayTokenGrant, StoreError> {
    Ok(PlayTokenGrant {
        assignment_id: r.uuid("assignment_id")?,
        player_id: r.uuid("player_id")?,
        gm_id: r.uuid("gm_id")?,
        expires_at: r.int("expires_at")?,
        revoked: r.flag("revoked")?,
        player_active: r.flag("player_active")?,
        gm_active: r.flag("gm_active")?,
        language: stored(r.text("language")?, Language::parse, "language")?,
        scenario_id: r.uuid("scenario_id")?,
        source_version: r.int("source_version")?,
        version: r.int("version")?,
    })
}

/// Inserts an assignment (`$23` is its creation hash, NULL outside idempotent REST creation);
/// with `once`, writes nothing when the id exists. On PostgreSQL `ON CONFLICT` waits for a
/// concurrent insert of the same id to commit, so the row is there to read after. Returns how
/// many rows it inserted.
async fn insert_assignment(
    store: &SqlStore,
    a: &Assignment,
    creation_hash: Option<&str>,
    once: bool,
) -> Result<u64, StoreError> {
    let statement = format!(
        "INSERT INTO assignments ({ASSIGNMENT_COLUMNS}, creation_hash) VALUES ($1, $2, $3, $4, \
         $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
         $23){}",
        if once {
            " ON CONFLICT (id) DO NOTHING"
        } else {
            ""
        }
    );
    let done = sql(statement)
        .bind(a.id)
        .bind(a.scenario_id)
        .bind(a.source_version)
        .bind(a.gm_id)
        .bind(a.player_id)
        .bind(a.mode.as_str())
        .bind(a.language.as_str())
        .bind(&a.character)
        .bind(&a.brief)
        .bind(&a.instructions)
        .bind(&a.boundaries)
        .bind(&a.return_condition)
        .bind(&a.gm_notes)
        .bind(json_text(&a.published_node_ids)?)
        .bind(a.auto_approve)
        .bind(a.status.as_str())
        .bind(a.version)
        .bind(&a.memory)
        .bind(a.current_scene.as_deref())
        .bind(a.summary.as_deref())
        .bind(a.created_at)
        .bind(a.updated_at)
        .bind(creation_hash)
        .execute(&store.db)
        .await?;
    Ok(done.rows_affected())
}

#[async_trait]
impl Assignments for SqlStore {
    async fn create_assignment(&self, a: &Assignment) -> Result<(), StoreError> {
        insert_assignment(self, a, None, false).await?;
        Ok(())
    }

    async fn assignment(&self, id: Uuid) -> Result<Option<Assignment>, StoreError> {
        assignment_on(&self.db, id).await
    }

    async fn create_assignment_once(
        &self,
        a: &Assignment,
        creation_hash: &str,
    ) -> Result<CreateOutcome, StoreError> {
        if insert_assignment(self, a, Some(creation_hash), true).await? == 1 {
            return Ok(CreateOutcome::Created);
        }
        // The id was taken, by a commit this statement can see (assignments are never
        // deleted).
        let row = sql(format!(
            "SELECT {ASSIGNMENT_COLUMNS}, creation_hash FROM assignments WHERE id = $1"
        ))
        .bind(a.id)
        .fetch_one(&self.db)
        .await?;
        if row.opt_text("creation_hash")?.as_deref() == Some(creation_hash) {
            Ok(CreateOutcome::Existing(Box::new(assignment(&row)?)))
        } else {
            Ok(CreateOutcome::Conflict)
        }
    }

    async fn assignments_of(
        &self,
        user_id: Uuid,
        limit: i64,
    ) -> Result<Vec<Assignment>, StoreError> {
        let rows = sql(format!(
            "SELECT {ASSIGNMENT_COLUMNS} FROM assignments WHERE gm_id = $1 OR player_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2"
        ))
        .bind(user_id)
        .bind(limit.max(0))
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(assignment).collect()
    }

    async fn issue_play_token(
        &self,
        assignment_id: Uuid,
        digest: &str,
        now: Millis,
        expires_at: Millis,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        // With the row lock, concurrent issues queue up: one token stays live.
        sql(format!(
            "SELECT id FROM assignments WHERE id = $1{}",
            tx.backend().row_lock()
        ))
        .bind(assignment_id)
        .fetch_one(&mut tx)
        .await?;
        sql("UPDATE play_tokens SET revoked_at = $1 \
             WHERE assignment_id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(assignment_id)
        .execute(&mut tx)
        .await?;
        sql(
            "INSERT INTO play_tokens (assignment_id, digest, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(assignment_id)
        .bind(digest)
        .bind(now)
        .bind(expires_at)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn revoke_play_tokens(
        &self,
        assignment_id: Uuid,
        now: Millis,
    ) -> Result<u64, StoreError> {
        let done = sql("UPDATE play_tokens SET revoked_at = $1 \
                        WHERE assignment_id = $2 AND revoked_at IS NULL AND expires_at > $1")
        .bind(now)
        .bind(assignment_id)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected())
    }

    async fn play_token(&self, digest: &str) -> Result<Option<PlayTokenGrant>, StoreError> {
        Ok(self.play_token_held(digest).await?.0)
    }

    async fn play_token_held(
        &self,
        digest: &str,
    ) -> Result<(Option<PlayTokenGrant>, Option<Held>), StoreError> {
        let (row, held) = self.db.read_first(sql(PLAY_TOKEN).bind(digest)).await?;
        Ok((row.as_ref().map(grant).transpose()?, held))
    }

    async fn live_play_token_expiry(
        &self,
        assignment_id: Uuid,
        now: Millis,
    ) -> Result<Option<Millis>, StoreError> {
        sql("SELECT MAX(expires_at) AS expires_at FROM play_tokens \
             WHERE assignment_id = $1 AND revoked_at IS NULL AND expires_at > $2")
        .bind(assignment_id)
        .bind(now)
        .fetch_one(&self.db)
        .await?
        .opt_int("expires_at")
    }
}
