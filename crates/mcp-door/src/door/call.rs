//! `tools/call`: lookup, visibility, scope, the method gate, argument validation and the
//! deadline; the answer's three error layers are [`super::answer`]'s, and a call that asks for
//! progress and can read an event stream runs through [`super::stream`].

use std::sync::Arc;

use http::{StatusCode, header};
use serde_json::{Map, Value};

use super::answer::{Answer, answer, outcome_answer};
use super::version::Version;
use super::{Inner, Reply};
use crate::audit::AuditRecord;
use crate::catalog::CallContext;
use crate::gate::{GateRequest, GateStage};
use crate::jsonrpc;
use crate::progress;

pub(super) async fn call_tool(
    inner: &Arc<Inner>,
    id: &Value,
    mut ctx: CallContext,
    mut params: Map<String, Value>,
    version: Version,
    headers: &http::HeaderMap,
    record: &mut AuditRecord,
) -> Reply {
    // The arguments move to the handler; nothing after this reads them from `params`.
    let arguments = params.remove("arguments");
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Reply::rpc_error(
            id,
            jsonrpc::INVALID_PARAMS,
            "params.name must be a string",
            None,
        );
    };
    record.tool = Some(name.to_owned());
    let mut arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Reply::rpc_error(
                id,
                jsonrpc::INVALID_PARAMS,
                "params.arguments must be an object",
                None,
            );
        }
    };
    if inner.audit.keeps_arguments() {
        record.arguments = Some(arguments.clone());
    }
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

/// Puts what `answer` tells the audit into `record` and hands back its reply.
fn apply(answer: Answer, record: &mut AuditRecord) -> Reply {
    if let Some(label) = answer.label {
        record.error = Some(label);
    }
    record.extensions.extend(answer.extensions);
    answer.reply
}
