//! The player door `POST /play/mcp`: play-token authentication (checked by a statement, or for
//! a token seen live, provisionally and confirmed by the request's own statement: see
//! [`PlayTokens`]), the five player tools, how their answers render as JSON (the reads' kept
//! per version in [`ReadCache`]) and how their failures read (`<status>: <message>` tool
//! results). What each tool does is the play service's.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_door::model::{Implementation, ToolAnnotations};
use mcp_door::{
    AuthError, AuthRequest, Authenticator, BearerRealm, CallContext, CallOutcome, Catalog,
    CatalogError, InvalidReason, PreparedResult, Presenter, Principal, ToolDecl, ToolFailure,
    Violation,
};
use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;
use uuid::Uuid;

use crate::domain::PlayTokenGrant;
use crate::domain::play::{FinishArgs, TurnArgs, limits};
use crate::domain::time::iso8601;
use crate::domain::{JournalEvent, Language, token};
use crate::i18n;
use crate::mcp::answers::{Read, ReadCache, ReadKey};
use crate::mcp::door;
use crate::mcp::schema;
use crate::service::{
    JournalPage, MemorySearch, PlayContext, PlayService, ServiceError, receipt_result,
};
use crate::store::{Applied, Held};

/// The principal kind of a play token.
pub const PLAYER_KIND: &str = "player";

/// What a play token grants: one assignment, for its player. Its [`TokenFacts`] never change
/// for a token; whether the token is still live, and the assignment's version, are its
/// [`Checked`] check's.
pub struct PlayGrant {
    pub facts: TokenFacts,
    /// The token's digest, which a turn's write checks again ([`PlayService::commit_unchecked`]).
    digest: String,
    /// The token check: made with the grant when this instance had not seen the token live
    /// before, else made by the first statement that needs it (see [`PlayTokens`]).
    check: OnceCell<Result<Checked, AuthError>>,
    tokens: Arc<PlayTokens>,
}

/// A play-token check that passed: the assignment's version it read (in the same statement)
/// and the connection it ran on.
#[derive(Debug, Clone)]
pub struct Checked {
    pub version: i64,
    /// The connection the token was checked on, for the tool's own statements.
    pub lease: Lease,
}

impl PlayGrant {
    /// The token check's outcome, made now if it was deferred: once per request, the same
    /// answer each time.
    pub async fn checked(&self) -> Result<&Checked, AuthError> {
        self.check
            .get_or_init(|| async {
                let (grant, held) = self.tokens.check(&self.digest).await?;
                Ok(Checked {
                    version: grant.version,
                    lease: Lease::new(held),
                })
            })
            .await
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the token check is made (by the authentication, a statement or a write).
    pub fn is_checked(&self) -> bool {
        self.check.initialized()
    }

    /// Records that a turn's write confirmed the token in its own guard, at `version`.
    fn confirmed_by_write(&self, version: i64) {
        // Only a grant not checked yet writes this way, and a request runs one tool.
        let _ = self.check.set(Ok(Checked {
            version,
            lease: Lease::default(),
        }));
    }
}

/// Play-token checks, and the tokens this instance has seen live. A token seen live is
/// authenticated provisionally by its next request: from the facts that never change for it,
/// without a statement, and confirmed before that request gets any answer, by the statement
/// of its tool (a read's token check, a turn's write) or by the door
/// ([`mcp_door::Authenticator::confirm`]). A token is forgotten when a check refuses it, and
/// one whose expiry has passed is checked as an unknown one is. Revocation and deactivation
/// still take effect on the next request: every request's answer waits for a check of its own.
pub struct PlayTokens {
    service: Arc<PlayService>,
    known: moka::sync::Cache<String, TokenFacts>,
}

/// How many tokens an instance remembers as seen live; one past it only costs a check at the
/// next request's authentication.
const KNOWN_TOKENS: u64 = 65_536;

/// What never changes for a play token: its assignment, that assignment's player, language and
/// source (the only `UPDATE` of an assignment is play's, which sets none of them), and when the
/// token expires.
#[derive(Debug, Clone)]
pub struct TokenFacts {
    pub assignment_id: Uuid,
    pub player_id: Uuid,
    pub language: Language,
    /// The scenario and source version the assignment plays.
    pub source: (Uuid, i64),
    pub expires_at: i64,
}

impl TokenFacts {
    fn of(grant: &PlayTokenGrant) -> Self {
        Self {
            assignment_id: grant.assignment_id,
            player_id: grant.player_id,
            language: grant.language,
            source: (grant.scenario_id, grant.source_version),
            expires_at: grant.expires_at,
        }
    }
}

impl PlayTokens {
    pub fn new(service: Arc<PlayService>) -> Arc<Self> {
        Arc::new(Self {
            service,
            known: moka::sync::Cache::new(KNOWN_TOKENS),
        })
    }

