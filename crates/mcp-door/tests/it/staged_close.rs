//! The staged close, proven with the clients that lost refusals before it: the async `httpx`
//! client of the MCP Python SDK and Node's `fetch` (the TypeScript SDK's) read every refusal
//! the door writes before it has read the body — 413, 401, 429, 408 and 400 — with a
//! `Content-Length` body and a chunked one, served by `serve_until` on 127.0.0.1:0.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use mcp_door::{Metrics, PreAuthGate, Serving, serve_until};
use testkit::clients::{Case, Framing, assert_both_read};
use tokio::net::TcpListener;

use crate::support::{PATH, Toy, padded_ping};

/// Serves `router` with `serve_until` until the returned sender is dropped.
pub async fn serve(router: Router, serving: Serving) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        serve_until(
            listener,
            router,
            &Arc::new(Metrics::new()),
            &serving,
            async move {
                let _ = stopped.await;
            },
        )
        .await
        .unwrap();
    });
    (base, stop)
}

const BIG: usize = 4 * 1024 * 1024;
const FRAMINGS: [Framing; 2] = [Framing::ContentLength, Framing::Chunked];

fn name(what: &str, framing: Framing) -> String {
    format!("{what} {framing:?}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_clients_read_every_early_refusal() {
    let toy = Toy::new();
    let (base, _stop) = serve(toy.router.clone(), Serving::new()).await;
    let url = format!("{base}{PATH}");
    let mut cases = Vec::new();
    for framing in FRAMINGS {
        let auth = |c: Case| c.header("authorization", "Bearer good-user");
        cases.push((
            auth(Case::new(name("413 4 MB", framing), &url, BIG, framing)),
            413,
        ));
        cases.push((
            auth(Case::new(
                name("413 one past the cap", framing),
                &url,
                307_201,
                framing,
            )),
            413,
        ));
        cases.push((
            Case::new(name("401 no token", framing), &url, BIG, framing),
            401,
        ));
        // An unknown MCP-Protocol-Version is judged with the body's `_meta` (the 2026-07-28
        // envelope may name the version), so the door reads the body first: a body within the
        // cap, answered 400 once it is read.
        cases.push((
            auth(Case::new(
                name("400 bad protocol version", framing),
                &url,
                100_000,
                framing,
            ))
            .header("mcp-protocol-version", "1999-01-01"),
            400,
        ));
        // the door's body timeout is 300 ms: the body is done only after 1 s
        cases.push((
            auth(Case::new(
                name("408 slow body", framing),
                &url,
                64 * 1024,
                framing,
            ))
            .pause(1_000),
            408,
        ));
    }
    let ran = assert_both_read(&cases).await;
    eprintln!("{ran} client(s) read all {} refusals", cases.len());
    // the connection that drained is usable again by a fresh request
    let ok = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .bearer_auth("good-user")
        .body(padded_ping(100))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_clients_read_a_429_before_the_body() {
    // a pre-auth gate of no places refuses every request with 429 before authentication
    let toy = Toy::builder().pre_auth(PreAuthGate::new(0)).build();
    let (base, _stop) = serve(toy.router.clone(), Serving::new()).await;
    let url = format!("{base}{PATH}");
    let cases: Vec<_> = FRAMINGS
        .iter()
        .map(|f| (Case::new(name("429", *f), &url, BIG, *f), 429))
        .collect();
    assert_both_read(&cases).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_is_bounded_in_bytes() {
    // past the drain's bound the connection closes: the client may or may not read the 413,
    // but the server does not read on; a body within the bound is read whole and answered
    let serving = Serving {
        body_drain: mcp_door::DrainLimits {
            max_bytes: 1024 * 1024,
            max_time: Duration::from_secs(5),
        },
        ..Serving::new()
    };
    let toy = Toy::new();
    let (base, _stop) = serve(toy.router.clone(), serving).await;
    let url = format!("{base}{PATH}");
    let within = Case::new(
        "413 within the drain bound",
        &url,
        1024 * 1024,
        Framing::ContentLength,
    )
    .header("authorization", "Bearer good-user");
    assert_both_read(&[(within, 413)]).await;
    let past = Case::new(
        "past the drain bound",
        &url,
        64 * 1024 * 1024,
        Framing::ContentLength,
    )
    .header("authorization", "Bearer good-user");
    if let Some(outcomes) = testkit::clients::python_httpx(&[past]).await {
        let o = &outcomes[0];
        assert!(
            o.status == Some(413) || o.error.is_some(),
            "either the 413 or a closed connection: {o:?}"
        );
    }
}
