//! The play service: what each player tool does, in terms of the domain rules and the store.
//! Transport-free: it answers typed results, and the player door renders them as JSON and maps
//! its errors onto MCP.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_door::Clock;
use serde_json::Value;
use uuid::Uuid;

use crate::domain::play::{self, DomainError, FinishArgs, TurnArgs, limits};
use crate::domain::text::excerpt;
use crate::domain::{
    Assignment, Consequence, EventKind, JournalEvent, Node, PlayStatus, Receipt, token,
};
use crate::store::{Applied, ApplyError, Decide, Held, LiveToken, Load, SharedStore, StoreError};

pub use mcp_door::{OsRandom, Random};

/// A failure of the service layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("internal: {0}")]
    Internal(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ServiceError::Domain(DomainError::NotFound),
            StoreError::Unavailable(m) => ServiceError::Unavailable(m),
            other => ServiceError::Internal(other.to_string()),
        }
    }
}

impl From<ApplyError> for ServiceError {
    fn from(e: ApplyError) -> Self {
        match e {
            ApplyError::Domain(d) => ServiceError::Domain(d),
            ApplyError::Store(s) => s.into(),
        }
    }
}

/// `get_play_context`'s answer: the assignment, its published materials, the recent journal
/// and consequences, and a recap. The player door renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayContext {
    pub assignment: Assignment,
    /// Empty only if the scenario row is gone.
    pub scenario_title: String,
    /// The published nodes the assignment names, in its order.
    pub materials: Vec<Node>,
    /// The newest player-visible events, oldest first.
    pub events: Vec<JournalEvent>,
    /// The newest consequences, newest first.
    pub consequences: Vec<Consequence>,
    /// The finish summary once completed, else the newest narration.
    pub recap: Option<String>,
}

/// `read_play_journal`'s answer: one page and the total it pages over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalPage {
    /// The assignment's version the page was read at (not part of the answer: what keys it).
    pub version: i64,
    pub total: i64,
    pub offset: i64,
    pub entries: Vec<JournalEvent>,
}

/// One journal event matching a search, with its excerpt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub version: i64,
    pub kind: EventKind,
    pub excerpt: String,
}

/// `search_play_memory`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySearch {
    pub query: String,
    /// The assignment's current version.
    pub version: i64,
    pub memory_excerpt: String,
    pub memory_matched: bool,
    /// Newest first, at most [`limits::SEARCH_HITS`].
    pub journal_excerpts: Vec<SearchHit>,
}

/// Scenario nodes by (scenario, source version).
type NodeCache = Mutex<HashMap<(Uuid, i64), Arc<Vec<Node>>>>;

/// A turn ready to apply ([`PlayService::prepare_turn`]): its rule bound to its validated
/// arguments, hash, drawn consequence ids and time.
pub struct Turn {
    assignment_id: Uuid,
    operation_id: Uuid,
    decide: Decide,
}

/// Shared state of the play service.
pub struct PlayService {
    pub store: SharedStore,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn Random>,
    /// Nodes are frozen per (scenario, source version), so they are cached forever.
    nodes: NodeCache,
}

impl PlayService {
    pub fn new(store: SharedStore, clock: Arc<dyn Clock>, random: Arc<dyn Random>) -> Self {
        Self {
            store,
            clock,
            random,
            nodes: Mutex::new(HashMap::new()),
        }
    }

    fn cached_nodes(&self, scenario_id: Uuid, version: i64) -> Option<Arc<Vec<Node>>> {
        self.nodes
            .lock()
            .ok()
            .and_then(|m| m.get(&(scenario_id, version)).cloned())
    }

    fn keep_nodes(&self, scenario_id: Uuid, version: i64, nodes: Vec<Node>) -> Arc<Vec<Node>> {
        let nodes = Arc::new(nodes);
        if let Ok(mut m) = self.nodes.lock() {
            m.insert((scenario_id, version), Arc::clone(&nodes));
        }
        nodes
    }

    /// The nodes of a published version, from the cache or read on `held` (a request that
    /// holds a connection never waits for a second one: with every pooled connection held
    /// that way, it would wait for itself).
    async fn nodes(
        &self,
        scenario_id: Uuid,
        version: i64,
        held: Option<&mut Held>,
    ) -> Result<Arc<Vec<Node>>, ServiceError> {
        if let Some(n) = self.cached_nodes(scenario_id, version) {
            return Ok(n);
        }
        let nodes = match held {
            Some(held) => self.store.nodes_held(held, scenario_id, version).await?,
            None => self.store.nodes(scenario_id, version).await?,
        };
        Ok(self.keep_nodes(scenario_id, version, nodes))
    }

