//! The accounts area: users, password hashes, browser sessions, failed logins (reserved under
//! a lock before a password is checked) and author personal tokens — the trait, its records
//! and its SQL. What users author and play is in the sibling areas.

use async_trait::async_trait;
use sqlkit::{Cols, Row, sql};
use uuid::Uuid;

use super::sql::{SqlStore, StoreError};
use crate::domain::{Millis, User, login};

/// A user to create.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    /// An argon2id PHC string, when the user can sign in with a password.
    pub password_hash: Option<String>,
    pub is_gm: bool,
    pub created_at: Millis,
}

/// A browser session to store (the cookie value and CSRF token are kept as SHA-256 digests).
#[derive(Debug, Clone)]
pub struct NewSession {
    pub digest: String,
    pub user_id: Uuid,
    pub csrf_digest: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// The failure rows one login attempt holds while its password is checked. A wrong password
/// leaves them: they are its recorded failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginReservation {
    /// Per key, in the order given: the key and the id of the failure row reserved for it.
    pub rows: Vec<(String, i64)>,
    /// The most failures any key has in the window, this attempt's included.
    pub failures: i64,
}

/// A live session and its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub user: User,
    pub csrf_digest: String,
    pub expires_at: Millis,
}

/// An author personal token to store.
#[derive(Debug, Clone)]
pub struct NewAuthorToken {
    pub id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    pub digest: String,
    pub created_at: Millis,
    pub expires_at: Millis,
}

/// What the owner sees of an author token (never the token); `render::author_tokens` writes
/// its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorTokenInfo {
    pub id: Uuid,
    pub name: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub revoked_at: Option<Millis>,
}

/// What the store knows about a presented author token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorGrant {
    pub token_id: Uuid,
    pub user: User,
    pub expires_at: Millis,
    pub revoked: bool,
}

/// Users, sessions, login reservations and author tokens.
#[async_trait]
pub trait Accounts: Send + Sync {
    /// Creates a user; a taken username is `Conflict`.
    async fn create_user(&self, user: &NewUser) -> Result<User, StoreError>;
    async fn user_by_username(&self, username: &str) -> Result<Option<User>, StoreError>;
    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>, StoreError>;
    /// Sets the active flag; an unknown user is `NotFound`.
    async fn set_user_active(&self, id: Uuid, active: bool) -> Result<(), StoreError>;

    /// The user's argon2id PHC string, if they can sign in with a password.
    async fn password_hash(&self, user_id: Uuid) -> Result<Option<String>, StoreError>;
    /// Sets (or clears) the user's password hash; unknown user → `NotFound`.
    async fn set_password_hash(&self, user_id: Uuid, hash: Option<&str>) -> Result<(), StoreError>;
    /// Stores a new session and deletes every session expired by its `created_at`.
    async fn create_session(&self, session: &NewSession) -> Result<(), StoreError>;
    /// The session with this digest and its user (expired ones are returned too; the caller
    /// checks `expires_at` against its clock).
    async fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError>;
    async fn delete_session(&self, digest: &str) -> Result<(), StoreError>;
    /// Ends every session of a user (on deactivation).
    async fn delete_sessions_of(&self, user_id: Uuid) -> Result<u64, StoreError>;
    /// Reserves one failed login at `at` for each of `keys` (distinct; a username and an
    /// address) before a password is checked, in one write transaction: it locks the keys'
    /// rows (in [`login::lock_slots`] order), counts each key's failures at or after `since`,
    /// and only if every count is under `max` inserts one failure row per key. `None`, with
    /// nothing written, when a key is at the limit. However many attempts race, on however
    /// many instances of one database, at most `max` are reserved per key and window.
    /// Failures older than a day are pruned as attempts arrive.
    async fn reserve_login_attempt(
        &self,
        keys: &[String],
        at: Millis,
        since: Millis,
        max: i64,
    ) -> Result<Option<LoginReservation>, StoreError>;
    /// After the right password: deletes the reservation's rows and, for `clear_key` (the
    /// username), every failure reserved before this one. Rows of the other keys recorded
    /// before stay, and so do attempts reserved after this one.
    async fn release_login_reservation(
        &self,
        reservation: &LoginReservation,
        clear_key: &str,
    ) -> Result<(), StoreError>;
    /// Failed logins for `key` at or after `since`, for operators and tests. The login path
    /// never reads this before deciding: [`Accounts::reserve_login_attempt`] counts and
    /// records in one transaction.
    async fn login_failures_since(&self, key: &str, since: Millis) -> Result<i64, StoreError>;

    async fn create_author_token(&self, token: &NewAuthorToken) -> Result<(), StoreError>;
    /// The user's author tokens, newest first.
    async fn author_tokens(&self, user_id: Uuid) -> Result<Vec<AuthorTokenInfo>, StoreError>;
    /// Revokes one of the user's tokens; whether it was found (and not yet revoked).
    async fn revoke_author_token(
        &self,
        user_id: Uuid,
        token_id: Uuid,
        now: Millis,
    ) -> Result<bool, StoreError>;
    /// Looks an author token up by digest, with its user.
    async fn author_token(&self, digest: &str) -> Result<Option<AuthorGrant>, StoreError>;
}

