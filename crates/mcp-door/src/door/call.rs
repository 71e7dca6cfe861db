//! `tools/call`: lookup, visibility, scope, the method gate, argument validation, the
//! deadline and the three error layers of a tool's answer; a call that asks for progress and
//! can read an event stream runs through [`super::stream`].

use std::sync::Arc;

use http::{StatusCode, header};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::version::Version;
use super::{Inner, Reply};
use crate::audit::AuditRecord;
use crate::catalog::{CallContext, ToolFailure};
use crate::gate::{GateRequest, GateStage};
use crate::jsonrpc;
use crate::outcome::{CallOutcome, Extensions};
use crate::progress;

/// The message of a call that outlived the door's tool deadline (HTTP 504, or the last event
/// of a progress stream).
pub(super) const DEADLINE_MESSAGE: &str = "Tool execution exceeded its deadline; a write may or may not have committed — read again before retrying";

pub(super) async fn call_tool(
    inner: &Arc<Inner>,
    id: &Value,
    mut ctx: CallContext,
    params: Map<String, Value>,
    version: Version,
    headers: &http::HeaderMap,
    record: &mut AuditRecord,
) -> Reply {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Reply::rpc_error(
            id,
            jsonrpc::INVALID_PARAMS,
            "params.name must be a string",
            None,
        );
    };
    record.tool = Some(name.to_owned());
    let mut arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Reply::rpc_error(
                id,
                jsonrpc::INVALID_PARAMS,
                "params.arguments must be an object",
                None,
            );
        }
    };
    record.arguments = Some(arguments.clone());
    let progress_token = match progress::token(&params) {
        Ok(t) => t,
        Err(message) => return Reply::rpc_error(id, jsonrpc::INVALID_PARAMS, message, None),
    };
    let Some(decl) = inner.catalog.get(name) else {
        let (message, data) = inner.presenter.unknown_tool(name, &ctx.principal.kind);
        return Reply::rpc_error(id, jsonrpc::INVALID_PARAMS, &message, data);
    };
    let kind = ctx.principal.kind.clone();
    if !decl.visible_to(&kind) {
        let (message, data) = inner.presenter.hidden_tool(name, &kind);
        return Reply::rpc_error(id, jsonrpc::METHOD_NOT_FOUND, &message, Some(data));
    }
    if version.is_stateless()
        && let Err(mismatch) = super::params::check(&decl.input_schema, &arguments, headers)
    {
        let mut reply = Reply::rpc_error(
            id,
            jsonrpc::HEADER_MISMATCH,
            &format!("Header mismatch: {mismatch}"),
            None,
        );
        reply.status = StatusCode::BAD_REQUEST;
        return reply;
    }
    if let Some(scope) = &decl.scope
        && !ctx.principal.scopes.iter().any(|s| s == scope)
    {
        let mut wanted = ctx.principal.scopes.clone();
        wanted.push(scope.clone());
        let (message, data) = inner
            .presenter
            .scope_refused(name, scope, &ctx.principal.scopes);
        return Reply {
            status: StatusCode::FORBIDDEN,
            body: Some(
                jsonrpc::error(id, jsonrpc::INSUFFICIENT_SCOPE, &message, Some(data)).into(),
            ),
            headers: vec![(
                header::WWW_AUTHENTICATE,
                inner.auth.insufficient_scope_challenge(&wanted),
            )],
            error: Some("insufficient_scope".into()),
        };
    }
    if let Some(gate) = &inner.gate {
        let mut request = GateRequest {
            stage: GateStage::ToolResolved,
            principal: &ctx.principal,
            method: "tools/call",
            tool: Some(name),
            request_id: ctx.request_id,
            extensions: &mut record.extensions,
        };
        if let Err(refusal) = gate.check(&mut request).await {
            return Reply::gate(id, refusal);
        }
        // The handler (or the presenter's invalid-arguments answer) sees what the gate added.
        ctx.extensions = record.extensions.clone();
    }
    let request_id = ctx.request_id;
    let lenient = inner.presenter.lenient_arguments(name, &kind);
    if !lenient.is_empty()
        && let Value::Object(args) = &mut arguments
    {
        ctx.ignored_arguments = lenient
            .iter()
            .filter(|k| args.remove(**k).is_some())
            .map(|k| (*k).to_owned())
            .collect();
    }
    let violations = inner.catalog.validate(name, &arguments);
    if !violations.is_empty() {
        let outcome = inner
            .presenter
            .invalid_arguments_in(&ctx, name, &violations);
        return apply(
            outcome_answer(inner, id, request_id, version, outcome),
            record,
        );
    }
    let Value::Object(args) = arguments else {
        return Reply::internal(inner.presenter.internal_error_status(), id, request_id);
    };
    let handler = Arc::clone(&decl.handler);
    if let Some(token) = progress_token
        && progress::accepts_event_stream(headers)
    {
        let run = super::stream::ToolRun {
            inner: Arc::clone(inner),
            id: id.clone(),
            request_id,
            version,
            name: name.to_owned(),
            params: params.clone(),
            token,
        };
        return match super::stream::run(run, handler, ctx, args).await {
            super::stream::Ran::Finished(answer) => apply(answer, record),
            super::stream::Ran::Streaming(reply) => reply,
        };
    }
    let end = tokio::time::timeout(inner.config.tool_deadline, handler(ctx, args)).await;
    apply(
        answer(inner, id, request_id, version, &params, name, end),
        record,
    )
}

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
    fn plain(reply: Reply) -> Self {
        Self {
            reply,
            label: None,
            extensions: Extensions::new(),
        }
    }
}

/// Puts what `answer` tells the audit into `record` and hands back its reply.
fn apply(answer: Answer, record: &mut AuditRecord) -> Reply {
    if let Some(label) = answer.label {
        record.error = Some(label);
    }
    record.extensions.extend(answer.extensions);
    answer.reply
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
fn outcome_answer(
    inner: &Inner,
    id: &Value,
    request_id: Uuid,
    version: Version,
    outcome: CallOutcome,
) -> Answer {
    let label = outcome.error_label();
    if let Some(prepared) = outcome.prepared {
        // Serialized before: the response is a copy of its bytes.
        let reply = match version.prepared_response(&prepared, id) {
            Ok(body) => Reply::serialized(body),
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
