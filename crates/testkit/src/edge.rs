//! The edge checks both products run on their doors: the refusals written before a body is
//! read as the async clients see them ([`refusal_cases`]), a `ping` POST with chosen headers
//! ([`post_ping`]) and what every door answers to rebinding, foreign and allowed origins and
//! non-JSON bodies ([`assert_door_edge`]), `/readyz` ([`readyz`]) with the database behind a
//! cuttable proxy ([`database_behind_proxy`]), and `serve --tls-cert/--tls-key` of a product's
//! binary answering HTTPS and rereading its certificate on SIGHUP ([`assert_tls_serve_reloads`]).
//! What each product checks beyond these stays in its own test.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::clients::{Case, Framing};
use crate::proxy::Proxy;
use crate::tls::SelfSigned;

/// A 4 MiB body to `url` with each framing: 413 with `Bearer token`, 401 without. `label`
/// names the door in the case names.
pub fn refusal_cases(label: &str, url: &str, token: &str) -> Vec<(Case, u16)> {
    let mut cases = Vec::new();
    for framing in [Framing::ContentLength, Framing::Chunked] {
        cases.push((
            Case::new(format!("{label} 413 {framing:?}"), url, 4 << 20, framing)
                .header("authorization", &format!("Bearer {token}")),
            413,
        ));
        cases.push((
            Case::new(format!("{label} 401 {framing:?}"), url, 4 << 20, framing),
            401,
        ));
    }
    cases
}

/// A JSON-RPC `ping` POSTed to `url` with `token` (if any) and `headers`: the status, the
/// headers and the JSON body (`null` when it is none).
pub async fn post_ping(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("POST");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, headers, body)
}

/// What [`assert_door_edge`] leaves for the product to check.
#[derive(Debug)]
pub struct EdgeAnswers {
    /// The headers of the 200 to a POST from the allowed origin.
    pub allowed: HeaderMap,
    /// The headers of the 204 to the allowed origin's preflight.
    pub preflight: HeaderMap,
}

/// On the door at `url` with `token`: a JSON ping is 200; the DNS-rebinding request (a
/// foreign `Host` and `Origin`) is 403 with JSON-RPC `-32000`; a foreign origin is 403; the
/// `public` origin is 200; the `allowed` origin is 200 with its CORS origin; a POST that is
/// not JSON is 415; the `allowed` origin's preflight (asking `preflight_headers`) is 204 with
/// its CORS origin.
pub async fn assert_door_edge(
    url: &str,
    token: &str,
    public: &str,
    allowed: &str,
    preflight_headers: &str,
) -> EdgeAnswers {
    let json = ("content-type", "application/json");
    let (s, _, b) = post_ping(url, Some(token), &[json]).await;
    assert_eq!(s, 200, "{url}: {b}");
    // the conformance suite's request
    let (s, _, b) = post_ping(
        url,
        Some(token),
        &[
            json,
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ],
    )
    .await;
    assert_eq!(s, 403, "{url}: {b}");
    assert_eq!(b["jsonrpc"], "2.0", "{b}");
    assert_eq!(b["error"]["code"], -32000, "{b}");
    let (s, _, b) = post_ping(
        url,
        Some(token),
        &[json, ("origin", "https://evil.example")],
    )
    .await;
    assert_eq!(s, 403, "{url}: {b}");
    let (s, _, _) = post_ping(url, Some(token), &[json, ("origin", public)]).await;
    assert_eq!(s, 200, "{url}: the public origin");
    let (s, allowed_headers, _) = post_ping(url, Some(token), &[json, ("origin", allowed)]).await;
    assert_eq!(s, 200, "{url}: an allowed origin");
    assert_eq!(allowed_headers["access-control-allow-origin"], allowed);
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (s, _, b) = post_ping(url, Some(token), &[("content-type", ct)]).await;
        assert_eq!(s, 415, "{url} {ct}: {b}");
    }
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", allowed)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", preflight_headers)
        .send()
        .await
        .expect("OPTIONS");
    assert_eq!(preflight.status(), 204, "{url}");
    assert_eq!(preflight.headers()["access-control-allow-origin"], allowed);
    EdgeAnswers {
        allowed: allowed_headers,
        preflight: preflight.headers().clone(),
    }
}

/// `GET /readyz` of the server at `addr`: its status and JSON body.
pub async fn readyz(addr: SocketAddr) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(format!("http://{addr}/readyz"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("GET /readyz");
    (r.status().as_u16(), r.json().await.expect("a JSON body"))
}

/// The database `url` behind a proxy a test can cut, and the URL through it; SQLite has no
/// connection to cut, so it is used as it is, without a proxy.
pub async fn database_behind_proxy(url: &str) -> (Option<Proxy>, String) {
    if url.starts_with("postgres") {
        let (proxy, via) = Proxy::in_front_of(url, 5432).await;
        (Some(proxy), via)
    } else {
        (None, url.to_owned())
    }
}

/// Starts `bin` with `args` (the database, `serve --bind` and the product's own flags; cwd
/// `dir`) plus `--tls-cert`/`--tls-key` of a fresh self-signed pair, waits until `/readyz`
/// answers 200 over HTTPS with the database ok, runs `check` on the running server, then
/// replaces the certificate and key files, sends SIGHUP and asserts that the new certificate
/// is served and the server is still running. The server's stderr is in `dir/serve.log`.
pub async fn assert_tls_serve_reloads(
    bin: &str,
    dir: &Path,
    addr: SocketAddr,
    args: &[String],
    check: impl AsyncFnOnce(&SelfSigned),
) {
    let first = crate::tls::self_signed(dir, "a");
    let log = std::fs::File::create(dir.join("serve.log")).expect("serve.log");
    let mut child = tokio::process::Command::new(bin)
        .current_dir(dir)
        .args(args)
        .arg("--tls-cert")
        .arg(&first.cert)
        .arg("--tls-key")
        .arg(&first.key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the server");
    let mut answer = Err(String::new());
    for _ in 0..300 {
        answer = crate::tls::get(addr, &first.der, "/readyz").await;
        if answer.as_ref().is_ok_and(|a| a.starts_with("HTTP/1.1 200")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let answer = answer.unwrap_or_else(|e| {
        panic!(
            "{e}\n{}",
            std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
        )
    });
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""database":"ok""#), "{answer}");
    check(&first).await;

    let second = crate::tls::self_signed(dir, "b");
    std::fs::copy(&second.cert, &first.cert).expect("replace the certificate");
    std::fs::copy(&second.key, &first.key).expect("replace the key");
    let pid = child.id().expect("a running server").to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .expect("kill -HUP")
            .success()
    );
    let mut switched = false;
    for _ in 0..100 {
        if crate::tls::get(addr, &second.der, "/healthz")
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
        child.try_wait().expect("the server's state").is_none(),
        "SIGHUP does not stop the server"
    );
    child.kill().await.expect("stop the server");
}

/// A free loopback address to start a server binary on.
pub fn free_loopback_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("its address")
}
