//! The statements and transactions of both SQL backends, written once. SQLite accepts the
//! `$n` placeholders of PostgreSQL and the schemas agree on types, so the backends differ only
//! in how a write transaction begins (`BEGIN IMMEDIATE` or `BEGIN`) and whether a read takes
//! a row lock (`FOR UPDATE`); each backend module keeps those and invokes [`sql_store!`].

/// Implements [`Store`](super::Store) for `$store`, a struct in the invoking module with a
/// `pool` field, an `async fn begin_write(&self) -> Result<Transaction<'static, _>, StoreError>`
/// and a `MIGRATIONS: Embedded` constant beside it. `$conn` is the backend's connection type and
/// `$lock` the suffix that locks the rows a `SELECT` reads inside a write transaction.
///
/// A macro rather than code generic over `sqlx::Database`: generic code would have to repeat
/// the executor, argument and encode bounds of every bound type on every function.
macro_rules! sql_store {
    ($store:ident, $conn:ty, lock = $lock:literal) => {
        mod sql_store {
            use async_trait::async_trait;
            use sqlx::Connection;
            use uuid::Uuid;

            use crate::domain::play::DomainError;
            use crate::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};
            use crate::domain::{
                Assignment, Consequence, JournalEvent, Millis, Node, PlayTokenGrant, Receipt,
                Scenario, User,
            };
            // Column lists are invoked by path (`sql::user_columns!()`): imported, they leave
            // macro resolution stuck inside this expansion.
            use crate::store::sql;
            use crate::store::{
                Applied, ApplyError, AuthorGrant, AuthorTokenInfo, CreateOutcome, Decide, Decision,
                NewAuthorToken, NewScenario, NewSession, NewUser, OperationState, SessionRecord,
                Store, StoreError, WritePlan,
            };

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

            /// How long failed logins are kept: longer than any throttling window.
            const LOGIN_FAILURE_RETENTION: Millis = 24 * 60 * 60 * 1000;

            impl super::$store {
                async fn events(
                    &self,
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
                        .fetch_all(&self.pool)
                        .await?;
                    rows.iter().map(sql::event).collect()
                }

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

            /// The body of [`Store::write_wiki_page`] inside the write transaction; the caller
            /// commits a `Written` outcome and rolls back anything else.
            async fn write_wiki_locked(
                conn: &mut $conn,
                owner_id: &str,
                write: &WikiWrite,
                now: Millis,
            ) -> Result<WikiWriteOutcome, StoreError> {
                let current: Option<i64> = sqlx::query_scalar(concat!(
                    "SELECT version FROM wiki_pages WHERE owner_id = $1 AND slug = $2",
                    $lock
                ))
                .bind(owner_id)
                .bind(&write.slug)
                .fetch_optional(&mut *conn)
                .await?;
                let current = current.unwrap_or(0);
                if current != write.expected_version {
                    return Ok(WikiWriteOutcome::Conflict { current });
                }
                let page = WikiPage {
                    slug: write.slug.clone(),
                    title: write.title.clone(),
                    body: write.body.clone(),
                    version: current + 1,
                    updated_at: now,
                };
                let written = if current == 0 {
                    // No row to lock yet: a concurrent creator is stopped by the primary key.
                    // PostgreSQL waits for it to commit, then inserts nothing.
                    sqlx::query(
                        "INSERT INTO wiki_pages (owner_id, slug, title, body, version, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (owner_id, slug) DO NOTHING",
                    )
                    .bind(owner_id)
                    .bind(&page.slug)
                    .bind(&page.title)
                    .bind(&page.body)
                    .bind(page.version)
                    .bind(page.updated_at)
                    .execute(&mut *conn)
                    .await?
                } else {
                    sqlx::query(
                        "UPDATE wiki_pages SET title = $1, body = $2, version = $3, \
                         updated_at = $4 WHERE owner_id = $5 AND slug = $6 AND version = $7",
                    )
                    .bind(&page.title)
                    .bind(&page.body)
                    .bind(page.version)
                    .bind(page.updated_at)
                    .bind(owner_id)
                    .bind(&page.slug)
                    .bind(current)
                    .execute(&mut *conn)
                    .await?
                };
                if written.rows_affected() != 1 {
                    // Another writer got there first (a new statement sees its commit).
                    let now_at: Option<i64> = sqlx::query_scalar(
                        "SELECT version FROM wiki_pages WHERE owner_id = $1 AND slug = $2",
                    )
                    .bind(owner_id)
                    .bind(&write.slug)
                    .fetch_optional(&mut *conn)
                    .await?;
                    return Ok(WikiWriteOutcome::Conflict {
                        current: now_at.unwrap_or(current + 1),
                    });
                }
                sqlx::query(
                    "INSERT INTO wiki_page_versions (owner_id, slug, version, title, body, \
                     updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(owner_id)
                .bind(&page.slug)
                .bind(page.version)
                .bind(&page.title)
                .bind(&page.body)
                .bind(page.updated_at)
                .execute(&mut *conn)
                .await?;
                Ok(WikiWriteOutcome::Written(page))
            }

            /// What the locked part of [`Store::apply`] decided.
            enum Outcome {
                Commit(Receipt),
                Replay(Receipt),
            }

            /// The body of [`Store::apply`] inside the write transaction, from the row lock on; the
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

            #[async_trait]
            impl Store for super::$store {
                async fn migrate(&self) -> Result<(), StoreError> {
                    Ok(super::MIGRATIONS.migrator(false).await?.run(&self.pool).await?)
                }

                async fn ping(&self) -> Result<(), StoreError> {
                    Ok(self.pool.acquire().await?.ping().await?)
                }

                fn pool_use(&self) -> mcp_door::PoolUse {
                    mcp_door::PoolUse {
                        size: self.pool.size(),
                        idle: u32::try_from(self.pool.num_idle()).unwrap_or(u32::MAX),
                    }
                }

                async fn create_user(&self, user: &NewUser) -> Result<User, StoreError> {
                    sqlx::query(
                        "INSERT INTO users (id, username, display_name, password_hash, is_gm, \
                         active, created_at) VALUES ($1, $2, $3, $4, $5, TRUE, $6)",
                    )
                    .bind(user.id.to_string())
                    .bind(&user.username)
                    .bind(&user.display_name)
                    .bind(user.password_hash.as_deref())
                    .bind(user.is_gm)
                    .bind(user.created_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(User {
                        id: user.id,
                        username: user.username.clone(),
                        display_name: user.display_name.clone(),
                        is_gm: user.is_gm,
                        active: true,
                        created_at: user.created_at,
                    })
                }

                async fn user_by_username(
                    &self,
                    username: &str,
                ) -> Result<Option<User>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::user_columns!(),
                        " FROM users WHERE username = $1"
                    ))
                    .bind(username)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::user).transpose()
                }

                async fn user_by_id(&self, id: Uuid) -> Result<Option<User>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::user_columns!(),
                        " FROM users WHERE id = $1"
                    ))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::user).transpose()
                }

                async fn set_user_active(&self, id: Uuid, active: bool) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE users SET active = $1 WHERE id = $2")
                        .bind(active)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        Err(StoreError::NotFound)
                    } else {
                        Ok(())
                    }
                }

                async fn create_scenario(
                    &self,
                    scenario: &NewScenario,
                ) -> Result<Scenario, StoreError> {
                    let created = Scenario {
                        id: scenario.id,
                        owner_id: scenario.owner_id,
                        title: scenario.title.clone(),
                        version: 1,
                        created_at: scenario.created_at,
                    };
                    let id = scenario.id.to_string();
                    let mut tx = self.begin_write().await?;
                    sqlx::query(
                        "INSERT INTO scenarios (id, owner_id, title, version, created_at) \
                         VALUES ($1, $2, $3, $4, $5)",
                    )
                    .bind(&id)
                    .bind(created.owner_id.to_string())
                    .bind(&created.title)
                    .bind(created.version)
                    .bind(created.created_at)
                    .execute(&mut *tx)
                    .await?;
                    for node in &scenario.nodes {
                        sqlx::query(
                            "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, \
                             title, published, public_text, gm_text) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                        )
                        .bind(&id)
                        .bind(created.version)
                        .bind(&node.id)
                        .bind(&node.kind)
                        .bind(&node.title)
                        .bind(node.published)
                        .bind(&node.public_text)
                        .bind(&node.gm_text)
                        .execute(&mut *tx)
                        .await?;
                    }
                    sqlx::query(
                        "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, \
                         published, public_text, gm_text) \
                         SELECT scenario_id, node_id, kind, title, published, public_text, gm_text \
                         FROM scenario_nodes WHERE scenario_id = $1 AND version = $2",
                    )
                    .bind(&id)
                    .bind(created.version)
                    .execute(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    Ok(created)
                }

                async fn scenario(&self, id: Uuid) -> Result<Option<Scenario>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::scenario_columns!(),
                        " FROM scenarios WHERE id = $1"
                    ))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::scenario).transpose()
                }

                async fn scenario_by_title(
                    &self,
                    owner_id: Uuid,
                    title: &str,
                ) -> Result<Option<Scenario>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::scenario_columns!(),
                        " FROM scenarios WHERE owner_id = $1 AND title = $2 \
                         ORDER BY created_at, id LIMIT 1"
                    ))
                    .bind(owner_id.to_string())
                    .bind(title)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::scenario).transpose()
                }

                async fn nodes(
                    &self,
                    scenario_id: Uuid,
                    version: i64,
                ) -> Result<Vec<Node>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::node_columns!(),
                        " FROM scenario_nodes WHERE scenario_id = $1 AND version = $2 \
                         ORDER BY node_id"
                    ))
                    .bind(scenario_id.to_string())
                    .bind(version)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::node).collect()
                }

                async fn create_assignment(&self, a: &Assignment) -> Result<(), StoreError> {
                    self.insert_assignment(INSERT_ASSIGNMENT, a, None).await?;
                    Ok(())
                }

                async fn assignment(&self, id: Uuid) -> Result<Option<Assignment>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::assignment_columns!(),
                        " FROM assignments WHERE id = $1"
                    ))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::assignment).transpose()
                }

                async fn issue_play_token(
                    &self,
                    assignment_id: Uuid,
                    digest: &str,
                    now: Millis,
                    expires_at: Millis,
                ) -> Result<(), StoreError> {
                    let id = assignment_id.to_string();
                    let mut tx = self.begin_write().await?;
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

                async fn revoke_play_tokens(
                    &self,
                    assignment_id: Uuid,
                    now: Millis,
                ) -> Result<u64, StoreError> {
                    let done = sqlx::query(
                        "UPDATE play_tokens SET revoked_at = $1 \
                         WHERE assignment_id = $2 AND revoked_at IS NULL AND expires_at > $1",
                    )
                    .bind(now)
                    .bind(assignment_id.to_string())
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected())
                }

                async fn play_token(
                    &self,
                    digest: &str,
                ) -> Result<Option<PlayTokenGrant>, StoreError> {
                    let row = sqlx::query(sql::PLAY_TOKEN)
                        .bind(digest)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::grant).transpose()
                }

                async fn journal_page(
                    &self,
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
                        .fetch_one(&self.pool)
                        .await?;
                    let page = self
                        .events(assignment_id, player_view, false, offset, limit)
                        .await?;
                    Ok((total, page))
                }

                async fn recent_journal(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                    n: i64,
                ) -> Result<Vec<JournalEvent>, StoreError> {
                    let mut events = self
                        .events(assignment_id, player_view, true, 0, n)
                        .await?;
                    events.reverse();
                    Ok(events)
                }

                async fn journal(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                ) -> Result<Vec<JournalEvent>, StoreError> {
                    self.events(assignment_id, player_view, false, 0, i64::MAX)
                        .await
                }

                async fn recent_consequences(
                    &self,
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
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::consequence).collect()
                }

                async fn pending_count(&self, assignment_id: Uuid) -> Result<i64, StoreError> {
                    Ok(sqlx::query_scalar(
                        "SELECT COUNT(*) FROM consequences \
                         WHERE assignment_id = $1 AND status = 'pending'",
                    )
                    .bind(assignment_id.to_string())
                    .fetch_one(&self.pool)
                    .await?)
                }

                async fn receipt(
                    &self,
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
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::receipt).transpose()
                }

                async fn apply(
                    &self,
                    assignment_id: Uuid,
                    operation_id: Uuid,
                    load: crate::store::Load<'_>,
                    decide: Decide,
                ) -> Result<Applied, ApplyError> {
                    let mut tx = self.begin_write().await?;
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

                // ---- accounts and sessions ----

                async fn password_hash(&self, user_id: Uuid) -> Result<Option<String>, StoreError> {
                    let hash: Option<Option<String>> =
                        sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
                            .bind(user_id.to_string())
                            .fetch_optional(&self.pool)
                            .await?;
                    Ok(hash.flatten())
                }

                async fn set_password_hash(
                    &self,
                    user_id: Uuid,
                    hash: Option<&str>,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
                        .bind(hash)
                        .bind(user_id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        Err(StoreError::NotFound)
                    } else {
                        Ok(())
                    }
                }

                async fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
                    // Pruning as we go: expired sessions never come back, so each new one
                    // deletes them (indexed on expires_at) and no sweeper is needed.
                    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
                        .bind(session.created_at)
                        .execute(&self.pool)
                        .await?;
                    sqlx::query(
                        "INSERT INTO sessions (digest, user_id, csrf_digest, created_at, \
                         expires_at) VALUES ($1, $2, $3, $4, $5)",
                    )
                    .bind(&session.digest)
                    .bind(session.user_id.to_string())
                    .bind(&session.csrf_digest)
                    .bind(session.created_at)
                    .bind(session.expires_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError> {
                    let row = sqlx::query(sql::SESSION)
                        .bind(digest)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::session).transpose()
                }

                async fn delete_session(&self, digest: &str) -> Result<(), StoreError> {
                    sqlx::query("DELETE FROM sessions WHERE digest = $1")
                        .bind(digest)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn delete_sessions_of(&self, user_id: Uuid) -> Result<u64, StoreError> {
                    let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                        .bind(user_id.to_string())
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected())
                }

                async fn record_login_failure(
                    &self,
                    key: &str,
                    at: Millis,
                ) -> Result<(), StoreError> {
                    // Pruning as we go keeps the table to a day of failures without a sweeper.
                    sqlx::query("DELETE FROM login_failures WHERE at < $1")
                        .bind(at.saturating_sub(LOGIN_FAILURE_RETENTION))
                        .execute(&self.pool)
                        .await?;
                    sqlx::query("INSERT INTO login_failures (key, at) VALUES ($1, $2)")
                        .bind(key)
                        .bind(at)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn clear_login_failures(&self, key: &str) -> Result<(), StoreError> {
                    sqlx::query("DELETE FROM login_failures WHERE key = $1")
                        .bind(key)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn login_failures_since(
                    &self,
                    key: &str,
                    since: Millis,
                ) -> Result<i64, StoreError> {
                    Ok(sqlx::query_scalar(
                        "SELECT COUNT(*) FROM login_failures WHERE key = $1 AND at >= $2",
                    )
                    .bind(key)
                    .bind(since)
                    .fetch_one(&self.pool)
                    .await?)
                }

                // ---- scenario authoring ----

                async fn scenarios_of(&self, owner_id: Uuid) -> Result<Vec<Scenario>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::scenario_columns!(),
                        " FROM scenarios WHERE owner_id = $1 ORDER BY created_at, id"
                    ))
                    .bind(owner_id.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::scenario).collect()
                }

                async fn create_draft_scenario(
                    &self,
                    id: Uuid,
                    owner_id: Uuid,
                    title: &str,
                    now: Millis,
                ) -> Result<Scenario, StoreError> {
                    let created = Scenario {
                        id,
                        owner_id,
                        title: title.to_owned(),
                        version: 0,
                        created_at: now,
                    };
                    sqlx::query(
                        "INSERT INTO scenarios (id, owner_id, title, version, created_at) \
                         VALUES ($1, $2, $3, $4, $5)",
                    )
                    .bind(id.to_string())
                    .bind(owner_id.to_string())
                    .bind(title)
                    .bind(created.version)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(created)
                }

                async fn draft_nodes(&self, scenario_id: Uuid) -> Result<Vec<Node>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::node_columns!(),
                        " FROM scenario_draft_nodes WHERE scenario_id = $1 ORDER BY node_id"
                    ))
                    .bind(scenario_id.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::node).collect()
                }

                async fn put_draft_node(
                    &self,
                    scenario_id: Uuid,
                    node: &Node,
                ) -> Result<(), StoreError> {
                    // An unknown scenario fails the foreign key, which reads as `NotFound`.
                    sqlx::query(
                        "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, \
                         published, public_text, gm_text) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                         ON CONFLICT (scenario_id, node_id) DO UPDATE SET kind = excluded.kind, \
                         title = excluded.title, published = excluded.published, \
                         public_text = excluded.public_text, gm_text = excluded.gm_text",
                    )
                    .bind(scenario_id.to_string())
                    .bind(&node.id)
                    .bind(&node.kind)
                    .bind(&node.title)
                    .bind(node.published)
                    .bind(&node.public_text)
                    .bind(&node.gm_text)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn delete_draft_node(
                    &self,
                    scenario_id: Uuid,
                    node_id: &str,
                ) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "DELETE FROM scenario_draft_nodes WHERE scenario_id = $1 AND node_id = $2",
                    )
                    .bind(scenario_id.to_string())
                    .bind(node_id)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn publish_scenario(&self, scenario_id: Uuid) -> Result<i64, StoreError> {
                    let id = scenario_id.to_string();
                    let mut tx = self.begin_write().await?;
                    // The lock queues concurrent publishes, so each gets its own version.
                    let version: i64 = sqlx::query_scalar(concat!(
                        "SELECT version FROM scenarios WHERE id = $1",
                        $lock
                    ))
                    .bind(&id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                    let next = version + 1;
                    sqlx::query(
                        "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, title, \
                         published, public_text, gm_text) \
                         SELECT scenario_id, $2, node_id, kind, title, published, public_text, \
                         gm_text FROM scenario_draft_nodes WHERE scenario_id = $1",
                    )
                    .bind(&id)
                    .bind(next)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query("UPDATE scenarios SET version = $1 WHERE id = $2")
                        .bind(next)
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(next)
                }

                // ---- assignments for humans ----

                async fn create_assignment_once(
                    &self,
                    a: &Assignment,
                    creation_hash: &str,
                ) -> Result<CreateOutcome, StoreError> {
                    if self
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
                    .fetch_one(&self.pool)
                    .await?;
                    let stored: Option<String> = sqlkit::Cols::opt_text(&row, "creation_hash")?;
                    if stored.as_deref() == Some(creation_hash) {
                        Ok(CreateOutcome::Existing(Box::new(sql::assignment(&row)?)))
                    } else {
                        Ok(CreateOutcome::Conflict)
                    }
                }

                async fn assignments_of(
                    &self,
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
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::assignment).collect()
                }

                async fn consequences(
                    &self,
                    assignment_id: Uuid,
                ) -> Result<Vec<Consequence>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::consequence_columns!(),
                        " FROM consequences WHERE assignment_id = $1 ORDER BY version, seq"
                    ))
                    .bind(assignment_id.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::consequence).collect()
                }

                // ---- author personal tokens ----

                async fn create_author_token(
                    &self,
                    token: &NewAuthorToken,
                ) -> Result<(), StoreError> {
                    sqlx::query(
                        "INSERT INTO author_tokens (id, user_id, name, digest, created_at, \
                         expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                    )
                    .bind(token.id.to_string())
                    .bind(token.user_id.to_string())
                    .bind(&token.name)
                    .bind(&token.digest)
                    .bind(token.created_at)
                    .bind(token.expires_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn author_tokens(
                    &self,
                    user_id: Uuid,
                ) -> Result<Vec<AuthorTokenInfo>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::author_token_columns!(),
                        " FROM author_tokens WHERE user_id = $1 ORDER BY created_at DESC, id DESC"
                    ))
                    .bind(user_id.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::author_token).collect()
                }

                async fn revoke_author_token(
                    &self,
                    user_id: Uuid,
                    token_id: Uuid,
                    now: Millis,
                ) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "UPDATE author_tokens SET revoked_at = $1 \
                         WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL",
                    )
                    .bind(now)
                    .bind(token_id.to_string())
                    .bind(user_id.to_string())
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn author_token(
                    &self,
                    digest: &str,
                ) -> Result<Option<AuthorGrant>, StoreError> {
                    let row = sqlx::query(sql::AUTHOR_TOKEN)
                        .bind(digest)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::author_grant).transpose()
                }

                // ---- the campaign wiki ----

                async fn wiki_pages(&self, owner_id: Uuid) -> Result<Vec<WikiPage>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::wiki_columns!(),
                        " FROM wiki_pages WHERE owner_id = $1 ORDER BY slug"
                    ))
                    .bind(owner_id.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::wiki_page).collect()
                }

                async fn wiki_page(
                    &self,
                    owner_id: Uuid,
                    slug: &str,
                ) -> Result<Option<WikiPage>, StoreError> {
                    let row = sqlx::query(concat!(
                        "SELECT ",
                        sql::wiki_columns!(),
                        " FROM wiki_pages WHERE owner_id = $1 AND slug = $2"
                    ))
                    .bind(owner_id.to_string())
                    .bind(slug)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::wiki_page).transpose()
                }

                async fn write_wiki_page(
                    &self,
                    owner_id: Uuid,
                    write: &WikiWrite,
                    now: Millis,
                ) -> Result<WikiWriteOutcome, StoreError> {
                    let mut tx = self.begin_write().await?;
                    // On an error the transaction is dropped, which rolls it back.
                    let outcome =
                        write_wiki_locked(&mut tx, &owner_id.to_string(), write, now).await?;
                    if matches!(outcome, WikiWriteOutcome::Written(_)) {
                        tx.commit().await?;
                    } else {
                        tx.rollback().await?;
                    }
                    Ok(outcome)
                }

                async fn wiki_history(
                    &self,
                    owner_id: Uuid,
                    slug: &str,
                ) -> Result<Vec<WikiPage>, StoreError> {
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        sql::wiki_columns!(),
                        " FROM wiki_page_versions WHERE owner_id = $1 AND slug = $2 \
                         ORDER BY version DESC"
                    ))
                    .bind(owner_id.to_string())
                    .bind(slug)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::wiki_page).collect()
                }
            }
        }
    };
}
pub(crate) use sql_store;