    /// The token check of `digest` (one statement: the token, its assignment's version, its
    /// player and GM), on the connection it returns; a token it refuses is forgotten. (The
    /// authentication remembers one it passes: a check that confirms a provisional grant
    /// finds it remembered already.)
    async fn check(&self, digest: &str) -> Result<(PlayTokenGrant, Option<Held>), AuthError> {
        let lookup = self.service.store.play_token_held(digest).await;
        let checked = door::found(
            lookup.map(|(grant, held)| grant.map(|g| (g, held))),
            "play token",
        )
        .and_then(|(grant, held)| {
            door::live(
                grant.revoked,
                grant.expires_at,
                self.service.clock.now_millis(),
            )?;
            if !grant.player_active || !grant.gm_active {
                return Err(AuthError::Invalid(InvalidReason::Inactive));
            }
            Ok((grant, held))
        });
        if checked.is_err() {
            self.known.invalidate(digest);
        }
        checked
    }
}

/// The player door's principal for a token of `digest` with its `facts`, and its check if it
/// is made.
fn play_principal(
    tokens: &Arc<PlayTokens>,
    digest: String,
    facts: TokenFacts,
    checked: Option<Checked>,
) -> Principal {
    Principal::new(
        PLAYER_KIND,
        facts.assignment_id.to_string(),
        format!("play:{}", &digest[..32]),
    )
    .with_ext(PlayGrant {
        facts,
        digest,
        check: OnceCell::new_with(checked.map(Ok)),
        tokens: Arc::clone(tokens),
    })
}

/// The pooled connection a request checked its play token on, handed to the tool it calls
/// (taken once) so that its statements run on it instead of a second connection (none when the
/// check was read in place, on SQLite). Whatever is not taken goes back to the pool when the
/// request ends. When the token was checked at authentication (its first request on this
/// instance) it is held while the body is read, which the door bounds by its receive timeout
/// and the token's concurrency limit; a provisional token's check comes after the body.
#[derive(Clone, Default)]
pub struct Lease(Arc<Mutex<Option<Held>>>);

impl Lease {
    fn new(held: Option<Held>) -> Self {
        Self(Arc::new(Mutex::new(held)))
    }

    /// The connection, if no one took it yet.
    pub fn take(&self) -> Option<Held> {
        self.0.lock().ok().and_then(|mut held| held.take())
    }
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lease")
    }
}

/// The realm of both doors' `WWW-Authenticate` challenges (named here too, where the player
/// door's wording is).
pub use crate::mcp::door::REALM;

/// What the player door's 401 says: the credential it needs (a play token, which the GM or
/// the player generates for one assignment), so a client without one does not go looking for
/// OAuth. Plain ASCII, as `error_description` must be.
pub fn play_realm() -> BearerRealm {
    BearerRealm::new(
        REALM,
        "This door needs a play token issued by the GM for one assignment, sent as \
         Authorization: Bearer sqp_...",
        "This door needs a play token issued by the GM for one assignment; the token sent is \
         unknown, expired or revoked, or is not a play token.",
    )
}

/// Accepts only live play tokens of active players and GMs: checked with a statement, or for
/// a token this instance has seen live, provisionally and confirmed before the answer (see
/// [`PlayTokens`]).
pub struct PlayAuthenticator {
    pub tokens: Arc<PlayTokens>,
    /// The 401's wording ([`play_realm`]).
    pub realm: BearerRealm,
}

