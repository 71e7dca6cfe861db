//! The play area: the journal, consequences and receipts of an assignment, and
//! [`Play::apply`], the one write path of a play operation (the state read — or, for a turn, the
//! row kept for the version its token check read, or the newest row kept when its token is
//! checked in the write itself, see [`super::states`] — the domain's decision, the write
//! guarded by that version) — the trait, its records and its SQL, with
//! the assignment row's columns (the play state every operation reads and writes), its lookup
//! by id and the decoding of stored enums and JSON that the assignments area shares. The rules
//! that decide are the domain's ([`crate::domain::play`]).

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use sqlkit::{Cols, Conn, Row, Runner, Statement, Tx, sql};
use uuid::Uuid;

use super::Held;
use super::sql::{SqlStore, StoreError};
use crate::domain::play::{Decision, DomainError, OperationState, WritePlan};
use crate::domain::{
    Assignment, Category, Consequence, ConsequenceStatus, EventKind, JournalEvent, Language, Mode,
    Node, OperationKind, PlayStatus, Receipt,
};

/// A failure of [`Play::apply`]: either the domain refused the operation or the store failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What [`Play::apply`] loads besides the assignment and the receipt.
#[derive(Debug, Clone, Copy)]
pub struct Load<'a> {
    /// Consequences the operation names (only those of this assignment are loaded).
    pub consequences: &'a [Uuid],
    /// Count the assignment's pending consequences as well.
    pub pending: bool,
}

impl Load<'static> {
    /// Nothing beyond the assignment and the receipt.
    pub const NOTHING: Load<'static> = Load {
        consequences: &[],
        pending: false,
    };
    /// The pending count as well (a finish reports it).
    pub const PENDING: Load<'static> = Load {
        consequences: &[],
        pending: true,
    };
}

impl<'a> Load<'a> {
    /// Whether it names nothing beyond the assignment and the receipt.
    fn is_nothing(&self) -> bool {
        self.consequences.is_empty() && !self.pending
    }

    /// These consequences as well (a review decides them).
    pub fn consequences(ids: &'a [Uuid]) -> Self {
        Load {
            consequences: ids,
            pending: false,
        }
    }
}

/// The rule the store runs on the state it read; pure, no I/O. It runs again on the state read
/// afresh when another operation changed the assignment between the read and the write.
pub type Decide =
    Box<dyn for<'a> Fn(OperationState<'a>) -> Result<Decision, DomainError> + Send + Sync>;

/// What [`Play::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    Committed(Receipt),
    Replayed(Receipt),
}

/// [`Play::context_snapshot`]'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSnapshot {
    pub assignment: Assignment,
    /// `None` only if the scenario row is gone (scenarios are never deleted).
    pub scenario_title: Option<String>,
    pub events: Vec<JournalEvent>,
    pub consequences: Vec<Consequence>,
    /// The nodes of the version asked for, when asked.
    pub nodes: Option<Vec<Node>>,
}

/// [`Play::journal_snapshot`]'s answer: one page of the journal, the total it pages over and
/// the assignment's version they were read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalSnapshot {
    pub version: i64,
    pub total: i64,
    pub entries: Vec<JournalEvent>,
}

