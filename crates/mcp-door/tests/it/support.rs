//! The toy product the tests drive the door with (an authenticator, a presenter and a catalog),
//! plus request helpers. Every response read through [`send`] is checked for its request id.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode, header};
use http_body_util::BodyExt;
use mcp_door::framing::JsonLimits;
use mcp_door::model::{CallToolResult, ContentBlock, Implementation};
use mcp_door::{
    Admission, AuditSink, AuthError, AuthRequest, Authenticator, CallContext, CallOutcome, Catalog,
    Door, DoorConfig, FakeClock, InvalidReason, Limits, LocalAdmission, PreAuthGate, Presenter,
    Principal, ResourceProvider, RpcFailure, ToolDecl, ToolFailure, Violation, bearer_token,
    tool_json,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tower::ServiceExt;

pub const PATH: &str = "/mcp";
/// The internal details the failing tools carry; they must never reach a client.
pub const FLAKY_DETAIL: &str = "postgres at 10.0.0.7:5432 refused the connection";
pub const BOOM_DETAIL: &str = "invariant broken: ledger hunter2 negative";

/// The transport limits the tests run with: short enough to observe timeouts quickly.
pub fn small_config() -> DoorConfig {
    DoorConfig {
        max_body_bytes: 307_200,
        body_timeout: Duration::from_millis(300),
        tool_deadline: Duration::from_millis(200),
        json: JsonLimits::default(),
    }
}

/// Generous limits, so tests that are not about admission never hit it.
pub fn roomy_limits() -> Limits {
    Limits {
        rate_per_window: 10_000,
        credential_concurrency: 100,
        global_concurrency: 100,
        ..Limits::default()
    }
}

/// Accepts `Bearer good-<kind>` (optionally `good-<kind>.<suffix>` for a second credential of
/// the same kind); `Bearer down` is a credential store outage; `Bearer elsewhere` is valid
/// but not for this door; anything else is unknown.
#[derive(Default)]
pub struct ToyAuth {
    /// Peer addresses the authenticator saw, in order.
    pub peers: Mutex<Vec<Option<IpAddr>>>,
}

#[async_trait]
impl Authenticator for ToyAuth {
    async fn authenticate(&self, request: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        self.peers.lock().unwrap().push(request.peer);
        let token = bearer_token(request.headers)?;
        if token == "down" {
            return Err(AuthError::Unavailable);
        }
        if token == "elsewhere" {
            return Err(AuthError::Forbidden {
                code: "wrong_door".into(),
                message: "This token belongs to another door".into(),
            });
        }
        let Some(rest) = token.strip_prefix("good-") else {
            return Err(AuthError::Invalid(InvalidReason::Unknown));
        };
        let kind = rest.split('.').next().unwrap_or_default();
        if kind.is_empty() {
            return Err(AuthError::Invalid(InvalidReason::Unknown));
        }
        let scopes: &[&str] = if kind == "writer" {
            &["read", "write"]
        } else {
            &["read"]
        };
        Ok(Principal::new(kind, format!("subject-of-{rest}"), token)
            .with_scopes(scopes.iter().map(|s| (*s).to_owned()).collect()))
    }
}

/// Renders argument violations the Sidequest way: `422: Invalid arguments: <pointer>: <message>`.
pub struct ToyPresenter;

impl Presenter for ToyPresenter {
    fn server_info(&self, principal: &Principal, fingerprint: &str) -> Implementation {
        Implementation::new(
            format!("toy-{}", principal.kind),
            format!("1.0.0+{fingerprint}"),
        )
    }

    fn instructions(&self, principal: &Principal) -> Option<String> {
        Some(format!("Toy door for {}", principal.kind))
    }

    fn invalid_arguments(&self, _tool: &str, violations: &[Violation]) -> CallOutcome {
        let text = violations
            .iter()
            .map(|v| format!("422: Invalid arguments: {}: {}", v.pointer, v.message))
            .collect::<Vec<_>>()
            .join("\n");
        CallOutcome::failed("422", CallToolResult::error(vec![ContentBlock::text(text)]))
    }

    /// A `user` calling `echo` may send `acting_for` and `label`; they are dropped, not refused.
    fn lenient_arguments(&self, tool: &str, kind: &str) -> &[&str] {
        if tool == "echo" && kind == "user" {
            &LENIENT_ECHO
        } else {
            &[]
        }
    }
}

/// [`ToyPresenter`] whose −32603 answers are HTTP 500 (a product like Elixir, SURFACE §3.6).
pub struct Strict500Presenter;

impl Presenter for Strict500Presenter {
    fn server_info(&self, principal: &Principal, fingerprint: &str) -> Implementation {
        ToyPresenter.server_info(principal, fingerprint)
    }

    fn instructions(&self, principal: &Principal) -> Option<String> {
        ToyPresenter.instructions(principal)
    }

    fn invalid_arguments(&self, tool: &str, violations: &[Violation]) -> CallOutcome {
        ToyPresenter.invalid_arguments(tool, violations)
    }

    fn internal_error_status(&self) -> StatusCode {
        StatusCode::INTERNAL_SERVER_ERROR
    }
}

/// The undeclared `echo` arguments a `user` may send (see `ToyPresenter::lenient_arguments`).
pub const LENIENT_ECHO: [&str; 2] = ["acting_for", "label"];

/// One resource, to contrast a door with a provider against one without.
pub struct ToyResources;

#[async_trait]
impl ResourceProvider for ToyResources {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"resources": [{"uri": "toy://readme", "name": "readme"}]}))
    }
    async fn templates(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"resourceTemplates": []}))
    }
    async fn read(&self, _ctx: &CallContext, uri: &str) -> Result<Value, RpcFailure> {
        if uri == "toy://readme" {
            Ok(json!({"contents": [{"uri": uri, "text": "hello"}]}))
        } else {
            Err(RpcFailure {
                code: -32002,
                message: format!("Resource not found: {uri}"),
                data: None,
            })
        }
    }
}

