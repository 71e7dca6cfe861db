//! The statements of both SQL backends, written once. SQLite accepts PostgreSQL's `$n`
//! placeholders, `ON CONFLICT … DO UPDATE … WHERE` and `RETURNING`, and the schemas agree on
//! types, so the backends differ only in how a write transaction begins; each backend module
//! keeps that and invokes [`oauth_sql_store!`].

/// Implements [`OAuthStore`](super::OAuthStore) for `$store`, a struct in the invoking module
/// (on database `$db`) with a `pool` field, an `async fn begin_write(&self) -> Result<Transaction<'static, _>,
/// StoreError>` and a `MIGRATIONS: sqlkit::Embedded` constant beside it.
///
/// A macro rather than code generic over `sqlx::Database`: generic code would repeat the
/// executor, argument and encode bounds of every bound type on every function.
macro_rules! oauth_sql_store {
    ($store:ident, $db:ty) => {
        mod sql_store {
            use async_trait::async_trait;
            use sqlkit::Cols;

            use crate::scopes;
            use crate::store::sql;
            use crate::store::{
                AccessRecord, AuthCodeRecord, ClientRecord, CodeUse, EmailCodeRecord,
                GrantRecord, Millis, OAuthStore, PendingRecord, RefreshRecord, RefusalCount,
                SessionRecord, StoreError,
            };

            /// Rate counters and refusal counts are kept this long (longer than any window).
            const COUNTER_RETENTION: Millis = 40 * 24 * 3600 * 1000;

            #[async_trait]
            impl OAuthStore for super::$store {
                async fn migrate(&self) -> Result<(), StoreError> {
                    // Ignoring versions it does not list (sqlx 0.8 `validate_applied_migrations`
                    // returns early on `ignore_missing`) lets a product's migrator share the
                    // `_sqlx_migrations` table with this one; the product's must do the same.
                    Ok(super::MIGRATIONS.migrator(true).await?.run(&self.pool).await?)
                }

                async fn insert_client(&self, c: &ClientRecord) -> Result<(), StoreError> {
                    let statement = format!(
                        "INSERT INTO oauth_clients ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                        sql::CLIENT_COLUMNS
                    );
                    sqlx::query(&statement)
                        .bind(&c.client_id)
                        .bind(&c.client_name)
                        .bind(sql::json_list(&c.redirect_uris))
                        .bind(sql::json_list(&c.grant_types))
                        .bind(&c.registered_from)
                        .bind(c.created_at)
                        .bind(c.last_used_at)
                        .bind(c.first_used_at)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn client(&self, client_id: &str) -> Result<Option<ClientRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_clients WHERE client_id = $1",
                        sql::CLIENT_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(client_id)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::client).transpose()
                }

                async fn touch_client(&self, client_id: &str, now: Millis) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE oauth_clients SET last_used_at = $2 \
                         WHERE client_id = $1 AND last_used_at < $2",
                    )
                    .bind(client_id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn first_use_client(
                    &self,
                    client_id: &str,
                    now: Millis,
                ) -> Result<Option<Millis>, StoreError> {
                    let row = sqlx::query(
                        "UPDATE oauth_clients SET first_used_at = $2 \
                         WHERE client_id = $1 AND first_used_at IS NULL RETURNING created_at",
                    )
                    .bind(client_id)
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.map(|r| r.int("created_at")).transpose().map_err(Into::into)
                }

                async fn purge_unused_clients(
                    &self,
                    cutoff: Millis,
                    bucket: &str,
                    window_start: Millis,
                    window_end: Millis,
                ) -> Result<u64, StoreError> {
                    let mut tx = self.begin_write().await?;
                    let removed = sqlx::query(
                        "DELETE FROM oauth_clients WHERE first_used_at IS NULL AND created_at <= $1",
                    )
                    .bind(cutoff)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    sqlx::query(
                        "UPDATE oauth_rate_counters SET hits = (SELECT COUNT(*) FROM oauth_clients \
                         WHERE first_used_at IS NULL AND created_at >= $2 AND created_at < $3) \
                         WHERE bucket = $1 AND window_start = $2",
                    )
                    .bind(bucket)
                    .bind(window_start)
                    .bind(window_end)
                    .execute(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    Ok(removed)
                }

                async fn take_rate(
                    &self,
                    bucket: &str,
                    window_start: Millis,
                    limit: i64,
                ) -> Result<bool, StoreError> {
                    if limit <= 0 {
                        return Ok(false);
                    }
                    let row = sqlx::query(
                        "INSERT INTO oauth_rate_counters (bucket, window_start, hits) \
                         VALUES ($1, $2, 1) ON CONFLICT (bucket, window_start) \
                         DO UPDATE SET hits = oauth_rate_counters.hits + 1 \
                         WHERE oauth_rate_counters.hits < $3 RETURNING hits",
                    )
                    .bind(bucket)
                    .bind(window_start)
                    .bind(limit)
                    .fetch_optional(&self.pool)
                    .await?;
                    Ok(row.is_some())
                }

                async fn return_rate(&self, bucket: &str, window_start: Millis) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE oauth_rate_counters SET hits = hits - 1 \
                         WHERE bucket = $1 AND window_start = $2 AND hits > 0",
                    )
                    .bind(bucket)
                    .bind(window_start)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn insert_pending(&self, p: &PendingRecord) -> Result<(), StoreError> {
                    let statement = format!(
                        "INSERT INTO oauth_pending ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                         $8, $9, $10, $11, $12, $13, $14)",
                        sql::PENDING_COLUMNS
                    );
                    sqlx::query(&statement)
                        .bind(&p.id)
                        .bind(&p.csrf_hash)
                        .bind(&p.client_id)
                        .bind(&p.client_name)
                        .bind(&p.redirect_uri)
                        .bind(p.state.as_deref())
                        .bind(&p.code_challenge)
                        .bind(&p.resource)
                        .bind(p.requested_scope.as_deref())
                        .bind(p.signed_in_account.as_deref())
                        .bind(p.email.as_deref())
                        .bind(p.created_at)
                        .bind(p.expires_at)
                        .bind(p.done_at)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn pending(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_pending WHERE id = $1",
                        sql::PENDING_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::pending).transpose()
                }

                async fn finish_pending(&self, id: &str, now: Millis) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "UPDATE oauth_pending SET done_at = $2 WHERE id = $1 AND done_at IS NULL",
                    )
                    .bind(id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn replace_email_code(&self, c: &EmailCodeRecord) -> Result<(), StoreError> {
                    let mut tx = self.begin_write().await?;
                    let statement = format!(
                        "INSERT INTO oauth_email_codes ({}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                         ON CONFLICT (pending_id) DO UPDATE SET email = $2, code_hash = $3, \
                         created_at = $4, expires_at = $5, used_at = $7",
                        sql::EMAIL_CODE_COLUMNS
                    );
                    sqlx::query(&statement)
                        .bind(&c.pending_id)
                        .bind(&c.email)
                        .bind(&c.code_hash)
                        .bind(c.created_at)
                        .bind(c.expires_at)
                        .bind(c.attempts)
                        .bind(c.used_at)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("UPDATE oauth_pending SET email = $2 WHERE id = $1")
                        .bind(&c.pending_id)
                        .bind(&c.email)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(())
                }

                async fn email_code(&self, pending_id: &str) -> Result<Option<EmailCodeRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_email_codes WHERE pending_id = $1",
                        sql::EMAIL_CODE_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(pending_id)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::email_code).transpose()
                }

                async fn reserve_code_attempt(
                    &self,
                    pending_id: &str,
                    max: i64,
                    now: Millis,
                ) -> Result<Option<EmailCodeRecord>, StoreError> {
                    let statement = format!(
                        "UPDATE oauth_email_codes SET attempts = attempts + 1 \
                         WHERE pending_id = $1 AND attempts < $2 AND used_at IS NULL \
                         AND expires_at > $3 AND NOT EXISTS (SELECT 1 FROM oauth_pending p \
                         WHERE p.id = $1 AND p.done_at IS NOT NULL) RETURNING {}",
                        sql::EMAIL_CODE_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(pending_id)
                        .bind(max)
                        .bind(now)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::email_code).transpose()
                }

                async fn use_email_code(&self, pending_id: &str, now: Millis) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "UPDATE oauth_email_codes SET used_at = $2 \
                         WHERE pending_id = $1 AND used_at IS NULL",
                    )
                    .bind(pending_id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn insert_session(&self, s: &SessionRecord) -> Result<(), StoreError> {
                    sqlx::query(
                        "INSERT INTO oauth_sessions (id_hash, account_id, created_at, expires_at) \
                         VALUES ($1, $2, $3, $4)",
                    )
                    .bind(&s.id_hash)
                    .bind(&s.account_id)
                    .bind(s.created_at)
                    .bind(s.expires_at)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError> {
                    let row = sqlx::query(
                        "SELECT id_hash, account_id, created_at, expires_at \
                         FROM oauth_sessions WHERE id_hash = $1",
                    )
                    .bind(id_hash)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::session).transpose()
                }

                async fn delete_session(&self, id_hash: &str) -> Result<(), StoreError> {
                    sqlx::query("DELETE FROM oauth_sessions WHERE id_hash = $1")
                        .bind(id_hash)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn insert_auth_code(&self, c: &AuthCodeRecord) -> Result<(), StoreError> {
                    let statement = format!(
                        "INSERT INTO oauth_auth_codes ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                         $8, $9, $10, $11, $12, $13)",
                        sql::CODE_COLUMNS
                    );
                    sqlx::query(&statement)
                        .bind(&c.code_hash)
                        .bind(&c.client_id)
                        .bind(&c.client_name)
                        .bind(&c.redirect_uri)
                        .bind(&c.code_challenge)
                        .bind(&c.resource)
                        .bind(&c.subject.account_id)
                        .bind(&c.subject.subject_kind)
                        .bind(&c.subject.subject_id)
                        .bind(c.subject.personal)
                        .bind(scopes::join(&c.scopes))
                        .bind(c.created_at)
                        .bind(c.expires_at)
                        .execute(&self.pool)
                        .await?;
                    Ok(())
                }

                async fn auth_code_client(&self, code_hash: &str) -> Result<Option<String>, StoreError> {
                    Ok(sqlx::query_scalar(
                        "SELECT client_id FROM oauth_auth_codes WHERE code_hash = $1",
                    )
                    .bind(code_hash)
                    .fetch_optional(&self.pool)
                    .await?)
                }

                async fn consume_auth_code(&self, code_hash: &str, now: Millis) -> Result<CodeUse, StoreError> {
                    let mut tx = self.begin_write().await?;
                    let statement = format!(
                        "UPDATE oauth_auth_codes SET used_at = $2 \
                         WHERE code_hash = $1 AND used_at IS NULL RETURNING {}",
                        sql::CODE_COLUMNS
                    );
                    let fresh = sqlx::query(&statement)
                        .bind(code_hash)
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await?;
                    let outcome = if let Some(row) = fresh {
                        CodeUse::Fresh(Box::new(sql::auth_code(&row)?))
                    } else {
                        let replay = sqlx::query(
                            "UPDATE oauth_auth_codes SET replayed_at = $2 \
                             WHERE code_hash = $1 RETURNING grant_id",
                        )
                        .bind(code_hash)
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await?;
                        match replay {
                            Some(row) => CodeUse::Replayed {
                                grant_id: row.opt_text("grant_id")?,
                            },
                            None => CodeUse::Unknown,
                        }
                    };
                    tx.commit().await?;
                    Ok(outcome)
                }

                async fn create_grant(
                    &self,
                    g: &GrantRecord,
                    code_hash: Option<&str>,
                    access: &AccessRecord,
                    refresh: &RefreshRecord,
                ) -> Result<bool, StoreError> {
                    let mut tx = self.begin_write().await?;
                    if let Some(code_hash) = code_hash {
                        let marked = sqlx::query(
                            "UPDATE oauth_auth_codes SET grant_id = $2 \
                             WHERE code_hash = $1 AND replayed_at IS NULL AND grant_id IS NULL",
                        )
                        .bind(code_hash)
                        .bind(&g.id)
                        .execute(&mut *tx)
                        .await?;
                        if marked.rows_affected() != 1 {
                            return Ok(false);
                        }
                    }
                    sqlx::query(
                        "INSERT INTO oauth_grants (id, client_id, client_name, resource, \
                         account_id, subject_kind, subject_id, personal, scopes, created_at, \
                         updated_at, last_used_at, revoked_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                    )
                    .bind(&g.id)
                    .bind(&g.client_id)
                    .bind(&g.client_name)
                    .bind(&g.resource)
                    .bind(&g.subject.account_id)
                    .bind(&g.subject.subject_kind)
                    .bind(&g.subject.subject_id)
                    .bind(g.subject.personal)
                    .bind(scopes::join(&g.scopes))
                    .bind(g.created_at)
                    .bind(g.updated_at)
                    .bind(g.last_used_at)
                    .bind(g.revoked_at)
                    .execute(&mut *tx)
                    .await?;
                    insert_access(&mut tx, access).await?;
                    insert_refresh(&mut tx, refresh).await?;
                    tx.commit().await?;
                    Ok(true)
                }

                async fn grant(&self, id: &str) -> Result<Option<GrantRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_grants g WHERE g.id = $1",
                        sql::GRANT_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.as_ref().map(sql::grant).transpose()
                }

                async fn account_grants(&self, account_id: &str) -> Result<Vec<GrantRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_grants g WHERE g.account_id = $1 \
                         AND g.revoked_at IS NULL ORDER BY g.created_at, g.id",
                        sql::GRANT_COLUMNS
                    );
                    let rows = sqlx::query(&statement)
                        .bind(account_id)
                        .fetch_all(&self.pool)
                        .await?;
                    rows.iter().map(sql::grant).collect()
                }

                async fn revoked_account_grants(
                    &self,
                    account_id: &str,
                    since: Millis,
                ) -> Result<Vec<GrantRecord>, StoreError> {
                    let statement = format!(
                        "SELECT {} FROM oauth_grants g WHERE g.account_id = $1 \
                         AND g.revoked_at >= $2 ORDER BY g.revoked_at DESC, g.id",
                        sql::GRANT_COLUMNS
                    );
                    let rows = sqlx::query(&statement)
                        .bind(account_id)
                        .bind(since)
                        .fetch_all(&self.pool)
                        .await?;
                    rows.iter().map(sql::grant).collect()
                }

                async fn set_grant_scopes(
                    &self,
                    id: &str,
                    scopes: &[String],
                    now: Millis,
                ) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "UPDATE oauth_grants SET scopes = $2, updated_at = $3 \
                         WHERE id = $1 AND revoked_at IS NULL",
                    )
                    .bind(id)
                    .bind(scopes::join(scopes))
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn revoke_grant(&self, id: &str, now: Millis) -> Result<bool, StoreError> {
                    let done = sqlx::query(
                        "UPDATE oauth_grants SET revoked_at = $2, updated_at = $2 \
                         WHERE id = $1 AND revoked_at IS NULL",
                    )
                    .bind(id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(done.rows_affected() == 1)
                }

                async fn touch_grant(&self, id: &str, now: Millis) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE oauth_grants SET last_used_at = $2 \
                         WHERE id = $1 AND last_used_at < $2",
                    )
                    .bind(id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn access_token(
                    &self,
                    token_hash: &str,
                ) -> Result<Option<(AccessRecord, GrantRecord)>, StoreError> {
                    let statement = format!(
                        "SELECT t.token_hash, t.grant_id, t.created_at AS token_created_at, \
                         t.expires_at AS token_expires_at, {} FROM oauth_access_tokens t \
                         JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = $1",
                        sql::GRANT_COLUMNS
                    );
                    let row = sqlx::query(&statement)
                        .bind(token_hash)
                        .fetch_optional(&self.pool)
                        .await?;
                    match row {
                        Some(row) => Ok(Some((sql::access(&row)?, sql::grant(&row)?))),
                        None => Ok(None),
                    }
                }

                async fn refresh_token(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError> {
                    let row = sqlx::query(
                        "SELECT token_hash, grant_id, created_at, expires_at, rotated_at, \
                         successor_hash FROM oauth_refresh_tokens WHERE token_hash = $1",
                    )
                    .bind(token_hash)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(sql::refresh).transpose()
                }

                async fn rotate_refresh(
                    &self,
                    old_hash: &str,
                    now: Millis,
                    access: &AccessRecord,
                    refresh: &RefreshRecord,
                ) -> Result<bool, StoreError> {
                    let mut tx = self.begin_write().await?;
                    let rotated = sqlx::query(
                        "UPDATE oauth_refresh_tokens SET rotated_at = $2, successor_hash = $3 \
                         WHERE token_hash = $1 AND rotated_at IS NULL",
                    )
                    .bind(old_hash)
                    .bind(now)
                    .bind(&refresh.token_hash)
                    .execute(&mut *tx)
                    .await?;
                    if rotated.rows_affected() != 1 {
                        return Ok(false);
                    }
                    insert_access(&mut tx, access).await?;
                    insert_refresh(&mut tx, refresh).await?;
                    tx.commit().await?;
                    Ok(true)
                }

                async fn count_refusal(
                    &self,
                    credential: &str,
                    address: &str,
                    day: i64,
                    reason: &str,
                    now: Millis,
                ) -> Result<(), StoreError> {
                    sqlx::query(
                        "INSERT INTO oauth_refusals (credential, address, day, reason, hits, \
                         last_at) VALUES ($1, $2, $3, $4, 1, $5) \
                         ON CONFLICT (credential, address, day, reason) \
                         DO UPDATE SET hits = oauth_refusals.hits + 1, last_at = $5",
                    )
                    .bind(credential)
                    .bind(address)
                    .bind(day)
                    .bind(reason)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                    Ok(())
                }

                async fn refusals(&self, credential: &str, since_day: i64) -> Result<Vec<RefusalCount>, StoreError> {
                    let rows = sqlx::query(
                        "SELECT credential, address, day, reason, hits, last_at \
                         FROM oauth_refusals WHERE credential = $1 AND day >= $2 \
                         ORDER BY day DESC, last_at DESC",
                    )
                    .bind(credential)
                    .bind(since_day)
                    .fetch_all(&self.pool)
                    .await?;
                    rows.iter().map(sql::refusal).collect()
                }

                async fn purge(&self, now: Millis, client_cutoff: Millis) -> Result<u64, StoreError> {
                    let old_counters = now - COUNTER_RETENTION;
                    let old_day = old_counters / (24 * 3600 * 1000);
                    let statements: [(&str, Millis); 9] = [
                        ("DELETE FROM oauth_pending WHERE expires_at < $1", now),
                        (
                            "DELETE FROM oauth_email_codes WHERE pending_id NOT IN \
                             (SELECT id FROM oauth_pending)",
                            0,
                        ),
                        ("DELETE FROM oauth_sessions WHERE expires_at < $1", now),
                        // Kept a while past expiry so a late replay still revokes its grant.
                        ("DELETE FROM oauth_auth_codes WHERE expires_at < $1", now - 24 * 3600 * 1000),
                        ("DELETE FROM oauth_access_tokens WHERE expires_at < $1", now),
                        ("DELETE FROM oauth_refresh_tokens WHERE expires_at < $1", now),
                        ("DELETE FROM oauth_grants WHERE revoked_at IS NOT NULL AND revoked_at < $1", now - COUNTER_RETENTION),
                        ("DELETE FROM oauth_rate_counters WHERE window_start < $1", old_counters),
                        ("DELETE FROM oauth_refusals WHERE day < $1", old_day),
                    ];
                    let mut removed = 0;
                    for (statement, arg) in statements {
                        let query = sqlx::query(statement);
                        let query = if statement.contains("$1") { query.bind(arg) } else { query };
                        removed += query.execute(&self.pool).await?.rows_affected();
                    }
                    removed += sqlx::query("DELETE FROM oauth_clients WHERE last_used_at < $1")
                        .bind(client_cutoff)
                        .execute(&self.pool)
                        .await?
                        .rows_affected();
                    Ok(removed)
                }
            }

            async fn insert_access<'c>(
                tx: &mut sqlx::Transaction<'c, $db>,
                a: &AccessRecord,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(&a.token_hash)
                .bind(&a.grant_id)
                .bind(a.created_at)
                .bind(a.expires_at)
                .execute(&mut **tx)
                .await?;
                Ok(())
            }

            async fn insert_refresh<'c>(
                tx: &mut sqlx::Transaction<'c, $db>,
                r: &RefreshRecord,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, \
                     expires_at, rotated_at, successor_hash) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(&r.token_hash)
                .bind(&r.grant_id)
                .bind(r.created_at)
                .bind(r.expires_at)
                .bind(r.rotated_at)
                .bind(r.successor_hash.as_deref())
                .execute(&mut **tx)
                .await?;
                Ok(())
            }
        }
    };
}

pub(crate) use oauth_sql_store;
