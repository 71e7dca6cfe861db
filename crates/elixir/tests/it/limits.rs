//! Metering: the hourly rate per principal (fixed UTC hour, 429 + Retry-After, exemptions),
//! the daily quota by tier (Help free, −32029 window day), `meta.quota` on every result, and a
//! parallel burst on one daily counter admitted exactly to its limit.

use elixir::access::limits::{DAY_MS, day_start};
use elixir::model::Window;
use serde_json::json;

use crate::on_both_backends;
use crate::support::{Options, T0, spawn, spawn_with, success};

async fn hourly_rate_then_429_with_retry_after(url: &str) {
    let server = spawn_with(
        url,
        Options {
            hourly_rate: 300,
            ..Options::default()
        },
    )
    .await;
    // 12:59:30 of the first day: 30 s left in the clock hour
    server
        .clock
        .set_millis(T0 + 12 * 3_600_000 + 59 * 60_000 + 30_000);
    let person = server.person();
    for i in 0..300 {
        let method = if i % 3 == 0 {
            "resources/list"
        } else {
            "tools/list"
        };
        let r = person.request(method, json!({})).await;
        assert_eq!(r.status, 200, "request {i}: {}", r.body);
        // exempt methods never count
        assert_eq!(person.request("ping", json!({})).await.status, 200);
    }
    assert_eq!(person.initialize("2025-06-18").await.status, 200);
    let r = person.tool("elixir_docs", json!({})).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), "30");
    let error = &r.body["error"];
    assert_eq!(error["code"], -32029);
    assert_eq!(error["data"]["code"], "quota_exceeded");
    assert_eq!(error["data"]["class"], "budget");
    assert_eq!(error["data"]["window"], "hour");
    assert_eq!(error["data"]["retry_after_s"], 30);
    assert_eq!(error["data"]["resets_at"], "2026-01-01T13:00:00Z");
    assert_eq!(error["data"]["request_id"], r.header("x-request-id"));
    // a refusal spends nothing, and the agent has its own bucket
    success(&server.agent().tool("elixir_docs", json!({})).await);
    // the next clock hour opens a fresh window
    server.clock.set_millis(T0 + 13 * 3_600_000);
    let ok = success(&person.tool("elixir_docs", json!({})).await);
    assert_eq!(
        ok["meta"]["quota"]["hour"],
        json!({"used": 1, "max": 300, "remaining": 299, "resets_at": "2026-01-01T14:00:00Z"})
    );
}

async fn quota_rides_every_result_and_help_is_free(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let first = success(&person.tool("elixir_docs", json!({})).await);
    assert_eq!(
        first["meta"]["quota"],
        json!({
            "calls": {"used": 0, "max": 500, "remaining": 500},
            "live": {"used": 0, "max": 20, "remaining": 20},
            "hour": {"used": 1, "max": 300, "remaining": 299, "resets_at": "2026-01-01T01:00:00Z"},
            "resets_at": "2026-01-02T00:00:00Z",
        })
    );
    // elixir_settings is metered, even when its arguments then fail validation
    let s = success(&person.tool("elixir_settings", json!({})).await);
    assert_eq!(s["meta"]["quota"]["calls"]["used"], 1);
    let bad =
        crate::support::tool_error(&person.tool("elixir_settings", json!({"timezone": 5})).await);
    assert_eq!(bad["meta"]["quota"]["calls"]["used"], 2);
    // the agent spends its owner's calls, with its owner's tier capped at leader
    let a = success(&server.agent().tool("elixir_settings", json!({})).await);
    assert_eq!(a["meta"]["quota"]["calls"]["used"], 3);
    assert_eq!(a["meta"]["quota"]["hour"]["used"], 1);

    // a spent day answers −32029 (HTTP 200) for metered tools; Help tools still answer
    let day = day_start(server.clock_now());
    let subject = format!("calls:{}", server.person.id);
    while server
        .store
        .spend(&subject, Window::Day, day, 500)
        .await
        .unwrap()
        .is_some()
    {}
    let r = person.tool("elixir_settings", json!({})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["error"]["code"], -32029);
    assert_eq!(r.body["error"]["data"]["window"], "day");
    assert_eq!(r.body["error"]["data"]["resets_at"], "2026-01-02T00:00:00Z");
    assert_eq!(
        r.body["error"]["data"]["request_id"],
        r.header("x-request-id")
    );
    let free = success(&person.tool("elixir_docs", json!({"page": "limits"})).await);
    assert_eq!(
        free["meta"]["quota"]["calls"],
        json!({"used": 500, "max": 500, "remaining": 0})
    );
    // 00:00 UTC resets it
    server.clock.set_millis(T0 + DAY_MS);
    success(&person.tool("elixir_settings", json!({})).await);
}

async fn a_parallel_burst_spends_the_day_exactly_to_its_limit(url: &str) {
    let server = spawn(url).await;
    let day = day_start(server.clock_now());
    let calls = format!("calls:{}", server.person.id);
    let live = format!("live:{}", server.person.id);
    for _ in 0..3 {
        server
            .store
            .spend(&live, Window::Day, day, 20)
            .await
            .unwrap();
    }
    // 40 spends at once against a limit of 25: each admitted one counts once, with the live
    // count read beside it.
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..40 {
        let store = std::sync::Arc::clone(&server.store);
        let (calls, live) = (calls.clone(), live.clone());
        burst.spawn(async move {
            store
                .spend_reading(&calls, &live, Window::Day, day, 25)
                .await
                .unwrap()
        });
    }
    let mut admitted: Vec<(i64, i64)> = burst.join_all().await.into_iter().flatten().collect();
    admitted.sort_unstable();
    assert_eq!(admitted, (1..=25).map(|n| (n, 3)).collect::<Vec<_>>());
    assert_eq!(
        server
            .store
            .usage_of_both(&calls, &live, Window::Day, day)
            .await
            .unwrap(),
        (25, 3)
    );
}

impl crate::support::Server {
    pub fn clock_now(&self) -> i64 {
        use mcp_door::Clock;
        self.clock.now_millis()
    }
}

on_both_backends!(
    hourly_rate_then_429_with_retry_after,
    quota_rides_every_result_and_help_is_free,
    a_parallel_burst_spends_the_day_exactly_to_its_limit
);
