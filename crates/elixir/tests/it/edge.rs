//! Elixir's edge: on its three doors (`/mcp`, `/a/{id}/mcp`, `/i/{id}/mcp`) and on the OAuth
//! endpoints it serves, the async `httpx` client and Node's `fetch` read the refusals written
//! before the body is read (staged close), with `Content-Length` and chunked; the
//! DNS-rebinding request is 403 and a POST that is not JSON 415 on every door; an allowed
//! origin gets CORS on the doors (so a browser-based client that finished OAuth can call
//! `/mcp`); `/readyz` follows the database (both backends) and Redis; `serve --tls-cert
//! --tls-key` answers HTTPS and rereads the certificate on SIGHUP.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use testkit::clients::{Case, Framing, assert_both_read};
use testkit::proxy::{Proxy, target_of};

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
        for framing in [Framing::ContentLength, Framing::Chunked] {
            cases.push((
                Case::new(
                    format!("{door} 413 {framing:?}"),
                    &client_url,
                    4 << 20,
                    framing,
                )
                .header("authorization", &format!("Bearer {token}")),
                413,
            ));
            cases.push((
                Case::new(
                    format!("{door} 401 {framing:?}"),
                    &client_url,
                    4 << 20,
                    framing,
                ),
                401,
            ));
        }
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

async fn post(
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    )
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
    let json = ("content-type", "application/json");
    for (door_url, token) in [
        (server.url("/mcp"), PERSON_TOKEN.to_owned()),
        (agent.url.clone(), agent.token.clone().unwrap()),
        (integration.url.clone(), integration.token.clone().unwrap()),
    ] {
        let (s, _, b) = post(&door_url, &token, &[json]).await;
        assert_eq!(s, 200, "{door_url}: {b}");
        // the conformance suite's request
        let (s, _, b) = post(
            &door_url,
            &token,
            &[
                json,
                ("host", "evil.example.com"),
                ("origin", "http://evil.example.com"),
            ],
        )
        .await;
        assert_eq!(s, 403, "{door_url}: {b}");
        assert_eq!(b["jsonrpc"], "2.0");
        assert_eq!(b["error"]["code"], -32000);
        let (s, _, _) = post(
            &door_url,
            &token,
            &[json, ("origin", "https://elixir.test")],
        )
        .await;
        assert_eq!(s, 200, "{door_url}: the public origin");
        let (s, h, _) = post(
            &door_url,
            &token,
            &[json, ("origin", "http://localhost:6274")],
        )
        .await;
        assert_eq!(s, 200, "{door_url}: an allowed origin");
        assert_eq!(h["access-control-allow-origin"], "http://localhost:6274");
        assert_eq!(h["access-control-expose-headers"], "WWW-Authenticate");
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            let (s, _, b) = post(&door_url, &token, &[("content-type", ct)]).await;
            assert_eq!(s, 415, "{door_url} {ct}: {b}");
        }
        let preflight = reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &door_url)
            .header("origin", "http://localhost:6274")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, mcp-protocol-version",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(preflight.status(), 204, "{door_url}");
        assert_eq!(
            preflight.headers()["access-control-allow-origin"],
            "http://localhost:6274"
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

async fn readyz(addr: SocketAddr) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(format!("http://{addr}/readyz"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn readiness_follows_the_database(url: &str) {
    let proxy = if url.starts_with("postgres") {
        let (target, _) = target_of(url, 5432, None).await;
        Some(Proxy::start(target).await)
    } else {
        None
    };
    let via = match &proxy {
        Some(p) => target_of(url, 5432, Some(p.addr)).await.1,
        None => url.to_owned(),
    };
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
    let (target, _) = target_of(&redis, 6379, None).await;
    let proxy = Proxy::start(target).await;
    let (_, via) = target_of(&redis, 6379, Some(proxy.addr)).await;
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
    let first = testkit::tls::self_signed(dir.path(), "a");
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let log = std::fs::File::create(dir.path().join("serve.log")).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_elixir"))
        .current_dir(dir.path())
        .args(["--database-url", &url, "serve", "--bind", &addr.to_string()])
        .args(["--public-url", &format!("https://localhost:{port}")])
        .arg("--tls-cert")
        .arg(&first.cert)
        .arg("--tls-key")
        .arg(&first.key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut answer = Err(String::new());
    for _ in 0..300 {
        answer = testkit::tls::get(addr, &first.der, "/readyz").await;
        if answer.as_ref().is_ok_and(|a| a.starts_with("HTTP/1.1 200")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let answer = answer.unwrap_or_else(|e| {
        panic!(
            "{e}\n{}",
            std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default()
        )
    });
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""database":"ok""#), "{answer}");
    // the OAuth metadata is served over TLS too
    let meta = testkit::tls::get(addr, &first.der, "/.well-known/oauth-authorization-server")
        .await
        .unwrap();
    assert!(
        meta.contains(&format!("https://localhost:{port}")),
        "{meta}"
    );

    let second = testkit::tls::self_signed(dir.path(), "b");
    std::fs::copy(&second.cert, &first.cert).unwrap();
    std::fs::copy(&second.key, &first.key).unwrap();
    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut switched = false;
    for _ in 0..100 {
        if testkit::tls::get(addr, &second.der, "/healthz")
            .await
            .is_ok_and(|a| a.ends_with("ok"))
        {
            switched = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(switched, "SIGHUP reloads the certificate");
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP does not stop the server"
    );
    child.kill().await.unwrap();
}
