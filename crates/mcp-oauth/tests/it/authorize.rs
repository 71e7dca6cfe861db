//! Authorize and consent (tests 1–10): every refusal is an HTML page at the authorize URL,
//! never a redirect.

use http::StatusCode;
use mcp_oauth::crypto::pkce_challenge;

use crate::harness::{
    AGENT_B, AuthRequest, Backend, Harness, ISSUER, Resp, agent_door, assert_page_headers, form,
};
use crate::on_both;

/// An authorize query with `params` (name, value); `None` drops the parameter.
fn query(req: &AuthRequest, changes: &[(&str, Option<&str>)]) -> String {
    let challenge = pkce_challenge(&req.verifier);
    let mut params: Vec<(String, String)> = vec![
        ("response_type".into(), "code".into()),
        ("client_id".into(), req.client_id.clone()),
        ("redirect_uri".into(), req.redirect_uri.clone()),
        ("code_challenge".into(), challenge),
        ("code_challenge_method".into(), "S256".into()),
        ("resource".into(), req.resource.clone()),
        ("state".into(), "s1".into()),
    ];
    for (name, value) in changes {
        params.retain(|(n, _)| n != name);
        if let Some(v) = value {
            params.push(((*name).into(), (*v).into()));
        }
    }
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &params {
        q.append_pair(k, v);
    }
    format!("/oauth/authorize?{}", q.finish())
}

fn assert_refused_page(r: &Resp, needle: &str) {
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.location().is_none(), "no redirect");
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.body.contains(needle), "expected {needle:?} in {}", r.body);
    assert!(
        !r.body.contains("name=\"csrf\""),
        "no consent form on a refusal"
    );
    assert_page_headers(r);
}

async fn n01_missing_code_challenge_no_redirect(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let r = h.get(&query(&req, &[("code_challenge", None)]), &[]).await;
    assert_refused_page(&r, "code_challenge is missing");
    let r = h
        .get(&query(&req, &[("code_challenge", Some("too-short"))]), &[])
        .await;
    assert_refused_page(&r, "43 base64url");
}
on_both!(n01_missing_code_challenge_no_redirect);

async fn n02_plain_or_missing_method_no_redirect(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let r = h
        .get(
            &query(&req, &[("code_challenge_method", Some("plain"))]),
            &[],
        )
        .await;
    assert_refused_page(&r, "must be S256");
    let r = h
        .get(&query(&req, &[("code_challenge_method", None)]), &[])
        .await;
    assert_refused_page(&r, "must be S256");
}
on_both!(n02_plain_or_missing_method_no_redirect);

async fn n03_unknown_client_no_redirect(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    for id in [
        "AAAAAAAAAAAAAAAAAAAAAAAA",
        "",
        "https://unknown.example/client.json",
    ] {
        let r = h.get(&query(&req, &[("client_id", Some(id))]), &[]).await;
        assert_refused_page(&r, "unknown client_id");
    }
    let r = h.get(&query(&req, &[("client_id", None)]), &[]).await;
    assert_refused_page(&r, "unknown client_id");
}
on_both!(n03_unknown_client_no_redirect);

async fn n04_redirect_uri_variants_no_redirect(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let client_id = h.register(&["https://client.example/cb?x=1"]).await;
    let req = AuthRequest {
        client_id,
        redirect_uri: "https://client.example/cb?x=1".into(),
        resource: crate::harness::PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "a".repeat(43),
    };
    assert_eq!(h.get(&query(&req, &[]), &[]).await.status, StatusCode::OK);
    for variant in [
        "https://client.example/cb2?x=1",
        "https://client.example/cb?x=2",
        "https://client.example/cb/?x=1",
        "https://CLIENT.example/cb?x=1",
        "https://client.example/CB?x=1",
        "https://client.example/%63b?x=1",
        "https://user@client.example/cb?x=1",
        "https://client.example/cb?x=1#frag",
        "https://client.example/cb",
    ] {
        let r = h
            .get(&query(&req, &[("redirect_uri", Some(variant))]), &[])
            .await;
        assert_refused_page(&r, "redirect_uri is not one");
    }
    let r = h.get(&query(&req, &[("redirect_uri", None)]), &[]).await;
    assert_refused_page(&r, "redirect_uri is not one");
}
on_both!(n04_redirect_uri_variants_no_redirect);