#[async_trait]
impl Authenticator for PlayAuthenticator {
    async fn authenticate(&self, request: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let digest = door::presented_digest(request, token::is_play_token)?;
        let now = self.tokens.service.clock.now_millis();
        if let Some(known) = self
            .tokens
            .known
            .get(&digest)
            .filter(|k| k.expires_at > now)
        {
            return Ok(play_principal(&self.tokens, digest, known, None));
        }
        let (grant, held) = self.tokens.check(&digest).await?;
        let known = TokenFacts::of(&grant);
        self.tokens.known.insert(digest.clone(), known.clone());
        let checked = Checked {
            version: grant.version,
            lease: Lease::new(held),
        };
        Ok(play_principal(&self.tokens, digest, known, Some(checked)))
    }

    async fn confirm(&self, principal: &Principal) -> Result<(), AuthError> {
        match principal.ext::<PlayGrant>() {
            Some(grant) => grant.checked().await.map(|_| ()),
            None => Ok(()),
        }
    }

    fn challenge(&self, error: &AuthError) -> String {
        self.realm.challenge(error)
    }

    fn unauthorized_message(&self, error: &AuthError) -> String {
        self.realm.message(error)
    }
}

/// Identity and error wording of the player door.
pub struct PlayerPresenter;

impl Presenter for PlayerPresenter {
    fn server_info(&self, _principal: &Principal, fingerprint: &str) -> Implementation {
        door::server_info("sidequest", "Sidequest player door", fingerprint)
    }

    fn instructions(&self, principal: &Principal) -> Option<String> {
        let language = principal
            .ext::<PlayGrant>()
            .map_or(Language::En, |g| g.facts.language);
        Some(format!(
            "{}{}",
            i18n::agent_contract(language),
            i18n::tool_guide(language)
        ))
    }

    fn invalid_arguments(&self, _tool: &str, violations: &[Violation]) -> CallOutcome {
        door::invalid_arguments(violations)
    }
}

/// A tool's answer: the service's result rendered by `json` (serialized once, as
/// [`PreparedResult`]: the same bytes as [`mcp_door::tool_json`]'s result, without serializing
/// the value a second time for `structuredContent`), or its failure (a domain failure's status
/// handed over as the error code).
fn render<T>(
    outcome: Result<T, ServiceError>,
    json: fn(T) -> Value,
) -> Result<CallOutcome, ToolFailure> {
    match outcome {
        Ok(v) => {
            let prepared = PreparedResult::new(&json(v))
                .map_err(|e| ToolFailure::Internal(format!("rendering an answer: {e}")))?;
            Ok(CallOutcome::prepared(Arc::new(prepared)))
        }
        Err(ServiceError::Domain(d)) => Ok(door::domain_error_result(d.status(), &d.to_string())),
        Err(ServiceError::Unavailable(m)) => Err(ToolFailure::Unavailable(m)),
        Err(e) => Err(ToolFailure::Internal(e.to_string())),
    }
}

/// A read tool's answer: the one kept for (assignment, version, `read`) when the token check
/// read that version, else `load` on the request's connection, rendered once by `json`, kept
/// under the version its snapshot was read at (`version_of`) and sent.
async fn cached_read<T, Fut>(
    cache: &ReadCache,
    ctx: &CallContext,
    read: Read,
    load: impl FnOnce(Uuid, Option<Held>) -> Fut,
    json: fn(T) -> Value,
    version_of: fn(&T) -> i64,
) -> Result<CallOutcome, ToolFailure>
where
    Fut: std::future::Future<Output = Result<T, ServiceError>>,
{
    let grant = play_grant(ctx)?;
    let Ok(checked) = grant.checked().await else {
        return Ok(refused());
    };
    let held = checked.lease.take();
    let key = ReadKey {
        assignment: grant.facts.assignment_id,
        version: checked.version,
        read,
    };
    if let Some(kept) = cache.get(&key) {
        return Ok(CallOutcome::prepared(kept));
    }
    match load(grant.facts.assignment_id, held).await {
        Ok(answer) => {
            let version = version_of(&answer);
            let prepared = PreparedResult::new(&json(answer))
                .map_err(|e| ToolFailure::Internal(format!("rendering a read: {e}")))?;
            let prepared = Arc::new(prepared);
            cache.insert(ReadKey { version, ..key }, Arc::clone(&prepared));
            Ok(CallOutcome::prepared(prepared))
        }
        Err(e) => render(Err(e), json),
    }
}

