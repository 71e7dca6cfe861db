//! Dependencies going away: PostgreSQL or Redis unreachable → 503 (with `Retry-After`), and
//! the server recovers when they return.

use std::time::Duration;

use serde_json::json;
use sidequest::app::ServeConfig;
use testkit::proxy::{Proxy, target_of};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_unavailable_is_503() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let (target, _) = target_of(&url, 5432, None).await;
    let proxy = Proxy::start(target).await;
    let (_, via) = target_of(&url, 5432, Some(proxy.addr)).await;
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.db.acquire_timeout = Duration::from_millis(500);
    let server = support::spawn_with(&via, config, 11).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    assert_eq!(
        client.tool("get_play_context", json!({})).await.json()["version"],
        1
    );

    proxy.cut().await;
    for method in ["initialize", "tools/list"] {
        let r = client
            .request(method, json!({"protocolVersion": "2025-11-25"}))
            .await;
        assert_eq!(r.status, 503, "{method}: {}", r.body);
        assert_eq!(r.header("retry-after"), "1");
        assert!(
            !r.body.to_string().contains("127.0.0.1"),
            "a 5xx must not carry internals: {}",
            r.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_unavailable_is_503() {
    let Some(redis) = testkit::db::redis_url().await else {
        eprintln!("skipped: TEST_REDIS_URL not set");
        return;
    };
    let (target, _) = target_of(&redis, 6379, None).await;
    let proxy = Proxy::start(target).await;
    let (_, via) = target_of(&redis, 6379, Some(proxy.addr)).await;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.redis_url = Some(via);
    config.server.redis_prefix = format!("test-outage:{}", uuid::Uuid::new_v4().simple());
    let server = support::spawn_with(&url, config, 12).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    assert_eq!(client.request("tools/list", json!({})).await.status, 200);
    proxy.cut().await;
    let r = client.request("tools/list", json!({})).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("retry-after"), "1");
    // a bad token is still refused by authentication before admission is asked
    assert_eq!(
        server
            .client("sqp_0000000000000000000000000000000000000000")
            .request("tools/list", json!({}))
            .await
            .status,
        401
    );
}
