//! Sidequest's edge: on both doors (`/play/mcp`, `/mcp`) the async `httpx` client and Node's
//! `fetch` read the 413 and 401 written before the body is read (staged close), with
//! `Content-Length` and chunked; the DNS-rebinding request is 403, an allowed origin gets its
//! CORS preflight, a POST that is not JSON is 415; `/readyz` is 200 while the database (and
//! Redis) answer and 503 once one is cut, on both backends; `serve --tls-cert/--tls-key`
//! answers HTTPS and rereads its certificate on SIGHUP.

use std::time::Duration;

use sidequest::app::ServeConfig;
use testkit::clients::assert_both_read;
use testkit::edge::{
    assert_door_edge, assert_tls_serve_reloads, database_behind_proxy, free_loopback_addr, readyz,
    refusal_cases,
};
use testkit::proxy::Proxy;

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_doors_refusals_reach_async_clients() {
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let (server, world, author) = crate::author::setup(&url).await;
    let play_token = world.assignments[0].1.clone();
    let author_token = author.token.clone().unwrap();
    let mut cases = Vec::new();
    for (door, token) in [("/play/mcp", play_token), ("/mcp", author_token)] {
        let url = format!("http://{}{door}", server.addr);
        cases.extend(refusal_cases(door, &url, &token));
    }
    assert_both_read(&cases).await;
}

#[tokio::test]
async fn both_doors_refuse_rebinding_and_non_json_and_answer_allowed_preflights() {
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.allowed_origins = vec!["https://inspector.example".into()];
    config.public_url = Some("https://play.example".into());
    let server = support::spawn_with(&url, config, 21).await;
    let world = support::world(&server, 1).await;
    let (_, author_token) = {
        let issued = sidequest::campaign::CampaignService::new(server.service.clone())
            .create_author_token(&world.gm, "edge")
            .await
            .unwrap();
        (issued.id, issued.token)
    };
    for (door, token) in [
        ("/play/mcp", world.assignments[0].1.as_str()),
        ("/mcp", author_token.as_str()),
    ] {
        let url = format!("http://{}{door}", server.addr);
        let answers = assert_door_edge(
            &url,
            token,
            "https://play.example",
            "https://inspector.example",
            "authorization, content-type",
        )
        .await;
        assert_eq!(
            answers.preflight["access-control-allow-headers"],
            "Authorization, Content-Type, MCP-Protocol-Version",
            "{door}"
        );
    }
}

async fn readiness_follows_the_database(url: &str) {
    let (proxy, url) = database_behind_proxy(url).await;
    let mut config = ServeConfig::default();
    config.server.db.acquire_timeout = Duration::from_millis(500);
    let server = support::spawn_with(&url, config, 22).await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["database"], "ok");
    let Some(proxy) = proxy else { return };
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_ne!(body["checks"]["database"], "ok", "{body}");
    // liveness is not readiness
    let live = reqwest::get(format!("http://{}/healthz", server.addr))
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
}
testkit::on_both_backends!(readiness_follows_the_database);

#[tokio::test]
async fn readiness_follows_redis() {
    let Some(redis) = testkit::db::redis_url().await else {
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&redis, 6379).await;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.redis_url = Some(via);
    config.server.redis_prefix = format!("test-ready:{}", uuid::Uuid::new_v4().simple());
    let server = support::spawn_with(&url, config, 23).await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["redis"], "ok");
    proxy.cut().await;
    let (status, body) = readyz(server.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_ne!(body["checks"]["redis"], "ok", "{body}");
    assert_eq!(body["checks"]["database"], "ok", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_tls_answers_https_and_reloads_on_sighup() {
    let dir = testkit::db::TempDir::new("sq-tls-");
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let addr = free_loopback_addr();
    let args = ["--database-url", &url, "serve", "--bind", &addr.to_string()].map(String::from);
    assert_tls_serve_reloads(
        env!("CARGO_BIN_EXE_sidequest"),
        dir.path(),
        addr,
        &args,
        async |_| {},
    )
    .await;
}
