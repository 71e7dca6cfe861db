//! mcp-oauth wired into Elixir: the discovery documents and the 401 challenge of each door
//! kind (exact), the code flow through the consent page to a token that works at its door and
//! nowhere else, scopes read from the grant on every call (narrowed → 403 −32003 step-up,
//! revoked → 401), agent-door consent for the owner only, and the purge.

use std::path::Path;

use serde_json::{Value, json};
use testkit::mcp::Client;

use crate::browser::Browser;
use crate::on_both_backends;
use crate::support::{ORIGIN, Options, Server, spawn_with, success};

pub const REDIRECT: &str = "http://127.0.0.1:33418/callback";
const STANDARD: &str = "cr:read recordings:write collections:write account:write feedback:write";
const ALL: [&str; 6] = [
    "cr:read",
    "recordings:write",
    "collections:write",
    "account:write",
    "feedback:write",
    "account:email",
];

pub async fn spawn_oauth(url: &str, outbox: &Path) -> Server {
    spawn_with(
        url,
        Options {
            oauth_outbox: Some(outbox.to_owned()),
            ..Options::default()
        },
    )
    .await
}

/// What the token endpoint answered.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub client_id: String,
    pub access: String,
    pub refresh: String,
    pub scope: String,
}

/// Registers a client at `base` and connects it to `resource` through the consent page as
/// the browser's person (`email`, by code unless the browser is signed in already).
pub async fn connect(
    base: &str,
    browser: &mut Browser,
    email: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<Tokens, String> {
    let http = reqwest::Client::new();
    let registered: Value = http
        .post(format!("{base}/oauth/register"))
        .json(
            &json!({"client_name": "Test client", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    let verifier = format!("verifier-{}", "x".repeat(50));
    let challenge = mcp_oauth::crypto::pkce_challenge(&verifier);
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.extend_pairs([
        ("response_type", "code"),
        ("client_id", &client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("resource", resource),
        ("state", "st4te"),
    ]);
    if let Some(scope) = scope {
        query.append_pair("scope", scope);
    }
    let page = browser
        .get(&format!("/oauth/authorize?{}", query.finish()))
        .await;
    if page.status != 200 {
        return Err(format!("authorize page {}: {}", page.status, page.body));
    }
    let form = page.form("/oauth/authorize");
    let answer = if page.body.contains("type=\"email\"") {
        let sent = browser
            .post(
                "/oauth/authorize",
                &form.with(&[("email", email), ("action", "send_code")]),
            )
            .await;
        let form = sent.form("/oauth/authorize");
        let code = crate::browser::newest_code(&browser.outbox);
        let mut fields = form.with(&[("code", &code), ("action", "verify")]);
        fields.extend(form.checked.iter().cloned());
        browser.post("/oauth/authorize", &fields).await
    } else {
        let mut fields = form.with(&[("action", "authorize")]);
        fields.extend(form.checked.iter().cloned());
        browser.post("/oauth/authorize", &fields).await
    };
    if answer.status != 303 {
        return Err(format!("consent {}: {}", answer.status, answer.body));
    }
    let location = url::Url::parse(answer.header("location")).unwrap();
    let code = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .ok_or("no code")?;
    let token: Value = http
        .post(format!("{base}/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", resource),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    Ok(Tokens {
        client_id,
        access: token["access_token"].as_str().ok_or("no token")?.to_owned(),
        refresh: token["refresh_token"].as_str().unwrap().to_owned(),
        scope: token["scope"].as_str().unwrap().to_owned(),
    })
}

/// `POST /oauth/token` refresh at `base`: status and body.
pub async fn refresh(base: &str, tokens: &Tokens) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens.refresh.as_str()),
            ("client_id", tokens.client_id.as_str()),
        ])
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn discovery_documents_are_exact(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-");
    let server = spawn_oauth(url, dir.path()).await;
    let http = reqwest::Client::new();
    let get = |path: &str| http.get(server.url(path)).send();

    let r = get("/.well-known/oauth-authorization-server")
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "max-age=300");
    let doc: Value = r.json().await.unwrap();
    assert_eq!(
        doc,
        json!({
            "issuer": ORIGIN,
            "authorization_endpoint": format!("{ORIGIN}/oauth/authorize"),
            "token_endpoint": format!("{ORIGIN}/oauth/token"),
            "registration_endpoint": format!("{ORIGIN}/oauth/register"),
            "userinfo_endpoint": format!("{ORIGIN}/oauth/userinfo"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ALL,
            "authorization_response_iss_parameter_supported": true,
        })
    );

    let agent_path = format!("/a/{}/mcp", server.agent.agent.public_id);
    let integration_path = format!("/i/{}/mcp", server.integration.agent.public_id);
    // The root document describes the person door; the path-inserted ones each door, whether
    // or not the public id exists (existence is private).
    for (metadata, door) in [
        ("/.well-known/oauth-protected-resource", "/mcp"),
        ("/.well-known/oauth-protected-resource/mcp", "/mcp"),
        (
            &*format!("/.well-known/oauth-protected-resource{agent_path}"),
            agent_path.as_str(),
        ),
        (
            &*format!("/.well-known/oauth-protected-resource{integration_path}"),
            integration_path.as_str(),
        ),
        (
            "/.well-known/oauth-protected-resource/a/zzzzzzzz9/mcp",
            "/a/zzzzzzzz9/mcp",
        ),
    ] {
        let r = get(metadata).await.unwrap();
        assert_eq!(r.status(), 200, "{metadata}");
        assert_eq!(r.headers()["cache-control"], "max-age=300");
        let doc: Value = r.json().await.unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": format!("{ORIGIN}{door}"),
                "authorization_servers": [ORIGIN],
                "scopes_supported": ALL,
                "bearer_methods_supported": ["header"],
            }),
            "{metadata}"
        );
    }
    for not_a_door in ["/x/abcdefgh/mcp", "/a/UPPER123/mcp", "/healthz"] {
        let r = get(&format!(
            "/.well-known/oauth-protected-resource{not_a_door}"
        ))
        .await
        .unwrap();
        assert_eq!(r.status(), 404, "{not_a_door}");
    }
}

