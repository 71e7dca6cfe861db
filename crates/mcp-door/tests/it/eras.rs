//! Both eras on one endpoint: `initialize` negotiation of the handshake revisions, the fields
//! each revision carries, and the stateless revision 2026-07-28 — its `_meta` envelope and
//! mirrored headers, `server/discover`, `resultType`, caching hints, removed and unknown
//! methods, the refusal of an unknown version in the header and in `_meta`.

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use http::StatusCode;
use mcp_door::model::{CallToolResult, ContentBlock, Resource};
use mcp_door::{
    CallContext, CallOutcome, Catalog, Door, InputRequired, LocalAdmission, PromptProvider,
    RpcFailure, ToolDecl, ToolFailure, tool_json,
};
use serde_json::{Map, Value, json};

use crate::support::{PATH, Reply, ToyAuth, ToyPresenter, ToyResources, post, roomy_limits, send};

const STATELESS: &str = "2026-07-28";
const HANDSHAKES: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

struct TitledPrompts;

#[async_trait]
impl PromptProvider for TitledPrompts {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"prompts": [{"name": "p", "title": "P", "icons": [],
            "arguments": [{"name": "a", "title": "A"}]}]}))
    }
    async fn get(
        &self,
        _ctx: &CallContext,
        name: &str,
        _arguments: &Map<String, Value>,
    ) -> Result<Value, RpcFailure> {
        Ok(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": name}},
            {"role": "user", "content": {"type": "resource_link", "uri": "toy://readme", "name": "readme"}}
        ]}))
    }
}

/// A door whose declarations carry every version-dependent field.
fn door() -> Router {
    let rich = ToolDecl::new(
        "rich",
        "Rich",
        "Structured output and a resource link.",
        json!({"type": "object"}),
        |ctx: CallContext, _args| async move {
            let mut result = tool_json(json!({"version": ctx.protocol_version}));
            result
                .content
                .push(ContentBlock::ResourceLink(Resource::new(
                    "toy://readme",
                    "readme",
                )));
            Ok::<CallToolResult, ToolFailure>(result)
        },
    )
    .with_output_schema(json!({"type": "object", "properties": {"version": {"type": "string"}}}))
    .with_meta(Map::from_iter([("toy/x".to_owned(), json!(1))]));
    let sampler = ToolDecl::new_with_outcome(
        "sampler",
        "Sampler",
        "Needs the client's sampling capability.",
        json!({"type": "object"}),
        |ctx: CallContext, _args| async move {
            let declared = ctx
                .client_capabilities
                .as_ref()
                .is_some_and(|c| c.get("sampling").is_some());
            if declared {
                Ok(CallOutcome::from(tool_json(json!({"sampled": true}))))
            } else {
                Err(ToolFailure::MissingClientCapability(
                    json!({"sampling": {}}),
                ))
            }
        },
    );
    let asker = ToolDecl::new(
        "asker",
        "Asker",
        "Asks the client for a name, carrying state.",
        json!({"type": "object"}),
        |ctx: CallContext, _args| async move {
            let name = ctx
                .input_responses
                .as_ref()
                .and_then(|r| r["who"]["content"]["name"].as_str().map(str::to_owned));
            match (ctx.request_state, name) {
                (Some(state), Some(name)) => Ok(tool_json(json!({"name": name, "state": state}))),
                _ => Err(ToolFailure::InputRequired(InputRequired {
                    input_requests: Map::from_iter([(
                        "who".to_owned(),
                        json!({"method": "elicitation/create", "params": {"message": "Name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
                    )]),
                    state: Some(json!({"round": 1})),
                })),
            }
        },
    );
    let clock = mcp_door::FakeClock::new(1_700_000_000_000);
    Door::new(
        PATH,
        Arc::new(ToyAuth::default()),
        Arc::new(Catalog::new(vec![rich, sampler, asker]).unwrap()),
        Arc::new(LocalAdmission::new(roomy_limits(), Arc::new(clock))),
        Arc::new(ToyPresenter),
    )
    .with_resources(Arc::new(ToyResources))
    .with_prompts(Arc::new(TitledPrompts))
    .with_request_state_key([9u8; 32])
    .router()
}

fn body(method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string()
}

/// A handshake-era request at `version` (the header a client sends after `initialize`).
async fn legacy(router: &Router, version: Option<&str>, method: &str, params: Value) -> Reply {
    let mut request = post(Some("good-user"), body(method, &params));
    if let Some(v) = version {
        request
            .headers_mut()
            .insert("mcp-protocol-version", v.parse().unwrap());
    }
    send(router, request).await
}

fn envelope(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "eras-test", "version": "1"}
    })
}

