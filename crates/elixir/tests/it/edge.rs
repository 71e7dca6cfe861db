//! Elixir's edge: on its three doors (`/mcp`, `/a/{id}/mcp`, `/i/{id}/mcp`) and on the OAuth
//! endpoints it serves, the async `httpx` client and Node's `fetch` read the refusals written
//! before the body is read (staged close), with `Content-Length` and chunked; the
//! DNS-rebinding request is 403 and a POST that is not JSON 415 on every door; an allowed
//! origin gets CORS on the doors (so a browser-based client that finished OAuth can call
//! `/mcp`); `/readyz` follows the database (both backends) and Redis; `serve --tls-cert
//! --tls-key` answers HTTPS and rereads the certificate on SIGHUP.

use std::time::Duration;

use testkit::clients::{Case, Framing, assert_both_read};
use testkit::edge::{
    assert_door_edge, assert_tls_serve_reloads, database_behind_proxy, free_loopback_addr, readyz,
    refusal_cases,
};
use testkit::proxy::Proxy;

use crate::support::{self, Options, PERSON_TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_door_and_oauth_endpoint_refusal_reaches_async_clients() {
    // the doors with the static test tokens; the OAuth endpoints on a second server wired to
    // the real mcp-oauth (whose verifier does not know the static tokens)
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let server = support::spawn(&url).await;
    let (dir, oauth_url) = testkit::db::fresh_sqlite_url();
    let oauth = support::spawn_with(
        &oauth_url,
        Options {
            oauth_outbox: Some(dir.path().join("outbox")),
            ..Options::default()
        },
    )
    .await;
    let agent = server.agent();
    let integration = server.integration();
    let mut cases = Vec::new();
    for (door, client_url, token) in [
        ("person", server.url("/mcp"), PERSON_TOKEN.to_owned()),
        ("agent", agent.url.clone(), agent.token.clone().unwrap()),
        (
            "integration",
            integration.url.clone(),
            integration.token.clone().unwrap(),
        ),
    ] {
        cases.extend(refusal_cases(door, &client_url, &token));
    }
    for framing in [Framing::ContentLength, Framing::Chunked] {
        for (path, content_type) in [
            ("/oauth/token", "application/x-www-form-urlencoded"),
            ("/oauth/register", "application/json"),
            ("/oauth/authorize", "application/x-www-form-urlencoded"),
        ] {
            cases.push((
                Case::new(
                    format!("{path} 413 {framing:?}"),
                    oauth.url(path),
                    2 << 20,
                    framing,
                )
                .header("content-type", content_type),
                413,
            ));
        }
    }
    assert_both_read(&cases).await;
}

#[tokio::test]
async fn every_door_refuses_rebinding_and_non_json_and_allows_configured_origins() {
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let server = support::spawn_with(
        &url,
        Options {
            allowed_origins: vec!["http://localhost:6274".into()],
            ..Options::default()
        },
    )
    .await;
    let agent = server.agent();
    let integration = server.integration();
    for (door_url, token) in [
        (server.url("/mcp"), PERSON_TOKEN.to_owned()),
        (agent.url.clone(), agent.token.clone().unwrap()),
        (integration.url.clone(), integration.token.clone().unwrap()),
    ] {
        let answers = assert_door_edge(
            &door_url,
            &token,
            "https://elixir.test",
            "http://localhost:6274",
            "authorization, content-type, mcp-protocol-version",
        )
        .await;
        assert_eq!(
            answers.allowed["access-control-expose-headers"],
            "WWW-Authenticate"
        );
        let foreign = reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &door_url)
            .header("origin", "http://localhost:9999")
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), 403, "{door_url}");
    }
}

async fn readiness_follows_the_database(url: &str) {
    let (proxy, via) = database_behind_proxy(url).await;
    let server = support::spawn_with(
        &via,
        Options {
            acquire_timeout: Some(Duration::from_millis(500)),
            ..Options::default()
        },
    )
    .await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ready");
    assert_eq!(body["checks"]["database"], "ok");
    let Some(proxy) = proxy else { return };
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert_ne!(body["checks"]["database"], "ok", "{body}");
    let live = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(live.status(), 200, "liveness is not readiness");
}
testkit::on_both_backends!(readiness_follows_the_database);

#[tokio::test]
async fn readiness_follows_redis() {
    let Some(redis) = testkit::db::redis_url().await else {
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&redis, 6379).await;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let server = support::spawn_with(
        &url,
        Options {
            redis_url: Some(via),
            ..Options::default()
        },
    )
    .await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["redis"], "ok");
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_ne!(body["checks"]["redis"], "ok", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_tls_answers_https_and_reloads_on_sighup() {
    let dir = testkit::db::TempDir::new("elixir-tls-");
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let addr = free_loopback_addr();
    let public = format!("https://localhost:{}", addr.port());
    let args = [
        "--database-url",
        &url,
        "serve",
        "--bind",
        &addr.to_string(),
        "--public-url",
        &public,
    ]
    .map(String::from);
    assert_tls_serve_reloads(
        env!("CARGO_BIN_EXE_elixir"),
        dir.path(),
        addr,
        &args,
        async |cert| {
            // the OAuth metadata is served over TLS too
            let meta =
                testkit::tls::get(addr, &cert.der, "/.well-known/oauth-authorization-server")
                    .await
                    .unwrap();
            assert!(meta.contains(&public), "{meta}");
        },
    )
    .await;
}
