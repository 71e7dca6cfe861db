//! Snapshots of the door's wire surface through the toy product: `tools/list` and
//! `initialize` per principal kind, and the body (with status and `WWW-Authenticate`) of every
//! JSON-RPC error and tool-level error the door itself writes. A change of surface shows up in
//! review as a changed `.snap` file under `snapshots/`; what a test asserts in detail stays in
//! the behaviour modules. The toy door has no database and no port; the only minted id is the
//! request id (a UUID, in the `x-request-id` header, left out, and in a −32603 body), which
//! [`seen`] replaces with `[uuid]`.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::{Reply, Toy, post};

/// What a client sees of one exchange: status, the headers a client acts on, and the body,
/// with every UUID (request ids) replaced by `[uuid]`.
fn seen(reply: &Reply) -> Value {
    let mut out = json!({"status": reply.status.as_u16()});
    for name in ["www-authenticate", "retry-after", "allow"] {
        if let Some(value) = reply.header(name) {
            out[name] = json!(value);
        }
    }
    out["body"] = if reply.body.is_empty() {
        Value::Null
    } else {
        reply.json()
    };
    testkit::snapshot::redact(out, &[])
}

async fn raw(toy: &Toy, token: Option<&str>, body: &str) -> Reply {
    toy.send(post(token, body.to_owned())).await
}

#[tokio::test]
async fn tools_list_per_kind() {
    let toy = Toy::new();
    for kind in ["user", "admin"] {
        let list = toy
            .rpc(Some(&format!("good-{kind}")), "tools/list", json!({}))
            .await
            .result();
        insta::assert_json_snapshot!(format!("tools_list_{kind}"), list);
    }
}

#[tokio::test]
async fn initialize_per_kind() {
    let toy = Toy::new();
    for kind in ["user", "admin"] {
        let result = toy
            .rpc(
                Some(&format!("good-{kind}")),
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "snapshots", "version": "0"}
                }),
            )
            .await
            .result();
        insta::assert_json_snapshot!(format!("initialize_{kind}"), result);
    }
}

#[tokio::test]
async fn jsonrpc_errors() {
    let toy = Toy::new();
    let user = Some("good-user");
    let errors = json!({
        "parse_error": seen(&raw(&toy, user, r#"{"jsonrpc":"2.0","id":1,"method":"ping""#).await),
        "invalid_request_batch": seen(&raw(&toy, user, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await),
        "invalid_request_version": seen(&raw(&toy, user, r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).await),
        "method_not_found": seen(&toy.rpc(user, "no/such/method", json!({})).await),
        "invalid_params_unknown_tool": seen(&toy.call("good-user", "nope", json!({})).await),
        "invalid_params_no_name": seen(&toy.rpc(user, "tools/call", json!({"arguments": {}})).await),
        "hidden_tool": seen(&toy.call("good-user", "secret", json!({})).await),
        "unavailable_dependency": seen(&toy.call("good-user", "flaky", json!({})).await),
        "internal_failure": seen(&toy.call("good-user", "boom", json!({})).await),
    });
    insta::assert_json_snapshot!("jsonrpc_errors", errors);
}

#[tokio::test]
async fn auth_refusals() {
    let toy = Toy::new();
    let refusals = json!({
        "no_bearer_401": seen(&toy.rpc(None, "tools/list", json!({})).await),
        "unknown_bearer_401": seen(&toy.rpc(Some("nope"), "tools/list", json!({})).await),
        "another_door_403": seen(&toy.rpc(Some("elsewhere"), "tools/list", json!({})).await),
        "insufficient_scope_403": seen(&toy.call("good-user", "scoped", json!({})).await),
        "store_down_503": seen(&toy.rpc(Some("down"), "tools/list", json!({})).await),
    });
    insta::assert_json_snapshot!("auth_refusals", refusals);
}

#[tokio::test]
async fn tool_level_errors() {
    let toy = Toy::new();
    let invalid = toy
        .call("good-user", "echo", json!({"text": "abcdef", "extra": 1}))
        .await;
    assert_eq!(invalid.status, StatusCode::OK);
    insta::assert_json_snapshot!("tool_invalid_arguments", seen(&invalid));
}
