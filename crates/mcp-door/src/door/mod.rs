//! The door: `(path, Authenticator, Catalog, Admission, Presenter)` turned into an axum
//! `Router` that runs the request path of ARCHITECTURE.md in order — pre-auth gate,
//! authentication (headers only), admission, body (time and size), framing, dispatch; a
//! principal answered provisionally is confirmed after framing and again before the answer.
//! Every POST stands alone (stateless Streamable HTTP, no session id): one JSON body, or for a
//! tool call that reports progress to a client that asked for it, one event stream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::response::Response;
use axum::routing::any;
use http::{HeaderName, Method, StatusCode, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rmcp::model::Implementation;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::admission::{Admission, AdmissionError, Permit, PreAuthGate};
use crate::audit::{AuditRecord, AuditSink, TracingAudit};
use crate::auth::{AuthError, AuthRequest, Authenticator, Principal};
use crate::catalog::{CallContext, Catalog, Violation};
use crate::framing::{self, JsonLimits, Message};
use crate::gate::{GateRequest, GateStage, MethodGate};
use crate::hooks::{CompletionProvider, PromptProvider, ResourceProvider};
use crate::jsonrpc;
use crate::metrics::Metrics;
use crate::outcome::{CallOutcome, Extensions};

mod answer;
mod call;
mod discover;
mod dispatch;
mod era;
mod mrtr;
mod params;
mod reply;
mod sse;
mod stream;
pub mod version;

pub use discover::CacheHint;
use era::REMOVED_IN_STATELESS;
pub use era::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
};
use reply::{Reply, Sent, finish, framing_error, method_not_found, too_large};
pub use sse::CLIENT_CLOSED;

/// Protocol revisions the door speaks, oldest first: the handshake revisions `initialize`
/// negotiates and the stateless revision 2026-07-28 (see [`version`]).
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
const UNREADABLE_BODY_HINT: &str =
    "Send the whole body as one JSON-RPC 2.0 request object and retry.";
const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Transport limits of a door.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoorConfig {
    /// Largest accepted body in bytes; one more is 413.
    pub max_body_bytes: usize,
    /// The whole body must arrive within this time after admission, else 408.
    pub body_timeout: Duration,
    /// A tool call must finish within this time, else 504.
    pub tool_deadline: Duration,
    pub json: JsonLimits,
}

impl Default for DoorConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 307_200,
            body_timeout: Duration::from_secs(10),
            tool_deadline: Duration::from_secs(25),
            json: JsonLimits::default(),
        }
    }
}