const USER_COLUMNS: &str = "id, username, display_name, is_gm, active, created_at";
const AUTHOR_TOKEN_COLUMNS: &str = "id, name, created_at, expires_at, revoked_at";

/// How long failed logins are kept: longer than any throttling window.
const LOGIN_FAILURE_RETENTION: Millis = 24 * 60 * 60 * 1000;
/// One key's failures at or after a time: what a reservation counts under its lock, and what
/// operators and tests read.
const COUNT_FAILURES: &str = "SELECT COUNT(*) AS n FROM login_failures WHERE key = $1 AND at >= $2";

/// A session joined to its user.
const SESSION: &str = "SELECT u.id, u.username, u.display_name, u.is_gm, u.active, \
     u.created_at, s.csrf_digest, s.expires_at \
     FROM sessions s JOIN users u ON u.id = s.user_id \
     WHERE s.digest = $1";

/// An author token joined to its user.
const AUTHOR_TOKEN: &str = "SELECT t.id AS token_id, t.expires_at, \
     (t.revoked_at IS NOT NULL) AS revoked, u.id, u.username, u.display_name, u.is_gm, \
     u.active, u.created_at \
     FROM author_tokens t JOIN users u ON u.id = t.user_id \
     WHERE t.digest = $1";

/// The columns of [`USER_COLUMNS`] (also part of [`SESSION`] and [`AUTHOR_TOKEN`]).
fn user(r: &Row) -> Result<User, StoreError> {
    Ok(User {
        id: r.uuid("id")?,
        username: r.text("username")?,
        display_name: r.text("display_name")?,
        is_gm: r.flag("is_gm")?,
        active: r.flag("active")?,
        created_at: r.int("created_at")?,
    })
}

/// The columns of [`SESSION`].
fn session(r: &Row) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        user: user(r)?,
        csrf_digest: r.text("csrf_digest")?,
        expires_at: r.int("expires_at")?,
    })
}

/// The columns of [`AUTHOR_TOKEN`].
fn author_grant(r: &Row) -> Result<AuthorGrant, StoreError> {
    Ok(AuthorGrant {
        token_id: r.uuid("token_id")?,
        user: user(r)?,
        expires_at: r.int("expires_at")?,
        revoked: r.flag("revoked")?,
    })
}

/// The columns of [`AUTHOR_TOKEN_COLUMNS`].
fn author_token(r: &Row) -> Result<AuthorTokenInfo, StoreError> {
    Ok(AuthorTokenInfo {
        id: r.uuid("id")?,
        name: r.text("name")?,
        created_at: r.int("created_at")?,
        expires_at: r.int("expires_at")?,
        revoked_at: r.opt_int("revoked_at")?,
    })
}

