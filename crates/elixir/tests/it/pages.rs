//! The web pages: sign-in by email code (and its limits), Connections (edit, disconnect),
//! Agents (create, rotate, revoke, suspend, resume, key capabilities), Activity, refusal
//! counts, the docs, CSRF and cross-origin refusals (403) on every POST, and the security
//! headers on every page.

use serde_json::json;

use crate::browser::{Browser, newest_code};
use crate::oauth::{connect, spawn_oauth};
use crate::on_both_backends;
use crate::support::{ORIGIN, success};

async fn sign_in_by_code_and_out(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());

    // Not signed in: the account pages send the browser to /signin.
    let page = browser.get("/account/connections").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.header("location"), "/signin");
    page.assert_secure();

    // A wrong code, then the right one.
    let form = browser.get("/signin").await.form("/signin");
    let sent = browser
        .post(
            "/signin",
            &form.with(&[("email", "King@Example.com"), ("action", "send_code")]),
        )
        .await;
    assert_eq!(sent.status, 200);
    let code = newest_code(dir.path());
    let form = sent.form("/signin");
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let miss = browser
        .post(
            "/signin",
            &form.with(&[("code", wrong), ("action", "verify")]),
        )
        .await;
    assert_eq!(miss.status, 400);
    assert!(miss.body.contains("4 attempts left"), "{}", miss.body);
    let done = browser
        .post(
            "/signin",
            &form.with(&[("code", &code), ("action", "verify")]),
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    done.assert_secure();
    // The existing account (the address is case-folded), not a new one.
    let account = browser.get("/account").await;
    assert_eq!(account.status, 200);
    account.assert_secure();
    assert!(
        account.body.contains("king@example.com"),
        "{}",
        account.body
    );
    assert!(
        account.body.contains(&server.person.id.to_string()),
        "{}",
        account.body
    );
    // The code is single use.
    let again = browser
        .post(
            "/signin",
            &form.with(&[("code", &code), ("action", "verify")]),
        )
        .await;
    assert_ne!(again.status, 303);

    // Sign out: the session ends.
    let csrf = account.form("/signout").get("csrf").unwrap().to_owned();
    let out = browser
        .post("/signout", &[("csrf".into(), csrf.clone())])
        .await;
    assert_eq!(out.status, 303);
    assert_eq!(browser.get("/account").await.status, 303);

    // A new address signs up a new account.
    let mut newcomer = Browser::new(&server.url(""), dir.path());
    newcomer.sign_in("new@example.com").await;
    let page = newcomer.get("/account").await;
    assert!(page.body.contains("new@example.com"));
    assert!(
        server
            .store
            .account_by_email("new@example.com")
            .await
            .unwrap()
            .is_some()
    );

    // Five wrong codes end the flow; the right one then fails too.
    let mut stubborn = Browser::new(&server.url(""), dir.path());
    let (sent, code) = stubborn.request_code("other@example.com").await;
    let form = sent.form("/signin");
    let wrong = if code == "000000" { "111111" } else { "000000" };
    for _ in 0..5 {
        stubborn
            .post(
                "/signin",
                &form.with(&[("code", wrong), ("action", "verify")]),
            )
            .await;
    }
    let late = stubborn
        .post(
            "/signin",
            &form.with(&[("code", &code), ("action", "verify")]),
        )
        .await;
    assert_eq!(late.status, 400);
    assert!(late.body.contains("ended"), "{}", late.body);
    assert!(stubborn.cookie.is_none());
}