/// How a product presents itself and renders the failures that are its to word.
pub trait Presenter: Send + Sync + 'static {
    /// `serverInfo` for this principal; `fingerprint` covers the tools its kind sees.
    fn server_info(&self, principal: &Principal, fingerprint: &str) -> Implementation;
    /// `instructions` of `initialize`.
    fn instructions(&self, principal: &Principal) -> Option<String>;
    /// `_meta` of `initialize`, if the product adds one. Superseded by
    /// [`Presenter::server_meta`], whose default answers this.
    fn initialize_meta(&self, _principal: &Principal) -> Option<Map<String, Value>> {
        None
    }
    /// The product's own `_meta` keys about the server and this principal: the `_meta` of
    /// `initialize` (handshake revisions) and, beside `io.modelcontextprotocol/serverInfo`, of
    /// `server/discover` (2026-07-28). Default: [`Presenter::initialize_meta`].
    fn server_meta(&self, principal: &Principal) -> Option<Map<String, Value>> {
        self.initialize_meta(principal)
    }
    /// Caching hints of a cacheable 2026-07-28 result (`server/discover`, the lists,
    /// `resources/read`). Default: `ttlMs: 0`, `cacheScope: "private"`.
    fn cache_hint(&self, _principal: &Principal, _method: &str) -> CacheHint {
        CacheHint::default()
    }
    /// The tool result for arguments that fail the input schema, with its error code (the
    /// audit's and metrics' label; see [`CallOutcome::failed`]).
    fn invalid_arguments(&self, tool: &str, violations: &[Violation]) -> CallOutcome;
    /// [`Presenter::invalid_arguments`] with the call's context (its request id, principal and
    /// the gate's extensions), for products whose error bodies carry them. The door calls
    /// this one.
    fn invalid_arguments_in(
        &self,
        _ctx: &CallContext,
        tool: &str,
        violations: &[Violation],
    ) -> CallOutcome {
        self.invalid_arguments(tool, violations)
    }
    /// `capabilities` of `initialize`, given the door's own (tools, plus resources and prompts
    /// when their providers are set); a product may adjust flags such as `listChanged`.
    fn initialize_capabilities(&self, _principal: &Principal, capabilities: Value) -> Value {
        capabilities
    }
    /// Message and `data` of the −32602 answer for a tool name no declaration has.
    fn unknown_tool(&self, tool: &str, _kind: &str) -> (String, Option<Value>) {
        (format!("Unknown tool: {tool}"), None)
    }
    /// Message and `data` of the HTTP 403 / −32003 answer for a tool outside the granted
    /// scopes. The `WWW-Authenticate` challenge stays the authenticator's.
    fn scope_refused(&self, tool: &str, required: &str, _granted: &[String]) -> (String, Value) {
        (
            format!("Insufficient scope: {tool} needs {required}"),
            json!({"required_scope": required}),
        )
    }
    /// Argument names a call to `tool` by a principal of `kind` may send although its input
    /// schema does not declare them: the door removes them before validation and lists the
    /// ones it removed in [`CallContext::ignored_arguments`], so the product can say so.
    /// Every other undeclared argument is still refused. Default: none.
    fn lenient_arguments(&self, _tool: &str, _kind: &str) -> &[&str] {
        &[]
    }
    /// Message and `data` of the −32601 answer for a tool hidden from this kind.
    fn hidden_tool(&self, tool: &str, kind: &str) -> (String, Value) {
        (
            format!("Tool {tool} is not available to this caller"),
            json!({"kind": kind, "hint": "tools/list shows the tools this credential can call"}),
        )
    }
    /// HTTP status of every −32603 answer (a failure outside any tool's own result). The body
    /// is always the same: a message naming the request id and `data: {request_id}`, never
    /// internals. Default 200; a product whose contract says otherwise (e.g. 500) overrides it.
    fn internal_error_status(&self) -> StatusCode {
        StatusCode::OK
    }
}

struct Inner {
    path: String,
    auth: Arc<dyn Authenticator>,
    catalog: Arc<Catalog>,
    admission: Arc<dyn Admission>,
    pre_auth: PreAuthGate,
    presenter: Arc<dyn Presenter>,
    config: DoorConfig,
    resources: Option<Arc<dyn ResourceProvider>>,
    prompts: Option<Arc<dyn PromptProvider>>,
    completions: Option<Arc<dyn CompletionProvider>>,
    request_state_key: Option<Vec<u8>>,
    audit: Arc<dyn AuditSink>,
    gate: Option<Arc<dyn MethodGate>>,
    metrics: Option<Arc<Metrics>>,
    edge: crate::edge::DoorEdge,
}

/// One authenticated MCP endpoint.
pub struct Door {
    inner: Inner,
}

impl Door {
    /// A door at `path` (an axum path; `/a/{public_id}/mcp` style captures are allowed).
    pub fn new(
        path: &str,
        auth: Arc<dyn Authenticator>,
        catalog: Arc<Catalog>,
        admission: Arc<dyn Admission>,
        presenter: Arc<dyn Presenter>,
    ) -> Self {
        Self {
            inner: Inner {
                path: path.to_owned(),
                auth,
                catalog,
                admission,
                pre_auth: PreAuthGate::new(64),
                presenter,
                config: DoorConfig::default(),
                resources: None,
                prompts: None,
                completions: None,
                request_state_key: None,
                audit: Arc::new(TracingAudit),
                gate: None,
                metrics: None,
                edge: crate::edge::DoorEdge::default(),
            },
        }
    }

    /// The door's edge rules: which `Origin` and `Host` it accepts, its CORS preflights and
    /// the staged close of a body it leaves unread ([`crate::edge`]).
    pub fn with_edge(mut self, edge: crate::edge::DoorEdge) -> Self {
        self.inner.edge = edge;
        self
    }

    pub fn with_config(mut self, config: DoorConfig) -> Self {
        self.inner.config = config;
        self
    }

    /// Shares a pre-auth gate (e.g. one per instance across doors).
    pub fn with_pre_auth(mut self, gate: PreAuthGate) -> Self {
        self.inner.pre_auth = gate;
        self
    }

