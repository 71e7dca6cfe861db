//! The resource-server API the doors use (tests 25–31): verification, challenges, grant
//! edits and refusal counting. A real door is the product's; here the API is exercised
//! directly, with the status and challenge a door would send.

use http::{HeaderMap, HeaderValue, StatusCode};
use mcp_oauth::{SetScopesError, TokenError};

use crate::harness::{
    AGENT_A, AGENT_B, AuthRequest, Backend, DEFAULT_SCOPES, Harness, PERSON_DOOR, agent_door,
};
use crate::on_both;

fn bearer(token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    h
}

async fn n25_no_token_401_challenge(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    for (door, metadata) in [
        (
            PERSON_DOOR.to_owned(),
            "https://auth.example/.well-known/oauth-protected-resource/mcp".to_owned(),
        ),
        (
            agent_door(AGENT_A),
            format!("https://auth.example/.well-known/oauth-protected-resource/a/{AGENT_A}/mcp"),
        ),
    ] {
        let err = h
            .server
            .verify_bearer(&HeaderMap::new(), &door)
            .await
            .unwrap_err();
        assert_eq!(err, TokenError::Missing);
        assert_eq!(err.status(), StatusCode::UNAUTHORIZED);
        let challenge = h.server.challenge(&door, &err);
        assert_eq!(
            challenge,
            format!("Bearer resource_metadata=\"{metadata}\", scope=\"{DEFAULT_SCOPES}\"")
        );
        assert!(!challenge.contains("account:email"));
        // The metadata URL the challenge names serves this door.
        let path = metadata.trim_start_matches("https://auth.example");
        assert_eq!(h.get(path, &[]).await.json()["resource"], door.as_str());
    }
    let bad = h
        .server
        .verify_bearer(&bearer("eat_nope"), PERSON_DOOR)
        .await
        .unwrap_err();
    assert_eq!(bad, TokenError::Invalid);
    assert!(
        h.server
            .challenge(PERSON_DOOR, &bad)
            .starts_with("Bearer error=\"invalid_token\", resource_metadata=")
    );
}
on_both!(n25_no_token_401_challenge);

async fn n26_token_for_other_door_refused(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        resource: agent_door(AGENT_A),
        ..h.client_request().await
    };
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let grant = h
        .server
        .verify_access_token(&tokens.access, &agent_door(AGENT_A))
        .await
        .unwrap();
    assert_eq!(grant.subject.kind, "agent");
    assert_eq!(grant.subject.id, AGENT_A);
    assert_eq!(grant.account_id, "acc-alice");
    assert!(!grant.personal);
    for door in [
        agent_door(AGENT_B),
        PERSON_DOOR.to_owned(),
        agent_door("nosuchagent1"),
    ] {
        let err = h
            .server
            .verify_access_token(&tokens.access, &door)
            .await
            .unwrap_err();
        assert!(matches!(err, TokenError::WrongResource { .. }), "{door}");
        assert_eq!(err.status(), StatusCode::FORBIDDEN);
        assert!(
            matches!(err.to_auth_error(), mcp_door::AuthError::Forbidden { ref code, .. } if code == "wrong_resource")
        );
    }
}
on_both!(n26_token_for_other_door_refused);

async fn n27_token_in_query_or_cookie_ignored(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        scope: Some("cr:read account:email".into()),
        ..h.client_request().await
    };
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let mut headers = HeaderMap::new();
    headers.insert(
        "cookie",
        HeaderValue::from_str(&format!("access_token={}", tokens.access)).unwrap(),
    );
    assert_eq!(
        h.server
            .verify_bearer(&headers, PERSON_DOOR)
            .await
            .unwrap_err(),
        TokenError::Missing
    );
    let r = h
        .get(
            &format!("/oauth/userinfo?access_token={}", tokens.access),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let cookie = format!("access_token={}", tokens.access);
    let r = h.get("/oauth/userinfo", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    // The header works.
    let auth = format!("Bearer {}", tokens.access);
    assert_eq!(
        h.get("/oauth/userinfo", &[("authorization", &auth)])
            .await
            .status,
        StatusCode::OK
    );
}
on_both!(n27_token_in_query_or_cookie_ignored);

async fn n28_expired_access_token_401(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    h.advance_secs(3599);
    assert!(
        h.server
            .verify_access_token(&tokens.access, PERSON_DOOR)
            .await
            .is_ok()
    );
    h.advance_secs(1);
    let err = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap_err();
    assert!(matches!(err, TokenError::Expired { .. }));
    assert_eq!(err.status(), StatusCode::UNAUTHORIZED);
    assert!(
        h.server
            .challenge(PERSON_DOOR, &err)
            .contains("error=\"invalid_token\"")
    );
    // The refresh token still works and brings a fresh access token.
    let r = h.refresh(&req, &tokens.refresh).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["expires_in"], 3600);
}
on_both!(n28_expired_access_token_401);

