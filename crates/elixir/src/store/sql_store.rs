//! The statements of both SQL backends, written once. SQLite accepts PostgreSQL's `$n`
//! placeholders and the schemas agree on types (uuids as TEXT, instants as BIGINT
//! milliseconds), so the backends differ only in their connection setup; each invokes
//! [`sql_store!`] for its store type.

/// Implements [`Store`](super::Store) for `$store`, a struct in the invoking module with a
/// `pool` field and a `MIGRATIONS: Embedded` constant beside it.
macro_rules! sql_store {
    ($store:ident) => {
        mod sql_store {
            use async_trait::async_trait;
            use sqlx::Connection;
            use uuid::Uuid;

            use crate::domain::{FeedbackStatus, Millis, Tier};
            use crate::store::sql;
            use crate::store::{
                Account, Agent, AuditEntry, Feedback, FeedbackQuery, FeedbackReply, Ledger,
                NewFeedback, PollClaim, RawPayload, Receipt, Refusal, RefusalCount, Store,
                StoreError, StoredCatalogue, Window,
            };

            /// A bound value of a statement assembled from fixed fragments.
            enum Bind {
                Text(String),
                Int(i64),
            }

            /// The filter of a ledger read: fixed fragments, never caller text, and its binds.
            fn ledger_filter(
                ledger: &Ledger,
                status: Option<FeedbackStatus>,
                since: Option<Millis>,
            ) -> (String, Vec<Bind>) {
                let mut binds = vec![Bind::Text(ledger.account_id.to_string())];
                let mut sql = String::from("account_id = $1");
                match ledger.agent_id {
                    Some(agent) => {
                        binds.push(Bind::Text(agent.to_string()));
                        sql.push_str(&format!(" AND agent_id = ${}", binds.len()));
                    }
                    None => sql.push_str(" AND agent_id IS NULL"),
                }
                if let Some(status) = status {
                    binds.push(Bind::Text(status.as_str().to_owned()));
                    sql.push_str(&format!(" AND status = ${}", binds.len()));
                }
                if let Some(since) = since {
                    binds.push(Bind::Int(since));
                    let n = binds.len();
                    sql.push_str(&format!(
                        " AND (created_at >= ${n} OR (responded_at IS NOT NULL AND responded_at >= ${n}))"
                    ));
                }
                (sql, binds)
            }

            macro_rules! bind_all {
                ($query:expr, $binds:expr) => {{
                    let mut q = $query;
                    for b in $binds {
                        q = match b {
                            Bind::Text(t) => q.bind(t.clone()),
                            Bind::Int(i) => q.bind(*i),
                        };
                    }
                    q
                }};
            }

            #[async_trait]
            impl Store for super::$store {
                async fn migrate(&self) -> Result<(), StoreError> {
                    // mcp-oauth's migrations share the database: ignore their versions.
                    Ok(super::MIGRATIONS.migrator(true).await?.run(&self.pool).await?)
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

                async fn create_account(&self, a: &Account) -> Result<(), StoreError> {
                    sqlx::query(concat!(
                        "INSERT INTO accounts (",
                        sql::account_columns!(),
                        ") VALUES ($1, $2, $3, $4, $5, $6)"
                    ))
                    .bind(a.id.to_string())
                    .bind(a.email.as_deref())
                    .bind(a.tier.as_str())
                    .bind(&a.timezone)
                    .bind(a.primary_player_tag.as_deref())
                    .bind(a.created_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::account_columns!(),
                        " FROM accounts WHERE id = $1"
                    ))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::account)
                    .transpose()
                }

                async fn account_by_email(
                    &self,
                    email: &str,
                ) -> Result<Option<Account>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::account_columns!(),
                        " FROM accounts WHERE email = $1"
                    ))
                    .bind(email)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::account)
                    .transpose()
                }

                async fn set_account_timezone(
                    &self,
                    id: Uuid,
                    timezone: &str,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE accounts SET timezone = $1 WHERE id = $2")
                        .bind(timezone)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn set_account_tier(&self, id: Uuid, tier: Tier) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE accounts SET tier = $1 WHERE id = $2")
                        .bind(tier.as_str())
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn create_agent(&self, a: &Agent) -> Result<(), StoreError> {
                    sqlx::query(concat!(
                        "INSERT INTO agents (",
                        sql::agent_columns!(),
                        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                    ))
                    .bind(a.id.to_string())
                    .bind(&a.public_id)
                    .bind(a.owner_account_id.to_string())
                    .bind(&a.name)
                    .bind(a.kind.as_str())
                    .bind(a.suspended)
                    .bind(a.key_digest.as_deref())
                    .bind(&a.key_scopes)
                    .bind(a.timezone.as_deref())
                    .bind(a.created_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn agent(&self, id: Uuid) -> Result<Option<Agent>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::agent_columns!(),
                        " FROM agents WHERE id = $1"
                    ))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::agent)
                    .transpose()
                }

                async fn agent_by_public_id(
                    &self,
                    public_id: &str,
                ) -> Result<Option<Agent>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::agent_columns!(),
                        " FROM agents WHERE public_id = $1"
                    ))
                    .bind(public_id)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::agent)
                    .transpose()
                }

                async fn agent_by_key_digest(
                    &self,
                    digest: &str,
                ) -> Result<Option<Agent>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::agent_columns!(),
                        " FROM agents WHERE key_digest = $1"
                    ))
                    .bind(digest)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::agent)
                    .transpose()
                }

                async fn agents_of(&self, owner: Uuid) -> Result<Vec<Agent>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::agent_columns!(),
                        " FROM agents WHERE owner_account_id = $1 ORDER BY created_at, public_id"
                    ))
                    .bind(owner.to_string())
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(sql::agent)
                    .collect()
                }

                async fn set_agent_key(
                    &self,
                    id: Uuid,
                    digest: Option<&str>,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE agents SET key_digest = $1 WHERE id = $2")
                        .bind(digest)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn set_agent_suspended(
                    &self,
                    id: Uuid,
                    suspended: bool,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE agents SET suspended = $1 WHERE id = $2")
                        .bind(suspended)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn set_agent_timezone(
                    &self,
                    id: Uuid,
                    timezone: &str,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE agents SET timezone = $1 WHERE id = $2")
                        .bind(timezone)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn spend(
                    &self,
                    subject: &str,
                    window: Window,
                    start: Millis,
                    limit: i64,
                ) -> Result<Option<i64>, StoreError> {
                    // One statement: the insert or the guarded increment returns the new count;
                    // a full counter matches no row, so a refusal spends nothing.
                    let count: Option<i64> = sqlx::query_scalar(
                        "INSERT INTO usage_counters (subject, window_kind, window_start, count) \
                         VALUES ($1, $2, $3, 1) \
                         ON CONFLICT (subject, window_kind, window_start) \
                         DO UPDATE SET count = usage_counters.count + 1 \
                         WHERE usage_counters.count < $4 \
                         RETURNING count",
                    )
                    .bind(subject)
                    .bind(window.as_str())
                    .bind(start)
                    .bind(limit)
                    .fetch_optional(&self.pool)
                    .await?;
                    Ok(count)
                }

                async fn refund(
                    &self,
                    subject: &str,
                    window: Window,
                    start: Millis,
                ) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE usage_counters SET count = count - 1 WHERE subject = $1 \
                         AND window_kind = $2 AND window_start = $3 AND count > 0",
                    )
                    .bind(subject)
                    .bind(window.as_str())
                    .bind(start)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn usage(
                    &self,
                    subject: &str,
                    window: Window,
                    start: Millis,
                ) -> Result<i64, StoreError> {
                    let count: Option<i64> = sqlx::query_scalar(
                        "SELECT count FROM usage_counters WHERE subject = $1 \
                         AND window_kind = $2 AND window_start = $3",
                    )
                    .bind(subject)
                    .bind(window.as_str())
                    .bind(start)
                    .fetch_optional(&self.pool)
                    .await?;
                    Ok(count.unwrap_or(0))
                }

                async fn record_refusal(&self, r: &Refusal) -> Result<(), StoreError> {
                    sqlx::query(
                        "INSERT INTO refusals (credential_hint, address, day, door, reason, \
                         count, last_at) VALUES ($1, $2, $3, $4, $5, 1, $6) \
                         ON CONFLICT (credential_hint, address, day) DO UPDATE SET \
                         count = refusals.count + 1, door = $4, reason = $5, last_at = $6",
                    )
                    .bind(&r.credential_hint)
                    .bind(&r.address)
                    .bind(&r.day)
                    .bind(&r.door)
                    .bind(&r.reason)
                    .bind(r.at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn refusals(&self, day: &str) -> Result<Vec<RefusalCount>, StoreError> {
                    sqlx::query(
                        "SELECT credential_hint, address, day, door, reason, count FROM refusals \
                         WHERE day = $1 ORDER BY count DESC, credential_hint, address",
                    )
                    .bind(day)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(sql::refusal)
                    .collect()
                }

                async fn refusals_of(
                    &self,
                    credentials: &[String],
                    since_day: &str,
                ) -> Result<Vec<RefusalCount>, StoreError> {
                    if credentials.is_empty() {
                        return Ok(Vec::new());
                    }
                    // One placeholder per credential, after the day's `$1`.
                    let placeholders: Vec<String> =
                        (2..credentials.len() + 2).map(|n| format!("${n}")).collect();
                    let statement = format!(
                        "SELECT credential_hint, address, day, door, reason, count FROM refusals \
                         WHERE day >= $1 AND credential_hint IN ({}) \
                         ORDER BY day DESC, count DESC, credential_hint, address",
                        placeholders.join(", ")
                    );
                    let mut query = sqlx::query(&statement).bind(since_day);
                    for c in credentials {
                        query = query.bind(c);
                    }
                    query
                        .fetch_all(&self.pool)
                        .await?
                        .iter()
                        .map(sql::refusal)
                        .collect()
                }

                async fn purge_refusals(&self, before_day: &str) -> Result<u64, StoreError> {
                    let done = sqlx::query("DELETE FROM refusals WHERE day < $1")
                        .bind(before_day)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected())
                }

                async fn insert_audit(&self, e: &AuditEntry) -> Result<(), StoreError> {
                    sqlx::query(concat!(
                        "INSERT INTO audit (",
                        sql::audit_columns!(),
                        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                         ON CONFLICT (request_id) DO NOTHING"
                    ))
                    .bind(e.request_id.to_string())
                    .bind(e.account_id.map(|u| u.to_string()))
                    .bind(e.agent_id.map(|u| u.to_string()))
                    .bind(&e.door)
                    .bind(e.tool.as_deref())
                    .bind(e.arguments.as_deref())
                    .bind(e.response.as_deref())
                    .bind(e.error_code.as_deref())
                    .bind(e.duration_ms)
                    .bind(e.created_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn audit(&self, request_id: Uuid) -> Result<Option<AuditEntry>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::audit_columns!(),
                        " FROM audit WHERE request_id = $1"
                    ))
                    .bind(request_id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::audit)
                    .transpose()
                }

                async fn insert_feedback(&self, f: &NewFeedback) -> Result<Feedback, StoreError> {
                    let id: i64 = sqlx::query_scalar(
                        "INSERT INTO feedback (account_id, agent_id, principal_kind, \
                         on_behalf_of, category, message, context, request_id, status, \
                         related_tools, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'new', $9, $10) RETURNING id",
                    )
                    .bind(f.account_id.to_string())
                    .bind(f.agent_id.map(|u| u.to_string()))
                    .bind(f.principal_kind.as_str())
                    .bind(f.on_behalf_of.as_deref())
                    .bind(&f.category)
                    .bind(&f.message)
                    .bind(f.context.as_deref())
                    .bind(f.request_id.map(|u| u.to_string()))
                    .bind(sql::json_text(&f.related_tools)?)
                    .bind(f.created_at)
                    .fetch_one(&self.pool)
                    .await?;
                    self.feedback(id).await?.ok_or(StoreError::NotFound)
                }

                async fn feedback(&self, id: i64) -> Result<Option<Feedback>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::feedback_columns!(),
                        " FROM feedback WHERE id = $1"
                    ))
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::feedback)
                    .transpose()
                }

                async fn feedback_page(
                    &self,
                    q: &FeedbackQuery,
                ) -> Result<(Vec<Feedback>, i64), StoreError> {
                    let (filter, binds) = ledger_filter(&q.ledger, q.status, q.since);
                    let count_sql = format!("SELECT COUNT(*) FROM feedback WHERE {filter}");
                    let total: i64 =
                        bind_all!(sqlx::query_scalar(&count_sql), &binds)
                            .fetch_one(&self.pool)
                            .await?;
                    let n = binds.len();
                    let page_sql = format!(
                        "SELECT {} FROM feedback WHERE {filter} ORDER BY created_at DESC, id DESC \
                         LIMIT ${} OFFSET ${}",
                        sql::feedback_columns!(),
                        n + 1,
                        n + 2
                    );
                    let rows = bind_all!(sqlx::query(&page_sql), &binds)
                        .bind(q.limit.max(0))
                        .bind(q.offset.max(0))
                        .fetch_all(&self.pool)
                        .await?;
                    let items = rows.iter().map(sql::feedback).collect::<Result<_, _>>()?;
                    Ok((items, total))
                }

                async fn mark_delivered(&self, ids: &[i64], at: Millis) -> Result<(), StoreError> {
                    for id in ids {
                        sqlx::query(
                            "UPDATE feedback SET delivered_at = $1 WHERE id = $2 \
                             AND response IS NOT NULL AND delivered_at IS NULL",
                        )
                        .bind(at)
                        .bind(*id)
                        .execute(&self.pool)
                        .await?;
                    }
                    Ok(())
                }

                async fn pending_responses(&self, ledger: Ledger) -> Result<i64, StoreError> {
                    let (filter, binds) = ledger_filter(&ledger, None, None);
                    let sql = format!(
                        "SELECT COUNT(*) FROM feedback WHERE {filter} \
                         AND response IS NOT NULL AND delivered_at IS NULL"
                    );
                    Ok(bind_all!(sqlx::query_scalar(&sql), &binds)
                        .fetch_one(&self.pool)
                        .await?)
                }

                async fn all_feedback(
                    &self,
                    status: Option<FeedbackStatus>,
                    limit: i64,
                ) -> Result<Vec<Feedback>, StoreError> {
                    let rows = match status {
                        Some(s) => {
                            sqlx::query(concat!(
                                "SELECT ",
                                sql::feedback_columns!(),
                                " FROM feedback WHERE status = $1 \
                                 ORDER BY created_at DESC, id DESC LIMIT $2"
                            ))
                            .bind(s.as_str())
                            .bind(limit)
                            .fetch_all(&self.pool)
                            .await?
                        }
                        None => {
                            sqlx::query(concat!(
                                "SELECT ",
                                sql::feedback_columns!(),
                                " FROM feedback ORDER BY created_at DESC, id DESC LIMIT $1"
                            ))
                            .bind(limit)
                            .fetch_all(&self.pool)
                            .await?
                        }
                    };
                    rows.iter().map(sql::feedback).collect()
                }

                async fn reply_feedback(&self, r: &FeedbackReply) -> Result<Feedback, StoreError> {
                    let related = r.related_tools.as_ref().map(sql::json_text).transpose()?;
                    let done = match &r.response {
                        Some(response) => {
                            sqlx::query(
                                "UPDATE feedback SET status = $1, response = $2, \
                                 responded_at = $3, delivered_at = NULL, \
                                 shipped_in = COALESCE($4, shipped_in), \
                                 related_tools = COALESCE($5, related_tools) WHERE id = $6",
                            )
                            .bind(r.status.as_str())
                            .bind(response)
                            .bind(r.at)
                            .bind(r.shipped_in.as_deref())
                            .bind(related.as_deref())
                            .bind(r.id)
                            .execute(&self.pool)
                            .await?
                        }
                        None => {
                            sqlx::query(
                                "UPDATE feedback SET status = $1, \
                                 shipped_in = COALESCE($2, shipped_in), \
                                 related_tools = COALESCE($3, related_tools) WHERE id = $4",
                            )
                            .bind(r.status.as_str())
                            .bind(r.shipped_in.as_deref())
                            .bind(related.as_deref())
                            .bind(r.id)
                            .execute(&self.pool)
                            .await?
                        }
                    };
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    self.feedback(r.id).await?.ok_or(StoreError::NotFound)
                }

                // --- The account pages (Agents, Activity) ---

                async fn set_agent_key_scopes(
                    &self,
                    id: Uuid,
                    scopes: &str,
                ) -> Result<(), StoreError> {
                    let done = sqlx::query("UPDATE agents SET key_scopes = $1 WHERE id = $2")
                        .bind(scopes)
                        .bind(id.to_string())
                        .execute(&self.pool)
                        .await?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound);
                    }
                    Ok(())
                }

                async fn recent_audit(
                    &self,
                    account_id: Uuid,
                    limit: i64,
                ) -> Result<Vec<AuditEntry>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::audit_columns!(),
                        " FROM audit WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2"
                    ))
                    .bind(account_id.to_string())
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(sql::audit)
                    .collect()
                }

                async fn recent_agent_audit(
                    &self,
                    agent_id: Uuid,
                    limit: i64,
                ) -> Result<Vec<AuditEntry>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::audit_columns!(),
                        " FROM audit WHERE agent_id = $1 ORDER BY created_at DESC LIMIT $2"
                    ))
                    .bind(agent_id.to_string())
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(sql::audit)
                    .collect()
                }

                // --- The upstream record ---

                async fn record_fetch(
                    &self,
                    receipt: &Receipt,
                    raw: Option<&RawPayload>,
                ) -> Result<(), StoreError> {
                    let mut tx = self.pool.begin().await?;
                    sqlx::query(concat!(
                        "INSERT INTO upstream_receipts (",
                        sql::receipt_columns!(),
                        ") VALUES ($1, $2, $3, $4, $5, $6)"
                    ))
                    .bind(&receipt.endpoint)
                    .bind(receipt.subject.as_deref())
                    .bind(receipt.fetched_at)
                    .bind(receipt.status)
                    .bind(receipt.payload_sha256.as_deref())
                    .bind(&receipt.admission)
                    .execute(&mut *tx)
                    .await?;
                    if let Some(raw) = raw {
                        sqlx::query(concat!(
                            "INSERT INTO upstream_raw (",
                            sql::raw_columns!(),
                            ") VALUES ($1, $2, $3, $4, $5) \
                             ON CONFLICT (payload_sha256) DO UPDATE SET \
                             endpoint = excluded.endpoint, subject = excluded.subject, \
                             fetched_at = excluded.fetched_at \
                             WHERE upstream_raw.fetched_at < excluded.fetched_at"
                        ))
                        .bind(&raw.payload_sha256)
                        .bind(&raw.endpoint)
                        .bind(raw.subject.as_deref())
                        .bind(&raw.body)
                        .bind(raw.fetched_at)
                        .execute(&mut *tx)
                        .await?;
                    }
                    tx.commit().await?;
                    Ok(())
                }

                async fn receipts(
                    &self,
                    endpoint: &str,
                    limit: i64,
                ) -> Result<Vec<Receipt>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::receipt_columns!(),
                        " FROM upstream_receipts WHERE endpoint = $1 ORDER BY id DESC LIMIT $2"
                    ))
                    .bind(endpoint)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(sql::receipt)
                    .collect()
                }

                async fn raw_payload(
                    &self,
                    sha256: &str,
                ) -> Result<Option<RawPayload>, StoreError> {
                    sqlx::query(concat!(
                        "SELECT ",
                        sql::raw_columns!(),
                        " FROM upstream_raw WHERE payload_sha256 = $1"
                    ))
                    .bind(sha256)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::raw)
                    .transpose()
                }

                async fn purge_raw(&self, before: Millis) -> Result<u64, StoreError> {
                    let done = sqlx::query("DELETE FROM upstream_raw WHERE fetched_at < $1")
                        .bind(before)
                        .execute(&self.pool)
                        .await?;
                    Ok(done.rows_affected())
                }

                async fn put_cards_catalogue(
                    &self,
                    c: &StoredCatalogue,
                ) -> Result<(), StoreError> {
                    sqlx::query(
                        "INSERT INTO cards_catalogue (id, catalogue, payload_sha256, observed_at) \
                         VALUES (1, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET \
                         catalogue = excluded.catalogue, \
                         payload_sha256 = excluded.payload_sha256, \
                         observed_at = excluded.observed_at \
                         WHERE cards_catalogue.observed_at <= excluded.observed_at",
                    )
                    .bind(sql::json_text(&c.catalogue)?)
                    .bind(&c.payload_sha256)
                    .bind(c.observed_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn cards_catalogue(&self) -> Result<Option<StoredCatalogue>, StoreError> {
                    sqlx::query(
                        "SELECT catalogue, payload_sha256, observed_at FROM cards_catalogue \
                         WHERE id = 1",
                    )
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(sql::catalogue)
                    .transpose()
                }

                async fn claim_poll(&self, c: &PollClaim) -> Result<bool, StoreError> {
                    // The guarded upsert decides in one statement (PostgreSQL re-checks the
                    // WHERE on the locked row), so two instances never both claim a slot.
                    let won: Option<String> = sqlx::query_scalar(
                        "INSERT INTO poll_claims (job, slot, owner, claimed_at, done_at) \
                         VALUES ($1, $2, $3, $4, NULL) \
                         ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, \
                         owner = excluded.owner, claimed_at = excluded.claimed_at, \
                         done_at = NULL \
                         WHERE poll_claims.slot < excluded.slot \
                         OR (poll_claims.slot = excluded.slot AND poll_claims.done_at IS NULL \
                         AND (poll_claims.owner = excluded.owner \
                         OR poll_claims.claimed_at <= $5)) \
                         RETURNING job",
                    )
                    .bind(&c.job)
                    .bind(&c.slot)
                    .bind(&c.owner)
                    .bind(c.at)
                    .bind(c.lapsed_before)
                    .fetch_optional(&self.pool)
                    .await?;
                    Ok(won.is_some())
                }

                async fn finish_poll(
                    &self,
                    job: &str,
                    slot: &str,
                    owner: &str,
                    at: Millis,
                ) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE poll_claims SET done_at = $1 \
                         WHERE job = $2 AND slot = $3 AND owner = $4",
                    )
                    .bind(at)
                    .bind(job)
                    .bind(slot)
                    .bind(owner)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }
            }
        }
    };
}

pub(crate) use sql_store;