    pub fn with_resources(mut self, provider: Arc<dyn ResourceProvider>) -> Self {
        self.inner.resources = Some(provider);
        self
    }

    pub fn with_prompts(mut self, provider: Arc<dyn PromptProvider>) -> Self {
        self.inner.prompts = Some(provider);
        self
    }

    /// Answers `completion/complete` with `provider` and declares `completions`.
    pub fn with_completions(mut self, provider: Arc<dyn CompletionProvider>) -> Self {
        self.inner.completions = Some(provider);
        self
    }

    /// The HMAC-SHA256 key sealing the `requestState` of 2026-07-28 `input_required` answers
    /// (at least 32 random bytes; every instance behind one URL needs the same key). Without
    /// one, an answer with state is −32603 and any `requestState` sent is −32602.
    pub fn with_request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.inner.request_state_key = Some(key.into());
        self
    }

    pub fn with_audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.inner.audit = sink;
        self
    }

    /// Consults `gate` after framing (every request) and before argument validation (every
    /// resolved `tools/call`); see [`MethodGate`].
    pub fn with_method_gate(mut self, gate: Arc<dyn MethodGate>) -> Self {
        self.inner.gate = Some(gate);
        self
    }

    /// Counts every request and admission refusal of this door in `metrics` (share one
    /// [`Metrics`] across a process's doors).
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.inner.metrics = Some(metrics);
        self
    }

    /// The router serving this door. Merge several doors' routers into one app.
    pub fn router<S: Clone + Send + Sync + 'static>(self) -> Router<S> {
        let path = self.inner.path.clone();
        let edge = self.inner.edge.clone();
        let router = Router::new()
            .route(&path, any(handle))
            .with_state(Arc::new(self.inner));
        crate::edge::door_layers(router, edge)
    }
}

async fn handle(State(inner): State<Arc<Inner>>, request: Request) -> Response {
    let started = Instant::now();
    let request_id = Uuid::new_v4();
    let mut record = AuditRecord {
        request_id,
        door: inner.path.clone(),
        principal: None,
        principal_kind: None,
        subject: None,
        method: None,
        tool: None,
        arguments: None,
        http_status: 200,
        error: None,
        duration_ms: 0,
        response_bytes: 0,
        extensions: Extensions::new(),
    };
    let (reply, permit) = if request.method() == Method::POST {
        process(&inner, request, request_id, &mut record).await
    } else {
        (not_post(&inner, request, &mut record).await, None)
    };
    if record.error.is_none() {
        record.error = reply.error.clone();
    }
    let (response, sent) = finish(reply, request_id, permit);
    record.http_status = response.status().as_u16();
    match sent {
        Sent::Whole(bytes) => {
            record.response_bytes = bytes;
            inner.close(record, started);
        }
        // The record of a streamed call closes when its stream ends, not now.
        Sent::Streaming { end, body } => {
            let inner = Arc::clone(&inner);
            tokio::spawn(async move {
                let (end, body) = tokio::join!(end, body);
                let label = end.as_ref().ok().and_then(|e| e.label.clone());
                match body {
                    Ok(body) => {
                        record.response_bytes = body.bytes;
                        if record.error.is_none() {
                            record.error = body.label(label);
                        }
                    }
                    Err(_) => {
                        record
                            .error
                            .get_or_insert_with(|| "stream_aborted".to_owned());
                    }
                }
                if let Ok(end) = end {
                    record.extensions.extend(end.extensions);
                }
                inner.close(record, started);
            });
        }
    }
    response
}

impl Inner {
    /// Completes `record` (duration since `started`) and hands it to metrics and the audit.
    fn close(&self, mut record: AuditRecord, started: Instant) {
        record.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Some(metrics) = &self.metrics {
            let known = record
                .tool
                .as_deref()
                .is_some_and(|t| self.catalog.get(t).is_some());
            metrics.observe(&record, known);
        }
        self.audit.record(record);
    }

    /// The answer to an admission refusal, counted.
    fn refuse(&self, e: &AdmissionError) -> Reply {
        if let Some(metrics) = &self.metrics {
            let reason = match e {
                AdmissionError::Limited { reason, .. } => reason,
                AdmissionError::Unavailable(_) => "admission backend unavailable",
            };
            metrics.refused(&self.path, reason);
        }
        Reply::admission(e)
    }
}

