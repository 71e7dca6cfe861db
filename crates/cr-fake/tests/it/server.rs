//! The fake API over HTTP: the bearer check, tags as the real API takes them, the log window
//! following the injected clock, profile consistency, paging, switches and the request record.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cr_fake::calendar::{DAY_MS, HOUR_MS, api_time};
use cr_fake::server::Fault;
use cr_fake::{Endpoint, FakeCrApi, World};
use mcp_door::FakeClock;
use serde_json::{Value, json};

use crate::{END_MILLIS, small_world};

struct Harness {
    api: FakeCrApi,
    clock: FakeClock,
    http: reqwest::Client,
}

impl Harness {
    async fn new(world: World, now: i64) -> Harness {
        let clock = FakeClock::new(now);
        let api = FakeCrApi::start(world, clock.clone()).await.unwrap();
        Harness {
            api,
            clock,
            http: reqwest::Client::new(),
        }
    }

    fn world(&self) -> &Arc<World> {
        self.api.world()
    }

    async fn get_raw(&self, path: &str, token: Option<&str>) -> reqwest::Response {
        let mut request = self.http.get(format!("{}{path}", self.api.base_url()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap()
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.get_raw(path, Some(FakeCrApi::TOKEN)).await;
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }
}

fn encoded(tag: &str) -> String {
    tag.replace('#', "%23")
}

/// A player with a full log well before the end of the history.
fn busy_player(world: &World, at: i64) -> u32 {
    (0..world.players().len() as u32)
        .max_by_key(|&p| world.battles_before(p, at).len())
        .unwrap()
}

#[tokio::test]
async fn the_battle_log_is_the_last_thirty_before_now_and_follows_the_clock() {
    let now = END_MILLIS - 2 * DAY_MS;
    let h = Harness::new(small_world(31), now).await;
    let player = busy_player(h.world(), now);
    let tag = h.world().players()[player as usize].tag.clone();
    let path = format!("/players/{}/battlelog", encoded(&tag));
    let (status, log) = h.get(&path).await;
    assert_eq!(status, 200);
    let log = log.as_array().unwrap().clone();
    assert_eq!(log.len(), 30);
    let before = h.world().battles_before(player, now);
    let newest = &h.world().battles()[*before.last().unwrap() as usize];
    assert_eq!(log[0]["battleTime"], api_time(newest.time_millis()));
    let times: Vec<&str> = log
        .iter()
        .map(|b| b["battleTime"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted, "newest first");
    assert!(times.iter().all(|t| *t < api_time(now).as_str()));

    h.clock.advance_millis(DAY_MS + 12 * HOUR_MS);
    let later = h.clock_now();
    let (_, moved) = h.get(&path).await;
    let after = h.world().battles_before(player, later);
    let newest = &h.world().battles()[*after.last().unwrap() as usize];
    assert_eq!(moved[0]["battleTime"], api_time(newest.time_millis()));
    assert!(after.len() > before.len(), "new battles appeared");
}

impl Harness {
    fn clock_now(&self) -> i64 {
        use mcp_door::Clock;
        self.clock.now_millis()
    }
}

#[tokio::test]
async fn the_profile_agrees_with_the_battles_so_far() {
    let now = END_MILLIS - DAY_MS;
    let h = Harness::new(small_world(32), now).await;
    let player = busy_player(h.world(), now);
    let p = &h.world().players()[player as usize];
    let (status, profile) = h.get(&format!("/players/{}", encoded(&p.tag))).await;
    assert_eq!(status, 200);
    let totals = h.world().totals_at(player, now);
    assert_eq!(profile["tag"], p.tag);
    assert_eq!(profile["name"], p.name_at(now));
    assert_eq!(profile["battleCount"], totals.battles);
    assert_eq!(
        totals.battles as usize,
        p.totals_before.battles as usize + h.world().battles_before(player, now).len()
    );
    assert_eq!(profile["wins"], totals.wins);
    assert_eq!(profile["trophies"], h.world().trophies_at(player, now));
    // The profile's deck is the one last played on the ladder (or any non-war, non-event mode).
    let ids = |cards: &Value| {
        let mut ids: Vec<u64> = cards
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    let last = h
        .world()
        .battles_before(player, now)
        .iter()
        .rev()
        .map(|&b| &h.world().battles()[b as usize])
        .find(|b| !b.kind().is_war() && b.kind() != cr_fake::BattleType::Trail)
        .unwrap();
    let shown = cr_fake::render::battle_json(h.world(), last, player).unwrap();
    assert_eq!(
        ids(&profile["currentDeck"]),
        ids(&shown["team"][0]["cards"])
    );
    assert_eq!(profile["currentDeck"].as_array().unwrap().len(), 8);
    assert_eq!(profile["kingTowerLevel"], p.king_tower_level);
    match h.world().membership_at(player, now) {
        Some(m) => {
            assert_eq!(
                profile["clan"]["tag"],
                h.world().clans()[m.clan as usize].tag
            );
            assert_eq!(profile["role"], m.role.as_str());
        }
        None => assert!(profile.get("clan").is_none()),
    }
    // A day later the count has grown by exactly the battles played in between.
    h.clock.advance_millis(DAY_MS);
    let (_, later) = h.get(&format!("/players/{}", encoded(&p.tag))).await;
    let grown = h.world().battles_before(player, END_MILLIS).len()
        - h.world().battles_before(player, now).len();
    assert_eq!(
        later["battleCount"].as_u64().unwrap(),
        u64::from(totals.battles) + grown as u64
    );
}

#[tokio::test]
async fn a_bearer_token_is_required() {
    let h = Harness::new(small_world(33), END_MILLIS).await;
    let tag = encoded(&h.world().players()[0].tag);
    for token in [None, Some("wrong")] {
        let response = h.get_raw(&format!("/players/{tag}"), token).await;
        assert_eq!(response.status().as_u16(), 403);
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body,
            json!({"reason": "accessDenied", "message": "Invalid authorization"})
        );
    }
}

#[tokio::test]
async fn tags_arrive_percent_encoded_and_bad_ones_get_the_apis_answer() {
    let h = Harness::new(small_world(34), END_MILLIS).await;
    let tag = h.world().players()[0].tag.clone();
    assert_eq!(h.get(&format!("/players/{}", encoded(&tag))).await.0, 200);
    // A raw `#` starts the URL fragment: the path ends at `/players/`.
    let (status, body) = h.get(&format!("/players/{tag}")).await;
    assert_eq!((status, body), (404, json!({"reason": "notFound"})));
    let lower = encoded(&tag.to_lowercase());
    assert_eq!(
        h.get(&format!("/players/{lower}")).await,
        (404, json!({"reason": "notFound"}))
    );
    let bare = &tag[1..];
    assert_eq!(h.get(&format!("/players/{bare}")).await.0, 404);
    let (status, body) = h.get("/players/%23AB%2DC").await;
    assert_eq!(status, 400);
    assert_eq!(body["reason"], "badRequest");
    // A well-formed tag nobody has.
    assert_eq!(
        h.get("/players/%23PPPPPPPP").await,
        (404, json!({"reason": "notFound"}))
    );
    assert_eq!(h.get("/nowhere").await.0, 404);
}

#[tokio::test]
async fn answers_carry_the_real_cache_lifetimes() {
    let h = Harness::new(small_world(35), END_MILLIS).await;
    let player = encoded(&h.world().players()[0].tag);
    let clan = encoded(&h.world().clans()[0].tag);
    for (path, age) in [
        (format!("/players/{player}"), 60),
        (format!("/players/{player}/battlelog"), 60),
        (format!("/clans/{clan}"), 120),
        (format!("/clans/{clan}/members"), 120),
        (format!("/clans/{clan}/currentriverrace"), 120),
        (format!("/clans/{clan}/riverracelog"), 600),
        ("/cards".to_owned(), 600),
    ] {
        let response = h.get_raw(&path, Some(FakeCrApi::TOKEN)).await;
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let header = response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(header, format!("max-age={age}"), "{path}");
    }
}

#[tokio::test]
async fn members_page_with_the_apis_cursors() {
    let h = Harness::new(small_world(36), END_MILLIS).await;
    let clan = (0..h.world().clans().len() as u32)
        .find(|&c| h.world().members_at(c, END_MILLIS).len() >= 5)
        .unwrap();
    let tag = encoded(&h.world().clans()[clan as usize].tag);
    let (_, all) = h.get(&format!("/clans/{tag}/members")).await;
    let everyone = all["items"].as_array().unwrap().clone();
    assert_eq!(everyone.len(), h.world().members_at(clan, END_MILLIS).len());
    assert_eq!(all["paging"]["cursors"], json!({}));
    let (_, first) = h.get(&format!("/clans/{tag}/members?limit=2")).await;
    assert_eq!(first["items"].as_array().unwrap()[..], everyone[..2]);
    let after = first["paging"]["cursors"]["after"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, second) = h
        .get(&format!("/clans/{tag}/members?limit=2&after={after}"))
        .await;
    assert_eq!(second["items"].as_array().unwrap()[..], everyone[2..4]);
    let (status, body) = h.get(&format!("/clans/{tag}/members?limit=zero")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "Invalid 'limit' parameter used in the request"
    );
}

#[tokio::test]
async fn switches_flip_failures_at_run_time() {
    let h = Harness::new(small_world(37), END_MILLIS).await;
    let tag = h.world().players()[0].tag.clone();
    let other = h.world().players()[1].tag.clone();
    let path = format!("/players/{}", encoded(&tag));

    h.api.throttle(Some(7));
    let response = h.get_raw(&path, Some(FakeCrApi::TOKEN)).await;
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["reason"], "requestThrottled");
    h.api.throttle(None);
    let response = h.get_raw(&path, Some(FakeCrApi::TOKEN)).await;
    assert_eq!(response.status().as_u16(), 429);
    assert!(response.headers().get("retry-after").is_none());

    h.api.maintenance();
    let (status, body) = h.get(&path).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (503, Some("inMaintenance"))
    );
    h.api.deny_access();
    let (status, body) = h.get(&path).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (403, Some("accessDenied"))
    );
    h.api.set_fault(Fault::NotFound);
    assert_eq!(h.get(&path).await, (404, json!({"reason": "notFound"})));
    h.api.clear_fault();
    assert_eq!(h.get(&path).await.0, 200);

