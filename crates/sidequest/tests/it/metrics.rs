//! The Prometheus counts of a running server: both doors (player and author) counted by
//! tool and outcome, and the database pool and the read cache sampled at scrape time.

use serde_json::json;

use crate::on_both_backends;

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn both_doors_and_the_pool_are_measured(url: &str) {
    let (server, world, author) = crate::author::setup(url).await;
    let player = server.client(&world.assignments[0].1);
    for _ in 0..2 {
        player.tool("get_play_context", json!({})).await;
    }
    player
        .tool("get_play_context", json!({"unexpected": true}))
        .await;
    server.anonymous().request("tools/list", json!({})).await;
    author.request("tools/list", json!({})).await;

    let text = server.metrics.render().unwrap();
    let ok = r#"mcp_door_requests_total{door="/play/mcp",method="tools/call",tool="get_play_context",outcome="ok"}"#;
    assert_eq!(value(&text, ok), Some(2.0), "{text}");
    let refused = r#"mcp_door_requests_total{door="/play/mcp",method="-",tool="-",outcome="401"}"#;
    assert_eq!(value(&text, refused), Some(1.0), "{text}");
    let author_list =
        r#"mcp_door_requests_total{door="/mcp",method="tools/list",tool="-",outcome="ok"}"#;
    assert_eq!(value(&text, author_list), Some(1.0), "{text}");
    let bad = text
        .lines()
        .find(|l| {
            l.starts_with(r#"mcp_door_requests_total{door="/play/mcp",method="tools/call",tool="get_play_context",outcome=""#)
                && !l.contains(r#"outcome="ok""#)
        })
        .unwrap_or_else(|| panic!("the refused arguments are counted apart: {text}"));
    assert!(bad.ends_with(" 1"), "{bad}");
    let count = r#"mcp_door_request_duration_seconds_count{door="/play/mcp",method="tools/call",tool="get_play_context"}"#;
    assert_eq!(value(&text, count), Some(3.0), "{text}");
    let open = value(
        &text,
        r#"mcp_door_pool_connections{pool="sidequest",state="open"}"#,
    )
    .unwrap_or_else(|| panic!("pool gauge in {text}"));
    let idle = value(
        &text,
        r#"mcp_door_pool_connections{pool="sidequest",state="idle"}"#,
    )
    .unwrap();
    assert!(open >= 1.0 && idle <= open, "{text}");
    // The two reads of one version are one rendered answer kept, weighed by its bytes.
    let entries = r#"mcp_door_cache_entries{cache="play_reads"}"#;
    assert_eq!(value(&text, entries), Some(1.0), "{text}");
    let weight = value(&text, r#"mcp_door_cache_weight{cache="play_reads"}"#).unwrap();
    assert!(weight > 256.0, "{text}");
}

on_both_backends!(both_doors_and_the_pool_are_measured);
