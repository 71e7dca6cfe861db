//! Snapshots of the authorization server's JSON surface: both discovery documents (the
//! authorization server's and the protected resource's for each door kind), a registration's
//! answer, a token response's shape, and every `{error, error_description}` body of the
//! registration and token endpoints, each with its status and the headers a client acts on.
//! A change of surface shows up in review as a changed `.snap` file under `snapshots/`.
//!
//! SQLite only: the store behind these answers does not change them (the behaviour modules
//! run every refusal on both backends). Client ids, codes and tokens are random and are
//! redacted (`[client_id]`, `[token]`); times come from the harness's fake clock, so they stay.

use http::StatusCode;
use serde_json::{Value, json};

use crate::harness::{AGENT_A, AuthRequest, Harness, Resp, agent_door};

/// What a client sees of one answer: status, the headers it acts on, and the JSON body.
fn seen(r: &Resp) -> Value {
    let mut out = json!({"status": r.status.as_u16()});
    for name in [
        "cache-control",
        "access-control-allow-origin",
        "www-authenticate",
        "retry-after",
    ] {
        if let Some(value) = r.header(name) {
            out[name] = json!(value);
        }
    }
    out["body"] = r.json();
    out
}

/// `seen`, with the random client id replaced everywhere it appears.
fn seen_for(r: &Resp, client_id: &str) -> Value {
    let text = serde_json::to_string(&seen(r))
        .unwrap()
        .replace(client_id, "[client_id]");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn discovery_documents() {
    let h = Harness::sqlite().await;
    let server = h.get("/.well-known/oauth-authorization-server", &[]).await;
    insta::assert_json_snapshot!("authorization_server_metadata", seen(&server));
    let mut resources = serde_json::Map::new();
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/a/agenta001/mcp",
    ] {
        resources.insert(path.into(), seen(&h.get(path, &[]).await));
    }
    insta::assert_json_snapshot!("protected_resource_metadata", resources);
}

#[tokio::test]
async fn registration_answers() {
    let h = Harness::sqlite().await;
    let ok = h
        .register_from(
            "203.0.113.5",
            json!({"client_name": "Good", "redirect_uris": ["https://c.example/cb"]}),
        )
        .await;
    assert_eq!(ok.status, StatusCode::CREATED);
    insta::assert_json_snapshot!("registration_created", seen(&ok), {
        ".body.client_id" => "[client_id]",
    });

    let mut refusals = serde_json::Map::new();
    for (case, doc) in [
        (
            "confidential_auth_method",
            json!({"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
        ),
        (
            "client_credentials_grant",
            json!({"redirect_uris": ["https://c.example/cb"], "grant_types": ["authorization_code", "client_credentials"]}),
        ),
        (
            "token_response_type",
            json!({"redirect_uris": ["https://c.example/cb"], "response_types": ["token"]}),
        ),
        (
            "plain_http_redirect",
            json!({"redirect_uris": ["http://c.example/cb"]}),
        ),
        (
            "fragment_in_redirect",
            json!({"redirect_uris": ["https://c.example/cb#fragment"]}),
        ),
        ("no_redirect_uris", json!({"client_name": "x"})),
    ] {
        refusals.insert(
            case.into(),
            seen(&h.register_from("203.0.113.5", doc).await),
        );
    }
    let not_json = h
        .request(
            "POST",
            "/oauth/register",
            &[("content-type", "application/json")],
            "not json",
        )
        .await;
    refusals.insert("not_json".into(), seen(&not_json));
    insta::assert_json_snapshot!("registration_errors", refusals);
}

#[tokio::test]
async fn token_answers() {
    let h = Harness::sqlite().await;
    let req = h.client_request().await;
    let id = req.client_id.clone();

    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let mut errors = serde_json::Map::new();
    let code = h.code_for(&req, "alice@example.com", None).await;
    let granted = h.exchange(&req, &code).await;
    assert_eq!(granted.status, StatusCode::OK);
    insta::assert_json_snapshot!("token_granted", seen_for(&granted, &id), {
        ".body.access_token" => "[token]",
        ".body.refresh_token" => "[token]",
    });
    errors.insert(
        "code_replayed".into(),
        seen_for(&h.exchange(&req, &code).await, &id),
    );

    let code = h.code_for(&req, "alice@example.com", None).await;
    let other_door = AuthRequest {
        resource: agent_door(AGENT_A),
        ..req.clone()
    };
    errors.insert(
        "resource_mismatch".into(),
        seen_for(&h.exchange(&other_door, &code).await, &id),
    );
    let wider = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &tokens.refresh),
            ("client_id", &id),
            ("scope", "cr:read account:email"),
        ])
        .await;
    errors.insert("wider_scope".into(), seen_for(&wider, &id));
    let unsupported = h
        .post_token(&[("grant_type", "client_credentials"), ("client_id", &id)])
        .await;
    errors.insert("unsupported_grant_type".into(), seen_for(&unsupported, &id));
    let missing = h
        .post_token(&[("grant_type", "authorization_code"), ("code", "x")])
        .await;
    errors.insert("missing_parameters".into(), seen_for(&missing, &id));
    let unknown_client = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "x"),
            ("client_id", "nope"),
        ])
        .await;
    errors.insert("unknown_client".into(), seen_for(&unknown_client, &id));
    insta::assert_json_snapshot!("token_errors", errors);
}