/// What the toy tools share with the tests.
#[derive(Clone, Default)]
pub struct Probes {
    pub echo_calls: Arc<AtomicUsize>,
    /// `hold` signals this once it runs...
    pub entered: Arc<Notify>,
    /// ...and finishes once this is signalled.
    pub release: Arc<Notify>,
}

impl Probes {
    pub fn echo_calls(&self) -> usize {
        self.echo_calls.load(Ordering::SeqCst)
    }
}

pub fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 5}},
        "required": ["text"],
        "additionalProperties": false
    })
}

/// The toy catalog; `echo_description` lets a test change one declaration.
pub fn toy_tools(probes: &Probes, echo_description: &str) -> Vec<ToolDecl> {
    let any = || json!({"type": "object"});
    let calls = Arc::clone(&probes.echo_calls);
    let (entered, release) = (Arc::clone(&probes.entered), Arc::clone(&probes.release));
    vec![
        ToolDecl::new(
            "echo",
            "Echo",
            echo_description,
            echo_schema(),
            move |ctx: CallContext, args| {
                let calls = Arc::clone(&calls);
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let mut out = json!({"text": args.get("text").cloned().unwrap_or(Value::Null)});
                    if !ctx.ignored_arguments.is_empty() {
                        out["ignored"] = json!(ctx.ignored_arguments);
                    }
                    Ok(tool_json(out))
                }
            },
        ),
        ToolDecl::new(
            "secret",
            "Secret",
            "Admins only.",
            any(),
            |ctx: CallContext, _args| async move {
                Ok(tool_json(json!({"secret": 42, "kind": ctx.principal.kind})))
            },
        )
        .for_kinds(&["admin"]),
        ToolDecl::new(
            "scoped",
            "Scoped",
            "Needs the write scope.",
            any(),
            |_ctx, _args| async move { Ok(tool_json(json!({"wrote": true}))) },
        )
        .with_scope("write"),
        ToolDecl::new(
            "slow",
            "Slow",
            "Outlives every deadline.",
            any(),
            |_ctx, _args| async move {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(tool_json(json!({"late": true})))
            },
        ),
        ToolDecl::new(
            "flaky",
            "Flaky",
            "Its dependency is down.",
            any(),
            |_ctx, _args| async move { Err(ToolFailure::Unavailable(FLAKY_DETAIL.into())) },
        ),
        ToolDecl::new("boom", "Boom", "A bug.", any(), |_ctx, _args| async move {
            Err(ToolFailure::Internal(BOOM_DETAIL.into()))
        }),
        ToolDecl::new(
            "hold",
            "Hold",
            "Waits until the test releases it.",
            any(),
            move |_ctx, _args| {
                let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
                async move {
                    entered.notify_one();
                    release.notified().await;
                    Ok(tool_json(json!({"held": true})))
                }
            },
        ),
    ]
}

/// A built toy door and the handles a test needs to observe and steer it.
pub struct Toy {
    pub router: Router,
    pub clock: FakeClock,
    pub probes: Probes,
    pub auth: Arc<ToyAuth>,
}

