//! The play part of the SQL store: the journal, consequences and receipts of an assignment,
//! and `apply`, the one write path of a play operation (row lock, decision, atomic write).

/// Emits `mod play` into [`sql_store!`](super::sql_store!)'s expansion: one function per
/// `Store` method of this area, with the store as its first argument.
macro_rules! sql_play {
    ($store:ident, $conn:ty, lock = $lock:literal) => {
        mod play {
            use uuid::Uuid;

            use super::super::$store;
            use crate::domain::play::DomainError;
            use crate::domain::{Assignment, Consequence, JournalEvent, Receipt};
            use sqlkit::Cols;

            use crate::store::{
                Applied, ApplyError, ContextSnapshot, Decide, Decision, OperationState, StoreError,
                WritePlan, sql,
            };

            pub(super) async fn journal_page(
                store: &$store,
                assignment_id: Uuid,
                player_view: bool,
                offset: i64,
                limit: i64,
            ) -> Result<(i64, Vec<JournalEvent>), StoreError> {
                let count = format!(
                    "SELECT COUNT(*) AS n FROM journal_events WHERE assignment_id = $1 {}",
                    sql::journal_filter(player_view)
                );
                let total: i64 = sqlx::query_scalar(&count)
                    .bind(assignment_id.to_string())
                    .fetch_one(&store.pool)
                    .await?;
                let page = store
                    .events(assignment_id, player_view, false, offset, limit)
                    .await?;
                Ok((total, page))
            }

            pub(super) async fn recent_journal(
                store: &$store,
                assignment_id: Uuid,
                player_view: bool,
                n: i64,
            ) -> Result<Vec<JournalEvent>, StoreError> {
                let mut events = store
                    .events(assignment_id, player_view, true, 0, n)
                    .await?;
                events.reverse();
                Ok(events)
            }

            /// `get_play_context`'s reads on one pooled connection (one release ping instead
            /// of one per statement): the assignment with its scenario's title (a correlated
            /// subquery, so no second statement), the newest player-visible events (oldest
            /// first) and the newest consequences.
            pub(super) async fn context_snapshot(
                store: &$store,
                assignment_id: Uuid,
                events: i64,
                consequences: i64,
            ) -> Result<Option<ContextSnapshot>, StoreError> {
                let mut conn = store.pool.acquire().await?;
                let id = assignment_id.to_string();
                let Some(row) = sqlx::query(concat!(
                    "SELECT ",
                    sql::assignment_columns!(),
                    ", (SELECT s.title FROM scenarios s WHERE s.id = assignments.scenario_id) \
                     AS scenario_title FROM assignments WHERE id = $1"
                ))
                .bind(&id)
                .fetch_optional(&mut *conn)
                .await?
                else {
                    return Ok(None);
                };
                let assignment = sql::assignment(&row)?;
                let scenario_title = row.opt_text("scenario_title")?;
                let mut recent = events_on(&mut conn, assignment_id, true, true, 0, events).await?;
                recent.reverse();
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::consequence_columns!(),
                    " FROM consequences WHERE assignment_id = $1 \
                     ORDER BY version DESC, seq DESC LIMIT $2"
                ))
                .bind(&id)
                .bind(consequences.max(0))
                .fetch_all(&mut *conn)
                .await?;
                let consequences = rows.iter().map(sql::consequence).collect::<Result<_, _>>()?;
                Ok(Some(ContextSnapshot {
                    assignment,
                    scenario_title,
                    events: recent,
                    consequences,
                }))
            }

            pub(super) async fn journal(
                store: &$store,
                assignment_id: Uuid,
                player_view: bool,
            ) -> Result<Vec<JournalEvent>, StoreError> {
                store.events(assignment_id, player_view, false, 0, i64::MAX)
                    .await
            }

            pub(super) async fn recent_consequences(
                store: &$store,
                assignment_id: Uuid,
                n: i64,
            ) -> Result<Vec<Consequence>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::consequence_columns!(),
                    " FROM consequences WHERE assignment_id = $1 \
                     ORDER BY version DESC, seq DESC LIMIT $2"
                ))
                .bind(assignment_id.to_string())
                .bind(n.max(0))
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::consequence).collect()
            }

            pub(super) async fn consequences(
                store: &$store,
                assignment_id: Uuid,
            ) -> Result<Vec<Consequence>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::consequence_columns!(),
                    " FROM consequences WHERE assignment_id = $1 ORDER BY version, seq"
                ))
                .bind(assignment_id.to_string())
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::consequence).collect()
            }

            pub(super) async fn pending_count(
                store: &$store,
                assignment_id: Uuid,
            ) -> Result<i64, StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT COUNT(*) FROM consequences \
                     WHERE assignment_id = $1 AND status = 'pending'",
                )
                .bind(assignment_id.to_string())
                .fetch_one(&store.pool)
                .await?)
            }

            pub(super) async fn receipt(
                store: &$store,
                assignment_id: Uuid,
                operation_id: Uuid,
            ) -> Result<Option<Receipt>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::receipt_columns!(),
                    " FROM receipts WHERE assignment_id = $1 AND operation_id = $2"
                ))
                .bind(assignment_id.to_string())
                .bind(operation_id.to_string())
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::receipt).transpose()
            }

            pub(super) async fn apply(
                store: &$store,
                assignment_id: Uuid,
                operation_id: Uuid,
                load: crate::store::Load<'_>,
                decide: Decide,
            ) -> Result<Applied, ApplyError> {
                let mut tx = store.begin_write().await?;
                let outcome = apply_locked(
                    &mut tx,
                    assignment_id,
                    operation_id,
                    load,
                    decide,
                )
                .await;
                match outcome {
                    Ok(Outcome::Commit(receipt)) => {
                        tx.commit().await.map_err(StoreError::from)?;
                        Ok(Applied::Committed(receipt))
                    }
                    Ok(Outcome::Replay(receipt)) => {
                        tx.rollback().await.map_err(StoreError::from)?;
                        Ok(Applied::Replayed(receipt))
                    }
                    Err(err) => {
                        if let Err(rollback) = tx.rollback().await {
                            tracing::warn!(
                                error = %rollback,
                                "rollback after a refused operation failed"
                            );
                        }
                        Err(err)
                    }
                }
            }

            impl $store {
                async fn events(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                    newest_first: bool,
                    offset: i64,
                    limit: i64,
                ) -> Result<Vec<JournalEvent>, StoreError> {
                    let mut conn = self.pool.acquire().await?;
                    events_on(&mut conn, assignment_id, player_view, newest_first, offset, limit)
                        .await
                }
            }

            /// One page of an assignment's journal, on `conn`.
            async fn events_on(
                conn: &mut $conn,
                assignment_id: Uuid,
                player_view: bool,
                newest_first: bool,
                offset: i64,
                limit: i64,
            ) -> Result<Vec<JournalEvent>, StoreError> {
                    // The filter and order are fixed fragments chosen here, never caller text.
                    let statement = format!(
                        "SELECT {} FROM journal_events WHERE assignment_id = $1 {} \
                         ORDER BY version {} LIMIT $2 OFFSET $3",
                        sql::event_columns!(),
                        sql::journal_filter(player_view),
                        if newest_first { "DESC" } else { "ASC" },
                    );
                    let rows = sqlx::query(&statement)
                        .bind(assignment_id.to_string())
                        .bind(limit.max(0))
                        .bind(offset.max(0))
                        .fetch_all(&mut *conn)
                        .await?;
                    rows.iter().map(sql::event).collect()
            }

            /// What the locked part of [`apply`] decided.
            enum Outcome {
                Commit(Receipt),
                Replay(Receipt),
            }

            /// The body of [`apply`] inside the write transaction, from the row lock on; the
            /// caller commits or rolls back.
            async fn apply_locked(
                conn: &mut $conn,
                assignment_id: Uuid,
                operation_id: Uuid,
                load: crate::store::Load<'_>,
                decide: Decide,
            ) -> Result<Outcome, ApplyError> {
                let id = assignment_id.to_string();
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::assignment_columns!(),
                    " FROM assignments WHERE id = $1",
                    $lock
                ))
                .bind(&id)
                .fetch_optional(&mut *conn)
                .await
                .map_err(StoreError::from)?;
                let assignment = row
                    .as_ref()
                    .map(sql::assignment)
                    .transpose()?
                    .ok_or(DomainError::NotFound)?;

                let receipt = sqlx::query(concat!(
                    "SELECT ",
                    sql::receipt_columns!(),
                    " FROM receipts WHERE assignment_id = $1 AND operation_id = $2"
                ))
                .bind(&id)
                .bind(operation_id.to_string())
                .fetch_optional(&mut *conn)
                .await
                .map_err(StoreError::from)?
                .as_ref()
                .map(sql::receipt)
                .transpose()?;

                let mut consequences: Vec<Consequence> = Vec::with_capacity(load.consequences.len());
                for cid in load.consequences {
                    if consequences.iter().any(|c| c.id == *cid) {
                        continue;
                    }
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::consequence_columns!(),
                        " FROM consequences WHERE id = $1 AND assignment_id = $2"
                    ))
                    .bind(cid.to_string())
                    .bind(&id)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(StoreError::from)?;
                    if let Some(row) = row {
                        consequences.push(sql::consequence(&row)?);
                    }
                }

                let pending = if load.pending {
                    Some(
                        sqlx::query_scalar::<_, i64>(
                            "SELECT COUNT(*) FROM consequences \
                             WHERE assignment_id = $1 AND status = 'pending'",
                        )
                        .bind(&id)
                        .fetch_one(&mut *conn)
                        .await
                        .map_err(StoreError::from)?,
                    )
                } else {
                    None
                };

                let decision = decide(OperationState {
                    assignment: &assignment,
                    receipt: receipt.as_ref(),
                    consequences: &consequences,
                    pending,
                })?;
                match decision {
                    Decision::Replay(receipt) => Ok(Outcome::Replay(receipt)),
                    Decision::Write(plan) => {
                        write_plan(conn, &assignment, &plan).await?;
                        Ok(Outcome::Commit(plan.receipt))
                    }
                }
            }

            /// Writes everything one operation changes. The version guard on the update and the
            /// primary keys of events and receipts back up the lock.
            async fn write_plan(
                conn: &mut $conn,
                before: &Assignment,
                plan: &WritePlan,
            ) -> Result<(), StoreError> {
                let id = before.id.to_string();
                let updated = sqlx::query(
                    "UPDATE assignments SET version = $1, status = $2, memory = $3, \
                     current_scene = $4, summary = $5, updated_at = $6 \
                     WHERE id = $7 AND version = $8",
                )
                .bind(plan.version)
                .bind(plan.status.as_str())
                .bind(&plan.memory)
                .bind(plan.current_scene.as_deref())
                .bind(plan.summary.as_deref())
                .bind(plan.updated_at)
                .bind(&id)
                .bind(before.version)
                .execute(&mut *conn)
                .await?;
                if updated.rows_affected() != 1 {
                    return Err(StoreError::Conflict(
                        "assignment changed during the operation".into(),
                    ));
                }

                for event in &plan.events {
                    sqlx::query(
                        "INSERT INTO journal_events (assignment_id, version, kind, operation_id, \
                         player_action, narration, summary, gm_private, scene, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    )
                    .bind(&id)
                    .bind(event.version)
                    .bind(event.kind.as_str())
                    .bind(event.operation_id.map(|o| o.to_string()))
                    .bind(event.player_action.as_deref())
                    .bind(event.narration.as_deref())
                    .bind(event.summary.as_deref())
                    .bind(event.gm_private.as_deref())
                    .bind(event.scene.as_deref())
                    .bind(event.created_at)
                    .execute(&mut *conn)
                    .await?;
                }

                for (seq, c) in (0_i64..).zip(&plan.consequences) {
                    sqlx::query(
                        "INSERT INTO consequences (id, assignment_id, version, seq, category, \
                         description, status, gm_note, created_at, decided_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    )
                    .bind(c.id.to_string())
                    .bind(c.assignment_id.to_string())
                    .bind(c.version)
                    .bind(seq)
                    .bind(c.category.as_str())
                    .bind(&c.description)
                    .bind(c.status.as_str())
                    .bind(c.gm_note.as_deref())
                    .bind(c.created_at)
                    .bind(c.decided_at)
                    .execute(&mut *conn)
                    .await?;
                }

                for d in &plan.decisions {
                    let decided = sqlx::query(
                        "UPDATE consequences SET status = $1, gm_note = $2, decided_at = $3 \
                         WHERE id = $4 AND assignment_id = $5",
                    )
                    .bind(d.status.as_str())
                    .bind(d.note.as_deref())
                    .bind(d.decided_at)
                    .bind(d.id.to_string())
                    .bind(&id)
                    .execute(&mut *conn)
                    .await?;
                    if decided.rows_affected() != 1 {
                        return Err(StoreError::NotFound);
                    }
                }

                let r = &plan.receipt;
                sqlx::query(
                    "INSERT INTO receipts (assignment_id, operation_id, kind, args_hash, result, \
                     version, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(r.assignment_id.to_string())
                .bind(r.operation_id.to_string())
                .bind(r.kind.as_str())
                .bind(&r.args_hash)
                .bind(sql::json_text(&r.result)?)
                .bind(r.version)
                .bind(r.created_at)
                .execute(&mut *conn)
                .await?;
                Ok(())
            }
        }
    };
}
pub(crate) use sql_play;