fn event_json(e: &JournalEvent) -> Value {
    let mut v =
        json!({"version": e.version, "kind": e.kind.as_str(), "created_at": iso8601(e.created_at)});
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

/// `get_play_context`'s JSON.
fn context_json(c: PlayContext) -> Value {
    let a = &c.assignment;
    let materials: Vec<Value> = c
        .materials
        .iter()
        .map(|n| json!({"id": n.id, "kind": n.kind, "title": n.title, "text": n.public_text}))
        .collect();
    json!({
        "session_id": a.id.to_string(),
        "assignment": {
            "id": a.id.to_string(),
            "scenario": {"id": a.scenario_id.to_string(), "title": c.scenario_title},
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
            "created_at": iso8601(a.created_at),
        },
        "agent_contract": i18n::agent_contract(a.language),
        "materials": materials,
        "memory_markdown": a.memory,
        "version": a.version,
        "recent_events": c.events.iter().map(event_json).collect::<Vec<_>>(),
        "consequences": c.consequences.iter().map(|c| json!({
            "id": c.id.to_string(),
            "version": c.version,
            "category": c.category.as_str(),
            "description": c.description,
            "status": c.status.as_str(),
            "gm_note": c.gm_note,
        })).collect::<Vec<_>>(),
        "recap": c.recap,
    })
}

/// `read_play_journal`'s JSON.
fn journal_json(page: JournalPage) -> Value {
    json!({
        "total": page.total,
        "offset": page.offset,
        "entries": page.entries.iter().map(event_json).collect::<Vec<_>>(),
    })
}

/// `search_play_memory`'s JSON.
fn search_json(found: MemorySearch) -> Value {
    let hits: Vec<Value> = found
        .journal_excerpts
        .iter()
        .map(|h| json!({"version": h.version, "kind": h.kind.as_str(), "excerpt": h.excerpt}))
        .collect();
    json!({
        "query": found.query,
        "version": found.version,
        "memory_excerpt": found.memory_excerpt,
        "memory_matched": found.memory_matched,
        "journal_excerpts": hits,
    })
}

/// What a tool answers when its caller's token check refuses it: never sent, since the door
/// confirms the caller before it answers and sends that refusal (401) in its place.
fn refused() -> CallOutcome {
    door::domain_error_result(401, "play token refused")
}

fn play_grant(ctx: &CallContext) -> Result<&PlayGrant, ToolFailure> {
    ctx.principal
        .ext::<PlayGrant>()
        .ok_or_else(|| ToolFailure::Internal("player door principal without a play grant".into()))
}

fn parse<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<T, ServiceError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        ServiceError::Domain(crate::domain::play::DomainError::Invalid(vec![format!(
            "/: {e}"
        )]))
    })
}

const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

fn annotations(read_only: bool, idempotent: bool) -> ToolAnnotations {
    let mut a = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(false);
    a.idempotent_hint = Some(idempotent);
    a.open_world_hint = Some(false);
    a
}

