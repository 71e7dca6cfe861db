//! The audit hook: one record per request, after the response is built. The record carries
//! what the request learned as values — the principal, the error code the tool handed over,
//! the typed extensions the gate and the tool added — so a sink never parses a response.

use std::sync::Arc;

use uuid::Uuid;

use crate::auth::Principal;
use crate::outcome::Extensions;

/// What the door knows about a finished request.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    pub request_id: Uuid,
    pub door: String,
    /// The authenticated caller, product view included (`principal.ext::<T>()`).
    pub principal: Option<Arc<Principal>>,
    pub principal_kind: Option<String>,
    pub subject: Option<String>,
    pub method: Option<String>,
    pub tool: Option<String>,
    /// The tool arguments, for sinks that keep them (trim before storing).
    pub arguments: Option<serde_json::Value>,
    pub http_status: u16,
    /// The door's error label: an HTTP status, a JSON-RPC code, or for an `isError` result the
    /// error code its tool handed over in [`crate::CallOutcome::error_code`].
    pub error: Option<String>,
    pub duration_ms: u64,
    pub response_bytes: usize,
    /// The request's typed values: the method gate's (a metering outcome) and the tool's
    /// ([`crate::CallOutcome::extensions`]).
    pub extensions: Extensions,
}

/// Receives audit records. Must not block: queue or log, never write synchronously.
pub trait AuditSink: Send + Sync + 'static {
    /// Takes one finished request's record.
    fn record(&self, record: AuditRecord);
}

/// Logs each request as a `tracing` event (never the arguments: they may hold game text).
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingAudit;

impl AuditSink for TracingAudit {
    fn record(&self, r: AuditRecord) {
        // Strings, not `Display` values: the same text, without the formatting machinery.
        let mut id = Uuid::encode_buffer();
        tracing::info!(
            request_id = &*r.request_id.hyphenated().encode_lower(&mut id),
            door = r.door.as_str(),
            kind = r.principal_kind.as_deref().unwrap_or("-"),
            method = r.method.as_deref().unwrap_or("-"),
            tool = r.tool.as_deref().unwrap_or("-"),
            status = r.http_status,
            error = r.error.as_deref().unwrap_or("-"),
            duration_ms = r.duration_ms,
            bytes = r.response_bytes,
            "mcp request"
        );
    }
}