/// What happens in play: reading the journal, consequences and receipts, and applying an
/// operation.
#[async_trait]
pub trait Play: Send + Sync {
    /// One page of the journal ordered by version ascending, and the total it pages over.
    /// `player_view` keeps only the kinds the player sees.
    async fn journal_page(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        offset: i64,
        limit: i64,
    ) -> Result<(i64, Vec<JournalEvent>), StoreError>;
    /// What `get_play_context` reads, in one read-only snapshot transaction on `held` (or a
    /// connection of the pool): the assignment and its scenario's title, the newest `events`
    /// player-visible journal events (oldest first), the newest `consequences` consequences
    /// and, when `nodes_of` names them, the nodes of that (scenario, version). `None` when
    /// the assignment does not exist. One snapshot, so the answer is the state of the
    /// version it reports (what lets a rendered answer be kept per version).
    async fn context_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        events: i64,
        consequences: i64,
        nodes_of: Option<(Uuid, i64)>,
    ) -> Result<Option<ContextSnapshot>, StoreError>;
    /// [`Play::journal_page`] and the assignment's version, in one read-only snapshot
    /// transaction on `held` (or a connection of the pool). `None` when the assignment does
    /// not exist.
    async fn journal_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        player_view: bool,
        offset: i64,
        limit: i64,
    ) -> Result<Option<JournalSnapshot>, StoreError>;
    /// The assignment and its whole journal (ascending by version), in one read-only
    /// snapshot transaction on `held` (or a connection of the pool).
    async fn search_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        player_view: bool,
    ) -> Result<Option<(Assignment, Vec<JournalEvent>)>, StoreError>;
    /// The newest `n` events (ascending by version).
    async fn recent_journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        n: i64,
    ) -> Result<Vec<JournalEvent>, StoreError>;
    /// Every event (ascending by version).
    async fn journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
    ) -> Result<Vec<JournalEvent>, StoreError>;
    /// The newest `n` consequences, newest first (by version, then creation order).
    async fn recent_consequences(
        &self,
        assignment_id: Uuid,
        n: i64,
    ) -> Result<Vec<Consequence>, StoreError>;
    /// Every consequence of the assignment, by version then position.
    async fn consequences(&self, assignment_id: Uuid) -> Result<Vec<Consequence>, StoreError>;
    /// Counts the assignment's consequences that are still pending.
    async fn pending_count(&self, assignment_id: Uuid) -> Result<i64, StoreError>;
    async fn receipt(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
    ) -> Result<Option<Receipt>, StoreError>;

    /// The one write path of play: reads the assignment row, its receipt for `operation_id`
    /// and what `load` names, runs `decide`, and writes its plan atomically, only if the
    /// assignment's version is still the one read (every write of play moves it on). When
    /// another operation wrote first, it reads and decides again: the outcome is the one a
    /// row lock taken before the read would give, without a transaction held open across
    /// the decision. An unknown assignment is `Domain(NotFound)`.
    async fn apply(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
        load: Load<'_>,
        decide: Decide,
    ) -> Result<Applied, ApplyError>;
    /// [`Play::apply`] on `held`, the connection the request checked its token on (no second
    /// pooled connection); on one from the pool when `None`. `checked_version` is the
    /// assignment's version that check read: when this instance keeps the row of that version
    /// and `load` names nothing more, the rule decides on it without a read, and its plan is
    /// written under the same guard (the version, and no receipt for the operation yet); any
    /// other outcome — a refusal, which may hide a replay, or a write another operation beat
    /// — is decided again on a fresh read, as without it.
    async fn apply_held(
        &self,
        held: Option<Held>,
        checked_version: Option<i64>,
        assignment_id: Uuid,
        operation_id: Uuid,
        load: Load<'_>,
        decide: Decide,
    ) -> Result<Applied, ApplyError>;
    /// A turn whose play token no statement has checked yet: decided on the newest row this
    /// instance wrote for the assignment, and written in one statement under
    /// [`Play::apply_held`]'s guard and the token's liveness (`live`), which also confirms the
    /// token. `None`: nothing was written, because no row is kept, the rule refused on the
    /// kept row, or the guard failed (the version moved, the operation id was used, or the
    /// token is no longer live). The caller then checks the token and applies the usual way.
    async fn commit_unchecked(
        &self,
        live: LiveToken<'_>,
        assignment_id: Uuid,
        decide: &Decide,
    ) -> Result<Option<Receipt>, StoreError>;
}

/// A play token a write confirms in its own guard: its digest, live at `now`.
#[derive(Debug, Clone, Copy)]
pub struct LiveToken<'a> {
    pub digest: &'a str,
    pub now: i64,
}

/// The assignment row (the assignments area reads it too).
pub(super) const ASSIGNMENT_COLUMNS: &str = "id, scenario_id, source_version, gm_id, player_id, \
     mode, language, character, brief, instructions, boundaries, return_condition, gm_notes, \
     published_node_ids, auto_approve, status, version, memory, current_scene, summary, \
     created_at, updated_at";
const EVENT_COLUMNS: &str = "version, kind, operation_id, player_action, narration, summary, \
     gm_private, scene, created_at";
const CONSEQUENCE_COLUMNS: &str = "id, assignment_id, version, category, description, status, \
     gm_note, created_at, decided_at";
const RECEIPT_COLUMNS: &str =
    "assignment_id, operation_id, kind, args_hash, result, version, created_at";
/// [`ASSIGNMENT_COLUMNS`] of the alias `a` (a unit test keeps the two in step).
const JOINED_ASSIGNMENT_COLUMNS: &str = "a.id, a.scenario_id, a.source_version, a.gm_id, \
     a.player_id, a.mode, a.language, a.character, a.brief, a.instructions, a.boundaries, \
     a.return_condition, a.gm_notes, a.published_node_ids, a.auto_approve, a.status, a.version, \
     a.memory, a.current_scene, a.summary, a.created_at, a.updated_at";