#[async_trait]
impl Accounts for SqlStore {
    async fn create_user(&self, user: &NewUser) -> Result<User, StoreError> {
        sql(
            "INSERT INTO users (id, username, display_name, password_hash, is_gm, active, \
             created_at) VALUES ($1, $2, $3, $4, $5, TRUE, $6)",
        )
        .bind(user.id)
        .bind(&user.username)
        .bind(&user.display_name)
        .bind(user.password_hash.as_deref())
        .bind(user.is_gm)
        .bind(user.created_at)
        .execute(&self.db)
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

    async fn user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let row = sql(format!(
            "SELECT {USER_COLUMNS} FROM users WHERE username = $1"
        ))
        .bind(username)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(user).transpose()
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>, StoreError> {
        let row = sql(format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.db)
            .await?;
        row.as_ref().map(user).transpose()
    }

    async fn set_user_active(&self, id: Uuid, active: bool) -> Result<(), StoreError> {
        let done = sql("UPDATE users SET active = $1 WHERE id = $2")
            .bind(active)
            .bind(id)
            .execute(&self.db)
            .await?;
        if done.rows_affected() == 0 {
            Err(StoreError::NotFound)
        } else {
            Ok(())
        }
    }

    async fn password_hash(&self, user_id: Uuid) -> Result<Option<String>, StoreError> {
        let row = sql("SELECT password_hash FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(&self.db)
            .await?;
        Ok(row
            .map(|r| r.opt_text("password_hash"))
            .transpose()?
            .flatten())
    }

    async fn set_password_hash(&self, user_id: Uuid, hash: Option<&str>) -> Result<(), StoreError> {
        let done = sql("UPDATE users SET password_hash = $1 WHERE id = $2")
            .bind(hash)
            .bind(user_id)
            .execute(&self.db)
            .await?;
        if done.rows_affected() == 0 {
            Err(StoreError::NotFound)
        } else {
            Ok(())
        }
    }

    async fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
        // Pruning as we go: expired sessions never come back, so each new one deletes them
        // (indexed on expires_at) and no sweeper is needed.
        sql("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(session.created_at)
            .execute(&self.db)
            .await?;
        sql(
            "INSERT INTO sessions (digest, user_id, csrf_digest, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&session.digest)
        .bind(session.user_id)
        .bind(&session.csrf_digest)
        .bind(session.created_at)
        .bind(session.expires_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError> {
        let row = sql(SESSION).bind(digest).fetch_optional(&self.db).await?;
        row.as_ref().map(session).transpose()
    }

    async fn delete_session(&self, digest: &str) -> Result<(), StoreError> {
        sql("DELETE FROM sessions WHERE digest = $1")
            .bind(digest)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    async fn delete_sessions_of(&self, user_id: Uuid) -> Result<u64, StoreError> {
        let done = sql("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected())
    }

    async fn reserve_login_attempt(
        &self,
        keys: &[String],
        at: Millis,
        since: Millis,
        max: i64,
    ) -> Result<Option<LoginReservation>, StoreError> {
        // Pruning as we go keeps the table to a day of failures without a sweeper. It runs
        // before the transaction so that it never waits on another pruner while holding lock
        // rows.
        sql("DELETE FROM login_failures WHERE at < $1")
            .bind(at.saturating_sub(LOGIN_FAILURE_RETENTION))
            .execute(&self.db)
            .await?;
        let mut tx = self.db.begin_write().await?;
        for slot in login::lock_slots(keys) {
            // On PostgreSQL the upsert locks the slot's row until commit (creating it the
            // first time), so attempts on one key count one after the other on every
            // instance; on SQLite `BEGIN IMMEDIATE` already did.
            sql("INSERT INTO login_locks (slot, at) VALUES ($1, $2) \
                 ON CONFLICT (slot) DO UPDATE SET at = excluded.at")
            .bind(slot)
            .bind(at)
            .execute(&mut tx)
            .await?;
        }
        let mut counts = Vec::with_capacity(keys.len());
        for key in keys {
            // A statement of its own after the locks: under READ COMMITTED it sees every
            // reservation committed before this one got the lock.
            let count = sql(COUNT_FAILURES)
                .bind(key)
                .bind(since)
                .fetch_one(&mut tx)
                .await?
                .int("n")?;
            counts.push(count);
        }
        if !login::admits(&counts, max) {
            tx.rollback().await?;
            return Ok(None);
        }
        let mut rows = Vec::with_capacity(keys.len());
        for key in keys {
            let id = sql("INSERT INTO login_failures (key, at) VALUES ($1, $2) RETURNING id")
                .bind(key)
                .bind(at)
                .fetch_one(&mut tx)
                .await?
                .int("id")?;
            rows.push((key.clone(), id));
        }
        tx.commit().await?;
        Ok(Some(LoginReservation {
            rows,
            failures: counts.iter().max().map_or(1, |worst| worst + 1),
        }))
    }

    async fn release_login_reservation(
        &self,
        reservation: &LoginReservation,
        clear_key: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin_write().await?;
        for (key, id) in &reservation.rows {
            // Ids of one key grow in the order its reservations took the lock (a new id is
            // above every row still there, this one included), so the ids up to this one are
            // the run before it, never an attempt reserved after it.
            let from = if key == clear_key { i64::MIN } else { *id };
            sql("DELETE FROM login_failures WHERE key = $1 AND id BETWEEN $2 AND $3")
                .bind(key)
                .bind(from)
                .bind(*id)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn login_failures_since(&self, key: &str, since: Millis) -> Result<i64, StoreError> {
        sql(COUNT_FAILURES)
            .bind(key)
            .bind(since)
            .fetch_one(&self.db)
            .await?
            .int("n")
    }

    async fn create_author_token(&self, token: &NewAuthorToken) -> Result<(), StoreError> {
        sql(
            "INSERT INTO author_tokens (id, user_id, name, digest, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(token.id)
        .bind(token.user_id)
        .bind(&token.name)
        .bind(&token.digest)
        .bind(token.created_at)
        .bind(token.expires_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn author_tokens(&self, user_id: Uuid) -> Result<Vec<AuthorTokenInfo>, StoreError> {
        let rows = sql(format!(
            "SELECT {AUTHOR_TOKEN_COLUMNS} FROM author_tokens WHERE user_id = $1 \
             ORDER BY created_at DESC, id DESC"
        ))
        .bind(user_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(author_token).collect()
    }

    async fn revoke_author_token(
        &self,
        user_id: Uuid,
        token_id: Uuid,
        now: Millis,
    ) -> Result<bool, StoreError> {
        let done = sql("UPDATE author_tokens SET revoked_at = $1 \
                        WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL")
        .bind(now)
        .bind(token_id)
        .bind(user_id)
        .execute(&self.db)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn author_token(&self, digest: &str) -> Result<Option<AuthorGrant>, StoreError> {
        let row = sql(AUTHOR_TOKEN)
            .bind(digest)
            .fetch_optional(&self.db)
            .await?;
        row.as_ref().map(author_grant).transpose()
    }
}
