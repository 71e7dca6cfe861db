//! The Prometheus counts of Elixir's three doors: labelled by route pattern (never a
//! `public_id`), tool and outcome; the pool sampled at scrape time.

use serde_json::json;

use crate::on_both_backends;
use crate::support::spawn;

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn doors_are_measured_by_pattern(url: &str) {
    let server = spawn(url).await;
    server.person().tool("elixir_docs", json!({})).await;
    server.agent().tool("elixir_docs", json!({})).await;
    server.agent().tool("elixir_docs", json!({})).await;
    server
        .integration()
        .tool("elixir_docs", json!({"nope": 1}))
        .await;

    let text = server.state.doors.metrics.render().unwrap();
    let series = |door: &str, outcome: &str| {
        format!(
            r#"mcp_door_requests_total{{door="{door}",method="tools/call",tool="elixir_docs",outcome="{outcome}"}}"#
        )
    };
    assert_eq!(value(&text, &series("/mcp", "ok")), Some(1.0), "{text}");
    assert_eq!(
        value(&text, &series("/a/{public_id}/mcp", "ok")),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        value(&text, &series("/i/{public_id}/mcp", "bad_request")),
        Some(1.0),
        "{text}"
    );
    assert!(!text.contains(&server.agent.agent.public_id), "{text}");
    assert!(
        value(
            &text,
            r#"mcp_door_pool_connections{pool="elixir",state="open"}"#
        )
        .is_some_and(|open| open >= 1.0),
        "{text}"
    );
}

on_both_backends!(doors_are_measured_by_pattern);
