//! The token endpoint (tests 15–24).

use http::StatusCode;
use mcp_oauth::TokenError;

use crate::harness::{AGENT_A, AuthRequest, Backend, Harness, PERSON_DOOR, agent_door, tokens_of};
use crate::on_both;

fn assert_error(r: &crate::harness::Resp, code: &str) {
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.error_code(), code, "{}", r.body);
    assert!(r.json()["error_description"].is_string());
    assert_eq!(r.header("cache-control"), Some("no-store"));
}

async fn n15_code_replay_revokes_tokens(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let code = h.code_for(&req, "alice@example.com", None).await;
    let first = h.exchange(&req, &code).await;
    assert_eq!(first.status, StatusCode::OK);
    let tokens = tokens_of(&first);
    assert!(
        h.server
            .verify_access_token(&tokens.access, PERSON_DOOR)
            .await
            .is_ok()
    );
    let replay = h.exchange(&req, &code).await;
    assert_error(&replay, "invalid_grant");
    assert!(matches!(
        h.server
            .verify_access_token(&tokens.access, PERSON_DOOR)
            .await,
        Err(TokenError::Revoked { .. })
    ));
    assert_error(&h.refresh(&req, &tokens.refresh).await, "invalid_grant");
}
on_both!(n15_code_replay_revokes_tokens);

/// Two parallel exchanges of one code (a client retrying after a timeout, on two instances):
/// RFC 6749 §4.1.2's replay rule applies. Usually one answer is 200 and the other
/// `invalid_grant`, and the loser's replay has revoked the winner's grant, so its tokens are
/// refused; when the loser lands between the winner's redemption and its grant, both are
/// `invalid_grant` and no grant is made. Either way no working connection is left and the
/// client must authorize again, which works.
async fn n15_parallel_code_exchanges_leave_no_working_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let code = h.code_for(&req, "alice@example.com", None).await;
    let twin = Harness::router_of(&h.instance().await);
    let body = crate::harness::form(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("client_id", &req.client_id),
        ("redirect_uri", &req.redirect_uri),
        ("code_verifier", &req.verifier),
        ("resource", &req.resource),
    ]);
    let (a, b) = tokio::join!(
        h.request_to(&h.router, "POST", "/oauth/token", &body),
        h.request_to(&twin, "POST", "/oauth/token", &body)
    );
    let answers = [&a, &b];
    let winners: Vec<_> = answers
        .iter()
        .filter(|r| r.status == StatusCode::OK)
        .collect();
    assert!(winners.len() <= 1, "{} / {}", a.body, b.body);
    for loser in answers.iter().filter(|r| r.status != StatusCode::OK) {
        assert_error(loser, "invalid_grant");
    }
    if let Some(winner) = winners.first() {
        let winner = tokens_of(winner);
        assert!(matches!(
            h.server
                .verify_access_token(&winner.access, PERSON_DOOR)
                .await,
            Err(TokenError::Revoked { .. })
        ));
        assert_error(&h.refresh(&req, &winner.refresh).await, "invalid_grant");
    }
    let live = h.server.connections("acc-alice").await.unwrap();
    assert!(
        live.iter().all(|c| c.client_id != req.client_id),
        "{live:?}"
    );
    // The way back: a new authorization.
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    assert!(
        h.server
            .verify_access_token(&tokens.access, PERSON_DOOR)
            .await
            .is_ok()
    );
}
on_both!(n15_parallel_code_exchanges_leave_no_working_grant);

async fn n16_code_older_than_300s_invalid_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let code = h.code_for(&req, "alice@example.com", None).await;
    h.advance_secs(301);
    assert_error(&h.exchange(&req, &code).await, "invalid_grant");
    // At 300 s exactly it is still good.
    let code = h.code_for(&req, "alice@example.com", None).await;
    h.advance_secs(300);
    assert_eq!(h.exchange(&req, &code).await.status, StatusCode::OK);
}
on_both!(n16_code_older_than_300s_invalid_grant);

