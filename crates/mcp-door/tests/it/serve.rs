//! `serve_until`: a graceful stop lets an in-flight request finish; the drain is bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use mcp_door::{Metrics, Serving, serve_until};

fn slow(millis: u64) -> Router {
    Router::new().route(
        "/slow",
        get(move || async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            "done"
        }),
    )
}

/// Starts `router`, sends one request to `/slow`, then resolves the shutdown future once the
/// request is in flight. Returns the request (still running or finished) and how long
/// `serve_until` took to return after the shutdown.
async fn stop_during_a_request(
    router: Router,
    drain: Duration,
) -> (tokio::task::JoinHandle<Option<String>>, Duration) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/slow", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = Serving {
        drain_timeout: drain,
        ..Serving::new()
    };
    let server = tokio::spawn(async move {
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
    });
    let request = tokio::spawn(async move {
        match reqwest::get(&url).await {
            Ok(r) => r.text().await.ok(),
            Err(_) => None,
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("serve_until returns")
        .unwrap()
        .unwrap();
    (request, asked.elapsed())
}

#[tokio::test]
async fn an_in_flight_request_finishes_after_the_stop() {
    let (request, took) = stop_during_a_request(slow(400), Duration::from_secs(5)).await;
    // the request had ~300 ms left when the stop came: serve_until waited for it
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(request.await.unwrap().as_deref(), Some("done"));
}

#[tokio::test]
async fn the_drain_is_bounded() {
    let (request, took) = stop_during_a_request(slow(30_000), Duration::from_millis(200)).await;
    // serve_until returns once the drain is over; the connection's task lives on until the
    // runtime (the process) ends, as axum spawns one task per connection.
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert!(!request.is_finished());
    request.abort();
}