/// Steps 1 and 2 of every request, whatever its method: the pre-auth gate, held only while
/// authenticating, then the credential from the headers alone (a provisional principal is
/// confirmed after framing and before the answer: `Authenticator::confirm`). The principal is
/// written into `record`; a refusal is the answer.
async fn authenticated(
    inner: &Inner,
    parts: &http::request::Parts,
    record: &mut AuditRecord,
) -> Result<Arc<Principal>, Reply> {
    let _pre = inner.pre_auth.try_enter().map_err(|e| inner.refuse(&e))?;
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let auth_request = AuthRequest {
        headers: &parts.headers,
        path: parts.uri.path(),
        peer,
    };
    let principal = match inner.auth.authenticate(&auth_request).await {
        Ok(p) => Arc::new(p),
        Err(e) => return Err(unauthenticated(inner, &e, parts)),
    };
    record.principal = Some(Arc::clone(&principal));
    record.principal_kind = Some(principal.kind.clone());
    record.subject = Some(principal.subject.clone());
    Ok(principal)
}

/// A method other than POST. A request without a valid credential is refused as a POST would
/// be (401 with the challenge, or 403 at the wrong door), so a client that probes the door
/// with GET learns that it must sign in and where; a signed-in one is told 405, `Allow: POST`
/// (stateless: there is no stream to open and no session to end). Nothing is admitted or
/// read from the body; a provisional principal is confirmed first.
async fn not_post(inner: &Inner, request: Request, record: &mut AuditRecord) -> Reply {
    let (parts, _) = request.into_parts();
    let principal = match authenticated(inner, &parts, record).await {
        Ok(principal) => principal,
        Err(refused) => return refused,
    };
    if let Err(refused) = inner.auth.confirm(&principal).await {
        return refused_late(inner, &refused, &parts, record);
    }
    Reply {
        status: StatusCode::METHOD_NOT_ALLOWED,
        body: None,
        headers: vec![(header::ALLOW, "POST".into())],
        error: Some("405".into()),
    }
}

async fn process(
    inner: &Arc<Inner>,
    request: Request,
    request_id: Uuid,
    record: &mut AuditRecord,
) -> (Reply, Option<Permit>) {
    let (parts, body) = request.into_parts();
    let principal = match authenticated(inner, &parts, record).await {
        Ok(principal) => principal,
        Err(refused) => return (refused, None),
    };

    // 3. per-credential admission; the permit rides the response body and is released when
    // the response is complete
    let permit = match inner.admission.admit(&principal.credential).await {
        Ok(p) => p,
        Err(e) => {
            if let Err(refused) = inner.auth.confirm(&principal).await {
                return (refused_late(inner, &refused, &parts, record), None);
            }
            return (inner.refuse(&e), None);
        }
    };
    let reply = admitted(
        inner,
        &parts,
        body,
        Arc::clone(&principal),
        request_id,
        record,
    )
    .await;
    // a provisional principal is confirmed before anything is answered
    match inner.auth.confirm(&principal).await {
        Ok(()) => (reply, Some(permit)),
        Err(refused) => (refused_late(inner, &refused, &parts, record), Some(permit)),
    }
}

/// Whether `message` calls a tool declared [`crate::ToolDecl::confirming_caller`] without
/// asking for progress (a streamed answer would start before its handler's statement could
/// refuse the caller), on a door without a method gate (the gate meters a call before its
/// handler runs, so a caller the handler would refuse must be refused before the gate).
fn confirmed_by_handler(inner: &Inner, message: &Message) -> bool {
    if inner.gate.is_some() {
        return false;
    }
    let Message::Request {
        method,
        params: Some(params),
        ..
    } = message
    else {
        return false;
    };
    method == "tools/call"
        && params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| inner.catalog.get(name))
            .is_some_and(|decl| decl.confirms_caller)
        && matches!(crate::progress::token(params), Ok(None))
}