pub struct ToyBuilder {
    edge: Option<mcp_door::DoorEdge>,
    config: DoorConfig,
    limits: Limits,
    admission: Option<Arc<dyn Admission>>,
    pre_auth: Option<PreAuthGate>,
    audit: Option<Arc<dyn AuditSink>>,
    resources: bool,
    presenter: Option<Arc<dyn Presenter>>,
    metrics: Option<Arc<mcp_door::Metrics>>,
}

impl Toy {
    /// The default toy: small config, roomy limits.
    pub fn new() -> Self {
        Self::builder().build()
    }

    pub fn builder() -> ToyBuilder {
        ToyBuilder {
            config: small_config(),
            limits: roomy_limits(),
            admission: None,
            pre_auth: None,
            audit: None,
            resources: false,
            presenter: None,
            metrics: None,
            edge: None,
        }
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        send(&self.router, request).await
    }

    pub async fn rpc(&self, token: Option<&str>, method: &str, params: Value) -> Reply {
        self.send(post(token, rpc_body(1, method, params))).await
    }

    pub async fn call(&self, token: &str, tool: &str, arguments: Value) -> Reply {
        self.rpc(
            Some(token),
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }
}

impl ToyBuilder {
    pub fn config(mut self, config: DoorConfig) -> Self {
        self.config = config;
        self
    }
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
    pub fn admission(mut self, admission: Arc<dyn Admission>) -> Self {
        self.admission = Some(admission);
        self
    }
    pub fn pre_auth(mut self, gate: PreAuthGate) -> Self {
        self.pre_auth = Some(gate);
        self
    }
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }
    pub fn presenter(mut self, presenter: Arc<dyn Presenter>) -> Self {
        self.presenter = Some(presenter);
        self
    }
    pub fn with_resources(mut self) -> Self {
        self.resources = true;
        self
    }
    pub fn metrics(mut self, metrics: Arc<mcp_door::Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }
    pub fn edge(mut self, edge: mcp_door::DoorEdge) -> Self {
        self.edge = Some(edge);
        self
    }

    pub fn build(self) -> Toy {
        let clock = FakeClock::new(1_700_000_000_000);
        let probes = Probes::default();
        let auth = Arc::new(ToyAuth::default());
        let catalog = Arc::new(Catalog::new(toy_tools(&probes, "Echoes text back.")).unwrap());
        let admission = self
            .admission
            .unwrap_or_else(|| Arc::new(LocalAdmission::new(self.limits, Arc::new(clock.clone()))));
        let mut door = Door::new(
            PATH,
            auth.clone(),
            catalog,
            admission,
            self.presenter.unwrap_or_else(|| Arc::new(ToyPresenter)),
        )
        .with_config(self.config);
        if let Some(gate) = self.pre_auth {
            door = door.with_pre_auth(gate);
        }
        if let Some(sink) = self.audit {
            door = door.with_audit(sink);
        }
        if self.resources {
            door = door.with_resources(Arc::new(ToyResources));
        }
        if let Some(metrics) = self.metrics {
            door = door.with_metrics(metrics);
        }
        if let Some(edge) = self.edge {
            door = door.with_edge(edge);
        }
        Toy {
            router: door.router(),
            clock,
            probes,
            auth,
        }
    }
}

/// A finished response, body collected.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    /// `result` of a 200 JSON-RPC success.
    pub fn result(&self) -> Value {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
        let body = self.json();
        assert_eq!(body["jsonrpc"], "2.0");
        assert!(body.get("error").is_none(), "unexpected error: {body}");
        body["result"].clone()
    }

    /// `error.code` of the body, whatever the status.
    pub fn error_code(&self) -> i64 {
        let body = self.json();
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error code in {body}"))
    }

    /// The text of the first content block of a tool result.
    pub fn tool_text(&self) -> String {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub fn retry_after(&self) -> u64 {
        self.header("retry-after")
            .expect("Retry-After header")
            .parse()
            .expect("integer Retry-After")
    }
}

/// Sends through the router and checks the one thing every response carries: a UUID
/// `x-request-id`.
pub async fn send(router: &Router, request: Request<Body>) -> Reply {
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let id = parts
        .headers
        .get("x-request-id")
        .expect("x-request-id header")
        .to_str()
        .unwrap();
    uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("x-request-id {id:?} is not a UUID: {e}"));
    let body = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// A POST to the door as an MCP client sends it.
pub fn post(token: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut builder = Request::post(PATH)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    builder.body(body.into()).unwrap()
}

pub fn rpc_body(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A `ping` request padded with JSON whitespace to exactly `len` bytes.
pub fn padded_ping(len: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":7,"method":"ping""#;
    assert!(len > head.len() + 1);
    let mut body = head.to_vec();
    body.resize(len - 1, b' ');
    body.push(b'}');
    assert_eq!(body.len(), len);
    body
}
