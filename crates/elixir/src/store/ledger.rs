//! The ledger area: what happened, kept for the people it happened to: audited tool calls,
//! counted credential refusals and feedback reports with the operator's replies.
//! [`LedgerStore`] and its SQL.

use async_trait::async_trait;
use sqlkit::{Arg, Cols, Statement, sql};
use uuid::Uuid;

use super::rows::{self, AUDIT_COLUMNS, FEEDBACK_COLUMNS, REFUSAL_COLUMNS, RESPONSE_PENDING};
use super::sql_store::{SqlStore, StoreError, found};
use crate::domain::{FeedbackStatus, Millis};
use crate::model::{
    AuditEntry, Feedback, FeedbackQuery, FeedbackReply, Ledger, NewFeedback, Refusal, RefusalCount,
};

/// Audit entries, refusal counts and feedback.
/// Most audit rows one [`LedgerStore::insert_audits`] statement stores: 10 parameters a row,
/// 2,560 a statement, far below either backend's limit (SQLite 32,766; PostgreSQL 65,535).
pub const AUDIT_BATCH: usize = 256;

#[async_trait]
pub trait LedgerStore: Send + Sync + 'static {
    /// Counts one refusal of a credential from an address on a day.
    async fn record_refusal(&self, refusal: &Refusal) -> Result<(), StoreError>;
    /// Every count of `day` (`YYYY-MM-DD`).
    async fn refusals(&self, day: &str) -> Result<Vec<RefusalCount>, StoreError>;
    /// The counts of `credentials` (credential hints) on `since_day` and later, newest day
    /// first: what one owner may see.
    async fn refusals_of(
        &self,
        credentials: &[String],
        since_day: &str,
    ) -> Result<Vec<RefusalCount>, StoreError>;
    /// Deletes the counts of days before `before_day`; returns how many went.
    async fn purge_refusals(&self, before_day: &str) -> Result<u64, StoreError>;

    /// Stores audit rows in one multi-row statement (a row whose request id is stored already
    /// is skipped); at most [`AUDIT_BATCH`] rows per call.
    async fn insert_audits(&self, entries: &[AuditEntry]) -> Result<(), StoreError>;
    /// The audited call of a request.
    async fn audit(&self, request_id: Uuid) -> Result<Option<AuditEntry>, StoreError>;
    /// The account's most recent audited calls (its own and its agents'), newest first.
    async fn recent_audit(
        &self,
        account_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;
    /// One agent's most recent audited calls at its door, newest first.
    async fn recent_agent_audit(
        &self,
        agent_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;

    /// Files a report (status `new`) and returns it as stored.
    async fn insert_feedback(&self, feedback: &NewFeedback) -> Result<Feedback, StoreError>;
    /// The report with this id.
    async fn feedback(&self, id: i64) -> Result<Option<Feedback>, StoreError>;
    /// One page of a ledger (at most `limit` rows) and the number matching the filter.
    async fn feedback_page(
        &self,
        query: &FeedbackQuery,
    ) -> Result<(Vec<Feedback>, i64), StoreError>;
    /// Marks the current responses of `ids` delivered (only rows with an undelivered response).
    async fn mark_delivered(&self, ids: &[i64], at: Millis) -> Result<(), StoreError>;
    /// Responses in the ledger not yet delivered.
    async fn pending_responses(&self, ledger: Ledger) -> Result<i64, StoreError>;
    /// Every report, newest first, optionally with one status (the operator's queue).
    async fn all_feedback(
        &self,
        status: Option<FeedbackStatus>,
        limit: i64,
    ) -> Result<Vec<Feedback>, StoreError>;
    /// Records the operator's status and response; a new response is undelivered again.
    async fn reply_feedback(&self, reply: &FeedbackReply) -> Result<Feedback, StoreError>;
}

/// The filter of a ledger read: fixed fragments, never caller text, and its arguments
/// (`$1` onwards).
fn ledger_filter(
    ledger: &Ledger,
    status: Option<FeedbackStatus>,
    since: Option<Millis>,
) -> (String, Vec<Arg>) {
    let mut args = vec![Arg::from(ledger.account_id)];
    let mut filter = String::from("account_id = $1");
    match ledger.agent_id {
        Some(agent) => {
            args.push(Arg::from(agent));
            filter.push_str(&format!(" AND agent_id = ${}", args.len()));
        }
        None => filter.push_str(" AND agent_id IS NULL"),
    }
    if let Some(status) = status {
        args.push(Arg::from(status.as_str()));
        filter.push_str(&format!(" AND status = ${}", args.len()));
    }
    if let Some(since) = since {
        args.push(Arg::from(since));
        let n = args.len();
        filter.push_str(&format!(
            " AND (created_at >= ${n} OR (responded_at IS NOT NULL AND responded_at >= ${n}))"
        ));
    }
    (filter, args)
}

/// `statement` with `args` bound in order.
fn bound(statement: Statement, args: &[Arg]) -> Statement {
    args.iter()
        .cloned()
        .fold(statement, |statement, arg| statement.bind(arg))
}

#[async_trait]
impl LedgerStore for SqlStore {
    async fn record_refusal(&self, r: &Refusal) -> Result<(), StoreError> {
        sql(
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
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn refusals(&self, day: &str) -> Result<Vec<RefusalCount>, StoreError> {
        sql(format!(
            "SELECT {REFUSAL_COLUMNS} FROM refusals \
             WHERE day = $1 ORDER BY count DESC, credential_hint, address"
        ))
        .bind(day)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(rows::refusal)
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
        let placeholders: Vec<String> = (2..credentials.len() + 2)
            .map(|n| format!("${n}"))
            .collect();
        let statement = sql(format!(
            "SELECT {REFUSAL_COLUMNS} FROM refusals \
             WHERE day >= $1 AND credential_hint IN ({}) \
             ORDER BY day DESC, count DESC, credential_hint, address",
            placeholders.join(", ")
        ))
        .bind(since_day);
        credentials
            .iter()
            .fold(statement, |statement, c| statement.bind(c))
            .fetch_all(&self.db)
            .await?
            .iter()
            .map(rows::refusal)
            .collect()
    }

    async fn purge_refusals(&self, before_day: &str) -> Result<u64, StoreError> {
        let done = sql("DELETE FROM refusals WHERE day < $1")
            .bind(before_day)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected())
    }

    async fn insert_audits(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        if entries.len() > AUDIT_BATCH {
            return Err(StoreError::Internal(format!(
                "{} audit rows in one statement; at most {AUDIT_BATCH}",
                entries.len()
            )));
        }
        let rows: Vec<String> = (0..entries.len())
            .map(|i| {
                let p: Vec<String> = (1..=10).map(|c| format!("${}", i * 10 + c)).collect();
                format!("({})", p.join(", "))
            })
            .collect();
        let mut statement = sql(format!(
            "INSERT INTO audit ({AUDIT_COLUMNS}) VALUES {} ON CONFLICT (request_id) DO NOTHING",
            rows.join(", ")
        ));
        for e in entries {
            statement = statement
                .bind(e.request_id)
                .bind(e.account_id)
                .bind(e.agent_id)
                .bind(e.door.as_str())
                .bind(e.tool.as_deref())
                .bind(e.arguments.as_deref())
                .bind(e.response.as_deref())
                .bind(e.error_code.as_deref())
                .bind(e.duration_ms)
                .bind(e.created_at);
        }
        statement.execute(&self.db).await?;
        Ok(())
    }

    async fn audit(&self, request_id: Uuid) -> Result<Option<AuditEntry>, StoreError> {
        sql(format!(
            "SELECT {AUDIT_COLUMNS} FROM audit WHERE request_id = $1"
        ))
        .bind(request_id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::audit)
        .transpose()
    }

    async fn recent_audit(
        &self,
        account_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.recent_audit_where("account_id", account_id, limit)
            .await
    }

    async fn recent_agent_audit(
        &self,
        agent_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.recent_audit_where("agent_id", agent_id, limit).await
    }

    async fn insert_feedback(&self, f: &NewFeedback) -> Result<Feedback, StoreError> {
        let id = sql(
            "INSERT INTO feedback (account_id, agent_id, principal_kind, \
             on_behalf_of, category, message, context, request_id, status, \
             related_tools, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'new', $9, $10) RETURNING id",
        )
        .bind(f.account_id)
        .bind(f.agent_id)
        .bind(f.principal_kind.as_str())
        .bind(f.on_behalf_of.as_deref())
        .bind(&f.category)
        .bind(&f.message)
        .bind(f.context.as_deref())
        .bind(f.request_id)
        .bind(rows::json_text(&f.related_tools)?)
        .bind(f.created_at)
        .fetch_one(&self.db)
        .await?
        .int("id")?;
        self.feedback(id).await?.ok_or(StoreError::NotFound)
    }

    async fn feedback(&self, id: i64) -> Result<Option<Feedback>, StoreError> {
        sql(format!(
            "SELECT {FEEDBACK_COLUMNS} FROM feedback WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::feedback)
        .transpose()
    }

    async fn feedback_page(&self, q: &FeedbackQuery) -> Result<(Vec<Feedback>, i64), StoreError> {
        let (filter, args) = ledger_filter(&q.ledger, q.status, q.since);
        let total = bound(
            sql(format!("SELECT COUNT(*) AS n FROM feedback WHERE {filter}")),
            &args,
        )
        .fetch_one(&self.db)
        .await?
        .int("n")?;
        let n = args.len();
        let page = bound(
            sql(format!(
                "SELECT {FEEDBACK_COLUMNS} FROM feedback WHERE {filter} \
                 ORDER BY created_at DESC, id DESC LIMIT ${} OFFSET ${}",
                n + 1,
                n + 2
            )),
            &args,
        )
        .bind(q.limit.max(0))
        .bind(q.offset.max(0))
        .fetch_all(&self.db)
        .await?;
        let items = page.iter().map(rows::feedback).collect::<Result<_, _>>()?;
        Ok((items, total))
    }

    async fn mark_delivered(&self, ids: &[i64], at: Millis) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        // One statement, so a page's replies are delivered all together or not at all (the
        // caller's `meta` trusts the count it read when nothing was delivered).
        let placeholders: Vec<String> = (2..ids.len() + 2).map(|n| format!("${n}")).collect();
        let statement = sql(format!(
            "UPDATE feedback SET delivered_at = $1 WHERE id IN ({}) AND {RESPONSE_PENDING}",
            placeholders.join(", ")
        ))
        .bind(at);
        ids.iter()
            .fold(statement, |statement, id| statement.bind(*id))
            .execute(&self.db)
            .await?;
        Ok(())
    }

    async fn pending_responses(&self, ledger: Ledger) -> Result<i64, StoreError> {
        let (filter, args) = ledger_filter(&ledger, None, None);
        bound(
            sql(format!(
                "SELECT COUNT(*) AS n FROM feedback WHERE {filter} AND {RESPONSE_PENDING}"
            )),
            &args,
        )
        .fetch_one(&self.db)
        .await?
        .int("n")
    }

    async fn all_feedback(
        &self,
        status: Option<FeedbackStatus>,
        limit: i64,
    ) -> Result<Vec<Feedback>, StoreError> {
        let statement = match status {
            Some(s) => sql(format!(
                "SELECT {FEEDBACK_COLUMNS} FROM feedback WHERE status = $1 \
                 ORDER BY created_at DESC, id DESC LIMIT $2"
            ))
            .bind(s.as_str()),
            None => sql(format!(
                "SELECT {FEEDBACK_COLUMNS} FROM feedback \
                 ORDER BY created_at DESC, id DESC LIMIT $1"
            )),
        };
        statement
            .bind(limit)
            .fetch_all(&self.db)
            .await?
            .iter()
            .map(rows::feedback)
            .collect()
    }

    async fn reply_feedback(&self, r: &FeedbackReply) -> Result<Feedback, StoreError> {
        let related = r.related_tools.as_ref().map(rows::json_text).transpose()?;
        let statement = match &r.response {
            // A new response is undelivered again.
            Some(response) => sql("UPDATE feedback SET status = $1, response = $2, \
                 responded_at = $3, delivered_at = NULL, \
                 shipped_in = COALESCE($4, shipped_in), \
                 related_tools = COALESCE($5, related_tools) WHERE id = $6")
            .bind(r.status.as_str())
            .bind(response)
            .bind(r.at),
            None => sql("UPDATE feedback SET status = $1, \
                 shipped_in = COALESCE($2, shipped_in), \
                 related_tools = COALESCE($3, related_tools) WHERE id = $4")
            .bind(r.status.as_str()),
        };
        found(
            statement
                .bind(r.shipped_in.as_deref())
                .bind(related)
                .bind(r.id)
                .execute(&self.db)
                .await?,
        )?;
        self.feedback(r.id).await?.ok_or(StoreError::NotFound)
    }
}

impl SqlStore {
    /// The newest `limit` audit rows whose `column` (`account_id` or `agent_id`, never user
    /// input) is `id`.
    async fn recent_audit_where(
        &self,
        column: &'static str,
        id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        sql(format!(
            "SELECT {AUDIT_COLUMNS} FROM audit WHERE {column} = $1 \
             ORDER BY created_at DESC LIMIT $2"
        ))
        .bind(id)
        .bind(limit)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(rows::audit)
        .collect()
    }
}