async fn n17_wrong_or_missing_verifier_invalid_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    for verifier in [Some("w".repeat(43)), None] {
        let code = h.code_for(&req, "alice@example.com", None).await;
        let mut pairs = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("client_id", req.client_id.clone()),
            ("redirect_uri", req.redirect_uri.clone()),
            ("resource", req.resource.clone()),
        ];
        if let Some(v) = verifier {
            pairs.push(("code_verifier", v));
        }
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_error(&h.post_token(&refs).await, "invalid_grant");
    }
}
on_both!(n17_wrong_or_missing_verifier_invalid_grant);

async fn n18_code_from_other_client_invalid_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let other = h.register(&["https://client.example/callback"]).await;
    let code = h.code_for(&req, "alice@example.com", None).await;
    let stolen = AuthRequest {
        client_id: other,
        ..req.clone()
    };
    assert_error(&h.exchange(&stolen, &code).await, "invalid_grant");
}
on_both!(n18_code_from_other_client_invalid_grant);

async fn n19_redirect_uri_mismatch_invalid_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let client_id = h
        .register(&["https://client.example/a", "https://client.example/b"])
        .await;
    let req = AuthRequest {
        client_id,
        redirect_uri: "https://client.example/a".into(),
        resource: PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "c".repeat(50),
    };
    let code = h.code_for(&req, "alice@example.com", None).await;
    let other = AuthRequest {
        redirect_uri: "https://client.example/b".into(),
        ..req.clone()
    };
    assert_error(&h.exchange(&other, &code).await, "invalid_grant");
}
on_both!(n19_redirect_uri_mismatch_invalid_grant);

async fn n20_resource_mismatch_invalid_target(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let code = h.code_for(&req, "alice@example.com", None).await;
    let other = AuthRequest {
        resource: agent_door(AGENT_A),
        ..req.clone()
    };
    assert_error(&h.exchange(&other, &code).await, "invalid_target");
}
on_both!(n20_resource_mismatch_invalid_target);

async fn n21_wider_scope_invalid_scope(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        scope: Some("cr:read".into()),
        ..h.client_request().await
    };
    let code = h.code_for(&req, "alice@example.com", None).await;
    let wide = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("client_id", req.client_id.as_str()),
        ("redirect_uri", req.redirect_uri.as_str()),
        ("code_verifier", req.verifier.as_str()),
        ("resource", req.resource.as_str()),
        ("scope", "cr:read recordings:write"),
    ];
    assert_error(&h.post_token(&wide).await, "invalid_scope");

    let tokens = h.tokens(&req, "alice@example.com", None).await;
    assert_eq!(tokens.scope, "cr:read");
    let r = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &tokens.refresh),
            ("client_id", &req.client_id),
            ("scope", "cr:read account:email"),
        ])
        .await;
    assert_error(&r, "invalid_scope");
    // The refused request did not spend the refresh token; naming the granted scope is fine.
    let r = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &tokens.refresh),
            ("client_id", &req.client_id),
            ("scope", "cr:read"),
        ])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["scope"], "cr:read");
}
on_both!(n21_wider_scope_invalid_scope);

async fn n22_rotated_refresh_revokes_grant(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let first = h.tokens(&req, "alice@example.com", None).await;
    let second = h.refresh(&req, &first.refresh).await;
    assert_eq!(second.status, StatusCode::OK);
    let second = tokens_of(&second);
    assert_ne!(second.refresh, first.refresh);
    assert!(
        h.server
            .verify_access_token(&second.access, PERSON_DOOR)
            .await
            .is_ok()
    );
    assert_error(&h.refresh(&req, &first.refresh).await, "invalid_grant");
    assert_error(&h.refresh(&req, &second.refresh).await, "invalid_grant");
    for access in [&first.access, &second.access] {
        let err = h
            .server
            .verify_access_token(access, PERSON_DOOR)
            .await
            .unwrap_err();
        assert!(matches!(err, TokenError::Revoked { .. }));
        assert_eq!(err.status(), StatusCode::UNAUTHORIZED);
    }
}
on_both!(n22_rotated_refresh_revokes_grant);