    async fn assignment(&self, id: Uuid) -> Result<Assignment, ServiceError> {
        self.store
            .assignment(id)
            .await?
            .ok_or(ServiceError::Domain(DomainError::NotFound))
    }

    /// Mints a play token for the assignment (revoking its previous one); returns the plaintext.
    pub async fn issue_token(&self, assignment_id: Uuid) -> Result<(String, i64), ServiceError> {
        self.assignment(assignment_id).await?;
        let mut raw = [0u8; 20];
        self.random.fill(&mut raw);
        let plaintext = token::format_play_token(raw);
        let now = self.clock.now_millis();
        let expires_at = now + token::PLAY_TOKEN_TTL_MS;
        self.store
            .issue_play_token(assignment_id, &token::digest(&plaintext), now, expires_at)
            .await?;
        Ok((plaintext, expires_at))
    }

    /// Revokes the assignment's live token(s).
    pub async fn revoke_token(&self, assignment_id: Uuid) -> Result<u64, ServiceError> {
        self.assignment(assignment_id).await?;
        Ok(self
            .store
            .revoke_play_tokens(assignment_id, self.clock.now_millis())
            .await?)
    }

    /// `get_play_context`: everything the facilitator needs, player-visible only, read in one
    /// snapshot on `held` (the request's connection) or the pool. `source` is the scenario
    /// and source version the assignment plays (immutable; its nodes are read in the same
    /// snapshot unless cached).
    pub async fn context(
        &self,
        assignment_id: Uuid,
        source: (Uuid, i64),
        held: Option<Held>,
    ) -> Result<PlayContext, ServiceError> {
        let cached = self.cached_nodes(source.0, source.1);
        let snapshot = self
            .store
            .context_snapshot(
                held,
                assignment_id,
                limits::CONTEXT_EVENTS,
                limits::CONTEXT_CONSEQUENCES,
                cached.is_none().then_some(source),
            )
            .await?
            .ok_or(ServiceError::Domain(DomainError::NotFound))?;
        let a = snapshot.assignment;
        let nodes = match (cached, snapshot.nodes) {
            (Some(nodes), _) => nodes,
            (None, Some(read)) if (a.scenario_id, a.source_version) == source => {
                self.keep_nodes(source.0, source.1, read)
            }
            (None, _) => self.nodes(a.scenario_id, a.source_version, None).await?,
        };
        let materials = a
            .published_node_ids
            .iter()
            .filter_map(|id| nodes.iter().find(|n| &n.id == id && n.published))
            .cloned()
            .collect();
        let recap = match a.status {
            PlayStatus::Completed => a.summary.clone(),
            PlayStatus::Active => snapshot
                .events
                .iter()
                .rev()
                .find_map(|e| e.narration.clone()),
        };
        Ok(PlayContext {
            assignment: a,
            scenario_title: snapshot.scenario_title.unwrap_or_default(),
            materials,
            events: snapshot.events,
            consequences: snapshot.consequences,
            recap,
        })
    }

    /// `read_play_journal`: one page of the player's journal, read in one snapshot on `held`
    /// (the request's connection) or the pool.
    pub async fn journal(
        &self,
        assignment_id: Uuid,
        offset: i64,
        limit: i64,
        held: Option<Held>,
    ) -> Result<JournalPage, ServiceError> {
        let page = self
            .store
            .journal_snapshot(held, assignment_id, true, offset, limit)
            .await?
            .ok_or(ServiceError::Domain(DomainError::NotFound))?;
        Ok(JournalPage {
            version: page.version,
            total: page.total,
            offset,
            entries: page.entries,
        })
    }