async fn n05_loopback_any_port_accepted_lookalikes_refused(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let client_id = h
        .register(&["http://127.0.0.1/callback", "http://localhost:3000/cb"])
        .await;
    let req = AuthRequest {
        client_id,
        redirect_uri: "http://127.0.0.1/callback".into(),
        resource: crate::harness::PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "b".repeat(43),
    };
    for accepted in [
        "http://127.0.0.1:53682/callback",
        "http://127.0.0.1/callback",
        "http://localhost:9/cb",
    ] {
        let r = h
            .get(&query(&req, &[("redirect_uri", Some(accepted))]), &[])
            .await;
        assert_eq!(r.status, StatusCode::OK, "{accepted}: {}", r.body);
    }
    for refused in [
        "http://127.0.0.1.evil.example:53682/callback",
        "http://127.0.0.1:53682/other",
        "http://[::1]:53682/callback",
        "https://127.0.0.1:53682/callback",
    ] {
        let r = h
            .get(&query(&req, &[("redirect_uri", Some(refused))]), &[])
            .await;
        assert_refused_page(&r, "redirect_uri is not one");
    }
    // Non-loopback http and the look-alike are refused at registration already.
    for uri in [
        "http://client.example/cb",
        "http://127.0.0.1.evil.example/cb",
    ] {
        let r = h
            .register_from("203.0.113.9", serde_json::json!({"redirect_uris": [uri]}))
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert_eq!(r.error_code(), "invalid_redirect_uri");
    }
}
on_both!(n05_loopback_any_port_accepted_lookalikes_refused);

async fn n06_bad_scope_response_type_or_denial_no_redirect(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let r = h
        .get(&query(&req, &[("scope", Some("cr:read \"admin\""))]), &[])
        .await;
    assert_refused_page(&r, "printable ASCII");
    // (A well-formed name the server does not define is left out instead: scopes.rs.)
    for rt in [Some("token"), Some("code id_token"), None] {
        let r = h.get(&query(&req, &[("response_type", rt)]), &[]).await;
        assert_refused_page(&r, "response_type must be code");
    }
    // The person denies at the code step: a page, no code, no redirect.
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    let body = form(&[
        ("request", &code_page.field("request")),
        ("csrf", &code_page.field("csrf")),
        ("action", "deny"),
    ]);
    let r = h.post_page(&body, &[]).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.location().is_none());
    assert!(r.body.contains("Connection declined"));
    // The flow is over: the right code no longer helps.
    let code = h.mailed_code("alice@example.com");
    let r = h.enter_code(&code_page, &code, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.location().is_none());
}
on_both!(n06_bad_scope_response_type_or_denial_no_redirect);