/// The answer to a request whose credential was refused (`authenticate` or `confirm`).
fn unauthenticated(inner: &Inner, e: &AuthError, parts: &http::request::Parts) -> Reply {
    let null = Value::Null;
    match e {
        AuthError::Missing | AuthError::Invalid(_) => {
            let message = inner.auth.unauthorized_message(e);
            Reply::status(
                StatusCode::UNAUTHORIZED,
                &null,
                jsonrpc::SERVER_ERROR,
                &message,
            )
            .header(
                header::WWW_AUTHENTICATE,
                inner.auth.challenge_at(e, parts.uri.path()),
            )
        }
        AuthError::Forbidden { code, message } => Reply {
            status: StatusCode::FORBIDDEN,
            body: Some(
                jsonrpc::error(
                    &null,
                    jsonrpc::INSUFFICIENT_SCOPE,
                    message,
                    Some(json!({"code": code})),
                )
                .into(),
            ),
            headers: vec![(
                header::WWW_AUTHENTICATE,
                inner.auth.challenge_at(e, parts.uri.path()),
            )],
            error: Some(code.clone()),
        },
        AuthError::Unavailable => Reply::status(
            StatusCode::SERVICE_UNAVAILABLE,
            &null,
            jsonrpc::SERVER_ERROR,
            "Service unavailable: credential store unreachable",
        )
        .header(header::RETRY_AFTER, "1".into()),
    }
}

/// [`unauthenticated`] for a provisional principal refused by `confirm`: the record forgets
/// what the request was (caller, method, tool), as for a refusal from `authenticate`.
fn refused_late(
    inner: &Inner,
    e: &AuthError,
    parts: &http::request::Parts,
    record: &mut AuditRecord,
) -> Reply {
    record.principal = None;
    record.principal_kind = None;
    record.subject = None;
    record.method = None;
    record.tool = None;
    record.arguments = None;
    record.error = None;
    unauthenticated(inner, e, parts)
}

/// Steps 4–6 for an admitted request. A provisional principal is confirmed after framing,
/// before anything runs for it, unless the request calls a tool that confirms its caller
/// itself ([`confirmed_by_handler`]); refused, the request ends there (and `process`, which
/// confirms again, answers the refusal).
async fn admitted(
    inner: &Arc<Inner>,
    parts: &http::request::Parts,
    body: axum::body::Body,
    principal: Arc<Principal>,
    request_id: Uuid,
    record: &mut AuditRecord,
) -> Reply {
    let null = Value::Null;

    // 4. the body, within the time and size limits
    let max = inner.config.max_body_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return too_large(max);
    }
    let bytes =
        match tokio::time::timeout(inner.config.body_timeout, Limited::new(body, max).collect())
            .await
        {
            Err(_) => {
                return Reply::status(
                    StatusCode::REQUEST_TIMEOUT,
                    &null,
                    jsonrpc::SERVER_ERROR,
                    "Request body not received in time",
                );
            }
            Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(max),
            Ok(Err(_)) => {
                return Reply::status_data(
                    StatusCode::BAD_REQUEST,
                    jsonrpc::PARSE_ERROR,
                    "Request body could not be read",
                    json!({"hint": UNREADABLE_BODY_HINT}),
                );
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };

    // 5. framing
    let message = match framing::parse(&bytes, inner.config.json) {
        Ok(m) => m,
        Err(e) => return framing_error(&e),
    };

    if !confirmed_by_handler(inner, &message)
        && let Err(refused) = inner.auth.confirm(&principal).await
    {
        return unauthenticated(inner, &refused, parts);
    }

    // 6. dispatch
    let (id, method, params) = match message {
        Message::Notification { method } => {
            record.method = Some(method);
            return Reply {
                status: StatusCode::ACCEPTED,
                body: None,
                headers: Vec::new(),
                error: None,
            };
        }
        Message::Response => {
            return Reply {
                status: StatusCode::ACCEPTED,
                body: None,
                headers: Vec::new(),
                error: None,
            };
        }
        Message::Request { id, method, params } => (id, method, params.unwrap_or_default()),
    };
    record.method = Some(method.clone());
    // the era: a handshake revision, or the stateless revision's checked envelope
    let route = match era::route(&parts.headers, &id, &method, &params) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    if let Some(gate) = &inner.gate {
        let tool = if method == "tools/call" {
            params.get("name").and_then(Value::as_str)
        } else {
            None
        };
        let mut request = GateRequest {
            stage: GateStage::Framed,
            principal: &principal,
            method: &method,
            tool,
            request_id,
            extensions: &mut record.extensions,
        };
        if let Err(refusal) = gate.check(&mut request).await {
            return Reply::gate(&id, refusal);
        }
    }
    let call = dispatch::Call {
        principal,
        request_id,
        id,
        method,
        params,
        route,
    };
    dispatch::dispatch(inner, call, &parts.headers, record).await
}
