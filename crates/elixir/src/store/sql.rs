//! What the two SQL backends share: the translation of sqlx errors into [`StoreError`] (the
//! one place it happens), row decoding, the column lists both schemas agree on, and the
//! embedded-migration source (run with `ignore_missing`, since mcp-oauth's migrations share
//! the database).

use std::borrow::Cow;

use sqlx::error::DatabaseError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{ColumnIndex, Decode, Row, Type};
use uuid::Uuid;

use super::{Account, Agent, AuditEntry, Feedback, RefusalCount, StoreError};
use crate::domain::{FeedbackStatus, Kind, Tier};

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(err.to_string()),
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(db.message().to_owned())
            }
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => StoreError::NotFound,
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

/// Busy or gone (try later) rather than a bug.
fn is_transient(db: &dyn DatabaseError) -> bool {
    if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        let code = pg.code();
        return code.starts_with("08")
            || code.starts_with("53")
            || code.starts_with("57P")
            || matches!(code, "40001" | "40P01" | "55P03" | "57014");
    }
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
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

/// Embedded migration scripts as `(version, description, sql)`.
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
    /// The migrator over these scripts; migrations of other components in the same database
    /// (mcp-oauth's) are ignored rather than reported missing.
    pub(crate) async fn migrator(self) -> Result<Migrator, StoreError> {
        let mut migrator = Migrator::new(self).await?;
        migrator.set_ignore_missing(true);
        Ok(migrator)
    }
}

/// Typed column access by name for the rows of both backends.
pub(crate) trait Cols {
    fn text(&self, col: &str) -> Result<String, StoreError>;
    fn opt_text(&self, col: &str) -> Result<Option<String>, StoreError>;
    fn int(&self, col: &str) -> Result<i64, StoreError>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>, StoreError>;
    fn flag(&self, col: &str) -> Result<bool, StoreError>;

    fn uuid(&self, col: &str) -> Result<Uuid, StoreError> {
        parse_uuid(&self.text(col)?)
    }
    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, StoreError> {
        self.opt_text(col)?.as_deref().map(parse_uuid).transpose()
    }
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

fn parse_uuid(text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|e| StoreError::Internal(format!("stored uuid {text:?}: {e}")))
}

fn stored<T>(text: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| StoreError::Internal(format!("stored {what} {text:?} is unknown")))
}

/// A JSON value as stored in a TEXT column.
pub(crate) fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding JSON: {e}")))
}

macro_rules! account_columns {
    () => {
        "id, email, tier, timezone, primary_player_tag, created_at"
    };
}
macro_rules! agent_columns {
    () => {
        "id, public_id, owner_account_id, name, kind, suspended, key_digest, key_scopes, \
         timezone, created_at"
    };
}
macro_rules! feedback_columns {
    () => {
        "id, account_id, agent_id, principal_kind, on_behalf_of, category, message, context, \
         request_id, status, response, responded_at, shipped_in, related_tools, created_at, \
         delivered_at"
    };
}
macro_rules! audit_columns {
    () => {
        "request_id, account_id, agent_id, door, tool, arguments, response, error_code, \
         duration_ms, created_at"
    };
}
pub(crate) use {account_columns, agent_columns, audit_columns, feedback_columns};

pub(crate) fn account(r: &impl Cols) -> Result<Account, StoreError> {
    Ok(Account {
        id: r.uuid("id")?,
        email: r.opt_text("email")?,
        tier: stored(&r.text("tier")?, Tier::parse, "tier")?,
        timezone: r.text("timezone")?,
        primary_player_tag: r.opt_text("primary_player_tag")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn agent(r: &impl Cols) -> Result<Agent, StoreError> {
    Ok(Agent {
        id: r.uuid("id")?,
        public_id: r.text("public_id")?,
        owner_account_id: r.uuid("owner_account_id")?,
        name: r.text("name")?,
        kind: stored(&r.text("kind")?, Kind::parse, "agent kind")?,
        suspended: r.flag("suspended")?,
        key_digest: r.opt_text("key_digest")?,
        key_scopes: r.text("key_scopes")?,
        timezone: r.opt_text("timezone")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn feedback(r: &impl Cols) -> Result<Feedback, StoreError> {
    let related: Vec<String> = serde_json::from_str(&r.text("related_tools")?)
        .map_err(|e| StoreError::Internal(format!("stored related_tools: {e}")))?;
    Ok(Feedback {
        id: r.int("id")?,
        account_id: r.uuid("account_id")?,
        agent_id: r.opt_uuid("agent_id")?,
        principal_kind: stored(&r.text("principal_kind")?, Kind::parse, "principal kind")?,
        on_behalf_of: r.opt_text("on_behalf_of")?,
        category: r.text("category")?,
        message: r.text("message")?,
        context: r.opt_text("context")?,
        request_id: r.opt_uuid("request_id")?,
        status: stored(&r.text("status")?, FeedbackStatus::parse, "feedback status")?,
        response: r.opt_text("response")?,
        responded_at: r.opt_int("responded_at")?,
        shipped_in: r.opt_text("shipped_in")?,
        related_tools: related,
        created_at: r.int("created_at")?,
        delivered_at: r.opt_int("delivered_at")?,
    })
}

pub(crate) fn audit(r: &impl Cols) -> Result<AuditEntry, StoreError> {
    Ok(AuditEntry {
        request_id: r.uuid("request_id")?,
        account_id: r.opt_uuid("account_id")?,
        agent_id: r.opt_uuid("agent_id")?,
        door: r.text("door")?,
        tool: r.opt_text("tool")?,
        arguments: r.opt_text("arguments")?,
        response: r.opt_text("response")?,
        error_code: r.opt_text("error_code")?,
        duration_ms: r.int("duration_ms")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn refusal(r: &impl Cols) -> Result<RefusalCount, StoreError> {
    Ok(RefusalCount {
        credential_hint: r.text("credential_hint")?,
        address: r.text("address")?,
        day: r.text("day")?,
        door: r.text("door")?,
        reason: r.text("reason")?,
        count: r.int("count")?,
    })
}