/// A 2026-07-28 request as the transport defines it: `_meta` envelope, mirrored headers.
async fn stateless(router: &Router, method: &str, mut params: Value) -> Reply {
    if params.get("_meta").is_none() {
        params["_meta"] = envelope(STATELESS);
    }
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    stateless_with(router, method, params, name.as_deref(), &[]).await
}

async fn stateless_with(
    router: &Router,
    method: &str,
    params: Value,
    name: Option<&str>,
    overrides: &[(&str, Option<&str>)],
) -> Reply {
    let mut request = post(Some("good-user"), body(method, &params));
    let headers = request.headers_mut();
    headers.insert("mcp-protocol-version", STATELESS.parse().unwrap());
    headers.insert("mcp-method", method.parse().unwrap());
    if let Some(n) = name {
        headers.insert("mcp-name", n.parse().unwrap());
    }
    for (k, v) in overrides {
        let name = http::HeaderName::from_bytes(k.as_bytes()).unwrap();
        match v {
            Some(v) => headers.insert(name, v.parse().unwrap()),
            None => headers.remove(name),
        };
    }
    send(router, request).await
}

fn assert_refused(reply: &Reply, status: StatusCode, code: i64) -> Value {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.error_code(), code, "{}", reply.json());
    assert_eq!(reply.json()["id"], 7, "the request id is echoed");
    reply.json()["error"].clone()
}