async fn connections_edit_and_disconnect(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let person = server.person_client(&tokens.access);
    success(
        &person
            .tool("elixir_feedback", json!({"message": "works"}))
            .await,
    );

    // Consent signed the browser in: the page lists the connection with its capabilities.
    let page = browser.get("/account/connections").await;
    assert_eq!(page.status, 200);
    page.assert_secure();
    assert!(page.body.contains("Test client"), "{}", page.body);
    let form = page.form("/scopes");
    assert_eq!(
        form.checked
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>(),
        [
            "cr:read",
            "recordings:write",
            "collections:write",
            "account:write",
            "feedback:write"
        ]
    );

    // Narrow to cr:read: the next call of a feedback:write tool is 403; reads still work.
    let saved = browser
        .post(&form.action, &form.with(&[("scope", "cr:read")]))
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(saved.header("location"), "/account/connections?done=saved");
    let refused = person
        .tool("elixir_feedback", json!({"message": "again"}))
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body.clone()["error"]["data"]["granted_scope"],
        "cr:read"
    );
    success(&person.tool("elixir_docs", json!({})).await);
    // account:email is never added from this page; an empty set is refused.
    let widen = browser
        .post(&form.action, &form.with(&[("scope", "account:email")]))
        .await;
    assert_eq!(widen.status, 400, "{}", widen.body);
    let empty = browser.post(&form.action, &form.with(&[])).await;
    assert_eq!(empty.status, 400);
    // Widen again: effective on the next call, no reconnect.
    browser
        .post(
            &form.action,
            &form.with(&[("scope", "cr:read"), ("scope", "feedback:write")]),
        )
        .await;
    success(
        &person
            .tool("elixir_feedback", json!({"message": "back"}))
            .await,
    );

    // Disconnect: the next call is 401, and the page lists nothing.
    let revoke = browser.get("/account/connections").await.form("/revoke");
    let gone = browser.post(&revoke.action, &revoke.with(&[])).await;
    assert_eq!(gone.status, 303);
    assert_eq!(person.tool("elixir_docs", json!({})).await.status, 401);
    let page = browser.get("/account/connections").await;
    assert!(page.body.contains("No connections yet"), "{}", page.body);

    // Another account cannot touch this grant (same answer as an unknown one).
    let mut other = Browser::new(&base, dir.path());
    other.sign_in("other@example.com").await;
    let csrf = other
        .get("/account")
        .await
        .form("/signout")
        .get("csrf")
        .unwrap()
        .to_owned();
    let foreign = other
        .post(revoke.action.as_str(), &[("csrf".into(), csrf.clone())])
        .await;
    assert_eq!(foreign.status, 404);
}

async fn agents_lifecycle(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    browser.sign_in("king@example.com").await;

    let page = browser.get("/account/agents").await;
    assert_eq!(page.status, 200);
    page.assert_secure();
    assert!(page.body.contains(&server.agent.agent.public_id));

    // Create: the key is shown once, and works at the new door.
    let create = page.form("/account/agents");
    let created = browser
        .post(
            "/account/agents",
            &create.with(&[("name", "Scout"), ("kind", "agent")]),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    created.assert_secure();
    let key = between(&created.body, "<pre id=\"service-key\">", "</pre>");
    assert!(key.starts_with("svt_") && key.len() == 47, "{key}");
    let scout = server
        .store
        .agents_of(server.person.id)
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.name == "Scout")
        .unwrap();
    let door = |token: &str| {
        testkit::mcp::Client::new(
            server.url(&format!("/a/{}/mcp", scout.public_id)),
            Some(token.to_owned()),
        )
    };
    success(&door(key).tool("elixir_docs", json!({})).await);
    assert!(!browser.get("/account/agents").await.body.contains(key));

    let form_of = |page: &crate::browser::Page, action: &str| {
        page.form(&format!("/account/agents/{}/{action}", scout.public_id))
    };

    // Key capabilities: cr:read only → feedback refused with 403; reads still work.
    let page = browser.get("/account/agents").await;
    let scopes = form_of(&page, "scopes");
    assert_eq!(scopes.checked.len(), 5);
    let saved = browser
        .post(&scopes.action, &scopes.with(&[("scope", "cr:read")]))
        .await;
    assert_eq!(saved.status, 303);
    let refused = door(key)
        .tool("elixir_feedback", json!({"message": "hi"}))
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    success(&door(key).tool("elixir_docs", json!({})).await);
    let bad = browser
        .post(&scopes.action, &scopes.with(&[("scope", "account:email")]))
        .await;
    assert_eq!(bad.status, 400);

    // Rotate: a new key, shown once; the old one stops working.
    let page = browser.get("/account/agents").await;
    let rotated = browser
        .post(
            &form_of(&page, "rotate").action,
            &form_of(&page, "rotate").with(&[]),
        )
        .await;
    assert_eq!(rotated.status, 200);
    let new_key = between(&rotated.body, "<pre id=\"service-key\">", "</pre>");
    assert_ne!(new_key, key);
    assert_eq!(door(key).initialize("2025-06-18").await.status, 401);
    success(&door(new_key).tool("elixir_docs", json!({})).await);

    // Suspend / resume.
    let page = browser.get("/account/agents").await;
    let suspend = form_of(&page, "suspend");
    assert_eq!(
        browser
            .post(&suspend.action, &suspend.with(&[]))
            .await
            .status,
        303
    );
    let suspended = door(new_key).initialize("2025-06-18").await;
    assert_eq!(suspended.status, 401);
    assert!(suspended.header("www-authenticate").contains("suspended"));
    // The refusal of the agent's key shows on the refusals page, at this door.
    let refusals = browser.get("/account/refusals").await;
    refusals.assert_secure();
    assert!(
        refusals
            .body
            .contains(&format!("/a/{}/mcp", scout.public_id)),
        "{}",
        refusals.body
    );
    let new_hint = elixir::access::kinds::credential_hint(new_key);
    assert!(refusals.body.contains(&new_hint));
    assert!(refusals.body.contains("<td>suspended</td>"));
    let page = browser.get("/account/agents").await;
    let resume = form_of(&page, "resume");
    assert_eq!(
        browser.post(&resume.action, &resume.with(&[])).await.status,
        303
    );
    success(&door(new_key).tool("elixir_docs", json!({})).await);

    // Revoke: 401; the revoked key is nobody's now, so its refusals (counted with every
    // unknown credential) no longer show.
    let page = browser.get("/account/agents").await;
    let revoke = form_of(&page, "revoke");
    assert_eq!(
        browser.post(&revoke.action, &revoke.with(&[])).await.status,
        303
    );
    assert_eq!(door(new_key).initialize("2025-06-18").await.status, 401);
    let refusals = browser.get("/account/refusals").await;
    assert!(!refusals.body.contains(&new_hint), "{}", refusals.body);
    assert!(!refusals.body.contains("<code>unknown</code>"));

    // Another account's agent: 404, the same as an unknown one.
    let foreign = browser
        .post("/account/agents/zzzzzzzz9/suspend", &revoke.with(&[]))
        .await;
    assert_eq!(foreign.status, 404);
    let mut other = Browser::new(&server.url(""), dir.path());
    other.sign_in("other@example.com").await;
    let csrf = other
        .get("/account")
        .await
        .form("/signout")
        .get("csrf")
        .unwrap()
        .to_owned();
    let not_owned = other.post(&suspend.action, &[("csrf".into(), csrf)]).await;
    assert_eq!(not_owned.status, 404);
}

