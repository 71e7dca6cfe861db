//! Admission through the door (in-process backend, fake clock): rate, concurrency, the
//! pre-auth gate, and an unreachable backend.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::StatusCode;
use serde_json::json;

use crate::support::{Reply, Toy, post, rpc_body, send, small_config};
use mcp_door::{Admission, AdmissionError, DoorConfig, Limits, Permit, PreAuthGate};

fn limits(rate: u32, credential: u32, global: u32) -> Limits {
    Limits {
        rate_per_window: rate,
        window: Duration::from_secs(60),
        credential_concurrency: credential,
        global_concurrency: global,
        ..Limits::default()
    }
}

/// Room for a held tool call: the deadline must not end it.
fn patient() -> DoorConfig {
    DoorConfig {
        tool_deadline: Duration::from_secs(30),
        ..small_config()
    }
}

async fn ping(toy: &Toy, token: &str) -> Reply {
    toy.rpc(Some(token), "ping", json!({})).await
}

fn assert_429(reply: &Reply, retry_after: u64) {
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.error_code(), -32000);
    assert!(reply.retry_after() >= 1);
    assert_eq!(reply.retry_after(), retry_after);
}

/// Starts a `hold` call on `token` and returns once its handler is running.
async fn hold(toy: &Toy, token: &str) -> tokio::task::JoinHandle<Reply> {
    let router = toy.router.clone();
    let request = post(
        Some(token),
        rpc_body(9, "tools/call", json!({"name": "hold", "arguments": {}})),
    );
    let task = tokio::spawn(async move { send(&router, request).await });
    tokio::time::timeout(Duration::from_secs(5), toy.probes.entered.notified())
        .await
        .expect("hold never started");
    task
}

#[tokio::test]
async fn the_fourth_request_in_a_minute_is_429_until_the_window_moves() {
    let toy = Toy::builder().limits(limits(3, 10, 10)).build();
    for _ in 0..3 {
        assert_eq!(ping(&toy, "good-user").await.result(), json!({}));
    }
    let refused = ping(&toy, "good-user").await;
    assert_429(&refused, 60);
    // tools/call and initialize are counted the same way
    assert_429(
        &toy.call("good-user", "echo", json!({"text": "a"})).await,
        60,
    );
    assert_eq!(toy.probes.echo_calls(), 0);
    // another credential of the same kind has its own budget
    assert_eq!(ping(&toy, "good-user.2").await.result(), json!({}));

    toy.clock.advance_millis(60_000);
    for _ in 0..3 {
        assert_eq!(ping(&toy, "good-user").await.result(), json!({}));
    }
    assert_429(&ping(&toy, "good-user").await, 60);
}

#[tokio::test]
async fn the_window_slides_and_refusals_spend_nothing() {
    let toy = Toy::builder().limits(limits(3, 10, 10)).build();
    for _ in 0..3 {
        assert_eq!(ping(&toy, "good-user").await.status, StatusCode::OK);
        toy.clock.advance_millis(10_000);
    }
    // admitted at 0, 10, 20 s; now 30 s: the oldest frees at 60 s
    assert_429(&ping(&toy, "good-user").await, 30);
    assert_429(&ping(&toy, "good-user").await, 30);
    toy.clock.advance_millis(30_000);
    // exactly one slot opened, and the refusals did not take it
    assert_eq!(ping(&toy, "good-user").await.status, StatusCode::OK);
    assert_429(&ping(&toy, "good-user").await, 10);
}

#[tokio::test]
async fn refused_authentication_spends_no_budget() {
    let toy = Toy::builder().limits(limits(3, 10, 10)).build();
    for _ in 0..5 {
        assert_eq!(ping(&toy, "good-").await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            toy.send(post(None, rpc_body(1, "ping", json!({}))))
                .await
                .status,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            ping(&toy, "down").await.status,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
    for _ in 0..3 {
        assert_eq!(ping(&toy, "good-user").await.status, StatusCode::OK);
    }
    assert_429(&ping(&toy, "good-user").await, 60);
    // and a 429 answer is not a 401: the bad token is still 401 while the good one is limited
    assert_eq!(ping(&toy, "nope").await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_second_concurrent_request_on_one_credential_is_429() {
    let toy = Toy::builder()
        .config(patient())
        .limits(limits(100, 1, 10))
        .build();
    let held = hold(&toy, "good-user").await;

    assert_429(&ping(&toy, "good-user").await, 1);
    assert_429(
        &toy.call("good-user", "echo", json!({"text": "a"})).await,
        1,
    );
    // another credential is not affected
    assert_eq!(ping(&toy, "good-user.2").await.status, StatusCode::OK);

    toy.probes.release.notify_one();
    let first = held.await.unwrap();
    assert_eq!(first.result()["structuredContent"], json!({"held": true}));
    // the slot is free again once the held request answered
    assert_eq!(ping(&toy, "good-user").await.status, StatusCode::OK);
}

#[tokio::test]
async fn global_concurrency_spans_credentials() {
    let toy = Toy::builder()
        .config(patient())
        .limits(limits(100, 5, 1))
        .build();
    let held = hold(&toy, "good-user").await;
    assert_429(&ping(&toy, "good-admin").await, 1);
    toy.probes.release.notify_one();
    assert_eq!(held.await.unwrap().status, StatusCode::OK);
    assert_eq!(ping(&toy, "good-admin").await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_full_pre_auth_gate_is_429_and_the_gate_is_left_after_authentication() {
    let gate = PreAuthGate::new(1);
    let toy = Toy::builder()
        .config(patient())
        .pre_auth(gate.clone())
        .build();

    let occupied = gate.try_enter().unwrap();
    let refused = ping(&toy, "good-user").await;
    assert_429(&refused, 1);
    // nobody got as far as the authenticator
    assert!(toy.auth.peers.lock().unwrap().is_empty());
    drop(occupied);
    assert_eq!(ping(&toy, "good-user").await.status, StatusCode::OK);

    // a request past authentication no longer holds the gate
    let held = hold(&toy, "good-user").await;
    assert_eq!(ping(&toy, "good-admin").await.status, StatusCode::OK);
    toy.probes.release.notify_one();
    assert_eq!(held.await.unwrap().status, StatusCode::OK);
}

struct Unreachable;

#[async_trait]
impl Admission for Unreachable {
    async fn admit(&self, _credential: &str) -> Result<Permit, AdmissionError> {
        Err(AdmissionError::Unavailable(
            "connection refused (redis://10.0.0.9)".into(),
        ))
    }
}

#[tokio::test]
async fn an_unreachable_admission_backend_is_503_without_details() {
    let toy = Toy::builder().admission(Arc::new(Unreachable)).build();
    let reply = ping(&toy, "good-user").await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.retry_after(), 1);
    assert_eq!(reply.error_code(), -32000);
    assert!(!String::from_utf8_lossy(&reply.body).contains("10.0.0.9"));
    // authentication still comes first
    assert_eq!(ping(&toy, "nope").await.status, StatusCode::UNAUTHORIZED);
}
