//! `live: true` (SURFACE §4.4) on players_profile and battles_query against the fake API, on
//! both backends: a record younger than the upstream cache is served as is and spends nothing;
//! an older one is read through the live lane and served fresh, spending one daily live fetch;
//! a never-recorded player read live lands at once; a paused lane answers `pending` and gives
//! the fetch back; a spent live cap serves the record with `unavailable` (`quota_exceeded`) and
//! sends nothing; without an API token an unrecorded player stays `not_recorded`.

use std::sync::Arc;

use mcp_door::{Clock, FakeClock};
use serde_json::{Value, json};
use testkit::cr_api::{FakeCrApi, World, WorldConfig};
use testkit::db::TempDir;

use crate::on_both_backends;
use crate::support::{Options, T0, spawn, spawn_with, success, tool_error};

async fn live_reads_go_through_the_lane(url: &str) {
    let clock = FakeClock::new(T0);
    let world = Arc::new(World::generate(WorldConfig::new(21, 4, 3, T0 + 2 * 86_400_000)).unwrap());
    let api = FakeCrApi::start(Arc::clone(&world), clock.clone())
        .await
        .unwrap();
    let archive = TempDir::new("elixir-live-");
    let server = spawn_with(
        url,
        Options {
            clock: Some(clock.clone()),
            upstream: Some(elixir::upstream::UpstreamConfig {
                base_url: api.base_url(),
                archive_dir: archive.path().to_owned(),
                ..elixir::upstream::UpstreamConfig::new(FakeCrApi::TOKEN)
            }),
            ..Options::default()
        },
    )
    .await;
    let person = server.person();
    let tag = world.players()[0].tag.clone();
    let used = |body: &Value| body["meta"]["quota"]["live"]["used"].as_i64();

    // Never recorded: the live read lands within the wait and the answer is fresh.
    let body = success(
        &person
            .tool("players_profile", json!({"player_tag": tag, "live": true}))
            .await,
    );
    assert_eq!(body["live_status"]["state"], "fresh", "{body}");
    assert_eq!(body["player"]["tag"], tag);
    assert!(body["player"]["trophies"].is_i64());
    assert_eq!(api.requests(&format!("/v1/players/{tag}")), 1);
    // Within the cache: served as is, nothing sent.
    let again = success(
        &person
            .tool("players_profile", json!({"player_tag": tag, "live": true}))
            .await,
    );
    assert_eq!(again["live_status"]["state"], "fresh");
    assert_eq!(
        api.requests(&format!("/v1/players/{tag}")),
        1,
        "the cache is honoured"
    );
    // Without live: the record, no live_status.
    let plain = success(
        &person
            .tool("players_profile", json!({"player_tag": tag}))
            .await,
    );
    assert!(plain.get("live_status").is_none());
    // The battle log, live.
    let log = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": tag, "live": true, "verbosity": "compact"}),
            )
            .await,
    );
    assert_eq!(log["live_status"]["state"], "fresh", "{log}");
    assert!(!log["battles"].as_array().unwrap().is_empty());
    // Two reads were sent: two of the member's 20 live fetches.
    let quota = success(&person.tool("game_clock", json!({})).await);
    assert_eq!(used(&quota), Some(2), "{}", quota["meta"]["quota"]);
    // Older than the cache: read again.
    clock.advance_millis(120_000);
    let later = success(
        &person
            .tool("players_profile", json!({"player_tag": tag, "live": true}))
            .await,
    );
    assert_eq!(later["live_status"]["state"], "fresh");
    assert_eq!(api.requests(&format!("/v1/players/{tag}")), 2);
    // The lane paused by a 429: the record is served with pending, and nothing is charged.
    clock.advance_millis(120_000);
    api.throttle(Some(30));
    let paused = success(
        &person
            .tool("players_profile", json!({"player_tag": tag, "live": true}))
            .await,
    );
    assert_eq!(paused["live_status"]["state"], "pending", "{paused}");
    assert!(paused["live_status"]["retry_after_s"].as_i64().unwrap() >= 1);
    api.clear_fault();
    // The day's live fetches spent (a member has 20): the record is served with unavailable,
    // and nothing is sent.
    let subject = format!("live:{}", server.person.id);
    let day = elixir::access::metering::day_start(clock.now_millis());
    while server
        .store
        .spend(&subject, elixir::model::Window::Day, day, 20)
        .await
        .unwrap()
        .is_some()
    {}
    clock.advance_millis(120_000);
    let sent = api.requests(&format!("/v1/players/{tag}"));
    let capped = success(
        &person
            .tool("players_profile", json!({"player_tag": tag, "live": true}))
            .await,
    );
    assert_eq!(capped["live_status"]["state"], "unavailable", "{capped}");
    assert_eq!(capped["live_status"]["reason"], "quota_exceeded");
    assert!(
        capped["live_status"]["resets_at"]
            .as_str()
            .unwrap()
            .ends_with("T00:00:00Z")
    );
    assert_eq!(capped["player"]["tag"], tag, "the record is still served");
    assert_eq!(
        api.requests(&format!("/v1/players/{tag}")),
        sent,
        "nothing was sent"
    );
}

async fn without_a_token_live_is_unavailable(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let refused = tool_error(
        &person
            .tool(
                "players_profile",
                json!({"player_tag": "#20JJJ2CCRU", "live": true}),
            )
            .await,
    );
    assert_eq!(refused["error"]["code"], "not_recorded", "{refused}");
    let bad = tool_error(
        &person
            .tool(
                "players_profile",
                json!({"player_tag": "#20JJJ2CCRU", "live": "yes"}),
            )
            .await,
    );
    assert_eq!(bad["error"]["code"], "bad_request");
}

on_both_backends!(
    live_reads_go_through_the_lane,
    without_a_token_live_is_unavailable
);
