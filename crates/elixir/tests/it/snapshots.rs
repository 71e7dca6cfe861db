//! Snapshots of Elixir's wire surface: `tools/list` and `initialize` per door kind (person
//! `/mcp`, agent `/a/<id>/mcp`, integration `/i/<id>/mcp`: each kind sees its own tools), the
//! discovery documents and the 401 challenge of each door kind with mcp-oauth wired in, the
//! JSON-RPC errors (parse, invalid request, method not found, unknown and hidden tools, the
//! 403 scope refusal with its `WWW-Authenticate`), the tool error envelope with its closed
//! codes, and the `{error, error_description}` bodies of the token and registration
//! endpoints. A change of surface shows up in review as a changed `.snap` file under
//! `snapshots/`; the behaviour modules keep the detailed asserts.
//!
//! SQLite only: the backend changes none of these answers (the behaviour modules run each on
//! both). The listener's port-0 address becomes `[addr]`, the agents' public ids
//! `[agent_id]`/`[integration_id]`, request ids and other UUIDs `[uuid]`; times come from the
//! harness's fake clock (2026-01-01), so `as_of` and quota resets stay as they are.

use serde_json::{Value, json};
use testkit::mcp::{Client, Reply};

use crate::oauth::spawn_oauth;
use crate::support::{READ_ONLY_TOKEN, Server, fresh_url, spawn};

/// Replaces what varies between runs or machines: the address, the agents' ids, UUIDs.
fn redact(server: &Server, value: Value) -> Value {
    testkit::snapshot::redact(
        value,
        &[
            (&server.addr.to_string(), "[addr]"),
            (&server.agent.agent.public_id, "[agent_id]"),
            (&server.integration.agent.public_id, "[integration_id]"),
        ],
    )
}

/// What a client sees of one MCP exchange: status, the headers it acts on, the body; a tool
/// result's text, which is JSON in Elixir, is parsed so the snapshot shows its fields.
fn seen(server: &Server, reply: &Reply) -> Value {
    let mut out = json!({"status": reply.status});
    for name in ["www-authenticate", "retry-after"] {
        let value = reply.header(name);
        if !value.is_empty() {
            out[name] = json!(value);
        }
    }
    let mut body = reply.body.clone();
    if let Some(text) = body["result"]["content"][0]["text"].as_str()
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        body["result"]["content"][0]["text"] = json!({"(parsed JSON)": parsed});
    }
    out["body"] = body;
    redact(server, out)
}

/// What a client sees of one plain HTTP answer.
async fn seen_http(server: &Server, r: reqwest::Response) -> Value {
    let mut out = json!({"status": r.status().as_u16()});
    for name in [
        "cache-control",
        "www-authenticate",
        "access-control-allow-origin",
    ] {
        if let Some(v) = r.headers().get(name).and_then(|v| v.to_str().ok()) {
            out[name] = json!(v);
        }
    }
    let text = r.text().await.unwrap();
    out["body"] = serde_json::from_str(&text).unwrap_or(Value::String(text));
    redact(server, out)
}

