//! Elixir's OAuth with the scopes real clients send (RFC 6749 §3.3; `docs/mcp-oauth.md`,
//! "Scopes clients send"): `openid` and `offline_access` beside Elixir's own scopes are left
//! out of the grant, the token response and every refresh report what was granted, the token
//! works at its door; a request naming only unknown names gets the five standard scopes; a
//! defined scope beyond the grant is still `invalid_scope` at the token endpoint.

use serde_json::json;

use crate::browser::Browser;
use crate::oauth::{connect, refresh, spawn_oauth};
use crate::on_both_backends;
use crate::support::{ORIGIN, success};

const STANDARD: &str = "cr:read recordings:write collections:write account:write feedback:write";

async fn scopes_elixir_does_not_define_are_left_out(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-scopes-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    let door = format!("{ORIGIN}/mcp");
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &door,
        Some("openid offline_access feedback:write cr:read"),
    )
    .await
    .unwrap();
    assert_eq!(tokens.scope, "cr:read feedback:write");
    assert!(
        tokens.refresh.starts_with("ert_"),
        "a refresh token without asking"
    );
    success(
        &server
            .person_client(&tokens.access)
            .tool("elixir_docs", json!({}))
            .await,
    );
    let (status, body) = refresh(&base, &tokens).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "cr:read feedback:write");

    // A defined scope beyond the grant stays refused, unknown names beside it or not.
    let widen = reqwest::Client::new()
        .post(format!("{base}/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", body["refresh_token"].as_str().unwrap()),
            ("client_id", tokens.client_id.as_str()),
            ("scope", "offline_access recordings:write"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(widen.status(), 400);
    let widen: serde_json::Value = widen.json().await.unwrap();
    assert_eq!(widen["error"], "invalid_scope", "{widen}");

    // Only names Elixir does not define: the standard five, as for a client naming none
    // (the browser is signed in now, so this consent is one click).
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &door,
        Some("openid offline_access"),
    )
    .await
    .unwrap();
    assert_eq!(tokens.scope, STANDARD);
}

on_both_backends!(scopes_elixir_does_not_define_are_left_out);
