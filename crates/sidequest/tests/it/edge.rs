//! Sidequest's edge: on both doors (`/play/mcp`, `/mcp`) the async `httpx` client and Node's
//! `fetch` read the 413 and 401 written before the body is read (staged close), with
//! `Content-Length` and chunked; the DNS-rebinding request is 403, an allowed origin gets its
//! CORS preflight, a POST that is not JSON is 415; `/readyz` is 200 while the database (and
//! Redis) answer and 503 once one is cut, on both backends; `serve --tls-cert/--tls-key`
//! answers HTTPS and rereads its certificate on SIGHUP.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use sidequest::app::ServeConfig;
use testkit::clients::{Case, Framing, assert_both_read};
use testkit::proxy::{Proxy, target_of};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_doors_refusals_reach_async_clients() {
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let (server, world, author) = crate::author::setup(&url).await;
    let play_token = world.assignments[0].1.clone();
    let author_token = author.token.clone().unwrap();
    let mut cases = Vec::new();
    for (door, token) in [("/play/mcp", play_token), ("/mcp", author_token)] {
        let url = format!("http://{}{door}", server.addr);
        for framing in [Framing::ContentLength, Framing::Chunked] {
            let bearer = format!("Bearer {token}");
            cases.push((
                Case::new(format!("{door} 413 {framing:?}"), &url, 4 << 20, framing)
                    .header("authorization", &bearer),
                413,
            ));
            cases.push((
                Case::new(format!("{door} 401 {framing:?}"), &url, 4 << 20, framing),
                401,
            ));
        }
    }
    assert_both_read(&cases).await;
}

async fn post(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

#[tokio::test]
async fn both_doors_refuse_rebinding_and_non_json_and_answer_allowed_preflights() {
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.allowed_origins = vec!["https://inspector.example".into()];
    config.public_url = Some("https://play.example".into());
    let server = support::spawn_with(&url, config, 21).await;
    let world = support::world(&server, 1).await;
    let (_, author_token) = {
        let issued = sidequest::campaign::CampaignService::new(server.service.clone())
            .create_author_token(&world.gm, "edge")
            .await
            .unwrap();
        (issued.id, issued.token)
    };
    let json = ("content-type", "application/json");
    for (door, token) in [
        ("/play/mcp", world.assignments[0].1.as_str()),
        ("/mcp", author_token.as_str()),
    ] {
        let url = format!("http://{}{door}", server.addr);
        let (s, _, b) = post(&url, Some(token), &[json]).await;
        assert_eq!(s, 200, "{door}: {b}");
        let (s, _, b) = post(
            &url,
            Some(token),
            &[
                json,
                ("host", "evil.example.com"),
                ("origin", "http://evil.example.com"),
            ],
        )
        .await;
        assert_eq!(s, 403, "{door}: {b}");
        assert_eq!(b["error"]["code"], -32000, "{b}");
        let (s, _, b) = post(
            &url,
            Some(token),
            &[json, ("origin", "https://evil.example")],
        )
        .await;
        assert_eq!(s, 403, "{door}: {b}");
        let (s, _, _) = post(
            &url,
            Some(token),
            &[json, ("origin", "https://play.example")],
        )
        .await;
        assert_eq!(s, 200, "{door}: the public origin");
        let (s, h, _) = post(
            &url,
            Some(token),
            &[json, ("origin", "https://inspector.example")],
        )
        .await;
        assert_eq!(s, 200, "{door}: an allowed origin");
        assert_eq!(
            h["access-control-allow-origin"],
            "https://inspector.example"
        );
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            let (s, _, b) = post(&url, Some(token), &[("content-type", ct)]).await;
            assert_eq!(s, 415, "{door} {ct}: {b}");
        }
        let preflight = reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", "https://inspector.example")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(preflight.status(), 204, "{door}");
        assert_eq!(
            preflight.headers()["access-control-allow-headers"],
            "Authorization, Content-Type, MCP-Protocol-Version"
        );
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
    let url = match &proxy {
        Some(p) => target_of(url, 5432, Some(p.addr)).await.1,
        None => url.to_owned(),
    };
    let mut config = ServeConfig::default();
    config.server.db.acquire_timeout = Duration::from_millis(500);
    let server = support::spawn_with(&url, config, 22).await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["database"], "ok");
    let Some(proxy) = proxy else { return };
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_ne!(body["checks"]["database"], "ok", "{body}");
    // liveness is not readiness
    let live = reqwest::get(format!("http://{}/healthz", server.addr))
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
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
    let mut config = ServeConfig::default();
    config.server.redis_url = Some(via);
    config.server.redis_prefix = format!("test-ready:{}", uuid::Uuid::new_v4().simple());
    let server = support::spawn_with(&url, config, 23).await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["redis"], "ok");
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_ne!(body["checks"]["redis"], "ok", "{body}");
    assert_eq!(body["checks"]["database"], "ok", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_tls_answers_https_and_reloads_on_sighup() {
    let dir = testkit::db::TempDir::new("sq-tls-");
    let first = testkit::tls::self_signed(dir.path(), "a");
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let log = std::fs::File::create(dir.path().join("serve.log")).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_sidequest"))
        .args(["--database-url", &url, "serve", "--bind", &addr.to_string()])
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