async fn n07_consent_post_without_csrf_or_cross_site_403(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let page = h.open(&req, &[]).await;
    let request = page.field("request");
    let send = |csrf: Option<&str>| {
        let mut pairs = vec![
            ("request", request.as_str()),
            ("action", "send_code"),
            ("email", "alice@example.com"),
        ];
        if let Some(c) = csrf {
            pairs.push(("csrf", c));
        }
        form(&pairs)
    };
    for body in [send(None), send(Some("")), send(Some("forged-token"))] {
        let r = h.post_page(&body, &[]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        assert_page_headers(&r);
    }
    // A CSRF token of another flow does not fit this one.
    let other = h.open(&req, &[]).await;
    let r = h.post_page(&send(Some(&other.field("csrf"))), &[]).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let csrf = page.field("csrf");
    for headers in [
        vec![("origin", "https://evil.example")],
        vec![("origin", "null")],
        vec![("sec-fetch-site", "cross-site")],
        vec![("sec-fetch-site", "same-site")],
    ] {
        let mut all = vec![("content-type", "application/x-www-form-urlencoded")];
        all.extend(headers.iter().copied());
        let r = h
            .request("POST", "/oauth/authorize", &all, &send(Some(&csrf)))
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{headers:?}");
    }
    assert!(
        h.mails_to("alice@example.com").is_empty(),
        "no code was sent"
    );
    // The genuine form still works, also as a browser sends it from this no-referrer page.
    let r = h.post_page(&send(Some(&csrf)), &[("origin", "null")]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = h.post_page(&send(Some(&csrf)), &[]).await;
    assert_eq!(r.status, StatusCode::OK);
}
on_both!(n07_consent_post_without_csrf_or_cross_site_403);

async fn n08_signed_in_session_without_click_no_code(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let set_cookie = h.server.sign_in("acc-alice").await.unwrap();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let page = h.open(&req, &[("cookie", &cookie)]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.location().is_none());
    assert!(
        page.body.contains("Signed in as <b>Alice</b>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("value=\"authorize\""));
    assert!(
        !page.body.contains("name=\"email\""),
        "the email step is skipped"
    );
    // Anything but the Authorize click yields no code, even with the session.
    for action in ["", "verify", "bogus"] {
        let body = form(&[
            ("request", &page.field("request")),
            ("csrf", &page.field("csrf")),
            ("action", action),
        ]);
        let r = h.post_page(&body, &[("cookie", &cookie)]).await;
        assert!(r.location().is_none(), "{action}: {}", r.body);
        assert_ne!(r.status, StatusCode::SEE_OTHER);
    }
    // Without the session, the click is refused too.
    let body = form(&[
        ("request", &page.field("request")),
        ("csrf", &page.field("csrf")),
        ("action", "authorize"),
        ("consent", "1"),
        ("scope", "cr:read"),
    ]);
    let r = h.post_page(&body, &[]).await;
    assert!(r.location().is_none());
    // switch=1 forces the email step.
    let switched = h
        .get(
            &format!("/oauth/authorize?{}&switch=1", req.query()),
            &[("cookie", &cookie)],
        )
        .await;
    assert!(switched.body.contains("name=\"email\""));
    assert!(!switched.body.contains("Signed in as"));
}
on_both!(n08_signed_in_session_without_click_no_code);

async fn n09_missing_malformed_foreign_resource_refused(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let r = h.get(&query(&req, &[("resource", None)]), &[]).await;
    assert_refused_page(&r, "resource parameter (RFC 8707) is required");
    for resource in [
        "not a url",
        "/mcp",
        "https://evil.example/mcp",
        "https://auth.example/mcp/",
        "https://auth.example/mcp#x",
        "https://auth.example/a/UPPER123/mcp",
    ] {
        let r = h
            .get(&query(&req, &[("resource", Some(resource))]), &[])
            .await;
        assert_refused_page(&r, "not a service of this server");
    }
    // An agent door: one that does not exist and one owned by someone else get the same page.
    let mut refusals = Vec::new();
    for agent in ["nosuchagent1", AGENT_B] {
        let agent_req = AuthRequest {
            resource: agent_door(agent),
            ..req.clone()
        };
        let r = h
            .consent_by_code(&agent_req, "alice@example.com", None)
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        assert!(r.location().is_none());
        refusals.push(r.body);
    }
    assert_eq!(refusals[0], refusals[1], "no enumeration of agents");
    // At the token endpoint a missing resource is invalid_target.
    let code = h.code_for(&req, "alice@example.com", None).await;
    let r = h
        .post_token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &req.client_id),
            ("redirect_uri", &req.redirect_uri),
            ("code_verifier", &req.verifier),
        ])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "invalid_target");
}
on_both!(n09_missing_malformed_foreign_resource_refused);