/// SURFACE §4.2: a member owns at most 3 agents (its integration counts); the 4th is refused
/// with a message and nothing is created. An admin is not limited.
async fn agent_allowance_by_tier(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    browser.sign_in("king@example.com").await;
    // The world gave this member an agent and an integration: one more fits.
    assert_eq!(
        server
            .store
            .agents_of(server.person.id)
            .await
            .unwrap()
            .len(),
        2
    );
    let create = browser.get("/account/agents").await.form("/account/agents");
    let third = browser
        .post(
            "/account/agents",
            &create.with(&[("name", "Third"), ("kind", "agent")]),
        )
        .await;
    assert_eq!(third.status, 200, "{}", third.body);
    let create = browser.get("/account/agents").await.form("/account/agents");
    let fourth = browser
        .post(
            "/account/agents",
            &create.with(&[("name", "Fourth"), ("kind", "agent")]),
        )
        .await;
    assert_eq!(fourth.status, 403, "{}", fourth.body);
    fourth.assert_secure();
    assert!(
        fourth.body.contains("The member tier allows 3 agents")
            && fourth.body.contains("No agent was created"),
        "{}",
        fourth.body
    );
    assert!(!fourth.body.contains("service-key"), "{}", fourth.body);
    let owned = server.store.agents_of(server.person.id).await.unwrap();
    assert_eq!(owned.len(), 3);
    assert!(owned.iter().all(|a| a.name != "Fourth"));

    // An admin (here the world's leader, promoted) creates past every tier's allowance.
    let other = server
        .store
        .account_by_email("other@example.com")
        .await
        .unwrap()
        .unwrap();
    server
        .store
        .set_account_tier(other.id, elixir::access::kinds::Tier::Admin)
        .await
        .unwrap();
    let mut admin = Browser::new(&server.url(""), dir.path());
    admin.sign_in("other@example.com").await;
    for n in 1..=6 {
        let create = admin.get("/account/agents").await.form("/account/agents");
        let name = format!("Bot {n}");
        let created = admin
            .post(
                "/account/agents",
                &create.with(&[("name", &name), ("kind", "agent")]),
            )
            .await;
        assert_eq!(created.status, 200, "{name}: {}", created.body);
    }
    assert_eq!(server.store.agents_of(other.id).await.unwrap().len(), 6);
}

async fn activity_by_request_id(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let reply = server.agent().tool("elixir_docs", json!({})).await;
    let request_id = reply.header("x-request-id").to_owned();
    server.state.services.audit.flush().await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    browser.sign_in("king@example.com").await;
    let page = browser.get("/account/activity").await;
    assert_eq!(page.status, 200);
    page.assert_secure();
    assert!(page.body.contains(&request_id), "{}", page.body);
    let one = browser
        .get(&format!("/account/activity?request_id={request_id}"))
        .await;
    assert!(one.body.contains("id=\"call\""), "{}", one.body);
    assert!(one.body.contains("elixir_docs"));
    // Someone else's call is not shown.
    let mut other = Browser::new(&server.url(""), dir.path());
    other.sign_in("other@example.com").await;
    let theirs = other
        .get(&format!("/account/activity?request_id={request_id}"))
        .await;
    assert!(theirs.body.contains("No call of yours"), "{}", theirs.body);
}

