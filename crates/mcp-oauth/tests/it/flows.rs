//! The flows a person and a client go through when everything is right.

use http::StatusCode;

use crate::harness::{
    AGENT_A, AuthRequest, Backend, DEFAULT_SCOPES, Harness, ISSUER, PERSON_DOOR, agent_door, form,
    ticked, tokens_of,
};
use crate::on_both;

async fn full_flow_code_consent_to_revocation(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;

    // First page: the email step, naming the client and the door.
    let page = h.open(&req, &[]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Test Client"));
    assert!(page.body.contains(PERSON_DOOR));
    assert!(page.body.contains("name=\"email\""));

    // Second step: every default capability offered ticked, the unasked one absent.
    let code_page = h.send_code(&page, "Alice@Example.com").await;
    assert_eq!(code_page.status, StatusCode::OK);
    assert_eq!(ticked(&code_page).join(" "), DEFAULT_SCOPES);
    assert!(!code_page.body.contains("account:email"));
    let mail = h.mails_to("alice@example.com").pop().unwrap();
    assert!(mail.contains("Subject: Your Example sign-in code"));
    assert!(mail.contains("Test Client"));

    // The person unticks two; 303 to the client with code, state and iss; browser signed in.
    let code = h.mailed_code("alice@example.com");
    let done = h
        .enter_code(
            &code_page,
            &code,
            Some(&["cr:read", "feedback:write", "account:write"]),
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let location = done.location().unwrap();
    assert!(
        location.starts_with("https://client.example/callback?code=eac_"),
        "{location}"
    );
    let params = done.redirect_params();
    assert_eq!(params["state"], "st-123");
    assert_eq!(params["iss"], ISSUER);
    assert_eq!(params.len(), 3);
    let cookie = done.header("set-cookie").unwrap();
    assert!(cookie.starts_with("__Host-mcp_session="));
    assert!(cookie.contains("SameSite=Lax"));

    // Token exchange.
    let r = h.exchange(&req, &params["code"]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let body = r.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "cr:read account:write feedback:write");
    let tokens = tokens_of(&r);

    // The door verifies it.
    let grant = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(grant.account_id, "acc-alice");
    assert_eq!(grant.subject.kind, "person");
    assert_eq!(grant.subject.id, "acc-alice");
    assert!(grant.personal);
    assert_eq!(grant.client_id, req.client_id);
    assert_eq!(grant.resource, PERSON_DOOR);
    assert_eq!(grant.scopes, ["cr:read", "account:write", "feedback:write"]);

    // Refresh rotation: a new pair, the old access token still valid until it expires.
    let r = h.refresh(&req, &tokens.refresh).await;
    assert_eq!(r.status, StatusCode::OK);
    let rotated = tokens_of(&r);
    assert_ne!(rotated.access, tokens.access);
    assert_eq!(rotated.scope, "cr:read account:write feedback:write");
    assert!(
        h.server
            .verify_access_token(&rotated.access, PERSON_DOOR)
            .await
            .is_ok()
    );

    // The connections page lists it; narrowing shows on the next verify and the next refresh.
    let list = h.server.connections("acc-alice").await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].grant_id, grant.grant_id);
    assert_eq!(list[0].client_name, "Test Client");
    h.server
        .set_connection_scopes("acc-alice", &grant.grant_id, &["cr:read".into()])
        .await
        .unwrap();
    let narrowed = h
        .server
        .verify_access_token(&rotated.access, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(narrowed.scopes, ["cr:read"]);
    let r = h.refresh(&req, &rotated.refresh).await;
    assert_eq!(r.json()["scope"], "cr:read");
    let latest = tokens_of(&r);

    // Revocation: every token of the grant stops.
    assert!(
        h.server
            .revoke_connection("acc-alice", &grant.grant_id)
            .await
            .unwrap()
    );
    assert!(
        h.server
            .verify_access_token(&latest.access, PERSON_DOOR)
            .await
            .is_err()
    );
    assert_eq!(
        h.refresh(&req, &latest.refresh).await.status,
        StatusCode::BAD_REQUEST
    );

    // The browser is signed in now: the next consent skips the email but needs the click.
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = h.open(&req, &[("cookie", &cookie)]).await;
    assert!(page.body.contains("Signed in as <b>Alice</b>"));
    assert_eq!(ticked(&page).join(" "), DEFAULT_SCOPES);
    let body = form(&[
        ("request", &page.field("request")),
        ("csrf", &page.field("csrf")),
        ("action", "authorize"),
        ("consent", "1"),
        ("scope", "cr:read"),
        ("scope", "recordings:write"),
    ]);
    let done = h.post_page(&body, &[("cookie", &cookie)]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert!(done.header("set-cookie").is_none());
    let r = h.exchange(&req, &done.redirect_params()["code"]).await;
    assert_eq!(r.json()["scope"], "cr:read recordings:write");
    assert_eq!(h.mails_to("alice@example.com").len(), 1, "no second code");
}
on_both!(full_flow_code_consent_to_revocation);

async fn asking_for_less_offers_the_rest_unticked(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = AuthRequest {
        scope: Some("cr:read".into()),
        ..h.client_request().await
    };
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    assert_eq!(ticked(&code_page), ["cr:read"]);
    for scope in [
        "recordings:write",
        "collections:write",
        "account:write",
        "feedback:write",
    ] {
        assert!(
            code_page.body.contains(&format!("value=\"{scope}\">")),
            "{scope} offered unticked"
        );
    }
    // Ticking an extra one adds it; the token response reports it (RFC 6749 §3.3).
    let code = h.mailed_code("alice@example.com");
    let done = h
        .enter_code(&code_page, &code, Some(&["cr:read", "feedback:write"]))
        .await;
    let r = h.exchange(&req, &done.redirect_params()["code"]).await;
    assert_eq!(r.json()["scope"], "cr:read feedback:write");
}
on_both!(asking_for_less_offers_the_rest_unticked);

async fn agent_door_grant_is_for_the_agent(backend: Backend) {
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
    assert_eq!(
        (grant.subject.kind.as_str(), grant.subject.id.as_str()),
        ("agent", AGENT_A)
    );
    let list = h.server.connections("acc-alice").await.unwrap();
    assert_eq!(list[0].resource, agent_door(AGENT_A));
    assert_eq!(list[0].subject.id, AGENT_A);
}
on_both!(agent_door_grant_is_for_the_agent);

#[tokio::test]
async fn signed_in_account_without_address_is_sent_the_code_way() {
    let h = Harness::sqlite().await;
    let req = AuthRequest {
        scope: Some("cr:read account:email".into()),
        ..h.client_request().await
    };
    let cookie = h.server.sign_in("acc-old").await.unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = h.open(&req, &[("cookie", &cookie)]).await;
    assert!(
        page.body.contains("name=\"email\""),
        "the code way records the address"
    );
    let code_page = h.send_code(&page, "old@example.com").await;
    let code = h.mailed_code("old@example.com");
    let done = h.enter_code(&code_page, &code, None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let tokens = tokens_of(&h.exchange(&req, &done.redirect_params()["code"]).await);
    let auth = format!("Bearer {}", tokens.access);
    let info = h
        .get("/oauth/userinfo", &[("authorization", &auth)])
        .await
        .json();
    assert_eq!(info["sub"], "acc-old");
    assert_eq!(info["email"], "old@example.com");
    // Without the email scope the session path is fine for the same account.
    let plain = h.client_request().await;
    let page = h.open(&plain, &[("cookie", &cookie)]).await;
    assert!(page.body.contains("Signed in as <b>Old Timer</b>"));
}

async fn purge_removes_what_cannot_be_used(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let _ = h.tokens(&req, "alice@example.com", None).await;
    h.advance_secs(400 * 24 * 3600);
    assert!(h.server.purge().await.unwrap() > 0);
    assert_eq!(h.open(&req, &[]).await.status, StatusCode::BAD_REQUEST);
}
on_both!(purge_removes_what_cannot_be_used);

/// Each valid authorize request stores a pending flow: one address may start 60 an hour; the
/// 61st is a 429 page (nothing stored), other addresses are unaffected, invalid requests are
/// refused for what they are and spend nothing, and the next hour starts afresh.
async fn consent_flows_per_address_are_capped_per_hour(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let from = |address: &'static str| [("x-test-addr", address)];
    for _ in 0..60 {
        assert_eq!(
            h.open(&req, &from("198.51.100.7")).await.status,
            StatusCode::OK
        );
    }
    let refused = h.open(&req, &from("198.51.100.7")).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        refused.body.contains("Too many sign-in requests"),
        "{}",
        refused.body
    );
    assert!(
        refused.location().is_none(),
        "never sent to the redirect_uri"
    );
    // an invalid request is answered as invalid, and does not count
    let unknown = h
        .get("/oauth/authorize?client_id=nope", &from("198.51.100.7"))
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        h.open(&req, &from("198.51.100.8")).await.status,
        StatusCode::OK
    );
    // The next hour (a new client: one never used is gone after an hour).
    h.advance_secs(3600);
    let req = h.client_request().await;
    assert_eq!(
        h.open(&req, &from("198.51.100.7")).await.status,
        StatusCode::OK
    );
}
on_both!(consent_flows_per_address_are_capped_per_hour);