/// The receipt columns of an operation's state read, renamed apart from the assignment's.
const JOINED_RECEIPT_COLUMNS: &str = "r.operation_id AS r_operation_id, r.kind AS r_kind, \
     r.args_hash AS r_args_hash, r.result AS r_result, r.version AS r_version, \
     r.created_at AS r_created_at";
const PENDING_COUNT: &str = "SELECT COUNT(*) AS n FROM consequences \
     WHERE assignment_id = $1 AND status = 'pending'";

/// Parses a stored enum spelling with the domain's own `parse`.
pub(super) fn stored<T>(
    text: String,
    parse: fn(&str) -> Option<T>,
    what: &str,
) -> Result<T, StoreError> {
    parse(&text).ok_or_else(|| StoreError::Internal(format!("stored {what} {text:?} is unknown")))
}

/// A JSON value as stored in a TEXT column.
pub(super) fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding JSON: {e}")))
}

/// A JSON value read back from a TEXT column.
pub(super) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("stored {what}: {e}")))
}

/// The journal filter of a view: every event, or only the kinds the player sees
/// ([`EventKind::player_visible`]; a unit test keeps the two in step).
fn journal_filter(player_view: bool) -> &'static str {
    if player_view {
        "AND kind IN ('turn', 'finish')"
    } else {
        ""
    }
}

/// The columns of [`ASSIGNMENT_COLUMNS`].
pub(super) fn assignment(r: &Row) -> Result<Assignment, StoreError> {
    Ok(Assignment {
        id: r.uuid("id")?,
        scenario_id: r.uuid("scenario_id")?,
        source_version: r.int("source_version")?,
        gm_id: r.uuid("gm_id")?,
        player_id: r.uuid("player_id")?,
        mode: stored(r.text("mode")?, Mode::parse, "mode")?,
        language: stored(r.text("language")?, Language::parse, "language")?,
        character: r.text("character")?,
        brief: r.text("brief")?,
        instructions: r.text("instructions")?,
        boundaries: r.text("boundaries")?,
        return_condition: r.text("return_condition")?,
        gm_notes: r.text("gm_notes")?,
        published_node_ids: from_json(&r.text("published_node_ids")?, "published_node_ids")?,
        auto_approve: r.flag("auto_approve")?,
        status: stored(r.text("status")?, PlayStatus::parse, "play status")?,
        version: r.int("version")?,
        memory: r.text("memory")?,
        current_scene: r.opt_text("current_scene")?,
        summary: r.opt_text("summary")?,
        created_at: r.int("created_at")?,
        updated_at: r.int("updated_at")?,
    })
}

/// The columns of [`EVENT_COLUMNS`].
fn event(r: &Row) -> Result<JournalEvent, StoreError> {
    Ok(JournalEvent {
        version: r.int("version")?,
        kind: stored(r.text("kind")?, EventKind::parse, "event kind")?,
        operation_id: r.opt_uuid("operation_id")?,
        player_action: r.opt_text("player_action")?,
        narration: r.opt_text("narration")?,
        summary: r.opt_text("summary")?,
        gm_private: r.opt_text("gm_private")?,
        scene: r.opt_text("scene")?,
        created_at: r.int("created_at")?,
    })
}

/// The columns of [`CONSEQUENCE_COLUMNS`].
fn consequence(r: &Row) -> Result<Consequence, StoreError> {
    Ok(Consequence {
        id: r.uuid("id")?,
        assignment_id: r.uuid("assignment_id")?,
        version: r.int("version")?,
        category: stored(r.text("category")?, Category::parse, "category")?,
        description: r.text("description")?,
        status: stored(
            r.text("status")?,
            ConsequenceStatus::parse,
            "consequence status",
        )?,
        gm_note: r.opt_text("gm_note")?,
        created_at: r.int("created_at")?,
        decided_at: r.opt_int("decided_at")?,
    })
}

