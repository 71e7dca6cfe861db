//! The play service: what each player tool does, in terms of the domain rules and the store.
//! Transport-free: the player door maps its results and errors onto MCP.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_door::Clock;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::domain::play::{self, DomainError, FinishArgs, TurnArgs, limits};
use crate::domain::text::excerpt;
use crate::domain::{Assignment, JournalEvent, Node, PlayStatus, token};
use crate::i18n;
use crate::store::{Applied, ApplyError, Load, SharedStore, StoreError};

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

/// Scenario nodes by (scenario, source version).
type NodeCache = Mutex<HashMap<(Uuid, i64), Arc<Vec<Node>>>>;

/// Shared state of the play service.
pub struct PlayService {
    pub store: SharedStore,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn Random>,
    /// Nodes are frozen per (scenario, source version), so they are cached forever.
    nodes: NodeCache,
}

fn event_json(e: &JournalEvent) -> Value {
    let mut v = json!({"version": e.version, "kind": e.kind.as_str(), "created_at": e.created_at});
    for (key, field) in [
        ("player_action", &e.player_action),
        ("narration", &e.narration),
        ("summary", &e.summary),
        ("scene", &e.scene),
    ] {
        if let Some(text) = field {
            v[key] = Value::String(text.clone());
        }
    }
    v
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

    async fn nodes(&self, scenario_id: Uuid, version: i64) -> Result<Arc<Vec<Node>>, ServiceError> {
        if let Some(n) = self
            .nodes
            .lock()
            .ok()
            .and_then(|m| m.get(&(scenario_id, version)).cloned())
        {
            return Ok(n);
        }
        let nodes = Arc::new(self.store.nodes(scenario_id, version).await?);
        if let Ok(mut m) = self.nodes.lock() {
            m.insert((scenario_id, version), Arc::clone(&nodes));
        }
        Ok(nodes)
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

    /// `get_play_context`: everything the facilitator needs, player-visible only.
    pub async fn context(&self, assignment_id: Uuid) -> Result<Value, ServiceError> {
        let snapshot = self
            .store
            .context_snapshot(
                assignment_id,
                limits::CONTEXT_EVENTS,
                limits::CONTEXT_CONSEQUENCES,
            )
            .await?
            .ok_or(ServiceError::Domain(DomainError::NotFound))?;
        let a = snapshot.assignment;
        let events = snapshot.events;
        let consequences = snapshot.consequences;
        let nodes = self.nodes(a.scenario_id, a.source_version).await?;
        let materials: Vec<Value> = a
            .published_node_ids
            .iter()
            .filter_map(|id| nodes.iter().find(|n| &n.id == id && n.published))
            .map(|n| json!({"id": n.id, "kind": n.kind, "title": n.title, "text": n.public_text}))
            .collect();
        let recap = match a.status {
            PlayStatus::Completed => a.summary.clone(),
            PlayStatus::Active => events.iter().rev().find_map(|e| e.narration.clone()),
        };
        Ok(json!({
            "session_id": a.id.to_string(),
            "assignment": {
                "id": a.id.to_string(),
                "scenario": {"id": a.scenario_id.to_string(), "title": snapshot.scenario_title.unwrap_or_default()},
                "source_version": a.source_version,
                "mode": a.mode.as_str(),
                "language": a.language.as_str(),
                "character": a.character,
                "brief": a.brief,
                "instructions": a.instructions,
                "boundaries": a.boundaries,
                "return_condition": a.return_condition,
                "auto_approve": a.auto_approve,
                "status": a.status.as_str(),
                "current_scene": a.current_scene,
                "created_at": a.created_at,
            },
            "agent_contract": i18n::agent_contract(a.language),
            "materials": materials,
            "memory_markdown": a.memory,
            "version": a.version,
            "recent_events": events.iter().map(event_json).collect::<Vec<_>>(),
            "consequences": consequences.iter().map(|c| json!({
                "id": c.id.to_string(),
                "version": c.version,
                "category": c.category.as_str(),
                "description": c.description,
                "status": c.status.as_str(),
                "gm_note": c.gm_note,
            })).collect::<Vec<_>>(),
            "recap": recap,
        }))
    }

    /// `read_play_journal`: one page of the player's journal.
    pub async fn journal(
        &self,
        assignment_id: Uuid,
        offset: i64,
        limit: i64,
    ) -> Result<Value, ServiceError> {
        self.assignment(assignment_id).await?;
        let (total, entries) = self
            .store
            .journal_page(assignment_id, true, offset, limit)
            .await?;
        Ok(json!({
            "total": total,
            "offset": offset,
            "entries": entries.iter().map(event_json).collect::<Vec<_>>(),
        }))
    }

    /// `search_play_memory`: memory excerpt and up to ten journal excerpts, newest first.
    pub async fn search(&self, assignment_id: Uuid, query: &str) -> Result<Value, ServiceError> {
        let a = self.assignment(assignment_id).await?;
        let events = self.store.journal(assignment_id, true).await?;
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
                hits.push(json!({"version": e.version, "kind": e.kind.as_str(), "excerpt": ex}));
                if hits.len() == limits::SEARCH_HITS {
                    break;
                }
            }
        }
        Ok(json!({
            "query": query,
            "version": a.version,
            "memory_excerpt": memory_excerpt,
            "memory_matched": memory_matched,
            "journal_excerpts": hits,
        }))
    }

    /// `commit_play_turn`: one atomic, idempotent turn. Returns the receipt's result and the
    /// replay flag.
    pub async fn commit_turn(
        &self,
        assignment_id: Uuid,
        source: (Uuid, i64),
        args: TurnArgs,
    ) -> Result<Value, ServiceError> {
        args.validate()?;
        // The nodes of the assignment's (immutable) source version come from the cache; the
        // scene is checked against the row locked inside the transaction, so a turn reads
        // the assignment once.
        let nodes = self.nodes(source.0, source.1).await?;
        let hash = args.normalized_hash();
        let ids: Vec<Uuid> = args
            .consequences
            .iter()
            .map(|_| self.random.uuid())
            .collect();
        let now = self.clock.now_millis();
        let operation_id = args.operation_id;
        let applied = self
            .store
            .apply(
                assignment_id,
                operation_id,
                Load::NOTHING,
                Box::new(move |state| {
                    let a = state.assignment;
                    let scene_ok = (a.scenario_id, a.source_version) == source
                        && play::is_playable_scene(a, &nodes, &args.current_scene);
                    play::decide_turn(state, &args, &hash, scene_ok, &ids, now)
                }),
            )
            .await?;
        Ok(receipt_result(applied))
    }

    /// `finish_play_session`: completes the session once; identical retries replay.
    pub async fn finish(
        &self,
        assignment_id: Uuid,
        args: FinishArgs,
    ) -> Result<Value, ServiceError> {
        args.validate()?;
        let hash = args.normalized_hash();
        let now = self.clock.now_millis();
        let operation_id = args.operation_id;
        let applied = self
            .store
            .apply(
                assignment_id,
                operation_id,
                Load::PENDING,
                Box::new(move |state| play::decide_finish(state, &args, &hash, now)),
            )
            .await?;
        Ok(receipt_result(applied))
    }
}

/// The receipt's stored result with the `replayed` flag of this call.
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
