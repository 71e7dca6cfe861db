//! What the two SQL backends share: the translation of sqlx errors into [`StoreError`] (the
//! one place it happens), the embedded migrations and their migrator, and row decoding.

use std::borrow::Cow;

use sqlx::error::DatabaseError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{ColumnIndex, Decode, Row, Type};

use super::{
    AccessRecord, AuthCodeRecord, ClientRecord, EmailCodeRecord, GrantRecord, GrantSubject,
    PendingRecord, RefreshRecord, RefusalCount, SessionRecord, StoreError,
};
use crate::scopes;

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(err.to_string()),
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(db.message().to_owned())
            }
            sqlx::Error::Database(db) if is_transient(&*db) => {
                StoreError::Unavailable(db.message().to_owned())
            }
            sqlx::Error::Migrate(m) => match *m {
                sqlx::migrate::MigrateError::Execute(inner) => inner.into(),
                other => StoreError::Internal(format!("migration failed: {other}")),
            },
            other => StoreError::Internal(other.to_string()),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        sqlx::Error::Migrate(Box::new(err)).into()
    }
}

/// Whether a database error means "busy or gone, try again later" (503, not 500).
fn is_transient(db: &dyn DatabaseError) -> bool {
    if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        let code = pg.code();
        return code.starts_with("08")
            || code.starts_with("53")
            || code.starts_with("57P")
            || matches!(code, "40001" | "40P01" | "55P03" | "57014");
    }
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // SQLITE_BUSY (5) once the busy timeout ran out, SQLITE_LOCKED (6).
        let primary = db
            .code()
            .and_then(|c| c.parse::<i32>().ok())
            .map(|c| c & 0xff);
        return matches!(primary, Some(5 | 6));
    }
    false
}

type MigrationsFuture = std::pin::Pin<
    Box<dyn Future<Output = Result<Vec<Migration>, sqlx::error::BoxDynError>> + Send>,
>;

/// Embedded migration scripts as `(version, description, sql)`; sqlx's `migrate!` needs the
/// `macros` feature, which the workspace leaves off for build time.
#[derive(Debug)]
pub(crate) struct Embedded(pub &'static [(i64, &'static str, &'static str)]);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> MigrationsFuture {
        let migrations = self
            .0
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    false,
                )
            })
            .collect();
        Box::pin(async move { Ok(migrations) })
    }
}

impl Embedded {
    /// The migrator over these scripts. It ignores rows of `_sqlx_migrations` it does not
    /// know (sqlx 0.8 `validate_applied_migrations` returns early on `ignore_missing`), so a
    /// product's migrator and this one can share the table; the product's must do the same.
    pub(crate) async fn migrator(self) -> Result<Migrator, StoreError> {
        let mut migrator = Migrator::new(self).await?;
        migrator.set_ignore_missing(true);
        Ok(migrator)
    }
}

/// Typed column access by name for both backends' rows; decoding failures are `Internal`.
pub(crate) trait Cols {
    fn text(&self, col: &str) -> Result<String, StoreError>;
    fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError>;
    fn int(&self, col: &str) -> Result<i64, StoreError>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>, StoreError>;
    fn flag(&self, col: &str) -> Result<bool, StoreError>;
}

impl<R> Cols for R
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> Result<String, StoreError> {
        Ok(self.try_get(col)?)
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError> {
        Ok(self.try_get(col)?)
    }
    fn int(&self, col: &str) -> Result<i64, StoreError> {
        Ok(self.try_get(col)?)
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, StoreError> {
        Ok(self.try_get(col)?)
    }
    fn flag(&self, col: &str) -> Result<bool, StoreError> {
        Ok(self.try_get(col)?)
    }
}

/// A JSON array of strings.
pub(crate) fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn parse_json_list(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("bad list column: {e}")))
}

pub(crate) const CLIENT_COLUMNS: &str =
    "client_id, client_name, redirect_uris, grant_types, registered_from, created_at, last_used_at";

pub(crate) fn client(row: &impl Cols) -> Result<ClientRecord, StoreError> {
    Ok(ClientRecord {
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uris: parse_json_list(&row.text("redirect_uris")?)?,
        grant_types: parse_json_list(&row.text("grant_types")?)?,
        registered_from: row.text("registered_from")?,
        created_at: row.int("created_at")?,
        last_used_at: row.int("last_used_at")?,
    })
}