#[tokio::test]
async fn initialize_negotiates_each_handshake_revision_and_the_newest_otherwise() {
    let router = door();
    for (asked, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1900-01-01", "2025-11-25"),
    ] {
        let result = legacy(
            &router,
            None,
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await
        .result();
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert!(
            result.get("resultType").is_none(),
            "handshake results carry no resultType"
        );
    }
}

#[tokio::test]
async fn handshake_revisions_leave_out_what_they_lack() {
    let router = door();
    for version in HANDSHAKES {
        let old = version == "2025-03-26";
        let tools = legacy(&router, Some(version), "tools/list", json!({}))
            .await
            .result();
        let rich = &tools["tools"][0];
        assert_eq!(rich["name"], "rich");
        for field in ["title", "outputSchema", "_meta"] {
            assert_eq!(rich.get(field).is_none(), old, "{version} {field}: {rich}");
        }
        let call = legacy(
            &router,
            Some(version),
            "tools/call",
            json!({"name": "rich", "arguments": {}}),
        )
        .await
        .result();
        assert!(call.get("resultType").is_none(), "{version}: {call}");
        assert_eq!(call.get("structuredContent").is_none(), old, "{version}");
        let links = call["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "resource_link")
            .count();
        assert_eq!(links, usize::from(!old), "{version}: {call}");
        assert_eq!(
            call["content"][0]["text"],
            json!({"version": version}).to_string()
        );

        let prompts = legacy(&router, Some(version), "prompts/list", json!({}))
            .await
            .result();
        let p = &prompts["prompts"][0];
        assert_eq!(p.get("title").is_none(), old, "{version}: {p}");
        assert_eq!(p["arguments"][0].get("title").is_none(), old, "{version}");
        assert_eq!(
            p.get("icons").is_none(),
            version != "2025-11-25",
            "{version}"
        );
        let got = legacy(&router, Some(version), "prompts/get", json!({"name": "p"}))
            .await
            .result();
        assert_eq!(
            got["messages"].as_array().unwrap().len(),
            if old { 1 } else { 2 },
            "{version}"
        );

        let init = legacy(
            &router,
            None,
            "initialize",
            json!({"protocolVersion": version}),
        )
        .await
        .result();
        assert!(init["serverInfo"]["name"].is_string());
    }
}

#[tokio::test]
async fn a_request_with_neither_header_nor_envelope_is_the_newest_handshake_revision() {
    let router = door();
    let call = legacy(
        &router,
        None,
        "tools/call",
        json!({"name": "rich", "arguments": {}}),
    )
    .await
    .result();
    assert_eq!(call["structuredContent"]["version"], "2025-11-25");
    // server/discover is not a method of the handshake revisions.
    let reply = legacy(&router, Some("2025-11-25"), "server/discover", json!({})).await;
    assert_refused(&reply, StatusCode::OK, -32601);
}

#[tokio::test]
async fn an_unknown_protocol_version_header_is_refused_with_the_supported_list() {
    let router = door();
    for method in ["tools/list", "initialize", "ping"] {
        let reply = legacy(&router, Some("1999-01-01"), method, json!({})).await;
        let error = assert_refused(&reply, StatusCode::BAD_REQUEST, -32022);
        assert_eq!(
            error["data"]["supported"],
            json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
        );
        assert_eq!(error["data"]["requested"], "1999-01-01");
    }
}

#[tokio::test]
async fn an_unknown_version_in_meta_is_refused_with_the_supported_list() {
    let router = door();
    let params = json!({"_meta": envelope("1900-01-01")});
    let reply = stateless_with(
        &router,
        "tools/list",
        params,
        None,
        &[("mcp-protocol-version", Some("1900-01-01"))],
    )
    .await;
    let error = assert_refused(&reply, StatusCode::BAD_REQUEST, -32022);
    assert_eq!(error["data"]["requested"], "1900-01-01");
    assert_eq!(error["data"]["supported"][0], "2026-07-28");
}

#[tokio::test]
async fn the_envelope_and_the_mirrored_headers_must_agree() {
    let router = door();
    // no _meta at all, or one missing a required key: −32602
    let reply = stateless_with(&router, "tools/list", json!({}), None, &[]).await;
    assert_refused(&reply, StatusCode::BAD_REQUEST, -32602);
    let partial = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS}});
    let reply = stateless_with(&router, "tools/list", partial, None, &[]).await;
    let error = assert_refused(&reply, StatusCode::BAD_REQUEST, -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    // clientInfo is optional
    let bare = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {}}});
    stateless(&router, "tools/list", bare).await.result();
    // header absent, different, method or name disagreeing: −32020
    let cases: [(&str, Option<&str>); 4] = [
        ("mcp-protocol-version", None),
        ("mcp-protocol-version", Some("2025-11-25x")),
        ("mcp-method", Some("tools/list")),
        ("mcp-name", Some("other")),
    ];
    for (header, value) in cases {
        let params = json!({"name": "rich", "arguments": {}, "_meta": envelope(STATELESS)});
        let reply = stateless_with(
            &router,
            "tools/call",
            params,
            Some("rich"),
            &[(header, value)],
        )
        .await;
        assert_refused(&reply, StatusCode::BAD_REQUEST, -32020);
    }
    let params = json!({"name": "rich", "arguments": {}, "_meta": envelope(STATELESS)});
    let reply = stateless_with(&router, "tools/call", params, None, &[]).await;
    assert_refused(&reply, StatusCode::BAD_REQUEST, -32020);
    // a Base64-sentinel Mcp-Name is decoded before the comparison
    let params = json!({"uri": "toy://readme", "_meta": envelope(STATELESS)});
    let result = stateless_with(
        &router,
        "resources/read",
        params,
        Some("=?base64?dG95Oi8vcmVhZG1l?="),
        &[],
    )
    .await
    .result();
    assert_eq!(result["contents"][0]["text"], "hello");
}

#[tokio::test]
async fn server_discover_answers_versions_capabilities_and_identity() {
    let router = door();
    let result = stateless(&router, "server/discover", json!({}))
        .await
        .result();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["capabilities"]["prompts"].is_object());
    assert!(result["capabilities"]["resources"].is_object());
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "toy-user");
    assert!(info["version"].as_str().unwrap().starts_with("1.0.0+"));
    assert_eq!(result["instructions"], "Toy door for user");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
}