async fn n29_missing_scope_403_narrowing_and_revocation(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        scope: Some("cr:read".into()),
        ..h.client_request().await
    };
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let grant = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(grant.scopes, ["cr:read"]);
    assert!(!grant.has_scope("recordings:write"));
    assert_eq!(
        h.server
            .insufficient_scope_challenge(PERSON_DOOR, &grant.scopes, "recordings:write"),
        "Bearer error=\"insufficient_scope\", scope=\"cr:read recordings:write\", \
         resource_metadata=\"https://auth.example/.well-known/oauth-protected-resource/mcp\""
    );
    // Widened on the connections page: the same token carries it on the next call.
    let set = h
        .server
        .set_connection_scopes(
            "acc-alice",
            &grant.grant_id,
            &["recordings:write".into(), "cr:read".into()],
        )
        .await
        .unwrap();
    assert_eq!(set, ["cr:read", "recordings:write"]);
    let again = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap();
    assert!(again.has_scope("recordings:write"));
    // Narrowed: gone on the next call.
    h.server
        .set_connection_scopes("acc-alice", &grant.grant_id, &["recordings:write".into()])
        .await
        .unwrap();
    let narrowed = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(narrowed.scopes, ["recordings:write"]);
    assert_eq!(
        h.server
            .insufficient_scope_challenge(PERSON_DOOR, &narrowed.scopes, "cr:read"),
        "Bearer error=\"insufficient_scope\", scope=\"cr:read recordings:write\", \
         resource_metadata=\"https://auth.example/.well-known/oauth-protected-resource/mcp\""
    );
    // Never widened into the unasked scope; other accounts cannot edit it.
    assert!(matches!(
        h.server
            .set_connection_scopes("acc-alice", &grant.grant_id, &["account:email".into()])
            .await,
        Err(SetScopesError::Invalid(_))
    ));
    assert!(matches!(
        h.server
            .set_connection_scopes("acc-bob", &grant.grant_id, &["cr:read".into()])
            .await,
        Err(SetScopesError::NotFound)
    ));
    // Revoked: 401 on the next call.
    assert!(
        !h.server
            .revoke_connection("acc-bob", &grant.grant_id)
            .await
            .unwrap()
    );
    assert!(
        h.server
            .revoke_connection("acc-alice", &grant.grant_id)
            .await
            .unwrap()
    );
    let err = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap_err();
    assert!(matches!(err, TokenError::Revoked { .. }));
    assert_eq!(err.status(), StatusCode::UNAUTHORIZED);
    assert!(h.server.connections("acc-alice").await.unwrap().is_empty());
}
on_both!(n29_missing_scope_403_narrowing_and_revocation);

async fn n30_userinfo_scope_and_missing_address(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let base = h.client_request().await;
    let plain = h.tokens(&base, "alice@example.com", None).await;
    assert!(
        !plain.scope.contains("account:email"),
        "never granted unasked"
    );
    let auth = format!("Bearer {}", plain.access);
    let r = h.get("/oauth/userinfo", &[("authorization", &auth)]).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.error_code(), "insufficient_scope");
    assert_eq!(
        r.header("www-authenticate"),
        Some("Bearer error=\"insufficient_scope\", scope=\"account:email\"")
    );
    assert_eq!(r.header("cache-control"), Some("no-store"));

    let req = AuthRequest {
        scope: Some("cr:read account:email".into()),
        ..base.clone()
    };
    let tokens = h.tokens(&req, "alice@example.com", Some(&[])).await;
    assert_eq!(
        tokens.scope, "account:email",
        "the fixed line is kept, the unticked box is not"
    );
    let auth = format!("Bearer {}", tokens.access);
    let r = h.get("/oauth/userinfo", &[("authorization", &auth)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.json(),
        serde_json::json!({"sub": "acc-alice", "email": "alice@example.com", "email_verified": true, "kind": "person"})
    );
    assert_eq!(r.header("cache-control"), Some("no-store"));

    // An account whose address is not on file: 404 email_unavailable.
    h.accounts.clear_email("acc-alice");
    let r = h.get("/oauth/userinfo", &[("authorization", &auth)]).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code(), "email_unavailable");

    // No bearer, or an agent-door token: 401 invalid_token.
    let r = h.get("/oauth/userinfo", &[]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.error_code(), "invalid_token");
    let agent_req = AuthRequest {
        resource: agent_door(AGENT_B),
        scope: Some("cr:read account:email".into()),
        ..base
    };
    let agent = h.tokens(&agent_req, "bob@example.com", None).await;
    let auth = format!("Bearer {}", agent.access);
    assert_eq!(
        h.get("/oauth/userinfo", &[("authorization", &auth)])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
}
on_both!(n30_userinfo_scope_and_missing_address);

