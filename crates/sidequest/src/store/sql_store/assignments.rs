//! The assignments part of the SQL store: assignments created (as given, or once per id and
//! creation hash), looked up and listed for a user, and their play tokens. What happens in
//! play is the play area's.

/// Emits `mod assignments` into [`sql_store!`](super::sql_store!)'s expansion: one function per
/// `Store` method of this area, with the store as its first argument.
macro_rules! sql_assignments {
    ($store:ident, lock = $lock:literal) => {
        mod assignments {
            use uuid::Uuid;

            use super::super::$store;
            use crate::domain::{Assignment, Millis, PlayTokenGrant};
            use crate::store::{CreateOutcome, StoreError, sql};

            /// Inserts an assignment; `$23` is its creation hash (NULL outside idempotent REST
            /// creation).
            const INSERT_ASSIGNMENT: &str = concat!(
                "INSERT INTO assignments (",
                sql::assignment_columns!(),
                ", creation_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
                 $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)"
            );
            /// [`INSERT_ASSIGNMENT`], writing nothing when the id exists. On PostgreSQL it waits
            /// for a concurrent insert of the same id to commit, so the row is there to read after.
            const INSERT_ASSIGNMENT_ONCE: &str = concat!(
                "INSERT INTO assignments (",
                sql::assignment_columns!(),
                ", creation_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
                 $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) \
                 ON CONFLICT (id) DO NOTHING"
            );

            pub(super) async fn create_assignment(
                store: &$store,
                a: &Assignment,
            ) -> Result<(), StoreError> {
                store.insert_assignment(INSERT_ASSIGNMENT, a, None).await?;
                Ok(())
            }

            pub(super) async fn assignment(
                store: &$store,
                id: Uuid,
            ) -> Result<Option<Assignment>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::assignment_columns!(),
                    " FROM assignments WHERE id = $1"
                ))
                .bind(id.to_string())
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::assignment).transpose()
            }

            pub(super) async fn create_assignment_once(
                store: &$store,
                a: &Assignment,
                creation_hash: &str,
            ) -> Result<CreateOutcome, StoreError> {
                if store
                    .insert_assignment(INSERT_ASSIGNMENT_ONCE, a, Some(creation_hash))
                    .await?
                    == 1
                {
                    return Ok(CreateOutcome::Created);
                }
                // The id was taken, by a commit this statement can see (assignments are
                // never deleted).
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::assignment_columns!(),
                    ", creation_hash FROM assignments WHERE id = $1"
                ))
                .bind(a.id.to_string())
                .fetch_one(&store.pool)
                .await?;
                let stored: Option<String> = sqlkit::Cols::opt_text(&row, "creation_hash")?;
                if stored.as_deref() == Some(creation_hash) {
                    Ok(CreateOutcome::Existing(Box::new(sql::assignment(&row)?)))
                } else {
                    Ok(CreateOutcome::Conflict)
                }
            }

            pub(super) async fn assignments_of(
                store: &$store,
                user_id: Uuid,
                limit: i64,
            ) -> Result<Vec<Assignment>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::assignment_columns!(),
                    " FROM assignments WHERE gm_id = $1 OR player_id = $1 \
                     ORDER BY created_at DESC, id DESC LIMIT $2"
                ))
                .bind(user_id.to_string())
                .bind(limit.max(0))
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::assignment).collect()
            }

            pub(super) async fn issue_play_token(
                store: &$store,
                assignment_id: Uuid,
                digest: &str,
                now: Millis,
                expires_at: Millis,
            ) -> Result<(), StoreError> {
                let id = assignment_id.to_string();
                let mut tx = store.begin_write().await?;
                // With the row lock, concurrent issues queue up: one token stays live.
                sqlx::query(concat!("SELECT id FROM assignments WHERE id = $1", $lock))
                    .bind(&id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                sqlx::query(
                    "UPDATE play_tokens SET revoked_at = $1 \
                     WHERE assignment_id = $2 AND revoked_at IS NULL",
                )
                .bind(now)
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO play_tokens (assignment_id, digest, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(&id)
                .bind(digest)
                .bind(now)
                .bind(expires_at)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn revoke_play_tokens(
                store: &$store,
                assignment_id: Uuid,
                now: Millis,
            ) -> Result<u64, StoreError> {
                let done = sqlx::query(
                    "UPDATE play_tokens SET revoked_at = $1 \
                     WHERE assignment_id = $2 AND revoked_at IS NULL AND expires_at > $1",
                )
                .bind(now)
                .bind(assignment_id.to_string())
                .execute(&store.pool)
                .await?;
                Ok(done.rows_affected())
            }

            pub(super) async fn play_token(
                store: &$store,
                digest: &str,
            ) -> Result<Option<PlayTokenGrant>, StoreError> {
                let row = sqlx::query(sql::PLAY_TOKEN)
                    .bind(digest)
                    .fetch_optional(&store.pool)
                    .await?;
                row.as_ref().map(sql::grant).transpose()
            }

            impl $store {
                /// Runs `statement` ([`INSERT_ASSIGNMENT`] or [`INSERT_ASSIGNMENT_ONCE`]) for `a`;
                /// returns how many rows it inserted.
                async fn insert_assignment(
                    &self,
                    statement: &'static str,
                    a: &Assignment,
                    creation_hash: Option<&str>,
                ) -> Result<u64, StoreError> {
                    let done = sqlx::query(statement)
                        .bind(a.id.to_string())
                        .bind(a.scenario_id.to_string())
                        .bind(a.source_version)
                        .bind(a.gm_id.to_string())
                        .bind(a.player_id.to_string())
                        .bind(a.mode.as_str())
                        .bind(a.language.as_str())
                        .bind(&a.character)
                        .bind(&a.brief)
                        .bind(&a.instructions)
                        .bind(&a.boundaries)
                        .bind(&a.return_condition)
                        .bind(&a.gm_notes)
                        .bind(sql::json_text(&a.published_node_ids)?)
                        .bind(a.auto_approve)
                        .bind(a.status.as_str())
                        .bind(a.version)
                        .bind(&a.memory)
                        .bind(a.current_scene.as_deref())
                        .bind(a.summary.as_deref())
                        .bind(a.created_at)
                        .bind(a.updated_at)
                        .bind(creation_hash)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected())
                }
            }
        }
    };
}
pub(crate) use sql_assignments;
