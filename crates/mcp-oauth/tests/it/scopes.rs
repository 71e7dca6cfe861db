//! Scopes real clients send (RFC 6749 §3.3): names the server does not define
//! (`offline_access`, `openid`, another case) are left out of the grant, never an error; the
//! consent page and the token response (also on refresh) show what is granted; the `scope`
//! parameter's bounds (1,024 characters, the grammar) at the authorize, consent and token
//! endpoints; duplicates; what OAUTH-SECURITY.md refuses stays refused.

use http::StatusCode;
use mcp_oauth::scopes::MAX_SCOPE_PARAM;

use crate::harness::{
    AuthRequest, Backend, DEFAULT_SCOPES, Harness, Resp, form, ticked, tokens_of,
};
use crate::on_both;

/// The names the page lists as asked for and not granted (empty when it has no such line).
fn not_granted(page: &Resp) -> Vec<String> {
    let Some(start) = page.body.find("id=\"not-granted\"") else {
        return Vec::new();
    };
    let line = &page.body[start..];
    let line = &line[..line.find("</p>").unwrap()];
    line.split("<code>")
        .skip(1)
        .map(|rest| rest.split("</code>").next().unwrap().to_owned())
        .collect()
}

fn asking(h_req: AuthRequest, scope: &str) -> AuthRequest {
    AuthRequest {
        scope: Some(scope.into()),
        ..h_req
    }
}

/// A `scope` of exactly `len` characters: `head`, then unknown names of `x`s.
fn scope_of_length(head: &str, len: usize) -> String {
    let mut s = head.to_owned();
    while s.len() < len {
        let room = len - s.len() - 1;
        s.push(' ');
        s.push_str(&"x".repeat(room.clamp(1, 100)));
        if s.len() > len {
            s.truncate(len);
        }
    }
    assert_eq!(s.len(), len);
    s
}

/// A refresh naming `scope`.
async fn refresh_with(h: &Harness, req: &AuthRequest, token: &str, scope: &str) -> Resp {
    h.post_token(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", token),
        ("client_id", &req.client_id),
        ("resource", &req.resource),
        ("scope", scope),
    ])
    .await
}

async fn unknown_scopes_are_left_out_and_reported(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = asking(
        h.client_request().await,
        "openid cr:read offline_access openid",
    );
    let page = h.open(&req, &[]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    // The code step (a POST, the flow read back from the store) shows the same.
    let code_page = h.send_code(&page, "alice@example.com").await;
    assert_eq!(ticked(&code_page), ["cr:read"]);
    assert_eq!(not_granted(&code_page), ["openid", "offline_access"]);
    assert!(code_page.body.contains("Example does not define them"));
    assert!(!code_page.body.contains("value=\"openid\""), "no checkbox");

    let code = h.mailed_code("alice@example.com");
    let done = h.enter_code(&code_page, &code, None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let r = h.exchange(&req, &done.redirect_params()["code"]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let tokens = tokens_of(&r);
    assert_eq!(tokens.scope, "cr:read");
    // offline_access is not needed for a refresh token: every exchange issues one.
    assert!(tokens.refresh.starts_with("ert_"));
    let grant = h
        .server
        .verify_access_token(&tokens.access, &req.resource)
        .await
        .unwrap();
    assert_eq!(grant.scopes, ["cr:read"]);

    // On refresh, unknown names are left out too; a defined scope not granted stays refused
    // (test 21) and spends nothing.
    let r = refresh_with(
        &h,
        &req,
        &tokens.refresh,
        "cr:read recordings:write offline_access",
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "invalid_scope");
    let r = refresh_with(&h, &req, &tokens.refresh, "openid offline_access cr:read").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let rotated = tokens_of(&r);
    assert_eq!(rotated.scope, "cr:read");
    let r = refresh_with(&h, &req, &rotated.refresh, "offline_access").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["scope"], "cr:read");
}
on_both!(unknown_scopes_are_left_out_and_reported);

async fn only_unknown_scopes_get_the_defaults(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    // Names are case-sensitive: CR:READ is not cr:read.
    for scope in ["openid offline_access", "CR:READ", "profile email"] {
        let req = asking(h.client_request().await, scope);
        let page = h.open(&req, &[]).await;
        let code_page = h.send_code(&page, "alice@example.com").await;
        assert_eq!(ticked(&code_page).join(" "), DEFAULT_SCOPES, "{scope}");
        assert_eq!(not_granted(&code_page).join(" "), scope);
        let code = h.mailed_code("alice@example.com");
        let done = h.enter_code(&code_page, &code, None).await;
        let r = h.exchange(&req, &done.redirect_params()["code"]).await;
        assert_eq!(r.json()["scope"], DEFAULT_SCOPES, "{scope}");
    }
}
on_both!(only_unknown_scopes_get_the_defaults);

async fn duplicates_count_once_and_a_repeated_parameter_is_refused(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = asking(
        h.client_request().await,
        "feedback:write cr:read  cr:read offline_access offline_access",
    );
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    assert_eq!(ticked(&code_page), ["cr:read", "feedback:write"]);
    assert_eq!(not_granted(&code_page), ["offline_access"]);
    assert!(code_page.body.contains("does not define it"));
    // `scope` twice is a parameter given twice: refused, as every other one.
    let r = h
        .get(
            &format!("/oauth/authorize?{}&scope=cr%3Aread", req.query()),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.body
            .contains("The parameter scope is given more than once")
    );
    assert!(r.location().is_none());
    // At the token endpoint too (RFC 6749 §3.2).
    let tokens = h
        .tokens(&h.client_request().await, "bob@example.com", None)
        .await;
    let r = h
        .request(
            "POST",
            "/oauth/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            &format!(
                "{}&scope=cr%3Aread&scope=cr%3Aread",
                form(&[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &tokens.refresh),
                    ("client_id", "whoever"),
                ])
            ),
        )
        .await;
    assert_eq!(r.error_code(), "invalid_request");
}
on_both!(duplicates_count_once_and_a_repeated_parameter_is_refused);