async fn n10_security_headers_on_every_consent_page(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let first = h.open(&req, &[]).await;
    let error = h.get("/oauth/authorize?client_id=nope", &[]).await;
    let forbidden = h.post_page("request=x&csrf=y&action=send_code", &[]).await;
    let code_page = h.send_code(&first, "alice@example.com").await;
    let wrong = h.enter_code(&code_page, "000000", None).await;
    let code = h.mailed_code("alice@example.com");
    let done = h.enter_code(&code_page, &code, None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    for r in [&first, &error, &forbidden, &code_page, &wrong, &done] {
        assert_page_headers(r);
        assert_eq!(r.header("x-frame-options"), Some("DENY"));
        assert!(
            !r.body.contains("<script"),
            "the page works without JavaScript"
        );
    }
    assert!(done.header("set-cookie").unwrap().contains("HttpOnly"));
    assert!(done.header("set-cookie").unwrap().contains("Secure"));
    let _ = ISSUER;
}
on_both!(n10_security_headers_on_every_consent_page);

/// The `form-action` of the page's CSP.
fn form_action(r: &Resp) -> String {
    let csp = r.header("content-security-policy").unwrap_or_default();
    csp.split(';')
        .map(str::trim)
        .find(|d| d.starts_with("form-action "))
        .unwrap_or_else(|| panic!("no form-action in {csp}"))
        .to_owned()
}

/// Browsers apply `form-action` to the redirect after a form submission, so a page with the
/// consent form allows `'self'` plus exactly its flow's redirect target: the origin of an
/// http(s) redirect URI (with the port the request named, for loopback), the scheme of a
/// private-use one. Pages without a flow allow `'self'` only.
async fn n10_form_action_allows_only_the_flows_redirect_target(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let client_id = h
        .register(&[
            "https://client.example/callback",
            "http://127.0.0.1/callback",
            "com.example.app:/cb",
        ])
        .await;
    let request = |redirect_uri: &str| AuthRequest {
        client_id: client_id.clone(),
        redirect_uri: redirect_uri.into(),
        resource: crate::harness::PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "f".repeat(43),
    };
    for (redirect_uri, expected) in [
        (
            "https://client.example/callback",
            "form-action 'self' https://client.example",
        ),
        (
            "http://127.0.0.1:40123/callback",
            "form-action 'self' http://127.0.0.1:40123",
        ),
        ("com.example.app:/cb", "form-action 'self' com.example.app:"),
    ] {
        let req = request(redirect_uri);
        let first = h.open(&req, &[]).await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.body);
        let code_page = h.send_code(&first, "alice@example.com").await;
        let wrong = h.enter_code(&code_page, "12345x", None).await;
        let code = h.mailed_code("alice@example.com");
        let done = h.enter_code(&code_page, &code, None).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
        assert!(done.location().unwrap().starts_with(redirect_uri));
        for r in [&first, &code_page, &wrong, &done] {
            assert_eq!(form_action(r), expected, "{redirect_uri}");
        }
    }
    // No flow, no redirect target: an error page, a refused POST, the decline notice.
    let error = h.get("/oauth/authorize?client_id=nope", &[]).await;
    let forbidden = h.post_page("request=x&csrf=y&action=send_code", &[]).await;
    let page = h
        .open(&request("https://client.example/callback"), &[])
        .await;
    let declined = h
        .post_page(
            &form(&[
                ("request", &page.field("request")),
                ("csrf", &page.field("csrf")),
                ("action", "deny"),
            ]),
            &[],
        )
        .await;
    assert!(declined.body.contains("Connection declined"));
    for r in [&error, &forbidden, &declined] {
        assert_eq!(form_action(r), "form-action 'self'", "{}", r.body);
        assert_page_headers(r);
    }
}
on_both!(n10_form_action_allows_only_the_flows_redirect_target);

/// A registered redirect URI with non-ASCII characters is written into `Location` in ASCII:
/// the host in punycode, the path percent-encoded as UTF-8 (never raw UTF-8 bytes); the
/// client still exchanges the code with the URI as it registered it.
async fn n11_a_non_ascii_redirect_uri_is_percent_encoded_in_location(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let registered = "https://bücher.example/rückruf";
    let client_id = h.register(&[registered]).await;
    let req = AuthRequest {
        client_id,
        redirect_uri: registered.into(),
        resource: crate::harness::PERSON_DOOR.into(),
        scope: None,
        state: Some("ß".into()),
        verifier: "g".repeat(43),
    };
    let done = h.consent_by_code(&req, "alice@example.com", None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let raw = done.headers["location"].as_bytes();
    assert!(raw.is_ascii(), "{}", String::from_utf8_lossy(raw));
    let location = done.location().unwrap();
    assert!(
        location.starts_with("https://xn--bcher-kva.example/r%C3%BCckruf?code="),
        "{location}"
    );
    let params = done.redirect_params();
    assert_eq!(params["state"], "ß");
    let tokens = h.exchange(&req, &params["code"]).await;
    assert_eq!(tokens.status, StatusCode::OK, "{}", tokens.body);
}
on_both!(n11_a_non_ascii_redirect_uri_is_percent_encoded_in_location);