#[tokio::test]
async fn stateless_results_carry_result_type_and_cache_hints() {
    let router = door();
    for (method, params, cacheable) in [
        ("tools/list", json!({}), true),
        ("prompts/list", json!({}), true),
        ("resources/list", json!({}), true),
        ("resources/templates/list", json!({}), true),
        ("resources/read", json!({"uri": "toy://readme"}), true),
        ("prompts/get", json!({"name": "p"}), false),
    ] {
        let result = stateless(&router, method, params).await.result();
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result.get("ttlMs").is_some(), cacheable, "{method}");
        assert_eq!(result.get("cacheScope").is_some(), cacheable, "{method}");
    }
    let call = stateless(
        &router,
        "tools/call",
        json!({"name": "rich", "arguments": {}}),
    )
    .await
    .result();
    assert_eq!(call["resultType"], "complete");
    assert_eq!(call["structuredContent"]["version"], STATELESS);
    let tools = stateless(&router, "tools/list", json!({})).await.result();
    assert!(tools["tools"][0]["outputSchema"].is_object());
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_in_the_stateless_revision() {
    let router = door();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "no/such",
    ] {
        let reply = stateless(&router, method, json!({})).await;
        assert_refused(&reply, StatusCode::NOT_FOUND, -32601);
    }
    // ...while the handshake revisions keep 200 for an unknown method
    let reply = legacy(&router, Some("2025-11-25"), "no/such", json!({})).await;
    assert_refused(&reply, StatusCode::OK, -32601);
}

#[tokio::test]
async fn an_unknown_resource_is_invalid_params_in_the_stateless_revision() {
    let router = door();
    let reply = stateless(&router, "resources/read", json!({"uri": "toy://nope"})).await;
    assert_refused(&reply, StatusCode::OK, -32602);
    let reply = legacy(
        &router,
        Some("2025-11-25"),
        "resources/read",
        json!({"uri": "toy://nope"}),
    )
    .await;
    assert_refused(&reply, StatusCode::OK, -32002);
}

#[tokio::test]
async fn an_undeclared_client_capability_is_refused_with_what_is_required() {
    let router = door();
    let reply = stateless(
        &router,
        "tools/call",
        json!({"name": "sampler", "arguments": {}}),
    )
    .await;
    let error = assert_refused(&reply, StatusCode::BAD_REQUEST, -32021);
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    let mut meta = envelope(STATELESS);
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let result = stateless(
        &router,
        "tools/call",
        json!({"name": "sampler", "arguments": {}, "_meta": meta}),
    )
    .await
    .result();
    assert_eq!(result["structuredContent"]["sampled"], true);
}

#[tokio::test]
async fn input_required_round_trips_with_sealed_state_and_refuses_a_tampered_one() {
    let router = door();
    let first = stateless(
        &router,
        "tools/call",
        json!({"name": "asker", "arguments": {}}),
    )
    .await
    .result();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(
        first["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    assert!(
        first.get("ttlMs").is_none(),
        "interim results carry no caching hints"
    );
    let state = first["requestState"].as_str().unwrap().to_owned();
    assert!(
        !state.contains("round"),
        "the state is sealed, not shown: {state}"
    );
    let answer = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    let done = stateless(
        &router,
        "tools/call",
        json!({"name": "asker", "arguments": {}, "inputResponses": answer, "requestState": state}),
    )
    .await
    .result();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(
        done["structuredContent"],
        json!({"name": "Ada", "state": {"round": 1}})
    );
    // one changed character, or state issued for another tool, is −32602 and the handler never runs
    let mut tampered = state.clone().into_bytes();
    tampered[2] ^= 1;
    let tampered = String::from_utf8(tampered).unwrap();
    for (tool, sealed) in [("asker", tampered.as_str()), ("rich", state.as_str())] {
        let reply = stateless(
            &router,
            "tools/call",
            json!({"name": tool, "arguments": {}, "inputResponses": answer, "requestState": sealed}),
        )
        .await;
        let error = assert_refused(&reply, StatusCode::OK, -32602);
        assert!(
            error["message"].as_str().unwrap().contains("integrity"),
            "{error}"
        );
    }
    let reply = stateless(
        &router,
        "tools/call",
        json!({"name": "asker", "arguments": {}, "inputResponses": 5}),
    )
    .await;
    assert_refused(&reply, StatusCode::OK, -32602);
    // a handshake-era request cannot be asked mid-call
    let reply = legacy(
        &router,
        Some("2025-11-25"),
        "tools/call",
        json!({"name": "asker", "arguments": {}}),
    )
    .await;
    let error = assert_refused(&reply, StatusCode::OK, -32600);
    assert!(
        error["message"].as_str().unwrap().contains("2026-07-28"),
        "{error}"
    );
}