async fn every_post_checks_csrf_and_origin(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let grant = server
        .state
        .oauth
        .as_ref()
        .unwrap()
        .server
        .connections(&server.person.id.to_string())
        .await
        .unwrap()[0]
        .grant_id
        .clone();
    let csrf = browser
        .get("/account")
        .await
        .form("/signout")
        .get("csrf")
        .unwrap()
        .to_owned();
    let pid = server.agent.agent.public_id.clone();
    let posts = [
        "/signout".to_owned(),
        format!("/account/connections/{grant}/scopes"),
        format!("/account/connections/{grant}/revoke"),
        "/account/agents".to_owned(),
        format!("/account/agents/{pid}/rotate"),
        format!("/account/agents/{pid}/revoke"),
        format!("/account/agents/{pid}/suspend"),
        format!("/account/agents/{pid}/resume"),
        format!("/account/agents/{pid}/scopes"),
    ];
    let fields = |token: Option<&str>| {
        let mut f = vec![
            ("scope".to_owned(), "cr:read".to_owned()),
            ("name".to_owned(), "X".to_owned()),
        ];
        if let Some(t) = token {
            f.push(("csrf".to_owned(), t.to_owned()));
        }
        f
    };
    for path in &posts {
        for (token, headers) in [
            (None, vec![]),
            (Some("0123456789abcdef0123456789abcdef"), vec![]),
            (
                Some(csrf.as_str()),
                vec![("origin", "https://evil.example")],
            ),
            (Some(csrf.as_str()), vec![("sec-fetch-site", "cross-site")]),
            (Some(csrf.as_str()), vec![("origin", "null")]),
            (
                Some(csrf.as_str()),
                vec![("origin", "null"), ("sec-fetch-site", "same-site")],
            ),
        ] {
            let r = browser.post_with(path, &fields(token), &headers).await;
            assert_eq!(r.status, 403, "{path} {token:?} {headers:?}");
            r.assert_secure();
        }
    }
    // Nothing happened: the session, the grant and the agent are as they were.
    assert_eq!(browser.get("/account").await.status, 200);
    let agent = server
        .store
        .agent_by_public_id(&pid)
        .await
        .unwrap()
        .unwrap();
    assert!(!agent.suspended && agent.key_digest.is_some() && agent.key_scopes.is_empty());
    assert_eq!(
        server
            .state
            .oauth
            .as_ref()
            .unwrap()
            .server
            .connections(&server.person.id.to_string())
            .await
            .unwrap()[0]
            .scopes
            .len(),
        5
    );
    // The sign-in form: a forged flow token, or another origin.
    let form = browser.get("/signin").await;
    // Signed in: /signin goes to the account page; sign-in CSRF is checked from a fresh browser.
    assert_eq!(form.status, 303);
    let mut fresh = Browser::new(&base, dir.path());
    let form = fresh.get("/signin").await.form("/signin");
    let mut forged = form.with(&[("email", "a@b.example"), ("action", "send_code")]);
    forged.retain(|(k, _)| k != "csrf");
    forged.push(("csrf".into(), "forged".into()));
    assert_eq!(fresh.post("/signin", &forged).await.status, 403);
    let cross = fresh
        .post_with(
            "/signin",
            &form.with(&[("email", "a@b.example"), ("action", "send_code")]),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(cross.status, 403);
}

async fn docs_pages_render_the_sources(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-pages-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    let index = browser.get("/docs").await;
    assert_eq!(index.status, 200);
    index.assert_secure();
    for page in &server.state.services.content.pages {
        assert!(
            index
                .body
                .contains(&format!("href=\"/docs/{}\"", page.slug)),
            "{}",
            page.slug
        );
    }
    let page = browser.get("/docs/connections").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<h2 id=\"oauth-connections\">"),
        "{}",
        page.body
    );
    let tools = browser.get("/docs/tools-help").await;
    assert!(
        tools.body.contains("id=\"elixir-docs\""),
        "generated sections render"
    );
    assert_eq!(browser.get("/docs/nope").await.status, 404);
    let home = browser.get("/").await;
    assert_eq!(home.status, 200);
    home.assert_secure();
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).expect(start) + start.len();
    let to = text[from..].find(end).expect(end) + from;
    &text[from..to]
}

on_both_backends!(
    sign_in_by_code_and_out,
    connections_edit_and_disconnect,
    agents_lifecycle,
    agent_allowance_by_tier,
    activity_by_request_id,
    every_post_checks_csrf_and_origin,
    docs_pages_render_the_sources,
);
