//! HTTP surface: POST only (other methods are 405 once signed in), request ids, JSON
//! responses, the `MCP-Protocol-Version` header.

use axum::body::Body;
use http::{Method, Request, StatusCode, header};
use serde_json::json;

use crate::support::{PATH, Toy, post, rpc_body};

/// A request of `method` with no body, asking for an event stream, with `bearer` if any.
fn bodiless(method: &Method, bearer: Option<&str>) -> Request<Body> {
    let mut request = Request::builder()
        .method(method.clone())
        .uri(PATH)
        .header(header::ACCEPT, "text/event-stream");
    if let Some(bearer) = bearer {
        request = request.header(header::AUTHORIZATION, format!("Bearer {bearer}"));
    }
    request.body(Body::empty()).unwrap()
}

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let toy = Toy::new();
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let reply = toy.send(bodiless(&method, Some("good-user"))).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"), "{method}");
        assert!(reply.header("mcp-session-id").is_none());
    }
}

/// A client that probes the door with GET (mcp-remote does, to decide whether to start its
/// sign-in before connecting) learns it must sign in: without a valid credential any method is
/// refused as a POST would be; only a signed-in caller gets the 405 above.
#[tokio::test]
async fn other_methods_without_a_valid_credential_are_refused_as_a_post_would_be() {
    let toy = Toy::new();
    for method in [Method::GET, Method::DELETE] {
        let none = toy.send(bodiless(&method, None)).await;
        assert_eq!(none.status, StatusCode::UNAUTHORIZED, "{method}");
        assert_eq!(none.header("www-authenticate"), Some("Bearer"), "{method}");
        assert!(none.header("allow").is_none(), "{method}");
        let unknown = toy.send(bodiless(&method, Some("nope"))).await;
        assert_eq!(unknown.status, StatusCode::UNAUTHORIZED, "{method}");
        assert_eq!(
            unknown.header("www-authenticate"),
            Some("Bearer error=\"invalid_token\""),
            "{method}"
        );
        let elsewhere = toy.send(bodiless(&method, Some("elsewhere"))).await;
        assert_eq!(elsewhere.status, StatusCode::FORBIDDEN, "{method}");
        let down = toy.send(bodiless(&method, Some("down"))).await;
        assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE, "{method}");
    }
}

#[tokio::test]
async fn every_response_has_its_own_request_id_and_json_content_type() {
    let toy = Toy::new();
    // `send` already checks each id is a UUID; here: they differ, and JSON bodies say so.
    let a = toy.rpc(Some("good-user"), "ping", json!({})).await;
    let b = toy.rpc(Some("good-user"), "ping", json!({})).await;
    let c = toy.rpc(None, "ping", json!({})).await;
    assert_ne!(a.header("x-request-id"), b.header("x-request-id"));
    assert_ne!(b.header("x-request-id"), c.header("x-request-id"));
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert_eq!(c.header("content-type"), Some("application/json"));
    assert!(a.header("mcp-session-id").is_none());
}

#[tokio::test]
async fn unsupported_protocol_version_header_is_400() {
    let toy = Toy::new();
    let mut request = post(Some("good-user"), rpc_body(1, "ping", json!({})));
    request
        .headers_mut()
        .insert("mcp-protocol-version", "1999-01-01".parse().unwrap());
    let reply = toy.send(request).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    // UnsupportedProtocolVersionError, as the current revision (2026-07-28) defines it
    assert_eq!(reply.error_code(), -32022);
    let data = reply.json()["error"]["data"].clone();
    assert_eq!(
        data["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert_eq!(data["requested"], "1999-01-01");
}

#[tokio::test]
async fn supported_protocol_version_headers_pass() {
    let toy = Toy::new();
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut request = post(Some("good-user"), rpc_body(1, "ping", json!({})));
        request
            .headers_mut()
            .insert("mcp-protocol-version", version.parse().unwrap());
        let reply = toy.send(request).await;
        assert_eq!(reply.result(), json!({}), "{version}");
    }
}
