//! The statement budget of one `cards_catalog` call once the day's `/cards` read has landed,
//! on each door kind: the store methods a call makes, counted by the test-only
//! [`CountingStore`] around the server's store, so the figure cannot silently grow. Why each
//! statement is needed is `docs/elixir.md`'s ("What a call costs the database").

use std::sync::{Arc, OnceLock};

use elixir::admin;
use elixir::domain::FeedbackStatus;
use serde_json::{Value, json};
use testkit::db::TempDir;
use testkit::mcp::Client;

use super::{FIXTURE, FakeApi, refresh, upstream};
use crate::browser::Browser;
use crate::counting_store::CountingStore;
use crate::oauth::connect;
use crate::on_both_backends;
use crate::support::{ORIGIN, Options, Server, T0, spawn_with, success};

/// A server over a [`CountingStore`], with `options`, and the day's catalogue read: the
/// clock at 11:00 UTC, so the read lands in the game day it is served in.
async fn counted(url: &str, options: Options) -> (Server, Arc<CountingStore>) {
    let counting: Arc<OnceLock<Arc<CountingStore>>> = Arc::default();
    let held = Arc::clone(&counting);
    let server = spawn_with(
        url,
        Options {
            wrap_store: Some(Box::new(move |store| {
                let wrapped = CountingStore::wrap(store);
                let _ = held.set(Arc::clone(&wrapped));
                wrapped
            })),
            ..options
        },
    )
    .await;
    let counting = Arc::clone(counting.get().expect("wrapped"));
    server.clock.set_millis(T0 + 11 * 3_600_000);
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    refresh(&server, &upstream(&server, &api, &archive))
        .await
        .unwrap();
    // The first call of the game day loads the catalogue; every later one is served from memory.
    success(&server.agent().tool("cards_catalog", json!({})).await);
    (server, counting)
}

/// The answer of `tool` on `client` and the store methods the call made, its audit row included.
async fn counted_call(
    server: &Server,
    counting: &CountingStore,
    client: &Client,
    tool: &str,
) -> (Value, Vec<&'static str>) {
    server.state.services.audit.flush().await;
    counting.take();
    let body = success(&client.tool(tool, json!({})).await);
    server.state.services.audit.flush().await;
    (body, counting.take())
}

/// The store methods one `cards_catalog` call on `client` makes, its audit row included.
async fn statements_of_one_call(
    server: &Server,
    counting: &CountingStore,
    client: &Client,
) -> Vec<&'static str> {
    let (body, statements) = counted_call(server, counting, client, "cards_catalog").await;
    assert_eq!(body["total"], 16, "{body}");
    statements
}

/// A service-key door's call: the agent read with its owner and its waiting replies; the
/// hourly rate and the daily quota in one atomic statement (which reads the day's live count
/// and the catalogue's stamp too); the audit row, in the writer's batch (one here, since the
/// test flushes around each call).
const KEY_DOOR: [&str; 3] = ["door_agent_by_key_digest", "meter", "insert_audits"];

async fn a_cards_catalog_call_costs_its_statement_budget(url: &str) {
    let outbox = TempDir::new("elixir-statements-");
    let (server, counting) = counted(
        url,
        Options {
            oauth_outbox: Some(outbox.path().to_owned()),
            ..Options::default()
        },
    )
    .await;
    let counting = counting.as_ref();

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

    assert_eq!(
        statements_of_one_call(&server, counting, &server.agent()).await,
        KEY_DOOR,
        "agent door, service key"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &server.integration()).await,
        KEY_DOOR,
        "integration door, service key"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &agent_oauth).await,
        ["door_agent_by_public_id", "meter", "insert_audits"],
        "agent door, OAuth (beside mcp-oauth's own token lookup)"
    );
    assert_eq!(
        statements_of_one_call(&server, counting, &person).await,
        ["door_account", "meter", "insert_audits"],
        "person door, OAuth (beside mcp-oauth's own token lookup)"
    );
}

async fn a_waiting_reply_rides_the_door_read(url: &str) {
    let (server, counting) = counted(url, Options::default()).await;
    let counting = counting.as_ref();
    let agent = server.agent();
    let filed = success(
        &agent
            .tool("elixir_feedback", json!({"message": "Cards are great."}))
            .await,
    );
    let id = filed["feedback"]["id"].as_i64().unwrap();
    admin::reply_feedback(
        &server.store,
        T0 + 11 * 3_600_000,
        id,
        FeedbackStatus::Done,
        Some("Thank you."),
        None,
    )
    .await
    .unwrap();

    // the reply waits in the agent's ledger: the door read counted it, at no extra statement
    let (body, statements) = counted_call(&server, counting, &agent, "cards_catalog").await;
    assert_eq!(body["meta"]["feedback_responses_pending"], 1, "{body}");
    assert_eq!(statements, KEY_DOOR);
    let (body, _) = counted_call(&server, counting, &server.person(), "cards_catalog").await;
    assert!(
        body["meta"].get("feedback_responses_pending").is_none(),
        "the person's own ledger is another: {body}"
    );
    // delivering it counts again after the page, so its own answer no longer shows it
    let (body, statements) = counted_call(&server, counting, &agent, "elixir_my_feedback").await;
    assert_eq!(body["items"][0]["response"], "Thank you.");
    assert!(
        body["meta"].get("feedback_responses_pending").is_none(),
        "{body}"
    );
    assert_eq!(
        statements,
        [
            "door_agent_by_key_digest",
            "meter",
            "feedback_page",
            "mark_delivered",
            "pending_responses",
            "insert_audits"
        ],
        "a Help call spends its hour and reads both day counts in one statement; a delivery counts again"
    );
    let (body, statements) = counted_call(&server, counting, &agent, "cards_catalog").await;
    assert!(
        body["meta"].get("feedback_responses_pending").is_none(),
        "{body}"
    );
    assert_eq!(statements, KEY_DOOR);
}

on_both_backends!(
    a_cards_catalog_call_costs_its_statement_budget,
    a_waiting_reply_rides_the_door_read
);
