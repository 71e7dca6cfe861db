//! The Prometheus metrics: requests by door, method, tool and outcome with closed label
//! values (unknown tools and methods are folded), latency histograms, admission refusals by
//! reason, pool gauges sampled at scrape time, and the `/metrics` endpoint.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

use crate::support::Toy;
use mcp_door::{Limits, Metrics, PoolUse};

fn line(text: &str, prefix: &str) -> Option<String> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .map(str::to_owned)
}

#[tokio::test]
async fn requests_are_counted_with_closed_labels() {
    let metrics = Arc::new(Metrics::new());
    let toy = Toy::builder().metrics(metrics.clone()).build();

    toy.call("good-user", "echo", json!({"text": "hi"})).await;
    toy.call("good-user", "echo", json!({"text": "hi"})).await;
    toy.call("good-user", "echo", json!({"text": "toolong"}))
        .await;
    let unknown = format!("made-up-{}", "x".repeat(40));
    toy.call("good-user", &unknown, json!({})).await;
    toy.rpc(Some("good-user"), "made/up", json!({})).await;
    toy.rpc(None, "ping", json!({})).await;

    let text = metrics.render().unwrap();
    let expect = |prefix: &str, value: &str| {
        let found = line(&text, prefix).unwrap_or_else(|| panic!("{prefix} in\n{text}"));
        assert_eq!(found, format!("{prefix} {value}"), "{text}");
    };
    expect(
        r#"mcp_door_requests_total{door="/mcp",method="tools/call",tool="echo",outcome="ok"}"#,
        "2",
    );
    expect(
        r#"mcp_door_requests_total{door="/mcp",method="tools/call",tool="echo",outcome="422"}"#,
        "1",
    );
    expect(
        r#"mcp_door_requests_total{door="/mcp",method="tools/call",tool="unknown",outcome="-32602"}"#,
        "1",
    );
    expect(
        r#"mcp_door_requests_total{door="/mcp",method="other",tool="-",outcome="-32601"}"#,
        "1",
    );
    expect(
        r#"mcp_door_requests_total{door="/mcp",method="-",tool="-",outcome="401"}"#,
        "1",
    );
    expect(
        r#"mcp_door_request_duration_seconds_count{door="/mcp",method="tools/call",tool="echo"}"#,
        "3",
    );
    // a caller's made-up names never become label values
    assert!(
        !text.contains("made-up") && !text.contains("made/up"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"));
}

#[tokio::test]
async fn admission_refusals_are_counted_by_reason() {
    let metrics = Arc::new(Metrics::new());
    let toy = Toy::builder()
        .metrics(metrics.clone())
        .limits(Limits {
            rate_per_window: 2,
            window: Duration::from_secs(60),
            credential_concurrency: 4,
            global_concurrency: 4,
            ..Limits::default()
        })
        .build();
    for _ in 0..2 {
        assert_eq!(
            toy.rpc(Some("good-user"), "ping", json!({})).await.status,
            200
        );
    }
    for _ in 0..2 {
        assert_eq!(
            toy.rpc(Some("good-user"), "ping", json!({})).await.status,
            StatusCode::TOO_MANY_REQUESTS
        );
    }
    let text = metrics.render().unwrap();
    assert_eq!(
        line(&text, "mcp_door_admission_refusals_total{").as_deref(),
        Some(
            r#"mcp_door_admission_refusals_total{door="/mcp",reason="per-token rate exceeded"} 2"#
        ),
        "{text}"
    );
    assert_eq!(
        line(
            &text,
            r#"mcp_door_requests_total{door="/mcp",method="-",tool="-",outcome="429"}"#
        )
        .as_deref(),
        Some(r#"mcp_door_requests_total{door="/mcp",method="-",tool="-",outcome="429"} 2"#),
        "{text}"
    );
}

#[tokio::test]
async fn pools_are_sampled_at_scrape_time_and_served_at_metrics() {
    let metrics = Arc::new(Metrics::new());
    let size = Arc::new(std::sync::atomic::AtomicU32::new(4));
    let seen = Arc::clone(&size);
    metrics.sample_pool("main", move || PoolUse {
        size: seen.load(std::sync::atomic::Ordering::SeqCst),
        idle: 1,
    });
    let scrape = || async {
        let response = metrics
            .router()
            .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        );
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    };
    let text = scrape().await;
    assert!(
        text.contains(r#"mcp_door_pool_connections{pool="main",state="open"} 4"#),
        "{text}"
    );
    assert!(text.contains(r#"mcp_door_pool_connections{pool="main",state="idle"} 1"#));
    assert!(text.contains(r#"mcp_door_pool_connections{pool="main",state="in_use"} 3"#));
    size.store(9, std::sync::atomic::Ordering::SeqCst);
    let text = scrape().await;
    assert!(
        text.contains(r#"mcp_door_pool_connections{pool="main",state="in_use"} 8"#),
        "{text}"
    );
}

#[tokio::test]
async fn serve_answers_on_its_own_listener_until_stopped() {
    let metrics = Arc::new(Metrics::new());
    metrics.sample_pool("p", || PoolUse { size: 2, idle: 2 });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    mcp_door::metrics::serve(&metrics, listener, stopped).unwrap();
    let url = format!("http://{address}/metrics");
    let body = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(
        body.contains(r#"mcp_door_pool_connections{pool="p",state="in_use"} 0"#),
        "{body}"
    );
    assert!(body.ends_with("# EOF\n"));
    assert_eq!(
        reqwest::get(format!("http://{address}/mcp"))
            .await
            .unwrap()
            .status(),
        404
    );
    stop.send(true).unwrap();
    let mut refused = false;
    for _ in 0..50 {
        if reqwest::get(&url).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the metrics listener kept serving after stop");
}
