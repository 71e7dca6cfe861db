//! Two instances behind one PostgreSQL (and one Redis for the door's admission when
//! `TEST_REDIS_URL` is set): a refresh token rotated on one is refused on the other (and its
//! grant dies on both), consent on one is a session on the other, and the hourly limit holds
//! across both because the counters are rows in the shared database.

use serde_json::json;

use crate::browser::Browser;
use crate::oauth::{connect, refresh};
use crate::support::{ORIGIN, Options, Server, spawn_with, success};

async fn two(url: &str, outbox: &std::path::Path, hourly_rate: i64) -> (Server, Server) {
    let redis_url = testkit::db::service_env("TEST_REDIS_URL");
    let a = spawn_with(
        url,
        Options {
            oauth_outbox: Some(outbox.to_owned()),
            hourly_rate,
            redis_url: redis_url.clone(),
            ..Options::default()
        },
    )
    .await;
    let b = spawn_with(
        url,
        Options {
            oauth_outbox: Some(outbox.to_owned()),
            hourly_rate,
            redis_url,
            world: Some((a.person.clone(), a.agent.clone(), a.integration.clone())),
            seed: 1_000_000,
            ..Options::default()
        },
    )
    .await;
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_refresh_token_is_refused_on_the_other_instance() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let dir = testkit::db::TempDir::new("elixir-cluster-");
    let (a, b) = two(&url, dir.path(), 300).await;
    let mut browser = Browser::new(&a.url(""), dir.path());
    let first = connect(
        &a.url(""),
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    // The token and the browser session work on both instances.
    success(
        &a.person_client(&first.access)
            .tool("elixir_docs", json!({}))
            .await,
    );
    success(
        &b.person_client(&first.access)
            .tool("elixir_docs", json!({}))
            .await,
    );
    let mut same_browser = Browser::new(&b.url(""), dir.path());
    same_browser.cookie = browser.cookie.clone();
    assert_eq!(same_browser.get("/account/connections").await.status, 200);

    // Rotate on A; the successor works on B.
    let (status, body) = refresh(&a.url(""), &first).await;
    assert_eq!(status, 200, "{body}");
    let second = crate::oauth::Tokens {
        access: body["access_token"].as_str().unwrap().to_owned(),
        refresh: body["refresh_token"].as_str().unwrap().to_owned(),
        ..first.clone()
    };
    success(
        &b.person_client(&second.access)
            .tool("elixir_docs", json!({}))
            .await,
    );

    // The rotated token presented on B: invalid_grant, and the whole grant is revoked — the
    // successor pair dies on both instances.
    let (status, body) = refresh(&b.url(""), &first).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant");
    for server in [&a, &b] {
        let r = server
            .person_client(&second.access)
            .tool("elixir_docs", json!({}))
            .await;
        assert_eq!(r.status, 401, "{}", r.body);
    }
    let (status, body) = refresh(&a.url(""), &second).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hourly_limit_holds_across_instances() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let dir = testkit::db::TempDir::new("elixir-cluster-");
    let (a, b) = two(&url, dir.path(), 4).await;
    // Four calls spread over both instances spend the one hourly bucket of the agent.
    for server in [&a, &b, &a, &b] {
        success(&server.agent().tool("elixir_docs", json!({})).await);
    }
    for server in [&a, &b] {
        let r = server.agent().tool("elixir_docs", json!({})).await;
        assert_eq!(r.status, 429, "{}", r.body);
        assert!(!r.header("retry-after").is_empty());
        assert_eq!(r.body["error"]["data"]["window"], "hour");
    }
}