/// `commit_play_turn`. A caller whose token is not checked yet (seen live before) gets its turn
/// decided on the newest row this instance wrote and written in one statement whose guard
/// also checks the token ([`PlayService::commit_unchecked`]): a commit confirms the caller.
/// Otherwise (no row kept, a refusal, a guard that failed, a store failure other than an
/// unavailable database, which answers 503 at once) the token is checked, and the turn applied
/// the usual way on that check's connection and version. A token the check refuses gets the
/// door's 401, never this answer.
async fn commit(
    s: &PlayService,
    ctx: &CallContext,
    args: Map<String, Value>,
) -> Result<CallOutcome, ToolFailure> {
    let grant = play_grant(ctx)?;
    let args = match parse::<TurnArgs>(args) {
        Ok(a) => a,
        Err(e) => return render(Err(e), receipt_result),
    };
    let deferred = !grant.is_checked();
    let mut held = None;
    if !deferred {
        let Ok(checked) = grant.checked().await else {
            return Ok(refused());
        };
        held = checked.lease.take();
    }
    let turn = match s
        .prepare_turn(
            grant.facts.assignment_id,
            grant.facts.source,
            args,
            held.as_mut(),
        )
        .await
    {
        Ok(turn) => turn,
        Err(e) => return render(Err(e), receipt_result),
    };
    if deferred {
        match s.commit_unchecked(&turn, &grant.digest).await {
            Ok(Some(receipt)) => {
                grant.confirmed_by_write(receipt.version);
                return render(Ok(Applied::Committed(receipt)), receipt_result);
            }
            // The database did not answer: a second statement would wait as long again. The
            // door confirms the caller before this 503 is sent.
            Err(e @ ServiceError::Unavailable(_)) => {
                return render(Err::<Applied, _>(e), receipt_result);
            }
            // No row kept, a guard that failed, another failure: checked and applied below.
            Ok(None) | Err(_) => {}
        }
    }
    let Ok(checked) = grant.checked().await else {
        return Ok(refused());
    };
    if deferred {
        held = checked.lease.take();
    }
    render(
        s.commit_turn(turn, held, Some(checked.version)).await,
        receipt_result,
    )
}

