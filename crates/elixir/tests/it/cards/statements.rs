//! The statement budget of one `cards_catalog` call once the day's `/cards` read has landed,
//! on each door kind: the store methods a call makes, counted by the test-only
//! [`CountingStore`] around the server's store, so the figure cannot silently grow. Why each
//! statement is needed is `docs/elixir.md`'s ("What a call costs the database").

use std::sync::Arc;

use serde_json::json;
use testkit::db::TempDir;
use testkit::mcp::Client;

use super::{FIXTURE, FakeApi, refresh, upstream};
use crate::browser::Browser;
use crate::counting_store::CountingStore;
use crate::oauth::connect;
use crate::on_both_backends;
use crate::support::{ORIGIN, Options, Server, T0, spawn_with, success};

/// The store methods one `cards_catalog` call on `client` makes, its audit row included.
async fn statements_of_one_call(
    server: &Server,
    counting: &CountingStore,
    client: &Client,
) -> Vec<&'static str> {
    server.state.services.audit.flush().await;
    counting.take();
    let body = success(&client.tool("cards_catalog", json!({})).await);
    assert_eq!(body["total"], 16, "{body}");
    server.state.services.audit.flush().await;
    counting.take()
}

async fn a_cards_catalog_call_costs_its_statement_budget(url: &str) {
    let outbox = TempDir::new("elixir-statements-");
    let counting: Arc<std::sync::OnceLock<Arc<CountingStore>>> = Arc::default();
    let held = Arc::clone(&counting);
    let server = spawn_with(
        url,
        Options {
            oauth_outbox: Some(outbox.path().to_owned()),
            wrap_store: Some(Box::new(move |store| {
                let wrapped = CountingStore::wrap(store);
                let _ = held.set(Arc::clone(&wrapped));
                wrapped
            })),
            ..Options::default()
        },
    )
    .await;
    let counting = counting.get().expect("wrapped").as_ref();

    // 11:00 UTC: the day's read lands in the game day it is served in.
    server.clock.set_millis(T0 + 11 * 3_600_000);
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    refresh(&server, &upstream(&server, &api, &archive))
        .await
        .unwrap();

    let base = server.url("");
    let mut browser = Browser::new(&base, outbox.path());
    let person_token = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let agent_token = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/a/{}/mcp", server.agent.agent.public_id),
        None,
    )
    .await
    .unwrap();
    let person = server.person_client(&person_token.access);
    let agent_oauth = server.door_of(&server.agent, Some(&agent_token.access));

    // The first call of the game day loads the catalogue; every later one is served from memory.
    success(&server.agent().tool("cards_catalog", json!({})).await);

    // The agent read with its owner and its waiting replies; the hourly rate and the daily
    // quota, each an atomic check-and-count; the live count; the audit row.
    let key_door = [
        "door_agent_by_key_digest",
        "spend",
        "spend",
        "usage",
        "insert_audit",
    ];
    assert_eq!(
        statements_of_one_call(&server, counting, &server.agent()).await,
        key_door,
        "agent door, service key"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &server.integration()).await,
        key_door,
        "integration door, service key"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &agent_oauth).await,
        [
            "door_agent_by_public_id",
            "spend",
            "spend",
            "usage",
            "insert_audit"
        ],
        "agent door, OAuth (beside mcp-oauth's own token lookup)"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &person).await,
        ["door_account", "spend", "spend", "usage", "insert_audit"],
        "person door, OAuth (beside mcp-oauth's own token lookup)"
    );
}

on_both_backends!(a_cards_catalog_call_costs_its_statement_budget);
