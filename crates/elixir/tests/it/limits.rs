//! Metering: the hourly rate per principal (fixed UTC hour, 429 + Retry-After, exemptions),
//! the daily quota by tier (Help free, −32029 window day), `meta.quota` on every result, and a
//! parallel burst on one daily counter admitted exactly to its limit, and the one statement
//! that meters a call's hour and day together holding both limits under a parallel burst.

use elixir::access::metering::{DAY_MS, day_start, hour_start};
use elixir::model::Window;
use elixir::store::{Meter, Metered};
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

/// `n` calls metered at once on fresh counters under `hour_limit` and `day_limit`: what each
/// was told, sorted, and the two counters after.
async fn metered_burst(
    server: &crate::support::Server,
    name: &str,
    n: usize,
    hour_limit: i64,
    day_limit: i64,
) -> (Vec<Metered>, i64, i64) {
    let now = server.clock_now();
    let (hour, day) = (hour_start(now), day_start(now));
    let (hour_subject, calls) = (format!("agent:{name}"), format!("calls:{name}"));
    let live = format!("live:{name}");
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..n {
        let store = std::sync::Arc::clone(&server.store);
        let (hour_subject, calls, live) = (hour_subject.clone(), calls.clone(), live.clone());
        burst.spawn(async move {
            store
                .meter(&Meter {
                    hour_subject: &hour_subject,
                    hour_start: hour,
                    hour_limit,
                    calls_subject: &calls,
                    live_subject: &live,
                    day_start: day,
                    day_limit: Some(day_limit),
                })
                .await
                .unwrap()
        });
    }
    let mut told = burst.join_all().await;
    told.sort_unstable_by_key(|m| (m.hour, m.calls));
    let hours = server
        .store
        .usage(&hour_subject, Window::Hour, hour)
        .await
        .unwrap();
    let days = server.store.usage(&calls, Window::Day, day).await.unwrap();
    (told, hours, days)
}

async fn one_statement_meters_hour_and_day_under_a_parallel_burst(url: &str) {
    let server = spawn(url).await;
    let spent = |m: &Metered| (m.hour, m.calls);
    // at the day's bound: every call counted once in both
    let (told, hours, days) = metered_burst(&server, "at-day", 25, 100, 25).await;
    let expected: Vec<_> = (1..=25).map(|n| (Some(n), Some(n))).collect();
    assert_eq!(told.iter().map(spent).collect::<Vec<_>>(), expected);
    assert_eq!((hours, days), (25, 25));
    // one past the day's bound: its hour is spent, its day is not
    let (told, hours, days) = metered_burst(&server, "past-day", 26, 100, 25).await;
    let days_told: Vec<_> = told.iter().filter_map(|m| m.calls).collect();
    assert_eq!(days_told.len(), 25, "{told:?}");
    assert_eq!(told.iter().filter(|m| m.hour.is_some()).count(), 26);
    assert_eq!((hours, days), (26, 25));
    // one past the hour's bound: it spends nothing, the day included
    let (told, hours, days) = metered_burst(&server, "past-hour", 26, 25, 100).await;
    assert_eq!(
        told[0],
        Metered {
            hour: None,
            calls: None,
            ..told[0]
        }
    );
    let expected: Vec<_> = (1..=25).map(|n| (Some(n), Some(n))).collect();
    assert_eq!(told[1..].iter().map(spent).collect::<Vec<_>>(), expected);
    assert_eq!((hours, days), (25, 25));
    // both bounds in one burst: 40 calls, 30 hours, 25 days
    let (told, hours, days) = metered_burst(&server, "both", 40, 30, 25).await;
    assert_eq!(told.iter().filter(|m| m.hour.is_none()).count(), 10);
    assert_eq!(told.iter().filter(|m| m.calls.is_some()).count(), 25);
    assert_eq!((hours, days), (30, 25));

    // a free call spends its hour and reads the day and live counts as they are, with the
    // catalogue's stamp (none stored yet)
    let now = server.clock_now();
    let free = server
        .store
        .meter(&Meter {
            hour_subject: "agent:free",
            hour_start: hour_start(now),
            hour_limit: 10,
            calls_subject: "calls:at-day",
            live_subject: "live:at-day",
            day_start: day_start(now),
            day_limit: None,
        })
        .await
        .unwrap();
    assert_eq!(
        free,
        Metered {
            hour: Some(1),
            calls: Some(25),
            live: 0,
            catalogue_at: None
        }
    );
    assert_eq!(
        server
            .store
            .usage("calls:at-day", Window::Day, day_start(now))
            .await
            .unwrap(),
        25
    );
}

async fn a_call_the_door_refuses_before_its_tool_gets_its_day_back(url: &str) {
    let server = spawn(url).await;
    let day = day_start(server.clock_now());
    let hour = hour_start(server.clock_now());
    let person = server.person();
    let calls = format!("calls:{}", server.person.id);
    let r = person
        .request(
            "tools/call",
            json!({"name": "cards_catalog", "arguments": [1]}),
        )
        .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    // the hour stays spent, as for any request; the day comes back once the record settles
    assert_eq!(
        server
            .store
            .usage(&format!("account:{}", server.person.id), Window::Hour, hour)
            .await
            .unwrap(),
        1
    );
    let mut day_count = -1;
    for _ in 0..100 {
        day_count = server.store.usage(&calls, Window::Day, day).await.unwrap();
        if day_count == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(day_count, 0);
    // a resolved call keeps its day
    let ok = success(&person.tool("cards_catalog", json!({})).await);
    assert_eq!(ok["meta"]["quota"]["calls"]["used"], 1, "{ok}");
    assert_eq!(
        server.store.usage(&calls, Window::Day, day).await.unwrap(),
        1
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
    a_parallel_burst_spends_the_day_exactly_to_its_limit,
    one_statement_meters_hour_and_day_under_a_parallel_burst,
    a_call_the_door_refuses_before_its_tool_gets_its_day_back
);
