//! The body: read within a time limit and a size cap, with or without Content-Length.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::{StatusCode, header};
use serde_json::json;

use crate::support::{Toy, padded_ping, post};

const CAP: usize = 307_200;

fn declared(body: Vec<u8>) -> http::Request<Body> {
    let len = body.len() as u64;
    let mut request = post(Some("good-user"), body);
    request
        .headers_mut()
        .insert(header::CONTENT_LENGTH, len.into());
    request
}

/// The body as a stream of 16 KiB chunks: no Content-Length, no size hint.
fn streamed(body: Vec<u8>) -> http::Request<Body> {
    let chunks: Vec<Result<Bytes, Infallible>> = body
        .chunks(16 * 1024)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let request = post(
        Some("good-user"),
        Body::from_stream(futures::stream::iter(chunks)),
    );
    assert!(request.headers().get(header::CONTENT_LENGTH).is_none());
    request
}

#[tokio::test]
async fn a_body_of_exactly_the_cap_passes_with_content_length() {
    let toy = Toy::new();
    let reply = toy.send(declared(padded_ping(CAP))).await;
    assert_eq!(reply.result(), json!({}));
    assert_eq!(reply.json()["id"], 7);
}

#[tokio::test]
async fn one_byte_over_the_cap_is_413_with_content_length() {
    let toy = Toy::new();
    let reply = toy.send(declared(padded_ping(CAP + 1))).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.error_code(), -32000);
}

#[tokio::test]
async fn a_streamed_body_of_exactly_the_cap_passes() {
    let toy = Toy::new();
    let reply = toy.send(streamed(padded_ping(CAP))).await;
    assert_eq!(reply.result(), json!({}));
}

#[tokio::test]
async fn a_streamed_body_one_byte_over_the_cap_is_413() {
    let toy = Toy::new();
    let reply = toy.send(streamed(padded_ping(CAP + 1))).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.error_code(), -32000);
}

#[tokio::test]
async fn a_body_that_never_finishes_is_408_after_the_body_timeout() {
    let toy = Toy::new();
    let first = futures::stream::once(async {
        Ok::<_, Infallible>(Bytes::from_static(br#"{"jsonrpc":"2.0","#))
    });
    let body = Body::from_stream(first.chain(futures::stream::pending()));
    let started = Instant::now();
    let reply = toy.send(post(Some("good-user"), body)).await;
    let elapsed = started.elapsed();
    assert_eq!(reply.status, StatusCode::REQUEST_TIMEOUT);
    assert_eq!(reply.error_code(), -32000);
    // body_timeout is 300 ms in the toy config
    assert!(
        elapsed >= Duration::from_millis(290),
        "answered after {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "answered after {elapsed:?}"
    );
}