    h.api.not_found_for(&tag);
    assert_eq!(h.get(&path).await.0, 404);
    assert_eq!(
        h.get(&format!("/players/{}/battlelog", encoded(&tag)))
            .await
            .0,
        404
    );
    assert_eq!(h.get(&format!("/players/{}", encoded(&other))).await.0, 200);
    h.api.found_again(&tag);
    assert_eq!(h.get(&path).await.0, 200);

    h.api.set_delay(Some(Duration::from_millis(300)));
    let started = Instant::now();
    assert_eq!(h.get(&path).await.0, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    h.api.reset();
    let started = Instant::now();
    assert_eq!(h.get(&path).await.0, 200);
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[tokio::test]
async fn every_request_is_counted_and_recorded() {
    let h = Harness::new(small_world(38), END_MILLIS).await;
    let a = h.world().players()[0].tag.clone();
    let b = h.world().players()[1].tag.clone();
    let log_a = format!("/players/{}/battlelog", encoded(&a));
    h.get(&log_a).await;
    h.get(&log_a).await;
    h.get(&format!("/players/{}", encoded(&a))).await;
    h.get(&format!("/players/{}/battlelog", encoded(&b))).await;
    h.get_raw(&log_a, None).await;

    assert_eq!(h.api.requests(&log_a), 3);
    assert_eq!(h.api.requests(&format!("/v1/players/{a}/battlelog")), 3);
    assert_eq!(h.api.subject_requests(&a), 4);
    assert_eq!(h.api.subject_requests(&b), 1);
    assert_eq!(h.api.endpoint_requests(Endpoint::BattleLog), 4);
    assert_eq!(h.api.endpoint_requests(Endpoint::Player), 1);
    let received = h.api.received();
    assert_eq!(received.len(), 5);
    assert_eq!(received[0].path, format!("/v1/players/{a}/battlelog"));
    assert_eq!(received[0].subject.as_deref(), Some(a.as_str()));
    assert_eq!(received[0].at_millis, END_MILLIS);
    assert_eq!(received[4].status, 403);
    h.api.clear_requests();
    assert_eq!(h.api.requests(&log_a), 0);
}

#[tokio::test]
async fn every_endpoint_answers_json_of_the_fixture_kind() {
    let h = Harness::new(small_world(39), END_MILLIS).await;
    let clan = encoded(&h.world().clans()[0].tag);
    let (status, cards) = h.get("/cards").await;
    assert_eq!(status, 200);
    assert_eq!(cards["items"].as_array().unwrap().len(), 34);
    let (status, race) = h.get(&format!("/clans/{clan}/currentriverrace")).await;
    assert_eq!(status, 200);
    // 2026-10-10 is a Saturday: war day 3 of season 137's first week.
    assert_eq!(race["periodType"], "warDay");
    assert_eq!(race["periodIndex"], 5);
    let (status, log) = h.get(&format!("/clans/{clan}/riverracelog?limit=2")).await;
    assert_eq!(status, 200);
    assert_eq!(log["items"].as_array().unwrap().len(), 2);
    assert!(log["paging"]["cursors"]["after"].is_string());
    let (status, info) = h.get(&format!("/clans/{clan}")).await;
    assert_eq!(status, 200);
    assert_eq!(info["tag"], h.world().clans()[0].tag);
}