async fn challenges_at_each_door_kind(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-");
    let server = spawn_oauth(url, dir.path()).await;
    let agent_path = format!("/a/{}/mcp", server.agent.agent.public_id);
    let integration_path = format!("/i/{}/mcp", server.integration.agent.public_id);
    for path in [
        "/mcp",
        agent_path.as_str(),
        integration_path.as_str(),
        "/a/zzzzzzzz9/mcp",
    ] {
        for token in [None, Some("eat_not-a-token"), Some("garbage")] {
            let r = Client::new(server.url(path), token.map(str::to_owned))
                .initialize("2025-06-18")
                .await;
            assert_eq!(r.status, 401, "{path} {token:?}");
            assert_eq!(
                r.header("www-authenticate"),
                format!(
                    "Bearer error=\"invalid_token\", resource_metadata=\"{ORIGIN}/.well-known/oauth-protected-resource{path}\", scope=\"{STANDARD}\""
                ),
                "{path} {token:?}"
            );
        }
    }
}

async fn tokens_work_at_their_door_with_scopes_from_the_grant(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    let person_door = format!("{ORIGIN}/mcp");
    let tokens = connect(&base, &mut browser, "king@example.com", &person_door, None)
        .await
        .unwrap();
    assert_eq!(tokens.scope, STANDARD);
    assert!(
        browser.cookie.is_some(),
        "consent by code signs the browser in"
    );

    let person = server.person_client(&tokens.access);
    let init = person.initialize("2025-06-18").await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(
        init.result()["_meta"]["elixir.poapkings.com/principal"]["kind"],
        "person"
    );
    success(&person.tool("elixir_docs", json!({})).await);

    // The token is bound to /mcp: refused at the person's own agent door.
    let at_agent = server
        .door_of(&server.agent, Some(&tokens.access))
        .initialize("2025-06-18")
        .await;
    assert_eq!(at_agent.status, 403, "{}", at_agent.body);

    // Narrowed on the grant → the next call is the step-up answer, exactly.
    let grant = server
        .state
        .oauth
        .as_ref()
        .unwrap()
        .server
        .connections(&server.person.id.to_string())
        .await
        .unwrap();
    assert_eq!(grant.len(), 1);
    let oauth = &server.state.oauth.as_ref().unwrap().server;
    oauth
        .set_connection_scopes(
            &server.person.id.to_string(),
            &grant[0].grant_id,
            &["cr:read".into()],
        )
        .await
        .unwrap();
    let refused = person
        .tool("elixir_feedback", json!({"message": "more please"}))
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.header("www-authenticate"),
        "Bearer error=\"insufficient_scope\", scope=\"cr:read feedback:write\""
    );
    let body = refused.body.clone();
    assert_eq!(body["error"]["code"], -32003);
    assert_eq!(
        body["error"]["message"],
        "The access token lacks the capability required by this tool: feedback:write."
    );
    assert_eq!(body["error"]["data"]["required_scope"], "feedback:write");
    assert_eq!(body["error"]["data"]["granted_scope"], "cr:read");
    success(&person.tool("elixir_docs", json!({})).await);

    // Revoked → 401 on the next call, counted against the grant.
    assert!(
        oauth
            .revoke_connection(&server.person.id.to_string(), &grant[0].grant_id)
            .await
            .unwrap()
    );
    let gone = person.tool("elixir_docs", json!({})).await;
    assert_eq!(gone.status, 401, "{}", gone.body);
    let day = &elixir::domain::iso(mcp_door::Clock::now_millis(&server.clock))[..10];
    let counted = server.store.refusals(day).await.unwrap();
    assert!(
        counted.iter().any(
            |r| r.credential_hint == format!("grant:{}", grant[0].grant_id) && r.door == "/mcp"
        ),
        "{counted:?}"
    );
}