    /// `search_play_memory`: memory excerpt and up to ten journal excerpts, newest first.
    /// Read in one snapshot on `held` (the request's connection) or the pool.
    pub async fn search(
        &self,
        assignment_id: Uuid,
        query: &str,
        held: Option<Held>,
    ) -> Result<MemorySearch, ServiceError> {
        let (a, events) = self
            .store
            .search_snapshot(held, assignment_id, true)
            .await?
            .ok_or(ServiceError::Domain(DomainError::NotFound))?;
        let (memory_excerpt, memory_matched) = excerpt(&a.memory, query, limits::EXCERPT_CHARS);
        let mut hits = Vec::new();
        for e in events.iter().rev() {
            let text = [&e.player_action, &e.narration, &e.summary]
                .into_iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n");
            let (ex, matched) = excerpt(&text, query, limits::EXCERPT_CHARS);
            if matched {
                hits.push(SearchHit {
                    version: e.version,
                    kind: e.kind,
                    excerpt: ex,
                });
                if hits.len() == limits::SEARCH_HITS {
                    break;
                }
            }
        }
        Ok(MemorySearch {
            query: query.to_owned(),
            version: a.version,
            memory_excerpt,
            memory_matched,
            journal_excerpts: hits,
        })
    }

    /// `commit_play_turn`, first half: validates `args`, checks nothing yet against the
    /// assignment, and binds the turn's rule (the scene is checked against the row the write
    /// is decided on, so a turn reads the assignment at most once). The nodes of the
    /// assignment's (immutable) source version come from the cache, read on `held` if not.
    pub async fn prepare_turn(
        &self,
        assignment_id: Uuid,
        source: (Uuid, i64),
        args: TurnArgs,
        held: Option<&mut Held>,
    ) -> Result<Turn, ServiceError> {
        args.validate()?;
        let nodes = self.nodes(source.0, source.1, held).await?;
        let hash = args.normalized_hash();
        let ids: Vec<Uuid> = args
            .consequences
            .iter()
            .map(|_| self.random.uuid())
            .collect();
        let now = self.clock.now_millis();
        Ok(Turn {
            assignment_id,
            operation_id: args.operation_id,
            decide: Box::new(move |state| {
                let a = state.assignment;
                let scene_ok = (a.scenario_id, a.source_version) == source
                    && play::is_playable_scene(a, &nodes, &args.current_scene);
                play::decide_turn(state, &args, &hash, scene_ok, &ids, now)
            }),
        })
    }

    /// `commit_play_turn`, second half: applies `turn` atomically and idempotently on `held`
    /// (the connection the token was checked on) or the pool; `checked_version` is the
    /// version that check read ([`Play::apply_held`]).
    pub async fn commit_turn(
        &self,
        turn: Turn,
        held: Option<Held>,
        checked_version: Option<i64>,
    ) -> Result<Applied, ServiceError> {
        Ok(self
            .store
            .apply_held(
                held,
                checked_version,
                turn.assignment_id,
                turn.operation_id,
                Load::NOTHING,
                turn.decide,
            )
            .await?)
    }

    /// `turn` committed in one statement that also confirms the play token of `digest` (live
    /// now), when this instance keeps the assignment's newest row; `None` when nothing was
    /// written ([`Play::commit_unchecked`]): the caller checks the token, then
    /// [`PlayService::commit_turn`].
    pub async fn commit_unchecked(
        &self,
        turn: &Turn,
        digest: &str,
    ) -> Result<Option<Receipt>, ServiceError> {
        let live = LiveToken {
            digest,
            now: self.clock.now_millis(),
        };
        Ok(self
            .store
            .commit_unchecked(live, turn.assignment_id, &turn.decide)
            .await?)
    }

    /// `finish_play_session`: completes the session once; identical retries replay.
    /// Its statements run on `held` (the connection the token was checked on) or the pool.
    pub async fn finish(
        &self,
        assignment_id: Uuid,
        args: FinishArgs,
        held: Option<Held>,
    ) -> Result<Applied, ServiceError> {
        args.validate()?;
        let hash = args.normalized_hash();
        let now = self.clock.now_millis();
        let operation_id = args.operation_id;
        Ok(self
            .store
            .apply_held(
                held,
                None,
                assignment_id,
                operation_id,
                Load::PENDING,
                Box::new(move |state| play::decide_finish(state, &args, &hash, now)),
            )
            .await?)
    }
}

/// The receipt's stored result (the answer the domain decided) with the `replayed` flag of
/// this call: what both doors answer for an operation.
pub fn receipt_result(applied: Applied) -> Value {
    let (receipt, replayed) = match applied {
        Applied::Committed(r) => (r, false),
        Applied::Replayed(r) => (r, true),
    };
    let mut result = receipt.result;
    if let Some(obj) = result.as_object_mut() {
        obj.insert("replayed".into(), Value::Bool(replayed));
    }
    result
}