async fn the_scope_parameter_is_bounded_at_authorize_and_token(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let at_bound = scope_of_length("cr:read", MAX_SCOPE_PARAM);
    let past = scope_of_length("cr:read", MAX_SCOPE_PARAM + 1);
    let base = h.client_request().await;

    // Authorize: 1,024 characters are read (the unknown names left out), 1,025 refused.
    let page = h.open(&asking(base.clone(), &past), &[]).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(
        page.body.contains("longer than 1024 characters"),
        "{}",
        page.body
    );
    assert!(page.location().is_none());
    for bad in ["cr:read\tfeedback:write", "caf\u{e9}", "a\\b", "cr:read\n"] {
        let page = h.open(&asking(base.clone(), bad), &[]).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert!(page.body.contains("printable ASCII"), "{bad:?}");
    }
    let req = asking(base, &at_bound);
    let page = h.open(&req, &[]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let code_page = h.send_code(&page, "alice@example.com").await;
    assert_eq!(code_page.status, StatusCode::OK, "{}", code_page.body);
    assert_eq!(ticked(&code_page), ["cr:read"]);
    let code = h.mailed_code("alice@example.com");
    let done = h.enter_code(&code_page, &code, None).await;
    let code = done.redirect_params()["code"].clone();

    // Token: a refused scope parameter spends neither the code nor the refresh token.
    let exchange = |scope: String| {
        let (code, req, h) = (code.clone(), req.clone(), &h);
        async move {
            h.post_token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("client_id", &req.client_id),
                ("redirect_uri", &req.redirect_uri),
                ("code_verifier", &req.verifier),
                ("resource", &req.resource),
                ("scope", &scope),
            ])
            .await
        }
    };
    for bad in [past.clone(), "cr:read\"".to_owned()] {
        let r = exchange(bad).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert_eq!(r.error_code(), "invalid_scope", "{}", r.body);
    }
    let r = exchange(at_bound.clone()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let tokens = tokens_of(&r);
    assert_eq!(tokens.scope, "cr:read");
    let r = refresh_with(&h, &req, &tokens.refresh, &past).await;
    assert_eq!(r.error_code(), "invalid_scope");
    assert!(
        r.json()["error_description"]
            .as_str()
            .unwrap()
            .contains("1024")
    );
    let r = refresh_with(&h, &req, &tokens.refresh, &at_bound).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["scope"], "cr:read");
}
on_both!(the_scope_parameter_is_bounded_at_authorize_and_token);

async fn unknown_names_beside_the_unasked_scope_on_the_signed_in_path(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = asking(h.client_request().await, "openid account:email cr:read");
    let cookie = h.server.sign_in("acc-alice").await.unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = h.open(&req, &[("cookie", &cookie)]).await;
    assert!(page.body.contains("Signed in as"), "{}", page.body);
    assert_eq!(ticked(&page), ["cr:read"]);
    assert!(page.body.contains("✔ <code>account:email</code>"));
    assert_eq!(not_granted(&page), ["openid"]);
    let body = form(&[
        ("request", &page.field("request")),
        ("csrf", &page.field("csrf")),
        ("action", "authorize"),
        ("consent", "1"),
        ("scope", "cr:read"),
        // a forged tick of an unknown name is ignored like any tick never offered
        ("scope", "openid"),
    ]);
    let done = h.post_page(&body, &[("cookie", &cookie)]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let r = h.exchange(&req, &done.redirect_params()["code"]).await;
    assert_eq!(r.json()["scope"], "cr:read account:email");
}
on_both!(unknown_names_beside_the_unasked_scope_on_the_signed_in_path);