/// The receipt of `assignment_id` and `operation_id` in the rest of a row's receipt columns,
/// each named `prefix` and the column ([`RECEIPT_COLUMNS`] with none, the lock statement's
/// [`JOINED_RECEIPT_COLUMNS`] with `r_`).
fn receipt_columns(
    r: &Row,
    prefix: &str,
    assignment_id: Uuid,
    operation_id: Uuid,
) -> Result<Receipt, StoreError> {
    let col = |name: &str| format!("{prefix}{name}");
    Ok(Receipt {
        assignment_id,
        operation_id,
        kind: stored(
            r.text(&col("kind"))?,
            OperationKind::parse,
            "operation kind",
        )?,
        args_hash: r.text(&col("args_hash"))?,
        result: from_json(&r.text(&col("result"))?, "receipt result")?,
        version: r.int(&col("version"))?,
        created_at: r.int(&col("created_at"))?,
    })
}

/// The columns of [`RECEIPT_COLUMNS`].
fn receipt(r: &Row) -> Result<Receipt, StoreError> {
    let (assignment_id, operation_id) = (r.uuid("assignment_id")?, r.uuid("operation_id")?);
    receipt_columns(r, "", assignment_id, operation_id)
}

/// The receipt of [`JOINED_RECEIPT_COLUMNS`], if the outer join found one.
fn joined_receipt(r: &Row, assignment_id: Uuid) -> Result<Option<Receipt>, StoreError> {
    let Some(operation_id) = r.opt_uuid("r_operation_id")? else {
        return Ok(None);
    };
    receipt_columns(r, "r_", assignment_id, operation_id).map(Some)
}