async fn sqlite() -> (testkit::db::TempDir, String) {
    let (dir, url) = fresh_url(&crate::support::Backend::Sqlite)
        .await
        .expect("sqlite");
    (dir.expect("a SQLite directory"), url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_and_initialize_per_kind() {
    let (_dir, url) = sqlite().await;
    let server = spawn(&url).await;
    for (kind, client) in [
        ("person", server.person()),
        ("agent", server.agent()),
        ("integration", server.integration()),
    ] {
        let list = client.request("tools/list", json!({})).await;
        insta::assert_json_snapshot!(
            format!("tools_list_{kind}"),
            redact(&server, list.result().clone())
        );
        let init = client.initialize("2025-11-25").await;
        insta::assert_json_snapshot!(
            format!("initialize_{kind}"),
            redact(&server, init.result().clone())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_documents_and_challenges() {
    let (_dir, url) = sqlite().await;
    let outbox = testkit::db::TempDir::new("elixir-snapshots-");
    let server = spawn_oauth(&url, outbox.path()).await;
    let http = reqwest::Client::new();
    let agent_path = format!("/a/{}/mcp", server.agent.agent.public_id);
    let integration_path = format!("/i/{}/mcp", server.integration.agent.public_id);

    let r = http
        .get(server.url("/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap();
    insta::assert_json_snapshot!("authorization_server_metadata", seen_http(&server, r).await);

    let mut resources = serde_json::Map::new();
    let mut challenges = serde_json::Map::new();
    for (kind, door) in [
        ("person", "/mcp"),
        ("agent", agent_path.as_str()),
        ("integration", integration_path.as_str()),
    ] {
        let r = http
            .get(server.url(&format!("/.well-known/oauth-protected-resource{door}")))
            .send()
            .await
            .unwrap();
        resources.insert(kind.into(), seen_http(&server, r).await);
        let r = Client::new(server.url(door), None)
            .initialize("2025-11-25")
            .await;
        challenges.insert(format!("{kind}_no_token"), seen(&server, &r));
        let r = Client::new(server.url(door), Some("eat_not-a-token".into()))
            .initialize("2025-11-25")
            .await;
        challenges.insert(format!("{kind}_unknown_token"), seen(&server, &r));
    }
    let r = http
        .get(server.url("/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap();
    resources.insert("root".into(), seen_http(&server, r).await);
    insta::assert_json_snapshot!("protected_resource_metadata", resources);
    insta::assert_json_snapshot!("door_challenges", challenges);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_error_bodies() {
    let (_dir, url) = sqlite().await;
    let outbox = testkit::db::TempDir::new("elixir-snapshots-");
    let server = spawn_oauth(&url, outbox.path()).await;
    let http = reqwest::Client::new();
    let token = |form: &'static str| {
        http.post(server.url("/oauth/token"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
    };
    let register = |doc: Value| http.post(server.url("/oauth/register")).json(&doc).send();
    let errors = json!({
        "token_unsupported_grant_type": seen_http(&server, token("grant_type=client_credentials&client_id=x").await.unwrap()).await,
        "token_missing_client_id": seen_http(&server, token("grant_type=authorization_code&code=x").await.unwrap()).await,
        "token_unknown_client": seen_http(&server, token("grant_type=refresh_token&refresh_token=x&client_id=nope").await.unwrap()).await,
        "register_plain_http_redirect": seen_http(&server, register(json!({"redirect_uris": ["http://c.example/cb"]})).await.unwrap()).await,
        "register_confidential_client": seen_http(&server, register(json!({"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "client_secret_basic"})).await.unwrap()).await,
    });
    insta::assert_json_snapshot!("oauth_errors", errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_errors() {
    let (_dir, url) = sqlite().await;
    let server = spawn(&url).await;
    let person = server.person();
    let errors = json!({
        "parse_error": seen(&server, &person.post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#).await),
        "invalid_request_batch": seen(&server, &person.post_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await),
        "method_not_found": seen(&server, &person.request("no/such/method", json!({})).await),
        "invalid_params_unknown_tool": seen(&server, &person.tool("elixir_doc", json!({})).await),
        "hidden_tool_integration": seen(&server, &server.integration().tool("elixir_settings", json!({})).await),
        "insufficient_scope_403": seen(&server, &server.person_client(READ_ONLY_TOKEN).tool("elixir_feedback", json!({"message": "hi"})).await),
    });
    insta::assert_json_snapshot!("jsonrpc_errors", errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_error_envelopes() {
    let (_dir, url) = sqlite().await;
    let server = spawn(&url).await;
    let person = server.person();
    let errors = json!({
        "bad_request_schema": seen(&server, &person.tool("elixir_docs", json!({"pages": "x"})).await),
        "bad_request_handler": seen(&server, &person.tool("elixir_docs", json!({"section": "hourly-rate"})).await),
        "not_found": seen(&server, &person.tool("elixir_docs", json!({"page": "limit"})).await),
    });
    for case in errors.as_object().unwrap().values() {
        assert_eq!(case["body"]["result"]["isError"], true, "{case}");
    }
    insta::assert_json_snapshot!("tool_errors", errors);
}
