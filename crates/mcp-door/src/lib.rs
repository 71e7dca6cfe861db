//! mcp-door: one authenticated, stateless MCP endpoint ("door") as an axum `Router`.
//!
//! The platform owns the request path — pre-auth gate, authentication, admission, body
//! limits, JSON-RPC framing, dispatch, argument validation, deadlines, the three error
//! layers and auditing. Products supply an [`Authenticator`], a [`Catalog`] of tools and a
//! [`Presenter`] that renders identity and domain errors their own way. It knows nothing of
//! any product.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod address;
pub mod admission;
pub mod audit;
pub mod auth;
pub mod catalog;
pub mod clock;
pub mod door;
pub mod framing;
pub mod gate;
pub mod hooks;
pub mod jsonrpc;
pub mod metrics;
pub mod random;
pub mod serve;

pub use address::{AddressSource, client_address, limit_key};
pub use admission::{
    Admission, AdmissionError, Limits, LocalAdmission, Permit, PreAuthGate, RedisAdmission,
};
pub use audit::{AuditRecord, AuditSink, TracingAudit};
pub use auth::{AuthError, AuthRequest, Authenticator, Principal, bearer_token};
pub use catalog::{
    CallContext, Catalog, CatalogError, ToolDecl, ToolFailure, Violation, tool_json,
};
pub use clock::{Clock, FakeClock, SystemClock};
pub use door::{Door, DoorConfig, Presenter, SUPPORTED_PROTOCOL_VERSIONS};
pub use gate::{GateRefusal, GateRequest, GateStage, MethodGate};
pub use hooks::{PromptProvider, ResourceProvider, RpcFailure};
pub use metrics::{Metrics, PoolUse};
pub use random::{OsRandom, Random};
pub use serve::{Serving, serve_until};

/// Re-exported so products build tool results and annotations with the same wire types.
pub use rmcp::model;
