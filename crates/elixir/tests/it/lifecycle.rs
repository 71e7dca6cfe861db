//! `app::run` end to end: it serves until its shutdown future resolves, then returns, and
//! every call answered before that is in the audit table (the writer queue is flushed).

use std::sync::Arc;
use std::time::Duration;

use elixir::access::kinds::{Kind, Tier};
use elixir::admin;
use elixir::store;
use serde_json::json;

use crate::on_both_backends;
use crate::support::{CountingRandom, success};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

async fn shutdown_stores_every_queued_audit_row(url: &str) {
    let outbox = testkit::db::TempDir::new("elixir-lifecycle-");
    let mut config = elixir::app::ServeConfig {
        oauth: elixir::access::oauth::OAuthSettings {
            mail: elixir::access::oauth::MailSettings::Outbox(outbox.path().to_owned()),
            ..Default::default()
        },
        ..Default::default()
    };
    config.server.database_url = url.to_owned();
    config.server.drain_timeout = Duration::from_secs(5);
    let shared = store::connect(url, &config.server.db).await.unwrap();
    shared.migrate().await.unwrap();
    let random = CountingRandom::new(41);
    let owner = admin::create_account(&shared, &random, T0, Some("run@example.com"), Tier::Admin)
        .await
        .unwrap();
    let agent = admin::create_agent(&shared, &random, T0, owner.id, "Runner", Kind::Agent)
        .await
        .unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(elixir::app::run(
        config,
        listener,
        Arc::new(mcp_door::FakeClock::new(T0)),
        Arc::new(CountingRandom::new(42)),
        async move {
            let _ = stopped.await;
        },
    ));
    let door = testkit::mcp::Client::new(
        format!("http://{addr}/a/{}/mcp", agent.agent.public_id),
        Some(agent.service_key.clone()),
    );
    let mut ready = false;
    for _ in 0..100 {
        if reqwest::get(format!("http://{addr}/healthz"))
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ready, "serve never listened");

    // Three rounds of eight concurrent calls (the credential's concurrency allowance).
    let mut answers = Vec::new();
    for _ in 0..3 {
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let door = door.clone();
            calls.spawn(async move { success(&door.tool("elixir_docs", json!({})).await) });
        }
        answers.extend(calls.join_all().await);
    }
    // Stop at once: the rows may still be queued.
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), run)
        .await
        .expect("run returns after shutdown")
        .unwrap()
        .unwrap();

    let rows = shared
        .recent_agent_audit(agent.agent.id, 100)
        .await
        .unwrap();
    assert_eq!(rows.len(), answers.len(), "every answered call is audited");
    for answer in &answers {
        let id = answer["meta"]["request_id"].as_str().unwrap();
        assert!(
            rows.iter().any(|r| r.request_id.to_string() == id),
            "{id} missing from the audit"
        );
    }
}

on_both_backends!(shutdown_stores_every_queued_audit_row);
