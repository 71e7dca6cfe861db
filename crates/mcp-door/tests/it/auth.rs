//! Authentication: from the headers alone, before any body byte is read.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use bytes::Bytes;
use http::{StatusCode, header};
use serde_json::json;

use crate::support::{Toy, post, rpc_body};

fn assert_401(reply: &crate::support::Reply, challenge: &str) {
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let www = reply.header("www-authenticate").expect("WWW-Authenticate");
    assert!(www.starts_with("Bearer"), "{www}");
    assert_eq!(www, challenge);
    assert_eq!(reply.error_code(), -32000);
}

#[tokio::test]
async fn missing_malformed_and_unknown_bearers_are_401() {
    let toy = Toy::new();
    for method in ["ping", "initialize", "tools/list"] {
        let body = || rpc_body(1, method, json!({"protocolVersion": "2025-11-25"}));
        assert_401(&toy.send(post(None, body())).await, "Bearer");
        assert_401(
            &toy.send(post(Some("a b"), body())).await,
            "Bearer error=\"invalid_token\"",
        );
        assert_401(
            &toy.send(post(Some("good-"), body())).await,
            "Bearer error=\"invalid_token\"",
        );
        assert_401(
            &toy.send(post(Some("nope"), body())).await,
            "Bearer error=\"invalid_token\"",
        );
        let mut basic = post(None, body());
        basic
            .headers_mut()
            .insert(header::AUTHORIZATION, "Basic dXNlcjpwYXNz".parse().unwrap());
        assert_401(&toy.send(basic).await, "Bearer");
    }
    // the same request with a good token goes through
    assert_eq!(
        toy.rpc(Some("good-user"), "ping", json!({})).await.result(),
        json!({})
    );
}

#[tokio::test]
async fn a_bad_token_is_refused_before_the_body_is_read() {
    let toy = Toy::new();
    let polled = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&polled);
    let stream = futures::stream::once(async move {
        flag.store(true, Ordering::SeqCst);
        Ok::<_, Infallible>(Bytes::from(vec![b' '; 1 << 20]))
    });
    let reply = toy
        .send(post(Some("nope"), Body::from_stream(stream)))
        .await;
    assert_401(&reply, "Bearer error=\"invalid_token\"");
    assert!(
        !polled.load(Ordering::SeqCst),
        "the body was read before authentication"
    );

    // a declared 1 MB body is still 401, not 413
    let mut request = post(None, vec![b' '; 1 << 20]);
    request
        .headers_mut()
        .insert(header::CONTENT_LENGTH, (1u64 << 20).into());
    assert_401(&toy.send(request).await, "Bearer");
}

#[tokio::test]
async fn credential_store_down_is_503() {
    let toy = Toy::new();
    let reply = toy.rpc(Some("down"), "ping", json!({})).await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.retry_after(), 1);
    assert_eq!(reply.error_code(), -32000);
    assert!(reply.header("www-authenticate").is_none());
}

#[tokio::test]
async fn a_credential_for_another_door_is_403() {
    let toy = Toy::new();
    let reply = toy.rpc(Some("elsewhere"), "ping", json!({})).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let body = reply.json();
    assert_eq!(body["error"]["code"], -32003);
    assert_eq!(body["error"]["data"]["code"], "wrong_door");
    assert_eq!(
        body["error"]["message"],
        "This token belongs to another door"
    );
    assert!(
        reply
            .header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
}
