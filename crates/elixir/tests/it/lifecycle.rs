//! `app::run` end to end: it serves until its shutdown future resolves, then returns, and
//! every call answered before that is in the audit table (the writer queue is flushed), also
//! when it stops under load with a queue too small for the load (rows wait for room, never
//! dropped); and the writer itself storing a burst far larger than its queue.

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

async fn a_clean_stop_under_load_stores_every_answered_call(url: &str) {
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
    config.server.limits.rate_per_window = 1_000_000;
    config.settings.hourly_rate = 1_000_000;
    // a queue far smaller than the load: most rows find it full
    config.settings.audit_queue = 2;
    let shared = store::connect(url, &config.server.db).await.unwrap();
    shared.migrate().await.unwrap();
    let random = CountingRandom::new(51);
    let owner = admin::create_account(&shared, &random, T0, Some("load@example.com"), Tier::Admin)
        .await
        .unwrap();
    let agent = admin::create_agent(&shared, &random, T0, owner.id, "Loader", Kind::Agent)
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(elixir::app::run(
        config,
        listener,
        Arc::new(mcp_door::FakeClock::new(T0)),
        Arc::new(CountingRandom::new(52)),
        async move {
            let _ = stopped.await;
        },
    ));
    for _ in 0..100 {
        if reqwest::get(format!("http://{addr}/healthz"))
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Eight clients call until the server stops answering; the stop comes mid-load. A refused
    // connection or a cut answer ends a client (testkit's client would panic on it).
    let url = format!("http://{addr}/a/{}/mcp", agent.agent.public_id);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "game_clock", "arguments": {}}})
    .to_string();
    let going = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (going, url, body) = (Arc::clone(&going), url.clone(), body.clone());
        let key = agent.service_key.clone();
        clients.spawn(async move {
            let http = reqwest::Client::new();
            let mut answered = Vec::new();
            while going.load(std::sync::atomic::Ordering::SeqCst) {
                let sent = http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .bearer_auth(&key)
                    .body(body.clone())
                    .send()
                    .await;
                let Ok(response) = sent else { break };
                if response.status() != 200 {
                    break;
                }
                let Ok(reply) = response.json::<serde_json::Value>().await else {
                    break;
                };
                match reply["result"]["structuredContent"]["meta"]["request_id"].as_str() {
                    Some(id) => answered.push(id.to_owned()),
                    None => break,
                }
            }
            answered
        });
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("run returns after shutdown")
        .unwrap()
        .unwrap();
    going.store(false, std::sync::atomic::Ordering::SeqCst);
    let answered: Vec<String> = clients.join_all().await.into_iter().flatten().collect();
    assert!(answered.len() >= 16, "too little load: {}", answered.len());
    eprintln!("{} calls answered before the stop", answered.len());

    let rows = shared
        .recent_agent_audit(agent.agent.id, 1_000_000)
        .await
        .unwrap();
    let stored: std::collections::HashSet<String> =
        rows.iter().map(|r| r.request_id.to_string()).collect();
    let missing: Vec<&String> = answered.iter().filter(|id| !stored.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} answered calls missing from the audit",
        missing.len(),
        answered.len()
    );
}

async fn the_writer_stores_a_burst_larger_than_its_queue_in_batches(url: &str) {
    let shared = store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    shared.migrate().await.unwrap();
    let random = CountingRandom::new(61);
    let owner = admin::create_account(&shared, &random, T0, Some("burst@example.com"), Tier::Admin)
        .await
        .unwrap();
    let writer = elixir::mcp::audit_writer::AuditWriter::spawn(std::sync::Arc::clone(&shared), 4);
    let ids: Vec<uuid::Uuid> = (0..600u32)
        .map(|i| uuid::Uuid::from_u128(0x5eed_0000 + u128::from(i)))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        writer.submit(elixir::model::AuditEntry {
            request_id: *id,
            account_id: Some(owner.id),
            agent_id: None,
            door: "/mcp".into(),
            tool: Some("game_clock".into()),
            arguments: Some("{}".into()),
            response: None,
            error_code: None,
            duration_ms: 1,
            created_at: T0 + i64::try_from(i).unwrap(),
        });
    }
    assert!(writer.spilled() > 0, "the queue of 4 was never full");
    writer.flush().await;
    let rows = shared.recent_audit(owner.id, 10_000).await.unwrap();
    assert_eq!(rows.len(), ids.len());
    // a second submit of a stored row changes nothing
    writer.submit(elixir::model::AuditEntry {
        duration_ms: 99,
        ..rows[0].clone()
    });
    writer.flush().await;
    let again = shared.audit(rows[0].request_id).await.unwrap().unwrap();
    assert_eq!(again.duration_ms, rows[0].duration_ms);
    assert_eq!(
        shared.recent_audit(owner.id, 10_000).await.unwrap().len(),
        ids.len()
    );
}

on_both_backends!(
    shutdown_stores_every_queued_audit_row,
    a_clean_stop_under_load_stores_every_answered_call,
    the_writer_stores_a_burst_larger_than_its_queue_in_batches
);
