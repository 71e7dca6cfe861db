//! The accounts part of the SQL store: users, password hashes, browser sessions, failed logins
//! (reserved under a lock before a password is checked) and author personal tokens. What users
//! author and play is in the sibling areas.

/// Emits `mod accounts` into [`sql_store!`](super::sql_store!)'s expansion: one function per
/// `Store` method of this area, with the store as its first argument.
macro_rules! sql_accounts {
    ($store:ident) => {
        mod accounts {
            use uuid::Uuid;

            use super::super::$store;
            use crate::domain::{Millis, User, login};
            use crate::store::{
                AuthorGrant, AuthorTokenInfo, LoginReservation, NewAuthorToken, NewSession,
                NewUser, SessionRecord, StoreError, sql,
            };

            /// How long failed logins are kept: longer than any throttling window.
            const LOGIN_FAILURE_RETENTION: Millis = 24 * 60 * 60 * 1000;
            /// One key's failures at or after a time: what a reservation counts under its
            /// lock, and what operators and tests read.
            const COUNT_FAILURES: &str =
                "SELECT COUNT(*) FROM login_failures WHERE key = $1 AND at >= $2";

            pub(super) async fn create_user(
                store: &$store,
                user: &NewUser,
            ) -> Result<User, StoreError> {
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
                .execute(&store.pool)
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

            pub(super) async fn user_by_username(
                store: &$store,
                username: &str,
            ) -> Result<Option<User>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::user_columns!(),
                    " FROM users WHERE username = $1"
                ))
                .bind(username)
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::user).transpose()
            }

            pub(super) async fn user_by_id(
                store: &$store,
                id: Uuid,
            ) -> Result<Option<User>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::user_columns!(),
                    " FROM users WHERE id = $1"
                ))
                .bind(id.to_string())
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::user).transpose()
            }

            pub(super) async fn set_user_active(
                store: &$store,
                id: Uuid,
                active: bool,
            ) -> Result<(), StoreError> {
                let done = sqlx::query("UPDATE users SET active = $1 WHERE id = $2")
                    .bind(active)
                    .bind(id.to_string())
                    .execute(&store.pool)
                    .await?;
                if done.rows_affected() == 0 {
                    Err(StoreError::NotFound)
                } else {
                    Ok(())
                }
            }

            pub(super) async fn password_hash(
                store: &$store,
                user_id: Uuid,
            ) -> Result<Option<String>, StoreError> {
                let hash: Option<Option<String>> =
                    sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
                        .bind(user_id.to_string())
                        .fetch_optional(&store.pool)
                        .await?;
                Ok(hash.flatten())
            }

            pub(super) async fn set_password_hash(
                store: &$store,
                user_id: Uuid,
                hash: Option<&str>,
            ) -> Result<(), StoreError> {
                let done = sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
                    .bind(hash)
                    .bind(user_id.to_string())
                    .execute(&store.pool)
                    .await?;
                if done.rows_affected() == 0 {
                    Err(StoreError::NotFound)
                } else {
                    Ok(())
                }
            }

            pub(super) async fn create_session(
                store: &$store,
                session: &NewSession,
            ) -> Result<(), StoreError> {
                // Pruning as we go: expired sessions never come back, so each new one
                // deletes them (indexed on expires_at) and no sweeper is needed.
                sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
                    .bind(session.created_at)
                    .execute(&store.pool)
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
                .execute(&store.pool)
                .await?;
                Ok(())
            }

            pub(super) async fn session(
                store: &$store,
                digest: &str,
            ) -> Result<Option<SessionRecord>, StoreError> {
                let row = sqlx::query(sql::SESSION)
                    .bind(digest)
                    .fetch_optional(&store.pool)
                    .await?;
                row.as_ref().map(sql::session).transpose()
            }

            pub(super) async fn delete_session(
                store: &$store,
                digest: &str,
            ) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM sessions WHERE digest = $1")
                    .bind(digest)
                    .execute(&store.pool)
                    .await?;
                Ok(())
            }

            pub(super) async fn delete_sessions_of(
                store: &$store,
                user_id: Uuid,
            ) -> Result<u64, StoreError> {
                let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                    .bind(user_id.to_string())
                    .execute(&store.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            pub(super) async fn reserve_login_attempt(
                store: &$store,
                keys: &[String],
                at: Millis,
                since: Millis,
                max: i64,
            ) -> Result<Option<LoginReservation>, StoreError> {
                // Pruning as we go keeps the table to a day of failures without a sweeper. It
                // runs before the transaction so that it never waits on another pruner while
                // holding lock rows.
                sqlx::query("DELETE FROM login_failures WHERE at < $1")
                    .bind(at.saturating_sub(LOGIN_FAILURE_RETENTION))
                    .execute(&store.pool)
                    .await?;
                let mut tx = store.begin_write().await?;
                for slot in login::lock_slots(keys) {
                    // On PostgreSQL the upsert locks the slot's row until commit (creating it
                    // the first time), so attempts on one key count one after the other on
                    // every instance; on SQLite `BEGIN IMMEDIATE` already did.
                    sqlx::query(
                        "INSERT INTO login_locks (slot, at) VALUES ($1, $2) \
                         ON CONFLICT (slot) DO UPDATE SET at = excluded.at",
                    )
                    .bind(slot)
                    .bind(at)
                    .execute(&mut *tx)
                    .await?;
                }
                let mut counts = Vec::with_capacity(keys.len());
                for key in keys {
                    // A statement of its own after the locks: under READ COMMITTED it sees
                    // every reservation committed before this one got the lock.
                    let count: i64 = sqlx::query_scalar(COUNT_FAILURES)
                        .bind(key)
                        .bind(since)
                        .fetch_one(&mut *tx)
                        .await?;
                    counts.push(count);
                }
                if !login::admits(&counts, max) {
                    tx.rollback().await?;
                    return Ok(None);
                }
                let mut rows = Vec::with_capacity(keys.len());
                for key in keys {
                    let id: i64 = sqlx::query_scalar(
                        "INSERT INTO login_failures (key, at) VALUES ($1, $2) RETURNING id",
                    )
                    .bind(key)
                    .bind(at)
                    .fetch_one(&mut *tx)
                    .await?;
                    rows.push((key.clone(), id));
                }
                tx.commit().await?;
                Ok(Some(LoginReservation {
                    rows,
                    failures: counts.iter().max().map_or(1, |worst| worst + 1),
                }))
            }

            pub(super) async fn release_login_reservation(
                store: &$store,
                reservation: &LoginReservation,
                clear_key: &str,
            ) -> Result<(), StoreError> {
                let mut tx = store.begin_write().await?;
                for (key, id) in &reservation.rows {
                    // Ids of one key grow in the order its reservations took the lock (a new
                    // id is above every row still there, this one included), so the ids up to
                    // this one are the run before it, never an attempt reserved after it.
                    let from = if key == clear_key { i64::MIN } else { *id };
                    sqlx::query(
                        "DELETE FROM login_failures WHERE key = $1 AND id BETWEEN $2 AND $3",
                    )
                    .bind(key)
                    .bind(from)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn login_failures_since(
                store: &$store,
                key: &str,
                since: Millis,
            ) -> Result<i64, StoreError> {
                Ok(sqlx::query_scalar(COUNT_FAILURES)
                    .bind(key)
                    .bind(since)
                    .fetch_one(&store.pool)
                    .await?)
            }

            pub(super) async fn create_author_token(
                store: &$store,
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
                .execute(&store.pool)
                .await?;
                Ok(())
            }

            pub(super) async fn author_tokens(
                store: &$store,
                user_id: Uuid,
            ) -> Result<Vec<AuthorTokenInfo>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::author_token_columns!(),
                    " FROM author_tokens WHERE user_id = $1 ORDER BY created_at DESC, id DESC"
                ))
                .bind(user_id.to_string())
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::author_token).collect()
            }

            pub(super) async fn revoke_author_token(
                store: &$store,
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
                .execute(&store.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            pub(super) async fn author_token(
                store: &$store,
                digest: &str,
            ) -> Result<Option<AuthorGrant>, StoreError> {
                let row = sqlx::query(sql::AUTHOR_TOKEN)
                    .bind(digest)
                    .fetch_optional(&store.pool)
                    .await?;
                row.as_ref().map(sql::author_grant).transpose()
            }
        }
    };
}
pub(crate) use sql_accounts;