async fn agent_doors_consent_for_the_owner_only(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let agent_door = format!("{ORIGIN}/a/{}/mcp", server.agent.agent.public_id);

    // The owner consents; the grant is the agent's and works at the agent door only.
    let mut owner = Browser::new(&base, dir.path());
    let tokens = connect(&base, &mut owner, "king@example.com", &agent_door, None)
        .await
        .unwrap();
    let agent = server.door_of(&server.agent, Some(&tokens.access));
    let init = agent.initialize("2025-06-18").await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(
        init.result()["_meta"]["elixir.poapkings.com/principal"]["kind"],
        "agent"
    );
    let at_person = server
        .person_client(&tokens.access)
        .initialize("2025-06-18")
        .await;
    assert_eq!(at_person.status, 403);
    // Suspending the agent stops its OAuth connections too.
    elixir::admin::set_suspended(&server.store, &server.agent.agent.public_id, true)
        .await
        .unwrap();
    assert_eq!(agent.initialize("2025-06-18").await.status, 401);

    // Someone else, and an unknown agent: the same refusal page.
    let mut other = Browser::new(&base, dir.path());
    let not_owned = connect(&base, &mut other, "other@example.com", &agent_door, None)
        .await
        .unwrap_err();
    let unknown = connect(
        &base,
        &mut other,
        "other@example.com",
        &format!("{ORIGIN}/a/zzzzzzzz9/mcp"),
        None,
    )
    .await
    .unwrap_err();
    let strip = |e: &str| {
        e.replace(&server.agent.agent.public_id, "ID")
            .replace("zzzzzzzz9", "ID")
    };
    assert!(not_owned.starts_with("consent 403"), "{not_owned}");
    assert_eq!(strip(&not_owned), strip(&unknown));
}

async fn purge_runs(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-oauth-");
    let server = spawn_oauth(url, dir.path()).await;
    let oauth = std::sync::Arc::clone(&server.state.oauth.as_ref().unwrap().server);
    let cancel = tokio_util::sync::CancellationToken::new();
    let task = elixir::access::oauth::spawn_purge(
        oauth,
        std::sync::Arc::clone(&server.store),
        std::sync::Arc::new(server.clock.clone()),
        std::time::Duration::from_millis(20),
        cancel.clone(),
    );
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    cancel.cancel();
    tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .expect("the purge task stops on cancellation")
        .unwrap();
}

on_both_backends!(
    discovery_documents_are_exact,
    challenges_at_each_door_kind,
    tokens_work_at_their_door_with_scopes_from_the_grant,
    agent_doors_consent_for_the_owner_only,
    purge_runs,
);
