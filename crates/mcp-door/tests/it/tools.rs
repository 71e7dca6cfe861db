//! tools/list per principal kind, the fingerprint, and every outcome of tools/call.

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::{
    BOOM_DETAIL, FLAKY_DETAIL, Probes, Strict500Presenter, Toy, echo_schema, toy_tools,
};
use mcp_door::Catalog;

fn names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tools_list_is_per_kind() {
    let toy = Toy::new();
    let user = toy
        .rpc(Some("good-user"), "tools/list", json!({}))
        .await
        .result();
    let admin = toy
        .rpc(Some("good-admin"), "tools/list", json!({}))
        .await
        .result();
    assert_eq!(
        names(&user),
        ["echo", "scoped", "slow", "flaky", "boom", "hold"]
    );
    assert_eq!(
        names(&admin),
        ["echo", "secret", "scoped", "slow", "flaky", "boom", "hold"]
    );
    // exactly the declaration, nothing newer than the protocol versions we speak
    assert_eq!(
        user["tools"][0],
        json!({"name": "echo", "title": "Echo", "description": "Echoes text back.", "inputSchema": echo_schema()})
    );
    assert_eq!(user["tools"][0], admin["tools"][0]);
}

#[test]
fn fingerprint_is_12_hex_per_kind_and_follows_the_declarations() {
    let probes = Probes::default();
    let catalog = Catalog::new(toy_tools(&probes, "Echoes text back.")).unwrap();
    let user = catalog.fingerprint("user");
    let admin = catalog.fingerprint("admin");
    for f in [&user, &admin] {
        assert_eq!(f.len(), 12, "{f}");
        assert!(
            f.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{f}"
        );
    }
    assert_ne!(user, admin);
    // kinds that see the same tools share a fingerprint, and it is stable
    assert_eq!(user, catalog.fingerprint("player"));
    assert_eq!(
        user,
        Catalog::new(toy_tools(&probes, "Echoes text back."))
            .unwrap()
            .fingerprint("user")
    );
    // one changed description changes every kind's fingerprint
    let changed = Catalog::new(toy_tools(&probes, "Echoes text back!")).unwrap();
    assert_ne!(changed.fingerprint("user"), user);
    assert_ne!(changed.fingerprint("admin"), admin);
}

#[test]
fn fingerprint_is_over_canonical_json() {
    // the same declaration with its schema keys written in another order
    let schema: serde_json::Value = serde_json::from_str(
        r#"{"additionalProperties":false,"required":["text"],"properties":{"text":{"maxLength":5,"type":"string"}},"type":"object"}"#,
    )
    .unwrap();
    let decl = |schema: serde_json::Value| {
        mcp_door::ToolDecl::new("echo", "Echo", "d", schema, |_ctx, _args| async move {
            Ok(mcp_door::tool_json(json!({})))
        })
    };
    let a = Catalog::new(vec![decl(echo_schema())]).unwrap();
    let b = Catalog::new(vec![decl(schema)]).unwrap();
    assert_eq!(a.fingerprint("user"), b.fingerprint("user"));
}

#[tokio::test]
async fn unknown_tool_is_invalid_params() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "nope", json!({})).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.error_code(), -32602);
    let missing_name = toy
        .rpc(Some("good-user"), "tools/call", json!({"arguments": {}}))
        .await;
    assert_eq!(missing_name.error_code(), -32602);
    let bad_arguments = toy
        .rpc(
            Some("good-user"),
            "tools/call",
            json!({"name": "echo", "arguments": [1]}),
        )
        .await;
    assert_eq!(bad_arguments.error_code(), -32602);
}

#[tokio::test]
async fn a_hidden_tool_is_method_not_found_with_the_kind() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "secret", json!({})).await;
    assert_eq!(reply.status, StatusCode::OK);
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32601);
    assert_eq!(body["error"]["data"]["kind"], "user");
    assert!(body["error"]["data"]["hint"].is_string());
    let admin = toy.call("good-admin", "secret", json!({})).await.result();
    assert_eq!(
        admin["structuredContent"],
        json!({"secret": 42, "kind": "admin"})
    );
}

