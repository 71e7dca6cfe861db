//! Dispatch of one framed request in its era: the methods each revision defines, the hooks,
//! and each answer shaped for the revision in use (fields it lacks removed; on 2026-07-28
//! `resultType`, caching hints, 404 for removed and unknown methods, −32602 for an unknown
//! resource).

use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::call::call_tool;
use super::discover;
use super::era::Route;
use super::mrtr;
use super::version::{self, Version};
use super::{Inner, REMOVED_IN_STATELESS, Reply, method_not_found};
use crate::audit::AuditRecord;
use crate::auth::Principal;
use crate::catalog::CallContext;
use crate::hooks::{HookAnswer, RpcFailure};
use crate::jsonrpc;

/// One request past framing, the era decided.
pub(super) struct Call {
    pub(super) principal: Arc<Principal>,
    pub(super) request_id: Uuid,
    pub(super) id: Value,
    pub(super) method: String,
    pub(super) params: Map<String, Value>,
    pub(super) route: Route,
}

fn invalid_params(message: &str) -> RpcFailure {
    RpcFailure {
        code: jsonrpc::INVALID_PARAMS,
        message: message.to_owned(),
        data: None,
    }
}

/// Runs the method and shapes its answer for the revision in use.
pub(super) async fn dispatch(
    inner: &Arc<Inner>,
    call: Call,
    headers: &HeaderMap,
    record: &mut AuditRecord,
) -> Reply {
    let Call {
        principal,
        request_id,
        id,
        method,
        params,
        route,
    } = call;
    let stateless = matches!(route, Route::Stateless(_));
    // `initialize` negotiates the revision its own answer (and nothing after it) speaks.
    let version = match (&route, method.as_str()) {
        (Route::Handshake(_), "initialize") => version::negotiate(
            params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
        _ => route.version(),
    };
    let retry = match mrtr::retry(inner, version, &id, &method, &params) {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let ctx = CallContext {
        principal: Arc::clone(&principal),
        request_id,
        protocol_version: version.as_str().to_owned(),
        client_capabilities: match &route {
            Route::Stateless(e) => Some(e.client_capabilities.clone()),
            Route::Handshake(_) => None,
        },
        input_responses: retry.input_responses,
        request_state: retry.request_state,
        ignored_arguments: Vec::new(),
        extensions: record.extensions.clone(),
        progress: crate::progress::Progress::disabled(),
    };
    if stateless && REMOVED_IN_STATELESS.contains(&method.as_str()) {
        return not_found_stateless(&id, &method, true);
    }
    let out: Result<Value, RpcFailure> = match method.as_str() {
        "initialize" => Ok(discover::initialize(inner, &principal, version)),
        "server/discover" if stateless => Ok(discover::discover(inner, &principal, version)),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": inner
            .catalog
            .list_for(&principal.kind)
            .into_iter()
            .map(|t| version.tool(t))
            .collect::<Vec<_>>()})),
        "tools/call" => return call_tool(inner, &id, ctx, params, version, headers, record).await,
        "resources/list" | "resources/templates/list" | "resources/read"
            if inner.resources.is_some() =>
        {
            let Some(r) = &inner.resources else {
                return method_not_found(&id, &method);
            };
            match method.as_str() {
                "resources/list" => r.list(&ctx).await,
                "resources/templates/list" => r.templates(&ctx).await,
                _ => match params.get("uri").and_then(Value::as_str) {
                    Some(uri) => match r.read_interactive(&ctx, uri).await {
                        Ok(HookAnswer::Complete(v)) => Ok(v),
                        Ok(HookAnswer::InputRequired(asked)) => {
                            return mrtr::answer(
                                inner, version, &id, request_id, &method, &params, asked,
                            );
                        }
                        Err(e) => Err(e),
                    },
                    None => Err(invalid_params("params.uri must be a string")),
                },
            }
        }
        "prompts/list" | "prompts/get" if inner.prompts.is_some() => {
            let Some(p) = &inner.prompts else {
                return method_not_found(&id, &method);
            };
            if method == "prompts/list" {
                p.list(&ctx).await
            } else {
                let args = params
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                match params.get("name").and_then(Value::as_str) {
                    Some(name) => match p.get_interactive(&ctx, name, &args).await {
                        Ok(HookAnswer::Complete(v)) => Ok(v),
                        Ok(HookAnswer::InputRequired(asked)) => {
                            return mrtr::answer(
                                inner, version, &id, request_id, &method, &params, asked,
                            );
                        }
                        Err(e) => Err(e),
                    },
                    None => Err(invalid_params("params.name must be a string")),
                }
            }
        }
        "completion/complete" if inner.completions.is_some() => {
            let Some(c) = &inner.completions else {
                return method_not_found(&id, &method);
            };
            match (params.get("ref"), params.get("argument")) {
                (Some(reference @ Value::Object(_)), Some(argument @ Value::Object(_))) => {
                    c.complete(&ctx, reference, argument, params.get("context"))
                        .await
                }
                _ => Err(invalid_params(
                    "params.ref and params.argument must be objects",
                )),
            }
        }
        _ if stateless => return not_found_stateless(&id, &method, false),
        _ => return method_not_found(&id, &method),
    };
    match out {
        Ok(result) => {
            let result = if method.starts_with("prompts/") || method.starts_with("resources/") {
                version.hook_result(result)
            } else {
                result
            };
            let result = if stateless {
                discover::stateless_result(inner, &principal, &method, result)
            } else {
                result
            };
            Reply::json(jsonrpc::result(&id, result))
        }
        Err(mut f) => {
            if version.is_stateless() && f.code == jsonrpc::RESOURCE_NOT_FOUND {
                // 2026-07-28 retired −32002: an unknown resource is invalid params.
                f.code = jsonrpc::INVALID_PARAMS;
            }
            let mut reply = Reply::rpc_error(&id, f.code, &f.message, f.data);
            if f.code == jsonrpc::INTERNAL_ERROR {
                reply.status = inner.presenter.internal_error_status();
            }
            reply
        }
    }
}

/// 2026-07-28: a method the door does not implement is HTTP 404 with −32601.
fn not_found_stateless(id: &Value, method: &str, removed: bool) -> Reply {
    let mut reply = if removed {
        Reply::rpc_error(
            id,
            jsonrpc::METHOD_NOT_FOUND,
            &format!(
                "Method not found: {method} is not part of protocol version {}",
                Version::V2026_07_28.as_str()
            ),
            None,
        )
    } else {
        method_not_found(id, method)
    };
    reply.status = StatusCode::NOT_FOUND;
    reply
}