async fn n31_revoked_or_foreign_credentials(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        resource: agent_door(AGENT_A),
        ..h.client_request().await
    };
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    // Foreign: valid at another door → 403 wrong_resource, counted against its grant.
    let foreign = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap_err();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    assert_eq!(foreign.reason(), "wrong_resource");
    let grant_id = foreign.grant_id().unwrap().to_owned();
    h.server
        .record_refusal(&grant_id, "198.51.100.1", foreign.reason())
        .await
        .unwrap();
    h.server
        .record_refusal(&grant_id, "198.51.100.1", foreign.reason())
        .await
        .unwrap();
    // Revoked: 401 invalid_token, counted the same way.
    assert!(
        h.server
            .revoke_connection("acc-alice", &grant_id)
            .await
            .unwrap()
    );
    let revoked = h
        .server
        .verify_access_token(&tokens.access, &agent_door(AGENT_A))
        .await
        .unwrap_err();
    assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
    assert!(matches!(
        revoked.to_auth_error(),
        mcp_door::AuthError::Invalid(_)
    ));
    h.server
        .record_refusal(&grant_id, "198.51.100.2", revoked.reason())
        .await
        .unwrap();
    // Unknown credentials are counted under "unknown".
    let unknown = h
        .server
        .verify_access_token("eat_forged", PERSON_DOOR)
        .await
        .unwrap_err();
    assert_eq!(unknown.grant_id(), None);
    let counts = h.server.refusals(&grant_id, 1).await.unwrap();
    let mut seen: Vec<(String, String, i64)> = counts
        .iter()
        .map(|c| (c.address.clone(), c.reason.clone(), c.count))
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("198.51.100.1".into(), "wrong_resource".into(), 2),
            ("198.51.100.2".into(), "revoked".into(), 1)
        ]
    );
    // A new day starts a new count; old days stay visible for the window asked.
    h.advance_secs(24 * 3600);
    h.server
        .record_refusal(&grant_id, "198.51.100.1", "revoked")
        .await
        .unwrap();
    assert_eq!(h.server.refusals(&grant_id, 1).await.unwrap().len(), 1);
    assert_eq!(h.server.refusals(&grant_id, 2).await.unwrap().len(), 3);
}
on_both!(n31_revoked_or_foreign_credentials);

async fn door_authenticator_maps_and_counts(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let peer = Some("198.51.100.40".parse().unwrap());
    let headers = bearer(&tokens.access);
    let request = mcp_door::AuthRequest {
        headers: &headers,
        path: "/mcp",
        peer,
    };
    let principal = h
        .server
        .authenticate_door(&request, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(principal.kind, "person");
    assert_eq!(principal.subject, "acc-alice");
    assert_eq!(principal.scopes.join(" "), DEFAULT_SCOPES);
    let grant = principal.ext::<mcp_oauth::GrantView>().unwrap().clone();
    assert_eq!(principal.credential, grant.grant_id);
    // Refused at another door: 403 wrong_resource, counted against the grant.
    let request = mcp_door::AuthRequest {
        headers: &headers,
        path: "/a/x/mcp",
        peer,
    };
    let err = h
        .server
        .authenticate_door(&request, &agent_door(AGENT_A))
        .await
        .unwrap_err();
    assert!(matches!(err, mcp_door::AuthError::Forbidden { .. }));
    let counts = h.server.refusals(&grant.grant_id, 1).await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(
        (counts[0].address.as_str(), counts[0].count),
        ("198.51.100.40", 1)
    );
    // No token: 401 with the door's challenge, not counted.
    let empty = HeaderMap::new();
    let request = mcp_door::AuthRequest {
        headers: &empty,
        path: "/mcp",
        peer,
    };
    let err = h
        .server
        .authenticate_door(&request, PERSON_DOOR)
        .await
        .unwrap_err();
    assert_eq!(err, mcp_door::AuthError::Missing);
    assert_eq!(
        h.server.door_challenge(PERSON_DOOR, &err),
        format!(
            "Bearer resource_metadata=\"https://auth.example/.well-known/oauth-protected-resource/mcp\", scope=\"{DEFAULT_SCOPES}\""
        )
    );
    assert!(h.server.refusals("unknown", 1).await.unwrap().is_empty());
}
on_both!(door_authenticator_maps_and_counts);