#[tokio::test]
async fn a_missing_scope_is_403_insufficient_scope() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "scoped", json!({})).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.error_code(), -32003);
    assert_eq!(reply.json()["id"], 1);
    assert_eq!(reply.json()["error"]["data"]["required_scope"], "write");
    let www = reply.header("www-authenticate").unwrap();
    assert!(www.starts_with("Bearer "), "{www}");
    assert!(www.contains(r#"error="insufficient_scope""#), "{www}");
    assert!(www.contains(r#"scope="read write""#), "{www}");
    // a writer holds the scope
    let ok = toy.call("good-writer", "scoped", json!({})).await.result();
    assert_eq!(ok["structuredContent"], json!({"wrote": true}));
}

#[tokio::test]
async fn arguments_are_validated_before_the_handler() {
    let toy = Toy::new();
    // five characters pass, multi-byte ones included (10 bytes in UTF-8)
    for text in ["abcde", "ąęółż", ""] {
        let result = toy
            .call("good-user", "echo", json!({"text": text}))
            .await
            .result();
        assert_eq!(result["structuredContent"], json!({"text": text}));
    }
    assert_eq!(toy.probes.echo_calls(), 3);

    let too_long = toy
        .call("good-user", "echo", json!({"text": "ąęółżź"}))
        .await;
    let result = too_long.result();
    assert_eq!(result["isError"], true);
    let text = too_long.tool_text();
    assert!(
        text.starts_with("422: Invalid arguments: /text: "),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");

    let too_long_ascii = toy
        .call("good-user", "echo", json!({"text": "abcdef"}))
        .await;
    assert!(
        too_long_ascii
            .tool_text()
            .starts_with("422: Invalid arguments: /text: ")
    );

    let extra = toy
        .call("good-user", "echo", json!({"text": "a", "extra": 1}))
        .await;
    assert_eq!(extra.result()["isError"], true);
    let text = extra.tool_text();
    assert!(text.starts_with("422: Invalid arguments: /: "), "{text}");
    assert!(text.contains("extra"), "{text}");

    let missing = toy.call("good-user", "echo", json!({})).await;
    assert!(
        missing
            .tool_text()
            .starts_with("422: Invalid arguments: /: ")
    );

    let wrong_type = toy.call("good-user", "echo", json!({"text": 5})).await;
    assert!(
        wrong_type
            .tool_text()
            .starts_with("422: Invalid arguments: /text: ")
    );

    assert_eq!(
        toy.probes.echo_calls(),
        3,
        "the handler ran on invalid arguments"
    );
    assert!(result.get("resultType").is_none(), "{result}");
}

#[tokio::test]
async fn a_tool_over_its_deadline_is_504() {
    let toy = Toy::new();
    let started = std::time::Instant::now();
    let reply = toy.call("good-user", "slow", json!({})).await;
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(reply.error_code(), -32000);
    assert_eq!(reply.json()["id"], 1);
    // tool_deadline is 200 ms; the tool sleeps 30 s
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[tokio::test]
async fn an_unavailable_dependency_is_503_without_details() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "flaky", json!({})).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.retry_after(), 1);
    assert_eq!(reply.error_code(), -32000);
    let body = String::from_utf8_lossy(&reply.body);
    assert!(
        !body.contains("10.0.0.7") && !body.contains(FLAKY_DETAIL),
        "{body}"
    );
}

#[tokio::test]
async fn an_internal_failure_is_32603_without_details() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "boom", json!({})).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.error_code(), -32603);
    let body = String::from_utf8_lossy(&reply.body);
    assert!(
        !body.contains("hunter2") && !body.contains(BOOM_DETAIL),
        "{body}"
    );
    // the message names the request id so an operator can find the log line
    let request_id = reply.header("x-request-id").unwrap();
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(request_id),
        "{body}"
    );
    // and `data` carries it alone, as data
    assert_eq!(
        reply.json()["error"]["data"],
        json!({"request_id": request_id})
    );
}

#[tokio::test]
async fn a_presenter_can_make_32603_an_http_500() {
    let toy = Toy::builder()
        .presenter(Arc::new(Strict500Presenter))
        .build();
    let reply = toy.call("good-user", "boom", json!({})).await;
    assert_eq!(reply.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(reply.error_code(), -32603);
    let body = String::from_utf8_lossy(&reply.body);
    assert!(
        !body.contains("hunter2") && !body.contains(BOOM_DETAIL),
        "{body}"
    );
    let request_id = reply.header("x-request-id").unwrap();
    assert_eq!(
        reply.json()["error"]["data"],
        json!({"request_id": request_id})
    );
    // other answers of that door are unaffected
    let ok = toy.call("good-user", "echo", json!({"text": "hi"})).await;
    assert_eq!(ok.status, StatusCode::OK);
}

#[tokio::test]
async fn lenient_arguments_are_stripped_and_reported_not_refused() {
    let toy = Toy::new();
    // the listed names are removed before validation and reported to the handler
    let reply = toy
        .call(
            "good-user",
            "echo",
            json!({"text": "hi", "acting_for": "u-1", "label": "Ann"}),
        )
        .await;
    assert_eq!(
        reply.result()["structuredContent"],
        json!({"text": "hi", "ignored": ["acting_for", "label"]})
    );
    // only the ones actually sent are reported
    let reply = toy
        .call("good-user", "echo", json!({"text": "hi", "label": "Ann"}))
        .await;
    assert_eq!(
        reply.result()["structuredContent"],
        json!({"text": "hi", "ignored": ["label"]})
    );
    // any other undeclared argument is still refused, lenient ones alongside or not
    let reply = toy
        .call(
            "good-user",
            "echo",
            json!({"text": "hi", "acting_for": "u-1", "other": 1}),
        )
        .await;
    assert_eq!(reply.result()["isError"], json!(true));
    assert!(reply.tool_text().contains("other"), "{}", reply.tool_text());
    // another kind gets no leniency: the same argument is refused
    let reply = toy
        .call(
            "good-admin",
            "echo",
            json!({"text": "hi", "acting_for": "u-1"}),
        )
        .await;
    assert_eq!(reply.result()["isError"], json!(true));
    assert!(
        reply.tool_text().contains("acting_for"),
        "{}",
        reply.tool_text()
    );
    assert_eq!(toy.probes.echo_calls(), 2);
}

#[tokio::test]
async fn a_successful_call_carries_text_and_structured_content() {
    let toy = Toy::new();
    let reply = toy.call("good-user", "echo", json!({"text": "hi"})).await;
    let result = reply.result();
    assert_eq!(result["content"][0]["type"], "text");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"text": "hi"}));
    assert_eq!(result["structuredContent"], json!({"text": "hi"}));
    assert!(result.get("resultType").is_none(), "{result}");
    assert_ne!(result.get("isError"), Some(&json!(true)));
    assert_eq!(toy.probes.echo_calls(), 1);
}
