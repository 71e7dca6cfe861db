//! The method gate: an optional, product-supplied check that runs after JSON-RPC framing,
//! when the door knows the method (and, for `tools/call`, the tool). Per-credential admission
//! runs before the body is read, so it cannot exempt methods; a product that meters by method
//! (say, "`initialize` and `ping` are free, tool calls count against a daily quota") does it
//! here. The door renders a refusal exactly as the gate words it: HTTP status, optional
//! `Retry-After`, and the JSON-RPC error code, message and `data`. What a gate learns (its
//! counts, a quota snapshot, the counter a call was billed to) it adds to the request's
//! [`GateRequest::extensions`], where later stages, the handler and the audit record find it.

use async_trait::async_trait;
use http::StatusCode;
use serde_json::Value;
use uuid::Uuid;

use crate::auth::Principal;
use crate::outcome::Extensions;

/// Where in the request path the gate is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateStage {
    /// Every request (a message with an id) once it is framed, before dispatch. Notifications
    /// and client responses never reach the gate: they are answered 202 with no body.
    Framed,
    /// A `tools/call` whose tool exists, is visible to the caller and is within its scopes,
    /// before its arguments are validated (so an invalid call can still be counted).
    ToolResolved,
}

/// What the gate sees of a request.
#[derive(Debug)]
pub struct GateRequest<'a> {
    pub stage: GateStage,
    pub principal: &'a Principal,
    pub method: &'a str,
    /// The tool name of a `tools/call` (when `params.name` is a string).
    pub tool: Option<&'a str>,
    /// The id the door minted for this request (the one handlers see in `CallContext`).
    pub request_id: Uuid,
    /// The request's typed values: what an earlier stage added, and where this one adds its
    /// own (handlers read them in `CallContext::extensions`, the audit in
    /// `AuditRecord::extensions`).
    pub extensions: &'a mut Extensions,
}

/// A refusal, rendered as-is by the door.
#[derive(Debug, Clone, PartialEq)]
pub struct GateRefusal {
    /// The HTTP status (429 for a rate, 200 when the product answers with a JSON-RPC error only).
    pub status: StatusCode,
    /// Sent as `Retry-After` when present.
    pub retry_after_secs: Option<u64>,
    /// JSON-RPC `error.code`.
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// A product's per-method check. Errors inside the gate are the product's to handle (fail
/// open or refuse); the door only renders what it returns.
#[async_trait]
pub trait MethodGate: Send + Sync + 'static {
    /// Passes or refuses `request`; a pass may leave values in `request.extensions`.
    async fn check(&self, request: &mut GateRequest<'_>) -> Result<(), GateRefusal>;
}