/// The assignment with this id, on `on` (the pool or a transaction).
pub(super) async fn assignment_on(
    on: impl Runner,
    id: Uuid,
) -> Result<Option<Assignment>, StoreError> {
    let row = sql(format!(
        "SELECT {ASSIGNMENT_COLUMNS} FROM assignments WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(on)
    .await?;
    row.as_ref().map(assignment).transpose()
}

/// One page of an assignment's journal, on `on` (the pool or a held connection).
async fn events(
    on: impl Runner,
    assignment_id: Uuid,
    player_view: bool,
    newest_first: bool,
    offset: i64,
    limit: i64,
) -> Result<Vec<JournalEvent>, StoreError> {
    // The filter and order are fixed fragments chosen here, never caller text.
    let statement = format!(
        "SELECT {EVENT_COLUMNS} FROM journal_events WHERE assignment_id = $1 {} \
         ORDER BY version {} LIMIT $2 OFFSET $3",
        journal_filter(player_view),
        if newest_first { "DESC" } else { "ASC" },
    );
    let rows = sql(statement)
        .bind(assignment_id)
        .bind(limit.max(0))
        .bind(offset.max(0))
        .fetch_all(on)
        .await?;
    rows.iter().map(event).collect()
}

/// The newest `n` consequences, newest first, on `on`.
async fn recent_consequences_on(
    on: impl Runner,
    assignment_id: Uuid,
    n: i64,
) -> Result<Vec<Consequence>, StoreError> {
    let rows = sql(format!(
        "SELECT {CONSEQUENCE_COLUMNS} FROM consequences WHERE assignment_id = $1 \
         ORDER BY version DESC, seq DESC LIMIT $2"
    ))
    .bind(assignment_id)
    .bind(n.max(0))
    .fetch_all(on)
    .await?;
    rows.iter().map(consequence).collect()
}

#[async_trait]
impl Play for SqlStore {
    async fn journal_page(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        offset: i64,
        limit: i64,
    ) -> Result<(i64, Vec<JournalEvent>), StoreError> {
        let total = sql(format!(
            "SELECT COUNT(*) AS n FROM journal_events WHERE assignment_id = $1 {}",
            journal_filter(player_view)
        ))
        .bind(assignment_id)
        .fetch_one(&self.db)
        .await?
        .int("n")?;
        let page = events(&self.db, assignment_id, player_view, false, offset, limit).await?;
        Ok((total, page))
    }

    async fn context_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        events_wanted: i64,
        consequences_wanted: i64,
        nodes_of: Option<(Uuid, i64)>,
    ) -> Result<Option<ContextSnapshot>, StoreError> {
        let mut tx = snapshot(&self.db, held).await?;
        // The scenario's title comes in a correlated subquery: no second statement.
        let Some(row) = sql(format!(
            "SELECT {ASSIGNMENT_COLUMNS}, (SELECT s.title FROM scenarios s \
             WHERE s.id = assignments.scenario_id) AS scenario_title \
             FROM assignments WHERE id = $1"
        ))
        .bind(assignment_id)
        .fetch_optional(&mut tx)
        .await?
        else {
            tx.commit().await?;
            return Ok(None);
        };
        let assignment = assignment(&row)?;
        let scenario_title = row.opt_text("scenario_title")?;
        let mut recent = events(&mut tx, assignment_id, true, true, 0, events_wanted).await?;
        recent.reverse();
        let consequences =
            recent_consequences_on(&mut tx, assignment_id, consequences_wanted).await?;
        let nodes = match nodes_of {
            Some((scenario, version)) => {
                Some(super::scenarios::nodes_on(&mut tx, scenario, version).await?)
            }
            None => None,
        };
        tx.commit().await?;
        Ok(Some(ContextSnapshot {
            assignment,
            scenario_title,
            events: recent,
            consequences,
            nodes,
        }))
    }

    async fn journal_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        player_view: bool,
        offset: i64,
        limit: i64,
    ) -> Result<Option<JournalSnapshot>, StoreError> {
        let mut tx = snapshot(&self.db, held).await?;
        // The version and the total in one statement.
        let row = sql(format!(
            "SELECT a.version, (SELECT COUNT(*) FROM journal_events \
             WHERE assignment_id = a.id {}) AS n FROM assignments a WHERE a.id = $1",
            journal_filter(player_view)
        ))
        .bind(assignment_id)
        .fetch_optional(&mut tx)
        .await?;
        let Some(row) = row else {
            tx.commit().await?;
            return Ok(None);
        };
        let entries = events(&mut tx, assignment_id, player_view, false, offset, limit).await?;
        tx.commit().await?;
        Ok(Some(JournalSnapshot {
            version: row.int("version")?,
            total: row.int("n")?,
            entries,
        }))
    }

    async fn search_snapshot(
        &self,
        held: Option<Held>,
        assignment_id: Uuid,
        player_view: bool,
    ) -> Result<Option<(Assignment, Vec<JournalEvent>)>, StoreError> {
        let mut tx = snapshot(&self.db, held).await?;
        let Some(found) = assignment_on(&mut tx, assignment_id).await? else {
            tx.commit().await?;
            return Ok(None);
        };
        let journal = events(&mut tx, assignment_id, player_view, false, 0, i64::MAX).await?;
        tx.commit().await?;
        Ok(Some((found, journal)))
    }

    async fn recent_journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
        n: i64,
    ) -> Result<Vec<JournalEvent>, StoreError> {
        let mut recent = events(&self.db, assignment_id, player_view, true, 0, n).await?;
        recent.reverse();
        Ok(recent)
    }

    async fn journal(
        &self,
        assignment_id: Uuid,
        player_view: bool,
    ) -> Result<Vec<JournalEvent>, StoreError> {
        events(&self.db, assignment_id, player_view, false, 0, i64::MAX).await
    }

    async fn recent_consequences(
        &self,
        assignment_id: Uuid,
        n: i64,
    ) -> Result<Vec<Consequence>, StoreError> {
        recent_consequences_on(&self.db, assignment_id, n).await
    }

    async fn consequences(&self, assignment_id: Uuid) -> Result<Vec<Consequence>, StoreError> {
        let rows = sql(format!(
            "SELECT {CONSEQUENCE_COLUMNS} FROM consequences WHERE assignment_id = $1 \
             ORDER BY version, seq"
        ))
        .bind(assignment_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(consequence).collect()
    }

    async fn pending_count(&self, assignment_id: Uuid) -> Result<i64, StoreError> {
        sql(PENDING_COUNT)
            .bind(assignment_id)
            .fetch_one(&self.db)
            .await?
            .int("n")
    }

    async fn receipt(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
    ) -> Result<Option<Receipt>, StoreError> {
        let row = sql(format!(
            "SELECT {RECEIPT_COLUMNS} FROM receipts WHERE assignment_id = $1 AND operation_id = $2"
        ))
        .bind(assignment_id)
        .bind(operation_id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(receipt).transpose()
    }

    async fn apply(
        &self,
        assignment_id: Uuid,
        operation_id: Uuid,
        load: Load<'_>,
        decide: Decide,
    ) -> Result<Applied, ApplyError> {
        self.apply_held(None, None, assignment_id, operation_id, load, decide)
            .await
    }

    async fn apply_held(
        &self,
        held: Option<Held>,
        checked_version: Option<i64>,
        assignment_id: Uuid,
        operation_id: Uuid,
        load: Load<'_>,
        decide: Decide,
    ) -> Result<Applied, ApplyError> {
        let mut conn = match held {
            Some(held) => held,
            None => self.db.acquire().await?,
        };
        // The row of the version the token check just read, if this instance keeps it: only a
        // commit is taken from it (the kept row shows no receipt, so a refusal there may be a
        // replay the read below finds).
        let kept = checked_version
            .filter(|_| load.is_nothing())
            .and_then(|version| self.states.at(assignment_id, version));
        if let Some(kept) = kept
            && let Some(receipt) = self.commit_kept(&mut conn, &kept, &decide, None).await?
        {
            return Ok(Applied::Committed(receipt));
        }
        for _ in 0..WRITE_ATTEMPTS {
            let state = read_state(&mut conn, assignment_id, operation_id, load).await?;
            let decision = decide(OperationState {
                assignment: &state.assignment,
                receipt: state.receipt.as_ref(),
                consequences: &state.consequences,
                pending: state.pending,
            })?;
            let plan = match decision {
                Decision::Replay(receipt) => return Ok(Applied::Replayed(receipt)),
                Decision::Write(plan) => plan,
            };
            if write_plan(&mut conn, &state.assignment, &plan, None).await? {
                self.states
                    .keep(Arc::new(plan.applied_to(&state.assignment)));
                return Ok(Applied::Committed(plan.receipt));
            }
        }
        // Unreachable while every decision checks the version it expects (see WRITE_ATTEMPTS);
        // a store that cannot settle answers as a busy one does.
        Err(StoreError::Unavailable(
            "the assignment kept changing during the operation; try again".into(),
        )
        .into())
    }

    async fn commit_unchecked(
        &self,
        live: LiveToken<'_>,
        assignment_id: Uuid,
        decide: &Decide,
    ) -> Result<Option<Receipt>, StoreError> {
        let Some(kept) = self.states.newest(assignment_id) else {
            return Ok(None);
        };
        let mut conn = self.db.acquire().await?;
        self.commit_kept(&mut conn, &kept, decide, Some(live)).await
    }
}

impl SqlStore {
    /// An operation decided on a row this instance `kept`, showing it no receipt: its plan
    /// written under the guard (and `live`'s, if any) when the rule writes, the row it leaves
    /// kept, and its receipt. `None` when the rule refuses (which may hide a replay of a receipt
    /// the row does not show) or the guard writes nothing: the caller decides again on a read.
    async fn commit_kept(
        &self,
        conn: &mut Conn,
        kept: &Assignment,
        decide: &Decide,
        live: Option<LiveToken<'_>>,
    ) -> Result<Option<Receipt>, StoreError> {
        let decision = decide(OperationState {
            assignment: kept,
            receipt: None,
            consequences: &[],
            pending: None,
        });
        let Ok(Decision::Write(plan)) = decision else {
            return Ok(None);
        };
        if !write_plan(conn, kept, &plan, live).await? {
            return Ok(None);
        }
        self.states.keep(Arc::new(plan.applied_to(kept)));
        Ok(Some(plan.receipt))
    }
}

/// How many times [`Play::apply`] reads and decides before it gives up. Another operation
/// winning the write moves the version on, and every operation (turn, finish, review) names
/// the version it expects, so a second decision is a replay or the domain's version conflict:
/// two attempts settle every race; the rest are headroom.
const WRITE_ATTEMPTS: usize = 8;

/// A read-only snapshot transaction on `held`, or on a connection of the pool.
async fn snapshot(db: &sqlkit::Db, held: Option<Held>) -> Result<Tx, StoreError> {
    match held {
        Some(held) => held.begin_snapshot().await,
        None => db.begin_snapshot().await,
    }
}

/// What [`Play::apply`] reads before it decides.
struct State {
    assignment: Assignment,
    receipt: Option<Receipt>,
    consequences: Vec<Consequence>,
    pending: Option<i64>,
}

/// The assignment, its receipt for `operation_id` and what `load` names, each read once. The
/// reads are not one snapshot: what they find is decided on only if the assignment's version
/// is unchanged when the plan is written ([`write_plan`]), and every write of play moves that
/// version, so a state read across another operation's write is never written on.
async fn read_state(
    conn: &mut Conn,
    assignment_id: Uuid,
    operation_id: Uuid,
    load: Load<'_>,
) -> Result<State, ApplyError> {
    // The assignment and the receipt are one statement: the receipt's table is the outer
    // join's nullable side. Its text is built once.
    static STATE: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {JOINED_ASSIGNMENT_COLUMNS}, {JOINED_RECEIPT_COLUMNS} FROM assignments a \
             LEFT JOIN receipts r ON r.assignment_id = a.id AND r.operation_id = $2 \
             WHERE a.id = $1"
        )
    });
    let row = sql(STATE.as_str())
        .bind(assignment_id)
        .bind(operation_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DomainError::NotFound)?;
    let assignment = assignment(&row)?;
    let receipt = joined_receipt(&row, assignment_id)?;

    let mut consequences: Vec<Consequence> = Vec::with_capacity(load.consequences.len());
    for cid in load.consequences {
        if consequences.iter().any(|c| c.id == *cid) {
            continue;
        }
        let row = sql(format!(
            "SELECT {CONSEQUENCE_COLUMNS} FROM consequences WHERE id = $1 AND assignment_id = $2"
        ))
        .bind(*cid)
        .bind(assignment_id)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = row {
            consequences.push(consequence(&row)?);
        }
    }

    let pending = if load.pending {
        Some(
            sql(PENDING_COUNT)
                .bind(assignment_id)
                .fetch_one(&mut *conn)
                .await?
                .int("n")?,
        )
    } else {
        None
    };
    Ok(State {
        assignment,
        receipt,
        consequences,
        pending,
    })
}

