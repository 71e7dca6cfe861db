//! A door's edge: the DNS-rebinding rule (`Origin` and, bound to loopback, `Host`), CORS for
//! the allowed origins, 415 for a POST that is not JSON — each refusal a 403/415 with a JSON-RPC
//! error body, before authentication, changing nothing.

use std::sync::Arc;

use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use mcp_door::{DoorEdge, OriginPolicy};
use serde_json::Value;
use tower::ServiceExt;

use crate::support::{PATH, Toy, rpc_body};

fn toy(allowed: &[&str]) -> Toy {
    let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
    let policy = OriginPolicy::new(Some("https://mcp.example"), &allowed, true).unwrap();
    Toy::builder()
        .edge(DoorEdge {
            origins: Arc::new(policy),
            ..DoorEdge::default()
        })
        .build()
}

fn ping(headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::post(PATH).header(header::AUTHORIZATION, "Bearer good-user");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(rpc_body(1, "ping", serde_json::json!({}))))
        .unwrap()
}

const JSON: (&str, &str) = ("content-type", "application/json");

async fn send(toy: &Toy, request: Request<Body>) -> (StatusCode, http::HeaderMap, Value) {
    let response = toy.router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let json = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (parts.status, parts.headers, json)
}

fn assert_refusal(status: StatusCode, headers: &http::HeaderMap, body: &Value, want: StatusCode) {
    assert_eq!(status, want, "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32000);
    assert!(body["error"]["data"]["hint"].is_string(), "{body}");
    assert!(headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn the_rebinding_request_of_the_conformance_suite_is_403() {
    let toy = toy(&[]);
    let (s, h, b) = send(
        &toy,
        ping(&[
            JSON,
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ]),
    )
    .await;
    assert_refusal(s, &h, &b, StatusCode::FORBIDDEN);
    assert!(
        b["error"]["message"].as_str().unwrap().contains("Host"),
        "{b}"
    );
    // a foreign origin alone, to the right host
    let (s, h, b) = send(
        &toy,
        ping(&[
            JSON,
            ("host", "mcp.example"),
            ("origin", "http://evil.example.com"),
        ]),
    )
    .await;
    assert_refusal(s, &h, &b, StatusCode::FORBIDDEN);
    assert!(
        b["error"]["message"].as_str().unwrap().contains("Origin"),
        "{b}"
    );
    // refused before authentication: nobody was authenticated
    assert!(toy.auth.peers.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_public_origin_loopback_hosts_and_no_origin_pass() {
    let toy = toy(&[]);
    for headers in [
        vec![JSON],
        vec![
            JSON,
            ("host", "mcp.example"),
            ("origin", "https://mcp.example"),
        ],
        vec![JSON, ("host", "127.0.0.1:8080")],
        vec![JSON, ("host", "localhost:8080")],
        vec![
            JSON,
            ("host", "[::1]:8080"),
            ("origin", "https://mcp.example:443"),
        ],
    ] {
        let (s, _, b) = send(&toy, ping(&headers)).await;
        assert_eq!(s, StatusCode::OK, "{headers:?}: {b}");
        assert_eq!(b["result"], serde_json::json!({}));
    }
    // one character off the public origin, or its scheme, is foreign
    for origin in [
        "https://mcp.example.com",
        "http://mcp.example",
        "https://mcp.exampl",
        "null",
    ] {
        let (s, h, b) = send(&toy, ping(&[JSON, ("origin", origin)])).await;
        assert_refusal(s, &h, &b, StatusCode::FORBIDDEN);
    }
}

#[tokio::test]
async fn an_allowed_origin_gets_its_preflight_and_cors_headers() {
    let toy = toy(&["https://inspector.example"]);
    let preflight = Request::options(PATH)
        .header("origin", "https://inspector.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, mcp-protocol-version",
        )
        .body(Body::empty())
        .unwrap();
    let (s, h, _) = send(&toy, preflight).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_eq!(
        h["access-control-allow-origin"],
        "https://inspector.example"
    );
    assert_eq!(h["access-control-allow-methods"], "POST");
    let allowed = h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in ["authorization", "content-type", "mcp-protocol-version"] {
        assert!(allowed.contains(name), "{allowed}");
    }
    // the call itself: CORS headers, WWW-Authenticate readable on a 401
    let (s, h, _) = send(&toy, ping(&[JSON, ("origin", "https://inspector.example")])).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        h["access-control-allow-origin"],
        "https://inspector.example"
    );
    let mut anonymous = ping(&[JSON, ("origin", "https://inspector.example")]);
    anonymous.headers_mut().remove(header::AUTHORIZATION);
    let (s, h, _) = send(&toy, anonymous).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert_eq!(h["access-control-expose-headers"], "WWW-Authenticate");
    assert!(h.contains_key(header::WWW_AUTHENTICATE));
    // a preflight from an origin not allowed is 403, without CORS headers
    let foreign = Request::options(PATH)
        .header("origin", "https://other.example")
        .header("access-control-request-method", "POST")
        .body(Body::empty())
        .unwrap();
    let (s, h, b) = send(&toy, foreign).await;
    assert_refusal(s, &h, &b, StatusCode::FORBIDDEN);
    assert!(!h.contains_key("access-control-allow-origin"));
    // the public origin needs no CORS: it gets none
    let (_, h, _) = send(&toy, ping(&[JSON, ("origin", "https://mcp.example")])).await;
    assert!(!h.contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn a_post_that_is_not_json_is_415() {
    let toy = toy(&[]);
    for content_type in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        let mut headers = Vec::new();
        if let Some(ct) = content_type {
            headers.push(("content-type", ct));
        }
        let (s, h, b) = send(&toy, ping(&headers)).await;
        assert_refusal(s, &h, &b, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(h["accept"], "application/json");
    }
    for ok in [
        "application/json",
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
    ] {
        let (s, _, b) = send(&toy, ping(&[("content-type", ok)])).await;
        assert_eq!(s, StatusCode::OK, "{ok}: {b}");
    }
    assert!(
        toy.auth.peers.lock().unwrap().len() == 3,
        "only the JSON posts were authenticated"
    );
}