pub(crate) const PENDING_COLUMNS: &str = "id, csrf_hash, client_id, client_name, redirect_uri, state, \
     code_challenge, resource, requested_scope, signed_in_account, email, created_at, expires_at, done_at";

pub(crate) fn pending(row: &impl Cols) -> Result<PendingRecord, StoreError> {
    Ok(PendingRecord {
        id: row.text("id")?,
        csrf_hash: row.text("csrf_hash")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uri: row.text("redirect_uri")?,
        state: row.opt_text("state")?,
        code_challenge: row.text("code_challenge")?,
        resource: row.text("resource")?,
        requested_scope: row.opt_text("requested_scope")?,
        signed_in_account: row.opt_text("signed_in_account")?,
        email: row.opt_text("email")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        done_at: row.opt_int("done_at")?,
    })
}

pub(crate) const EMAIL_CODE_COLUMNS: &str =
    "pending_id, email, code_hash, created_at, expires_at, attempts, used_at";

pub(crate) fn email_code(row: &impl Cols) -> Result<EmailCodeRecord, StoreError> {
    Ok(EmailCodeRecord {
        pending_id: row.text("pending_id")?,
        email: row.text("email")?,
        code_hash: row.text("code_hash")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        attempts: row.int("attempts")?,
        used_at: row.opt_int("used_at")?,
    })
}

pub(crate) fn session(row: &impl Cols) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        id_hash: row.text("id_hash")?,
        account_id: row.text("account_id")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    })
}

fn subject(row: &impl Cols) -> Result<GrantSubject, StoreError> {
    Ok(GrantSubject {
        account_id: row.text("account_id")?,
        subject_kind: row.text("subject_kind")?,
        subject_id: row.text("subject_id")?,
        personal: row.flag("personal")?,
    })
}

pub(crate) const CODE_COLUMNS: &str = "code_hash, client_id, client_name, redirect_uri, \
     code_challenge, resource, account_id, subject_kind, subject_id, personal, scopes, created_at, expires_at";

pub(crate) fn auth_code(row: &impl Cols) -> Result<AuthCodeRecord, StoreError> {
    Ok(AuthCodeRecord {
        code_hash: row.text("code_hash")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uri: row.text("redirect_uri")?,
        code_challenge: row.text("code_challenge")?,
        resource: row.text("resource")?,
        subject: subject(row)?,
        scopes: scopes::split(&row.text("scopes")?),
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    })
}

/// Grant columns, qualified with `g.` so they can follow a join.
pub(crate) const GRANT_COLUMNS: &str = "g.id, g.client_id, g.client_name, g.resource, g.account_id, \
     g.subject_kind, g.subject_id, g.personal, g.scopes, g.created_at, g.updated_at, g.last_used_at, g.revoked_at";

pub(crate) fn grant(row: &impl Cols) -> Result<GrantRecord, StoreError> {
    Ok(GrantRecord {
        id: row.text("id")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        resource: row.text("resource")?,
        subject: subject(row)?,
        scopes: scopes::split(&row.text("scopes")?),
        created_at: row.int("created_at")?,
        updated_at: row.int("updated_at")?,
        last_used_at: row.int("last_used_at")?,
        revoked_at: row.opt_int("revoked_at")?,
    })
}

pub(crate) fn access(row: &impl Cols) -> Result<AccessRecord, StoreError> {
    Ok(AccessRecord {
        token_hash: row.text("token_hash")?,
        grant_id: row.text("grant_id")?,
        created_at: row.int("token_created_at")?,
        expires_at: row.int("token_expires_at")?,
    })
}

pub(crate) fn refresh(row: &impl Cols) -> Result<RefreshRecord, StoreError> {
    Ok(RefreshRecord {
        token_hash: row.text("token_hash")?,
        grant_id: row.text("grant_id")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        rotated_at: row.opt_int("rotated_at")?,
        successor_hash: row.opt_text("successor_hash")?,
    })
}

pub(crate) fn refusal(row: &impl Cols) -> Result<RefusalCount, StoreError> {
    Ok(RefusalCount {
        credential: row.text("credential")?,
        address: row.text("address")?,
        day: row.int("day")?,
        reason: row.text("reason")?,
        count: row.int("hits")?,
        last_at: row.int("last_at")?,
    })
}