/// Writes everything one operation changes, all or nothing, if the assignment is still at the
/// version `before` was read at and holds no receipt for the operation yet: `false` (nothing
/// written) when another operation wrote first or the operation id was used before (a state
/// decided on without reading the receipt, see [`Play::apply_held`]). The primary keys of
/// events and receipts back up the guard.
async fn write_plan(
    conn: &mut Conn,
    before: &Assignment,
    plan: &WritePlan,
    live: Option<LiveToken<'_>>,
) -> Result<bool, StoreError> {
    // The guard and every write of the plan in one call: on PostgreSQL one statement (a round
    // trip, no transaction around it), each write a data-modifying query of it. None reads
    // what another writes: a turn inserts consequences and a review decides existing ones
    // (never both), and a review lists each consequence once. Inserts take their row from a
    // `SELECT`, so that the guard can condition them (see `sqlkit::Conn::write_guarded`).
    macro_rules! guard {
        () => {
            "UPDATE assignments SET version = $1, status = $2, memory = $3, \
             current_scene = $4, summary = $5, updated_at = $6 \
             WHERE id = $7 AND version = $8 AND NOT EXISTS (SELECT 1 FROM receipts \
             WHERE assignment_id = $9 AND operation_id = $10)"
        };
    }
    // With a play token to confirm, the guard also holds only while the token is live: the
    // play-token check of `PLAY_TOKEN` and `PlayAuthenticator` (its digest, not revoked, not
    // expired at `$12`, the player and the GM active), read in the row lock's statement.
    let mut guard = match live {
        None => sql(guard!()),
        Some(_) => sql(concat!(
            guard!(),
            " AND EXISTS (SELECT 1 FROM play_tokens t \
             JOIN users p ON p.id = assignments.player_id \
             JOIN users g ON g.id = assignments.gm_id \
             WHERE t.digest = $11 AND t.assignment_id = assignments.id \
             AND t.revoked_at IS NULL AND t.expires_at > $12 AND p.active AND g.active)"
        )),
    }
    .bind(plan.version)
    .bind(plan.status.as_str())
    .bind(&plan.memory)
    .bind(plan.current_scene.as_deref())
    .bind(plan.summary.as_deref())
    .bind(plan.updated_at)
    .bind(before.id)
    .bind(before.version)
    .bind(before.id)
    .bind(plan.receipt.operation_id);
    if let Some(live) = live {
        guard = guard.bind(live.digest).bind(live.now);
    }
    // the events, the consequences' one INSERT, the decisions and the receipt
    let mut writes: Vec<Statement> =
        Vec::with_capacity(plan.events.len() + 1 + plan.decisions.len() + 1);
    for event in &plan.events {
        writes.push(
            sql(
                "INSERT INTO journal_events (assignment_id, version, kind, operation_id, \
                 player_action, narration, summary, gm_private, scene, created_at) \
                 SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10",
            )
            .bind(before.id)
            .bind(event.version)
            .bind(event.kind.as_str())
            .bind(event.operation_id)
            .bind(event.player_action.as_deref())
            .bind(event.narration.as_deref())
            .bind(event.summary.as_deref())
            .bind(event.gm_private.as_deref())
            .bind(event.scene.as_deref())
            .bind(event.created_at),
        );
    }
    if !plan.consequences.is_empty() {
        // One statement for the turn's consequences (at most ten, so at most 100 arguments).
        let mut statement = sql(consequences_insert(plan.consequences.len()));
        for (seq, c) in (0_i64..).zip(&plan.consequences) {
            statement = statement
                .bind(c.id)
                .bind(c.assignment_id)
                .bind(c.version)
                .bind(seq)
                .bind(c.category.as_str())
                .bind(&c.description)
                .bind(c.status.as_str())
                .bind(c.gm_note.as_deref())
                .bind(c.created_at)
                .bind(c.decided_at);
        }
        writes.push(statement);
    }
    let first_decision = writes.len();
    for d in &plan.decisions {
        writes.push(
            sql(
                "UPDATE consequences SET status = $1, gm_note = $2, decided_at = $3 \
                 WHERE id = $4 AND assignment_id = $5",
            )
            .bind(d.status.as_str())
            .bind(d.note.as_deref())
            .bind(d.decided_at)
            .bind(d.id)
            .bind(before.id),
        );
    }
    let r = &plan.receipt;
    writes.push(
        sql(
            "INSERT INTO receipts (assignment_id, operation_id, kind, args_hash, result, \
             version, created_at) SELECT $1, $2, $3, $4, $5, $6, $7",
        )
        .bind(r.assignment_id)
        .bind(r.operation_id)
        .bind(r.kind.as_str())
        .bind(&r.args_hash)
        .bind(json_text(&r.result)?)
        .bind(r.version)
        .bind(r.created_at),
    );
    let decisions = first_decision..first_decision + plan.decisions.len();
    let Some(affected) = conn.write_guarded(guard, writes).await? else {
        return Ok(false);
    };
    // The plan was decided on the consequences read at this version, which no other write
    // has changed since: a decision that found no row is a fault, not a race.
    if affected
        .get(decisions)
        .is_none_or(|decided| decided.iter().any(|n| *n != 1))
    {
        return Err(StoreError::Internal(
            "a review's decision found no consequence it had read".into(),
        ));
    }
    Ok(true)
}

