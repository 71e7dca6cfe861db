//! The answer to a `tools/call` whose handler has ended, at its three error layers: HTTP (the
//! deadline's 504, a dependency's 503), JSON-RPC (internal, missing capability,
//! `input_required`), or the tool result itself, serialized once for the revision in use.
//! [`super::call`] and [`super::stream`] both end here.

use http::{StatusCode, header};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::version::Version;
use super::{Inner, Reply};
use crate::catalog::ToolFailure;
use crate::jsonrpc;
use crate::outcome::{CallOutcome, Extensions};

/// The message of a call that outlived the door's tool deadline (HTTP 504, or the last event
/// of a progress stream).
pub(super) const DEADLINE_MESSAGE: &str = "Tool execution exceeded its deadline; a write may or may not have committed — read again before retrying";

/// How a handler ended: within the deadline (its result or failure), or not.
pub(super) type HandlerEnd = Result<Result<CallOutcome, ToolFailure>, tokio::time::error::Elapsed>;

/// The answer to a call whose handler has ended, and what the audit records about it.
pub(super) struct Answer {
    pub(super) reply: Reply,
    /// The tool's own error code of an `isError` result (see [`CallOutcome::error_label`]).
    pub(super) label: Option<String>,
    pub(super) extensions: Extensions,
}

impl Answer {
    pub(super) fn plain(reply: Reply) -> Self {
        Self {
            reply,
            label: None,
            extensions: Extensions::new(),
        }
    }
}

/// The three error layers of a handler's end: HTTP (deadline 504, unavailable 503), JSON-RPC
/// (internal, missing capability), or the tool result itself.
pub(super) fn answer(
    inner: &Inner,
    id: &Value,
    request_id: Uuid,
    version: Version,
    params: &Map<String, Value>,
    name: &str,
    end: HandlerEnd,
) -> Answer {
    match end {
        Err(_) => Answer::plain(Reply::status(
            StatusCode::GATEWAY_TIMEOUT,
            id,
            jsonrpc::SERVER_ERROR,
            DEADLINE_MESSAGE,
        )),
        Ok(Err(ToolFailure::Unavailable(detail))) => {
            tracing::warn!(%request_id, %detail, "tool dependency unavailable");
            Answer::plain(
                Reply::status(
                    StatusCode::SERVICE_UNAVAILABLE,
                    id,
                    jsonrpc::SERVER_ERROR,
                    "Service unavailable; retry later",
                )
                .header(header::RETRY_AFTER, "1".into()),
            )
        }
        Ok(Err(ToolFailure::Internal(detail))) => {
            tracing::error!(%request_id, %detail, "tool failed");
            Answer::plain(Reply::internal(
                inner.presenter.internal_error_status(),
                id,
                request_id,
            ))
        }
        Ok(Err(ToolFailure::InputRequired(asked))) => Answer::plain(super::mrtr::answer(
            inner,
            version,
            id,
            request_id,
            "tools/call",
            params,
            asked,
        )),
        Ok(Err(ToolFailure::MissingClientCapability(required))) => {
            let names: Vec<&str> = required
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let message = format!(
                "Missing required client capability: {name} needs {}",
                names.join(", ")
            );
            let data = Some(serde_json::json!({"requiredCapabilities": required}));
            Answer::plain(if version.is_stateless() {
                let mut reply = Reply::rpc_error(
                    id,
                    jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    &message,
                    data,
                );
                reply.status = StatusCode::BAD_REQUEST;
                reply
            } else {
                Reply::rpc_error(id, jsonrpc::INVALID_REQUEST, &message, data)
            })
        }
        Ok(Ok(outcome)) => outcome_answer(inner, id, request_id, version, outcome),
    }
}

/// A tool result (the handler's, or the presenter's invalid-arguments answer) as the JSON-RPC
/// response of the revision in use.
pub(super) fn outcome_answer(
    inner: &Inner,
    id: &Value,
    request_id: Uuid,
    version: Version,
    outcome: CallOutcome,
) -> Answer {
    let label = outcome.error_label();
    if let Some(prepared) = outcome.prepared {
        // Serialized before: the response is its bytes, shared, inside this request's envelope.
        let reply = match version.prepared_response(&prepared, id) {
            Ok(chunks) => Reply::chunks(chunks),
            Err(e) => {
                tracing::error!(error = %e, "prepared tool result did not serialize");
                Reply::internal(inner.presenter.internal_error_status(), id, request_id)
            }
        };
        return Answer {
            reply,
            label,
            extensions: outcome.extensions,
        };
    }
    let mut result = outcome.result;
    version.call_result(&mut result);
    // Written once, straight from the struct: a large result is not copied into a `Value`
    // and serialized again.
    let reply = match serde_json::to_vec(&jsonrpc::Response {
        jsonrpc: "2.0",
        id,
        result: &result,
    }) {
        Ok(body) => Reply::serialized(body),
        Err(e) => {
            tracing::error!(error = %e, "tool result did not serialize");
            Reply::internal(inner.presenter.internal_error_status(), id, request_id)
        }
    };
    Answer {
        reply,
        label,
        extensions: outcome.extensions,
    }
}
