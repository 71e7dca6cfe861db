//! mcp-door: one authenticated, stateless MCP endpoint ("door") as an axum `Router`.
//!
//! The platform owns the request path — pre-auth gate, authentication, admission, body
//! limits, JSON-RPC framing, dispatch, argument validation, deadlines, the three error
//! layers and auditing. Products supply an [`Authenticator`], a [`Catalog`] of tools and a
//! [`Presenter`] that renders identity and domain errors their own way. It knows nothing of
//! any product.
//!
//! # The per-request seam
//!
//! What the gate, the tool call and the audit record learn about a request travels with it as
//! typed values ([`outcome`]), never in a side table keyed by request id or in a string parsed
//! later:
//!
//! - **Principal.** [`Authenticator::authenticate`] returns a [`Principal`] (with the
//!   product's own view in [`Principal::ext`]); it reaches the gate ([`GateRequest`]), every
//!   handler ([`CallContext::principal`]) and the audit ([`AuditRecord::principal`]). A
//!   refusal is an [`AuthError`] whose `Invalid` reason is an [`InvalidReason`], so a
//!   challenge matches a variant (`Suspended`), not a message.
//! - **Metering.** The [`MethodGate`] adds what it counted to [`GateRequest::extensions`]
//!   (an [`Extensions`] map keyed by type); the tool-stage gate sees the framed stage's
//!   values, handlers and presenters read them in [`CallContext::extensions`], and the audit
//!   sink in [`AuditRecord::extensions`].
//! - **Tool error code.** A handler declared with [`ToolDecl::new_with_outcome`] (and the
//!   presenter's [`Presenter::invalid_arguments`]) answers a [`CallOutcome`]: the rendered
//!   result, the error code of an `isError` result, and extensions for the audit. The code
//!   becomes [`AuditRecord::error`] and the metrics' `outcome` label; the door never reads a
//!   tool's rendered text.

//!
//! # Protocol versions
//!
//! One endpoint speaks both eras of MCP, decided per request ([`door::version`]):
//!
//! - **Handshake revisions 2025-03-26, 2025-06-18, 2025-11-25.** `initialize` answers the
//!   revision asked for, or 2025-11-25 when it names any other (2024-11-05, 2026-07-28, junk).
//!   Later requests name theirs in `MCP-Protocol-Version`; one without the header (and without
//!   a 2026-07-28 `_meta`) is served as 2025-11-25 — the door is stateless and remembers no
//!   negotiation. Every answer leaves out what its revision's schema lacks: for 2025-03-26 no
//!   `title`, `outputSchema` or tool `_meta`, no `structuredContent`, no resource links; before
//!   2025-11-25 no `icons`, `websiteUrl` or implementation `description`.
//! - **Stateless revision 2026-07-28.** No handshake: every request carries
//!   `_meta["io.modelcontextprotocol/protocolVersion"]` and `…/clientCapabilities` and mirrors
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (and `Mcp-Param-*` for `x-mcp-header`
//!   arguments) in headers; a missing envelope is −32602, a disagreeing header −32020, both
//!   HTTP 400. `server/discover` answers the versions, capabilities, `instructions` and
//!   identity (`_meta["io.modelcontextprotocol/serverInfo"]` beside
//!   [`Presenter::server_meta`]). Every result carries `resultType`; the cacheable ones carry
//!   `ttlMs`/`cacheScope` ([`Presenter::cache_hint`]). Removed methods (`initialize`, `ping`,
//!   `logging/setLevel`, `resources/subscribe`…) and unknown ones are HTTP 404 with −32601; an
//!   unknown resource is −32602. A call may answer `input_required` ([`InputRequired`]); its
//!   `requestState` is sealed by the door ([`Door::with_request_state_key`]). A call needing an
//!   undeclared client capability is −32021 ([`ToolFailure::MissingClientCapability`]).
//! - **Unknown versions.** An `MCP-Protocol-Version` or `_meta` version the door does not speak
//!   is HTTP 400 with −32022 and `data: {supported, requested}` (newest first), as 2026-07-28
//!   defines `UnsupportedProtocolVersionError`.
//!
//! Admission, scopes, metering and audit run the same in both eras.
//!
//! # Progress
//!
//! A `tools/call` whose `_meta.progressToken` is a string or an integer, from a client whose
//! `Accept` allows `text/event-stream`, gets a live [`Progress`] in [`CallContext::progress`].
//! If the tool reports before it ends, the POST is answered with an SSE stream: each
//! `notifications/progress` (token, increasing `progress`, optional `total` and `message`),
//! then the JSON-RPC response. Otherwise — no token, a JSON-only `Accept`, or a tool that
//! reports nothing — the answer is the one JSON body it always was. Deadline, admission,
//! metering and audit are the same; a failure after the stream opened (504, 503) is its last
//! event, and the audit record closes when the stream ends. The door sends nothing else on a
//! stream: no log notifications (deprecated in 2026-07-28 and not offered), no requests, no
//! `subscriptions/listen`.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod address;
pub mod admission;
pub mod around;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod cli;
pub mod clock;
mod cookie;
pub mod door;
pub mod drain;
pub mod edge;
pub mod framing;
pub mod gate;
pub mod hooks;
pub mod jsonrpc;
pub mod logging;
pub mod metrics;
pub mod outcome;
pub mod progress;
pub mod random;
pub mod ready;
pub mod serve;
pub mod server;
pub mod tls;
pub mod web;

pub use address::{AddressSource, client_address, limit_key};
pub use admission::{
    Admission, AdmissionError, Limits, LocalAdmission, Permit, PreAuthGate, RedisAdmission,
};
pub use audit::{AuditRecord, AuditSink, TracingAudit};
pub use auth::{
    AuthError, AuthRequest, Authenticator, BearerRealm, InvalidReason, Principal, bearer_token,
};
pub use catalog::{
    CallContext, Catalog, CatalogError, ToolDecl, ToolFailure, Violation, tool_json,
};
pub use cli::{Product, ProductServeArgs, ServeArgs};
pub use clock::{Clock, FakeClock, SystemClock};
pub use cookie::cookie;
pub use door::{
    CLIENT_CLOSED, CacheHint, Door, DoorConfig, Presenter, SUPPORTED_PROTOCOL_VERSIONS,
};
pub use drain::DrainLimits;
pub use edge::{DoorEdge, OriginPolicy};
pub use gate::{GateRefusal, GateRequest, GateStage, MethodGate};
pub use hooks::{CompletionProvider, HookAnswer, PromptProvider, ResourceProvider, RpcFailure};
pub use logging::{LogGuard, init_tracing};
pub use metrics::{CacheUse, Metrics, PoolUse};
pub use outcome::{CallOutcome, Extensions, InputRequired, PreparedResult, UNCODED_TOOL_ERROR};
pub use progress::{Progress, ProgressError};
pub use random::{OsRandom, Random};
pub use ready::Readiness;
pub use serve::{ConnectionLimits, Serving, serve_until, shutdown_signal};
pub use server::{DEFAULT_POOL, Doors, ServerConfig, StartError};
pub use tls::{TlsFiles, TlsReloader};

/// Re-exported so products build tool results and annotations with the same wire types.
pub use rmcp::model;