/// The `INSERT` of `rows` consequences, ten arguments a row, its rows from a `SELECT`: built
/// once for each count a turn may propose (a commit builds no SQL text of its own).
fn consequences_insert(rows: usize) -> Cow<'static, str> {
    static TEXTS: LazyLock<Vec<String>> = LazyLock::new(|| {
        (0..=crate::domain::play::limits::CONSEQUENCES)
            .map(consequences_insert_text)
            .collect()
    });
    match TEXTS.get(rows) {
        Some(text) => Cow::Borrowed(text.as_str()),
        None => Cow::Owned(consequences_insert_text(rows)),
    }
}

/// The text of [`consequences_insert`].
fn consequences_insert_text(rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|row| {
            let args: Vec<String> = (1..=10).map(|i| format!("${}", row * 10 + i)).collect();
            format!("({})", args.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO consequences (id, assignment_id, version, seq, category, description, \
         status, gm_note, created_at, decided_at) SELECT * FROM (VALUES {}) AS v",
        values.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_read_reads_every_assignment_and_receipt_column() {
        let prefixed: Vec<String> = ASSIGNMENT_COLUMNS
            .split(", ")
            .map(|c| format!("a.{c}"))
            .collect();
        assert_eq!(JOINED_ASSIGNMENT_COLUMNS, prefixed.join(", "));
        for c in RECEIPT_COLUMNS.split(", ").skip(1) {
            assert!(
                JOINED_RECEIPT_COLUMNS.contains(&format!("r.{c} AS r_{c}")),
                "{c}"
            );
        }
    }

    #[test]
    fn a_turns_consequences_are_one_statement() {
        assert!(
            consequences_insert(1)
                .ends_with("(VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)) AS v")
        );
        let two = consequences_insert(2);
        assert!(
            two.ends_with("$10), ($11, $12, $13, $14, $15, $16, $17, $18, $19, $20)) AS v"),
            "{two}"
        );
    }

    #[test]
    fn player_journal_filter_lists_exactly_the_player_visible_kinds() {
        let all = [
            EventKind::Turn,
            EventKind::Finish,
            EventKind::Review,
            EventKind::GmNote,
        ];
        let filter = journal_filter(true);
        for kind in all {
            let listed = filter.contains(&format!("'{}'", kind.as_str()));
            assert_eq!(listed, kind.player_visible(), "{kind:?}");
        }
        assert_eq!(journal_filter(false), "");
    }
}
