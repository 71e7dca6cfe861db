//! JSON-RPC framing through the door: one well-formed object, or HTTP 400.

use http::StatusCode;
use serde_json::json;

use crate::support::{Reply, Toy, post};

async fn raw(toy: &Toy, body: &str) -> Reply {
    toy.send(post(Some("good-user"), body.to_owned())).await
}

fn assert_400(reply: &Reply, code: i64) {
    assert_eq!(
        reply.status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.error_code(), code);
    assert_eq!(reply.json()["id"], serde_json::Value::Null);
    // SURFACE-style `data: {hint}`: one short, non-empty next step, nothing else
    let data = &reply.json()["error"]["data"];
    let hint = data["hint"].as_str().unwrap_or_default();
    assert!(!hint.is_empty(), "{data}");
    assert_eq!(data.as_object().map(|o| o.len()), Some(1), "{data}");
}

/// A ping whose params reach `depth` levels of nesting (the message object is level 1).
fn nested(depth: usize) -> String {
    let opens = "[".repeat(depth - 2);
    let closes = "]".repeat(depth - 2);
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{opens}1{closes}}}}}"#)
}

#[tokio::test]
async fn malformed_json_is_400_parse_error() {
    let toy = Toy::new();
    assert_400(
        &raw(&toy, r#"{"jsonrpc":"2.0","id":1,"method":"ping""#).await,
        -32700,
    );
    assert_400(&raw(&toy, "not json").await, -32700);
    assert_400(&raw(&toy, "").await, -32700);
}

#[tokio::test]
async fn batches_are_400() {
    let toy = Toy::new();
    assert_400(
        &raw(&toy, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await,
        -32600,
    );
    assert_400(&raw(&toy, "[]").await, -32600);
}

#[tokio::test]
async fn nesting_32_deep_passes_and_33_is_400() {
    let toy = Toy::new();
    assert_eq!(raw(&toy, &nested(32)).await.result(), json!({}));
    assert_400(&raw(&toy, &nested(33)).await, -32600);
}

#[tokio::test]
async fn nul_and_lone_surrogates_are_400() {
    let toy = Toy::new();
    let with = |s: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{s}"}}}}}}"#
        )
    };
    assert_400(&raw(&toy, &with(r"a\u0000")).await, -32600);
    assert_400(&raw(&toy, &with(r"\ud800")).await, -32600);
    assert_400(&raw(&toy, &with(r"x\udc00")).await, -32600);
    assert_400(&raw(&toy, &with("a\u{0}")).await, -32600);
    assert_eq!(toy.probes.echo_calls(), 0);
    // a proper pair is fine
    let ok = raw(&toy, &with(r"\ud83d\ude00")).await;
    assert_eq!(ok.result()["structuredContent"], json!({"text": "😀"}));
}

#[tokio::test]
async fn envelope_shape_errors_are_400() {
    let toy = Toy::new();
    assert_400(&raw(&toy, r#"{"id":1,"method":"ping"}"#).await, -32600);
    assert_400(
        &raw(&toy, r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).await,
        -32600,
    );
    assert_400(&raw(&toy, r#"{"jsonrpc":"2.0","id":1}"#).await, -32600);
    assert_400(
        &raw(&toy, r#"{"jsonrpc":"2.0","id":1,"method":7}"#).await,
        -32600,
    );
    assert_400(
        &raw(&toy, r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#).await,
        -32600,
    );
    assert_400(
        &raw(
            &toy,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
        )
        .await,
        -32600,
    );
    assert_400(&raw(&toy, "42").await, -32600);
}

#[tokio::test]
async fn string_ids_are_echoed() {
    let toy = Toy::new();
    let reply = raw(&toy, r#"{"jsonrpc":"2.0","id":"abc-1","method":"ping"}"#).await;
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": "abc-1", "result": {}})
    );
}

#[tokio::test]
async fn framing_hints_name_the_fix() {
    let toy = Toy::new();
    let hint = |reply: Reply| {
        reply.json()["error"]["data"]["hint"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        hint(raw(&toy, "[]").await),
        "Send one JSON-RPC 2.0 request object per POST; batches are not supported."
    );
    assert!(hint(raw(&toy, "not json").await).contains("not valid JSON"));
    assert!(hint(raw(&toy, &nested(33)).await).contains("32 levels"));
    assert!(hint(raw(&toy, r#"{"id":1,"method":"ping"}"#).await).contains("jsonrpc \"2.0\""));
}