/// The five player tools; the reads' answers are kept in `cache`.
pub fn catalog(service: Arc<PlayService>, cache: ReadCache) -> Result<Catalog, CatalogError> {
    let s = Arc::clone(&service);
    let c = cache.clone();
    let context = ToolDecl::new_with_outcome(
        "get_play_context",
        "Get play context",
        "Read the assignment, facilitator contract (agent_contract), public materials of the published nodes, memory, \
current version, the last five journal events, up to twenty recent consequences with their GM status and note, and a recap. \
A read snapshot: another operation can make its version stale. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |ctx, _args| {
            let (s, c) = (Arc::clone(&s), c.clone());
            async move {
                let source = play_grant(&ctx)?.facts.source;
                cached_read(
                    &c,
                    &ctx,
                    Read::Context,
                    |id, held| s.context(id, source, held),
                    context_json,
                    |context| context.assignment.version,
                )
                .await
            }
        },
    )
    .with_output_schema(schema::play_context())
    .with_annotations(annotations(true, true));

    let s = Arc::clone(&service);
    let c = cache.clone();
    let journal = ToolDecl::new_with_outcome(
        "read_play_journal",
        "Read play journal",
        "Read the player journal ordered by committed version. Turns and the finish summary appear; GM-private notes and review \
events are omitted, so versions can have gaps. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
        json!({
            "type": "object",
            "properties": {
                "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "Entries to skip."},
                "limit": {"type": "integer", "minimum": 1, "maximum": limits::JOURNAL_PAGE_MAX, "default": limits::JOURNAL_PAGE_DEFAULT, "description": "Entries to return (1–20)."}
            },
            "additionalProperties": false
        }),
        move |ctx, args| {
            let (s, c) = (Arc::clone(&s), c.clone());
            async move {
                let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
                let limit = args.get("limit").and_then(Value::as_i64).unwrap_or(limits::JOURNAL_PAGE_DEFAULT);
                cached_read(
                    &c,
                    &ctx,
                    Read::Journal { offset, limit },
                    |id, held| s.journal(id, offset, limit, held),
                    journal_json,
                    |page| page.version,
                )
                .await
            }
        },
    )
    .with_output_schema(schema::play_journal())
    .with_annotations(annotations(true, true));

    let s = Arc::clone(&service);
    let c = cache;
    let search = ToolDecl::new_with_outcome(
        "search_play_memory",
        "Search play memory",
        "Case-insensitive search of the memory and the player journal. Returns the current version, a memory excerpt and up to \
ten matching journal excerpts, newest first.",
        json!({
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1, "maxLength": limits::QUERY_CHARS, "description": "Text to find (1–200 characters)."}},
            "required": ["query"],
            "additionalProperties": false
        }),
        move |ctx, args| {
            let (s, c) = (Arc::clone(&s), c.clone());
            async move {
                let query = args.get("query").and_then(Value::as_str).unwrap_or_default().to_owned();
                let asked = query.clone();
                cached_read(
                    &c,
                    &ctx,
                    Read::Search(query),
                    |id, held| async move { s.search(id, &asked, held).await },
                    search_json,
                    |found| found.version,
                )
                .await
            }
        },
    )
    .with_output_schema(schema::play_search())
    .with_annotations(annotations(true, true));

    let s = Arc::clone(&service);
    let commit = ToolDecl::new_with_outcome(
        "commit_play_turn",
        "Commit play turn",
        "Commit one turn atomically: the player's action, the narration, the full new memory (replaces the old one), the current \
published scene and up to ten proposed consequences (pending until the GM reviews them). Use a new operation_id per logical \
operation; an identical retry returns the original receipt with replayed: true.",
        json!({
            "type": "object",
            "properties": {
                "operation_id": {"type": "string", "pattern": UUID_PATTERN, "description": "A new UUID per logical operation."},
                "expected_version": {"type": "integer", "minimum": 1, "description": "The version this turn builds on."},
                "player_action": {"type": "string", "minLength": 1, "maxLength": limits::ACTION_CHARS},
                "narration": {"type": "string", "minLength": 1, "maxLength": limits::NARRATION_CHARS},
                "memory_markdown": {"type": "string", "maxLength": limits::MEMORY_CHARS, "description": "Replaces the current memory."},
                "current_scene": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Id of a published scene of this assignment."},
                "consequences": {
                    "type": "array",
                    "maxItems": limits::CONSEQUENCES,
                    "items": {
                        "type": "object",
                        "properties": {
                            "category": {"type": "string", "enum": ["resource", "relationship", "discovery", "narrative"]},
                            "description": {"type": "string", "minLength": 1, "maxLength": limits::DESCRIPTION_CHARS}
                        },
                        "required": ["category", "description"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["operation_id", "expected_version", "player_action", "narration", "memory_markdown", "current_scene"],
            "additionalProperties": false
        }),
        move |ctx, args| {
            let s = Arc::clone(&s);
            async move { commit(&s, &ctx, args).await }
        },
    )
    .with_output_schema(schema::turn_receipt())
    .with_annotations(annotations(false, true))
    .confirming_caller();

    let s = Arc::clone(&service);
    let finish = ToolDecl::new_with_outcome(
        "finish_play_session",
        "Finish play session",
        "Complete the session with a summary for the GM. Completion does not approve consequences; afterwards new turns fail and \
there is no reopen. An identical retry returns the original receipt with replayed: true.",
        json!({
            "type": "object",
            "properties": {
                "operation_id": {"type": "string", "pattern": UUID_PATTERN},
                "expected_version": {"type": "integer", "minimum": 1},
                "summary": {"type": "string", "minLength": 1, "maxLength": limits::SUMMARY_CHARS}
            },
            "required": ["operation_id", "expected_version", "summary"],
            "additionalProperties": false
        }),
        move |ctx, args| {
            let s = Arc::clone(&s);
            async move {
                let grant = play_grant(&ctx)?;
                let Ok(checked) = grant.checked().await else {
                    return Ok(refused());
                };
                let (id, held) = (grant.facts.assignment_id, checked.lease.take());
                match parse::<FinishArgs>(args) {
                    Ok(a) => render(s.finish(id, a, held).await, receipt_result),
                    Err(e) => render(Err(e), receipt_result),
                }
            }
        },
    )
    .with_output_schema(schema::finish_receipt())
    .with_annotations(annotations(false, true));

    Catalog::new(vec![context, journal, search, commit, finish])
}