async fn n23_parallel_refreshes_strict_by_default(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let (a, b) = tokio::join!(
        h.refresh(&req, &tokens.refresh),
        h.refresh(&req, &tokens.refresh)
    );
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::BAD_REQUEST],
        "{} / {}",
        a.body,
        b.body
    );
    // Strict: the loser's replay revoked the grant, so the winner's tokens are dead too.
    let winner = if a.status == StatusCode::OK { &a } else { &b };
    let winner = tokens_of(winner);
    assert!(
        h.server
            .verify_access_token(&winner.access, PERSON_DOOR)
            .await
            .is_err()
    );
    assert_error(&h.refresh(&req, &winner.refresh).await, "invalid_grant");
}
on_both!(n23_parallel_refreshes_strict_by_default);

/// The same race across two server instances on one database.
async fn n23_parallel_refreshes_across_instances(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let twin = Harness::router_of(&h.instance().await);
    let body = crate::harness::form(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", &tokens.refresh),
        ("client_id", &req.client_id),
    ]);
    let (a, b) = tokio::join!(
        h.request_to(&h.router, "POST", "/oauth/token", &body),
        h.request_to(&twin, "POST", "/oauth/token", &body)
    );
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::BAD_REQUEST]);
    let winner = tokens_of(if a.status == StatusCode::OK { &a } else { &b });
    assert!(
        h.server
            .verify_access_token(&winner.access, PERSON_DOOR)
            .await
            .is_err()
    );
}
on_both!(n23_parallel_refreshes_across_instances);

async fn n23_grace_returns_the_same_successor_pair(backend: Backend) {
    let grace = |c: &mut mcp_oauth::AuthServerConfig| {
        c.refresh_grace = Some(std::time::Duration::from_secs(10))
    };
    let Some(h) = Harness::with(backend, grace).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let (a, b) = tokio::join!(
        h.refresh(&req, &tokens.refresh),
        h.refresh(&req, &tokens.refresh)
    );
    assert_eq!(
        (a.status, b.status),
        (StatusCode::OK, StatusCode::OK),
        "{} / {}",
        a.body,
        b.body
    );
    let (a, b) = (tokens_of(&a), tokens_of(&b));
    assert_eq!((&a.access, &a.refresh), (&b.access, &b.refresh));
    h.advance_secs(5);
    let c = h.refresh(&req, &tokens.refresh).await;
    assert_eq!(tokens_of(&c).refresh, a.refresh);
    assert!(
        h.server
            .verify_access_token(&a.access, PERSON_DOOR)
            .await
            .is_ok()
    );
    // Past the grace a replay revokes the grant as usual.
    h.advance_secs(6);
    assert_error(&h.refresh(&req, &tokens.refresh).await, "invalid_grant");
    assert!(
        h.server
            .verify_access_token(&a.access, PERSON_DOOR)
            .await
            .is_err()
    );
}
on_both!(n23_grace_returns_the_same_successor_pair);

async fn n24_refresh_from_other_client_or_resource_refused(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let other = AuthRequest {
        client_id: h.register(&["https://client.example/callback"]).await,
        ..req.clone()
    };
    assert_error(&h.refresh(&other, &tokens.refresh).await, "invalid_grant");
    let elsewhere = AuthRequest {
        resource: agent_door(AGENT_A),
        ..req.clone()
    };
    assert_error(
        &h.refresh(&elsewhere, &tokens.refresh).await,
        "invalid_target",
    );
    // Neither refusal spent the token or hurt the grant.
    assert!(
        h.server
            .verify_access_token(&tokens.access, PERSON_DOOR)
            .await
            .is_ok()
    );
    assert_eq!(
        h.refresh(&req, &tokens.refresh).await.status,
        StatusCode::OK
    );
}
on_both!(n24_refresh_from_other_client_or_resource_refused);

#[tokio::test]
async fn token_request_shape_errors() {
    let h = Harness::sqlite().await;
    let req = h.client_request().await;
    let r = h
        .post_token(&[
            ("grant_type", "client_credentials"),
            ("client_id", &req.client_id),
        ])
        .await;
    assert_error(&r, "unsupported_grant_type");
    let r = h
        .post_token(&[("grant_type", "authorization_code"), ("code", "x")])
        .await;
    assert_error(&r, "invalid_request");
    let r = h
        .request(
            "POST",
            "/oauth/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            "grant_type=refresh_token&grant_type=refresh_token",
        )
        .await;
    assert_error(&r, "invalid_request");
    let r = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "x"),
            ("client_id", "nope"),
        ])
        .await;
    assert_error(&r, "invalid_client");
}
