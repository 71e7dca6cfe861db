//! The card catalogue end to end: a fake Clash Royale API (axum on a port-0 listener serving the
//! shared `/cards` fixture, counting requests, able to answer 429/503/403) read through the
//! upstream client, budget and archive into the store; then `cards_catalog` over the doors
//! (never-read null body, sizes, filters, every argument at its bound and one past, not_found
//! with candidates, freshness in meta) and `elixir://cards`; receipts, the archive and the
//! two-hour raw retention; Retry-After honoured; the daily read claimed once across
//! instances; `elixir serve` polling and stopping; `elixir cards refresh`.

use std::collections::BTreeSet;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use elixir::cards::CardsError;
use elixir::recorder::{self, PollSettings, Poller, RecorderError, Tick};
use elixir::store::{self, Receipt, SharedStore};
use elixir::tools::cards::NEVER_READ_NOTE;
use elixir::upstream::{Upstream, UpstreamConfig, UpstreamError, payload_sha256};
use mcp_door::Clock;
use serde_json::{Value, json};
use testkit::db::TempDir;
use testkit::mcp::Client;

use crate::on_both_backends;
use crate::support::{Server, T0, spawn, success, tool_error};

/// The shared fixture, copied into the repository.
const FIXTURE: &str = include_str!("../fixtures/clash-royale-api/cards.json");
const TOKEN: &str = "test-api-token";
const DAY: i64 = 24 * 3_600_000;

/// What the fake API answers on `/v1/cards` right now.
#[derive(Debug, Clone)]
enum Plan {
    Body(String),
    Status(u16, Option<&'static str>),
}

struct FakeState {
    requests: AtomicUsize,
    plan: Mutex<Plan>,
    authorization: Mutex<Option<String>>,
}

/// A fake Clash Royale API on 127.0.0.1:0.
struct FakeApi {
    addr: SocketAddr,
    state: Arc<FakeState>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn cards_route(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    state.requests.fetch_add(1, Ordering::SeqCst);
    *state.authorization.lock().unwrap() = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let plan = state.plan.lock().unwrap().clone();
    match plan {
        Plan::Body(body) => (
            StatusCode::OK,
            [
                ("content-type", "application/json"),
                ("cache-control", "max-age=600"),
            ],
            body,
        )
            .into_response(),
        Plan::Status(status, retry_after) => {
            let reason = match status {
                429 => "requestThrottled",
                503 => "inMaintenance",
                403 => "accessDenied",
                _ => "unknownException",
            };
            let mut response = (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                json!({"reason": reason}).to_string(),
            )
                .into_response();
            if let Some(r) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", r.parse().unwrap());
            }
            response
        }
    }
}

impl FakeApi {
    async fn start(body: &str) -> Self {
        let state = Arc::new(FakeState {
            requests: AtomicUsize::new(0),
            plan: Mutex::new(Plan::Body(body.to_owned())),
            authorization: Mutex::new(None),
        });
        let router = axum::Router::new()
            .route("/v1/cards", axum::routing::get(cards_route))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
        });
        Self {
            addr,
            state,
            _stop: tx,
        }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    fn answer(&self, plan: Plan) {
        *self.state.plan.lock().unwrap() = plan;
    }
}

fn config(api: &FakeApi, archive: &TempDir) -> UpstreamConfig {
    UpstreamConfig {
        base_url: api.base_url(),
        archive_dir: archive.path().to_owned(),
        ..UpstreamConfig::new(TOKEN)
    }
}

fn upstream(server: &Server, api: &FakeApi, archive: &TempDir) -> Upstream {
    Upstream::new(
        &config(api, archive),
        Arc::clone(&server.store),
        Arc::new(server.clock.clone()),
    )
    .unwrap()
}

async fn refresh(
    server: &Server,
    upstream: &Upstream,
) -> Result<recorder::CardsRefreshed, RecorderError> {
    recorder::refresh_cards(upstream, &server.store, &server.clock).await
}

async fn output_schema(client: &Client) -> Value {
    let list = client.request("tools/list", json!({})).await.result()["tools"].clone();
    list.as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "cards_catalog")
        .unwrap()["outputSchema"]
        .clone()
}

fn assert_valid(schema: &Value, body: &Value) {
    let validator = jsonschema::validator_for(schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?} in {body}");
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

async fn catalogue(client: &Client, args: Value) -> Value {
    success(&client.tool("cards_catalog", args).await)
}

async fn read_cards_resource(client: &Client) -> (Value, String) {
    let r = client
        .request("resources/read", json!({"uri": "elixir://cards"}))
        .await;
    let content = &r.result()["contents"][0];
    assert_eq!(content["uri"], "elixir://cards");
    assert_eq!(content["mimeType"], "application/json");
    (
        serde_json::from_str(content["text"].as_str().unwrap()).unwrap(),
        r.header("x-request-id").to_owned(),
    )
}

async fn catalogue_before_and_after_the_first_read(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let schema = output_schema(&person).await;

    // never read: every measured field is null, never [] (SURFACE §3.3), with a note
    let empty = catalogue(&person, json!({})).await;
    for key in ["cards", "tower_troops", "total", "observed_at"] {
        assert_eq!(empty[key], Value::Null, "{key} in {empty}");
    }
    assert_eq!(empty["notes"], json!([NEVER_READ_NOTE]));
    assert_eq!(empty["docs"], "recording#what-is-polled");
    assert_eq!(empty["applied"], json!({"verbosity": "full"}));
    assert_eq!(empty["meta"]["freshness_seconds"], Value::Null);
    assert_eq!(
        empty["meta"]["source_polls"],
        json!({"cards": {"observed_at": null, "freshness_seconds": null}})
    );
    assert_valid(&schema, &empty);
    // filters change nothing before the first read: no id is known to be unknown
    let filtered = catalogue(&person, json!({"ids": [1], "verbosity": "compact"})).await;
    assert_eq!(filtered["cards"], Value::Null);
    assert_eq!(filtered["applied"], json!({"verbosity": "compact"}));
    let (resource, request_id) = read_cards_resource(&person).await;
    for key in ["cards", "tower_troops", "total", "observed_at"] {
        assert_eq!(resource[key], Value::Null, "{key} in {resource}");
    }
    assert_eq!(resource["notes"], json!([NEVER_READ_NOTE]));
    assert_eq!(resource["meta"]["request_id"], request_id.as_str());
    assert!(resource["meta"].get("quota").is_none(), "{resource}");

    // the first read
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let upstream = upstream(&server, &api, &archive);
    let refreshed = refresh(&server, &upstream).await.unwrap();
    assert_eq!(
        (refreshed.cards, refreshed.tower_troops, refreshed.changed),
        (12, 4, true)
    );
    assert_eq!(refreshed.observed_at, T0);

    server.clock.advance_millis(90_000);
    let full = catalogue(&person, json!({})).await;
    assert_valid(&schema, &full);
    assert_eq!(full["total"], 16);
    assert_eq!(full["cards"].as_array().unwrap().len(), 12);
    assert_eq!(full["observed_at"], "2026-01-01T00:00:00Z");
    assert_eq!(full["notes"], json!([]));
    assert_eq!(full["docs"], "tools-cards#cards-catalog");
    assert_eq!(full["meta"]["freshness_seconds"], 90);
    assert_eq!(
        full["meta"]["source_polls"],
        json!({"cards": {"observed_at": "2026-01-01T00:00:00Z", "freshness_seconds": 90}})
    );
    assert_eq!(
        full["cards"][0],
        json!({
            "id": 26000000,
            "name": "Knight",
            "rarity": "common",
            "kind": "troop",
            "elixir": 3,
            "max_level": 16,
            "forms": {"evolution": true, "hero": true},
            "icon_urls": {
                "medium": "https://api-assets.clashroyale.com/cards/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png",
                "evolution_medium": "https://api-assets.clashroyale.com/cardevolutions/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png",
                "hero_medium": "https://api-assets.clashroyale.com/cardheroes/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png",
            },
        })
    );
    let by_name = |list: &Value, name: &str| -> Value {
        list.as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap()
    };
    let mirror = by_name(&full["cards"], "Mirror");
    assert_eq!(mirror["elixir"], Value::Null);
    assert_eq!(
        (mirror["kind"].clone(), mirror["max_level"].clone()),
        (json!("spell"), json!(16))
    );
    // every rarity reads the in-game maximum, 16
    for c in full["cards"].as_array().unwrap() {
        assert_eq!(c["max_level"], 16, "{c}");
    }
    assert_eq!(by_name(&full["cards"], "Cannon")["kind"], "building");
    assert_eq!(
        by_name(&full["cards"], "Giant")["forms"],
        json!({"evolution": false, "hero": true})
    );
    assert_eq!(
        names(&full["tower_troops"]),
        [
            "Tower Princess",
            "Cannoneer",
            "Dagger Duchess",
            "Royal Chef"
        ]
    );
    let princess = &full["tower_troops"][0];
    assert_eq!(
        (
            princess["kind"].clone(),
            princess["elixir"].clone(),
            princess["max_level"].clone()
        ),
        (json!("tower_troop"), Value::Null, json!(16))
    );

    // compact drops icon_urls and max_level, and is smaller
    let compact = catalogue(&person, json!({"verbosity": "compact"})).await;
    assert_valid(&schema, &compact);
    assert_eq!(compact["applied"], json!({"verbosity": "compact"}));
    assert_eq!(compact["total"], 16);
    for c in compact["cards"]
        .as_array()
        .unwrap()
        .iter()
        .chain(compact["tower_troops"].as_array().unwrap())
    {
        let keys: BTreeSet<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            BTreeSet::from(["id", "name", "rarity", "kind", "elixir", "forms"]),
            "{c}"
        );
    }
    assert!(compact.to_string().len() < full.to_string().len());

    // filters
    let rare = catalogue(&person, json!({"rarity": "rare"})).await;
    assert_eq!(names(&rare["cards"]), ["Giant", "Musketeer", "Hog Rider"]);
    assert_eq!(rare["tower_troops"], json!([]));
    assert_eq!(rare["total"], 3);
    let towers = catalogue(&person, json!({"kind": "tower_troop"})).await;
    assert_eq!(
        (towers["cards"].clone(), towers["total"].clone()),
        (json!([]), json!(4))
    );
    let spells = catalogue(&person, json!({"kind": "spell"})).await;
    assert_eq!(names(&spells["cards"]), ["Mirror", "The Log"]);
    let query = catalogue(&person, json!({"query": "kNi"})).await;
    assert_eq!(names(&query["cards"]), ["Knight", "Mega Knight"]);
    let legendary_towers = catalogue(
        &person,
        json!({"rarity": "legendary", "kind": "tower_troop", "verbosity": "compact"}),
    )
    .await;
    assert_eq!(
        names(&legendary_towers["tower_troops"]),
        ["Dagger Duchess", "Royal Chef"]
    );
    let ids = catalogue(&person, json!({"ids": [159000000, 26000000, 26000000]})).await;
    assert_eq!(names(&ids["cards"]), ["Knight"]);
    assert_eq!(names(&ids["tower_troops"]), ["Tower Princess"]);
    assert_eq!(ids["total"], 2);
    let none = catalogue(&person, json!({"query": "Knight", "kind": "spell"})).await;
    assert_eq!(none["total"], 0);
    assert_eq!(none["cards"], json!([]));
    assert_eq!(none["notes"].as_array().unwrap().len(), 1);

    // unknown ids: not_found with the nearest ids as candidates
    let missing = tool_error(
        &person
            .tool("cards_catalog", json!({"ids": [26000000, 26000002]}))
            .await,
    );
    assert_eq!(missing["error"]["code"], "not_found");
    assert_eq!(missing["error"]["class"], "subject");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("26000002"),
        "{missing}"
    );
    let candidates = missing["error"]["candidates"].as_array().unwrap();
    assert_eq!(candidates[0], json!({"id": 26000001, "name": "Archers"}));
    assert_eq!(candidates[1], json!({"id": 26000003, "name": "Giant"}));
    assert!(
        missing["error"]["hint"]
            .as_str()
            .unwrap()
            .starts_with("cards_catalog(")
    );

    // the resource is the unfiltered full body
    let (resource, _) = read_cards_resource(&person).await;
    for key in [
        "cards",
        "tower_troops",
        "total",
        "observed_at",
        "notes",
        "docs",
    ] {
        assert_eq!(resource[key], full[key], "{key}");
    }
    assert_eq!(resource["applied"], json!({"verbosity": "full"}));
    assert_eq!(resource["meta"]["freshness_seconds"], 90);
    assert!(resource["meta"].get("quota").is_none());

    // every kind of door sees it; the call is metered (not a Help tool)
    for client in [server.agent(), server.integration()] {
        assert_eq!(
            catalogue(&client, json!({"kind": "spell"})).await["total"],
            2
        );
    }
    let used = |body: &Value| body["meta"]["quota"]["calls"]["used"].as_i64().unwrap();
    let a = catalogue(&person, json!({})).await;
    let b = catalogue(&person, json!({})).await;
    assert_eq!(used(&b), used(&a) + 1);

    // a catalogue the daily read has not renewed for days says so
    server.clock.advance_millis(3 * DAY);
    let stale = catalogue(&person, json!({"ids": [26000000]})).await;
    let notes = stale["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].as_str().unwrap().contains("3 days ago"),
        "{notes:?}"
    );
    assert_eq!(stale["meta"]["freshness_seconds"], 3 * 86_400 + 90);
}

/// The fixture plus `extra` generated commons (ids 26100000…), so that 120 distinct ids exist.
fn large_payload(extra: usize) -> String {
    let mut payload: Value = serde_json::from_str(FIXTURE).unwrap();
    let items = payload["items"].as_array_mut().unwrap();
    for i in 0..extra {
        items.push(json!({
            "name": format!("Test Card {i}"),
            "id": 26_100_000 + i,
            "maxLevel": 16,
            "elixirCost": 1 + i % 9,
            "iconUrls": {"medium": format!("https://api-assets.clashroyale.com/cards/300/test{i}.png")},
            "rarity": "common",
        }));
    }
    payload.to_string()
}

async fn arguments_at_their_bounds(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(&large_payload(108)).await;
    refresh(&server, &upstream(&server, &api, &archive))
        .await
        .unwrap();
    let person = server.person();
    let all = catalogue(&person, json!({"verbosity": "compact"})).await;
    let card_ids: Vec<Value> = all["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(card_ids.len(), 120);

    // ids: 1 and 120 answer; 0 items and 121 are bad_request
    let one = catalogue(&person, json!({"ids": [26000010]})).await;
    assert_eq!(names(&one["cards"]), ["Skeletons"]);
    let at_max = catalogue(&person, json!({"ids": card_ids})).await;
    assert_eq!(at_max["total"], 120);
    let mut past = card_ids.clone();
    past.push(json!(159000000));
    let bad = |args: Value| {
        let person = person.clone();
        async move {
            let body = tool_error(&person.tool("cards_catalog", args.clone()).await);
            assert_eq!(body["error"]["code"], "bad_request", "{args}: {body}");
            assert_eq!(body["error"]["class"], "input");
        }
    };
    bad(json!({"ids": past})).await;
    bad(json!({"ids": []})).await;
    bad(json!({"ids": [0]})).await;
    bad(json!({"ids": ["26000000"]})).await;
    bad(json!({"ids": 26000000})).await;
    // query: 1 and 40 characters answer; 0 and 41 are bad_request
    let short = catalogue(&person, json!({"query": "g"})).await;
    assert!(names(&short["cards"]).contains(&"Giant"));
    let forty = catalogue(&person, json!({"query": "k".repeat(40)})).await;
    assert_eq!(forty["total"], 0);
    bad(json!({"query": "k".repeat(41)})).await;
    bad(json!({"query": ""})).await;
    // enums and unknown arguments
    bad(json!({"rarity": "mythic"})).await;
    bad(json!({"rarity": "Rare"})).await;
    bad(json!({"kind": "hero"})).await;
    bad(json!({"verbosity": "tiny"})).await;
    bad(json!({"limit": 10})).await;
    bad(json!({"player_tag": "#2PP"})).await;
    for rarity in ["common", "rare", "epic", "legendary", "champion"] {
        let body = catalogue(&person, json!({"rarity": rarity})).await;
        assert!(
            body["cards"]
                .as_array()
                .unwrap()
                .iter()
                .chain(body["tower_troops"].as_array().unwrap())
                .all(|c| c["rarity"] == rarity)
        );
    }
}

fn gunzip(path: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

async fn receipts_archive_and_raw_retention(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let upstream = upstream(&server, &api, &archive);
    let sha = payload_sha256(FIXTURE.as_bytes());
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(
        api.state.authorization.lock().unwrap().as_deref(),
        Some("Bearer test-api-token")
    );
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(
        receipts,
        [Receipt {
            endpoint: "/cards".into(),
            subject: None,
            fetched_at: T0,
            status: Some(200),
            payload_sha256: Some(sha.clone()),
            admission: "recorder".into(),
        }]
    );
    // the archive holds the payload gzipped under its digest
    let path = archive
        .path()
        .join(&sha[..2])
        .join(format!("{sha}.json.gz"));
    assert_eq!(gunzip(&path), FIXTURE.as_bytes());
    assert_eq!(
        upstream.archive().get(&sha).await.unwrap().as_deref(),
        Some(FIXTURE.as_bytes())
    );
    // and the database keeps it raw
    let raw = server.store.raw_payload(&sha).await.unwrap().unwrap();
    assert_eq!((raw.body.as_str(), raw.fetched_at), (FIXTURE, T0));
    assert_eq!(raw.endpoint, "/cards");

    // the same payload an hour later: unchanged, a second receipt, the raw copy renewed
    server.clock.advance_millis(3_600_000);
    let again = refresh(&server, &upstream).await.unwrap();
    assert!(!again.changed);
    assert_eq!(server.store.receipts("/cards", 10).await.unwrap().len(), 2);
    assert_eq!(
        server
            .store
            .raw_payload(&sha)
            .await
            .unwrap()
            .unwrap()
            .fetched_at,
        T0 + 3_600_000
    );
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1,
        "one file per payload"
    );

    // two hours on, a failed read still purges the raw copy and leaves a receipt without a
    // payload; the catalogue stays as last read
    server.clock.advance_millis(2 * 3_600_000 + 1);
    api.answer(Plan::Status(503, None));
    let failed = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            failed,
            RecorderError::Upstream(UpstreamError::Status { status: 503, retry_at: Some(at) })
                if at == server.clock.now_millis() + 5 * 60_000
        ),
        "{failed:?}"
    );
    assert_eq!(server.store.raw_payload(&sha).await.unwrap(), None);
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(receipts.len(), 3);
    assert_eq!(
        (receipts[0].status, receipts[0].payload_sha256.clone()),
        (Some(503), None)
    );
    let stored = server.store.cards_catalogue().await.unwrap().unwrap();
    assert_eq!(stored.observed_at, T0 + 3_600_000);

    // a payload the rules refuse is archived and receipted, and changes nothing
    server.clock.advance_millis(5 * 60_000);
    let odd = r#"{"items":[{"name":"Odd","id":42000000,"maxLevel":16,"rarity":"common"}]}"#;
    api.answer(Plan::Body(odd.to_owned()));
    let rejected = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            rejected,
            RecorderError::Rejected(CardsError::UnknownKind { id: 42000000, .. })
        ),
        "{rejected:?}"
    );
    let odd_sha = payload_sha256(odd.as_bytes());
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(
        receipts[0].payload_sha256.as_deref(),
        Some(odd_sha.as_str())
    );
    assert_eq!(
        upstream.archive().get(&odd_sha).await.unwrap().as_deref(),
        Some(odd.as_bytes())
    );
    assert_eq!(
        server.store.cards_catalogue().await.unwrap().unwrap(),
        stored
    );
    assert_eq!(api.requests(), 4);
}

async fn the_budget_honours_retry_after(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let upstream = upstream(&server, &api, &archive);
    api.answer(Plan::Status(429, Some("120")));
    let throttled = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            throttled,
            RecorderError::Upstream(UpstreamError::Status { status: 429, retry_at: Some(at) })
                if at == T0 + 120_000
        ),
        "{throttled:?}"
    );
    assert_eq!(api.requests(), 1);
    // both lanes pause: nothing is sent, and no receipt is written, until Retry-After passes
    api.answer(Plan::Body(FIXTURE.to_owned()));
    for advance in [0, 119_999] {
        server.clock.advance_millis(advance);
        let refused = refresh(&server, &upstream).await.unwrap_err();
        assert!(
            matches!(
                refused,
                RecorderError::Upstream(UpstreamError::Throttled { until, .. }) if until == T0 + 120_000
            ),
            "{refused:?}"
        );
    }
    assert_eq!(api.requests(), 1);
    assert_eq!(server.store.receipts("/cards", 10).await.unwrap().len(), 1);
    server.clock.advance_millis(1);
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(api.requests(), 2);

    // without Retry-After the pause is 60 s
    api.answer(Plan::Status(429, None));
    let now = server.clock.now_millis();
    assert!(refresh(&server, &upstream).await.is_err());
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(59_999);
    assert!(refresh(&server, &upstream).await.is_err());
    server.clock.set_millis(now + 60_000);
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(api.requests(), 4);

    // five consecutive 403s open the circuit: nothing more is sent until the probe
    server.clock.advance_millis(10_000);
    api.answer(Plan::Status(403, None));
    for _ in 0..5 {
        assert!(refresh(&server, &upstream).await.is_err());
    }
    assert_eq!(api.requests(), 9);
    let open = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            open,
            RecorderError::Upstream(UpstreamError::CircuitOpen { .. })
        ),
        "{open:?}"
    );
    assert_eq!(api.requests(), 9);
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(15 * 60_000);
    refresh(&server, &upstream).await.unwrap();
    let receipts = server.store.receipts("/cards", 1).await.unwrap();
    assert_eq!(receipts[0].admission, "probe");
    assert_eq!(api.requests(), 10);
}

async fn second_store(url: &str) -> SharedStore {
    let store = store::connect(url, &store::DbOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
}

fn poller(
    server: &Server,
    store: SharedStore,
    api: &FakeApi,
    archive: &TempDir,
    owner: &str,
) -> Poller {
    Poller {
        upstream: Arc::new(
            Upstream::new(
                &config(api, archive),
                Arc::clone(&store),
                Arc::new(server.clock.clone()),
            )
            .unwrap(),
        ),
        store,
        clock: Arc::new(server.clock.clone()),
        owner: owner.into(),
        settings: PollSettings {
            check_every: Duration::from_millis(20),
            ..PollSettings::default()
        },
    }
}

/// Waits (in real time) until `f` holds.
async fn eventually(what: &str, mut f: impl AsyncFnMut() -> bool) {
    for _ in 0..500 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn the_daily_read_happens_once_across_instances(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let a = poller(
        &server,
        Arc::clone(&server.store),
        &api,
        &archive,
        "instance-a",
    );
    let b = poller(
        &server,
        second_store(url).await,
        &api,
        &archive,
        "instance-b",
    );

    // 2026-01-01T00:00Z belongs to game day 2025-12-31: the first look reads at once
    assert!(matches!(a.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 1);
    // 09:59Z is still that game day; 10:00Z starts the next
    server.clock.set_millis(T0 + 10 * 3_600_000 - 1);
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    server.clock.set_millis(T0 + 10 * 3_600_000);
    assert!(matches!(b.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 2);

    // a failed read keeps the claim: the owner retries when the budget allows, the other
    // instance only once the lease has lapsed
    server.clock.advance_millis(DAY);
    api.answer(Plan::Status(503, None));
    let failed_at = server.clock.now_millis();
    assert_eq!(
        a.tick().await.unwrap(),
        Tick::RetryAt(failed_at + 5 * 60_000)
    );
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(5 * 60_000);
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    server.clock.set_millis(failed_at + 15 * 60_000);
    assert!(matches!(b.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 4);
    assert_eq!(
        server
            .store
            .cards_catalogue()
            .await
            .unwrap()
            .unwrap()
            .observed_at,
        failed_at + 15 * 60_000
    );

    // as background tasks: the next game day is read once, and both stop on cancellation
    server.clock.advance_millis(DAY);
    let cancel = tokio_util::sync::CancellationToken::new();
    let tasks = [
        recorder::spawn_poller(a, cancel.clone()),
        recorder::spawn_poller(b, cancel.clone()),
    ];
    eventually("the next day's read", async || api.requests() == 5).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(api.requests(), 5);
    cancel.cancel();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the poll task stops on cancellation")
            .unwrap();
    }
}

async fn serve_polls_with_a_token_and_stops(url: &str) {
    let archive = TempDir::new("elixir-archive-");
    let outbox = TempDir::new("elixir-outbox-");
    let api = FakeApi::start(FIXTURE).await;
    let clock = mcp_door::FakeClock::new(T0);
    let config = elixir::app::ServeConfig {
        database_url: url.to_owned(),
        oauth: elixir::oauth::OAuthSettings {
            mail: elixir::oauth::MailSettings::Outbox(outbox.path().to_owned()),
            ..Default::default()
        },
        upstream: Some(config(&api, &archive)),
        poll: PollSettings {
            check_every: Duration::from_millis(20),
            ..PollSettings::default()
        },
        drain_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(elixir::app::run(
        config,
        listener,
        Arc::new(clock),
        Arc::new(crate::support::CountingRandom::new(7)),
        async move {
            let _ = stopped.await;
        },
    ));
    let http = reqwest::Client::new();
    eventually("serve to listen", async || {
        http.get(format!("http://{addr}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    // serve has migrated by now, so this connection does not race its migrations
    let store = second_store(url).await;
    eventually("the catalogue read by serve", async || {
        store.cards_catalogue().await.unwrap().is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(api.requests(), 1);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("serve returns after shutdown, its poll task stopped")
        .unwrap()
        .unwrap();
    assert_eq!(api.requests(), 1);
}

async fn the_refresh_command(url: &str) {
    use clap::Parser;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let base = api.base_url();
    let archive_dir = archive.path().display().to_string();
    let cli = |token: Option<&str>| {
        let mut argv = vec![
            "elixir",
            "--database-url",
            url,
            "cards",
            "refresh",
            "--cr-api-url",
            &base,
            "--archive-dir",
            &archive_dir,
            "--json",
        ];
        if let Some(t) = token {
            argv.extend(["--cr-api-token", t]);
        }
        elixir::cli::Cli::try_parse_from(argv).unwrap()
    };
    let missing = elixir::cli::run(cli(None)).await.unwrap_err();
    assert!(missing.to_string().contains("--cr-api-token"), "{missing}");
    assert_eq!(api.requests(), 0);
    elixir::cli::run(cli(Some(TOKEN))).await.unwrap();
    assert_eq!(api.requests(), 1);
    let store = second_store(url).await;
    let stored = store.cards_catalogue().await.unwrap().unwrap();
    assert_eq!(stored.catalogue.cards.len(), 12);
    assert_eq!(stored.payload_sha256, payload_sha256(FIXTURE.as_bytes()));
    let receipts = store.receipts("/cards", 10).await.unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].admission, "recorder");
    assert!(
        archive
            .path()
            .join(&stored.payload_sha256[..2])
            .join(format!("{}.json.gz", stored.payload_sha256))
            .exists()
    );
}

on_both_backends!(
    catalogue_before_and_after_the_first_read,
    arguments_at_their_bounds,
    receipts_archive_and_raw_retention,
    the_budget_honours_retry_after,
    the_daily_read_happens_once_across_instances,
    serve_polls_with_a_token_and_stops,
    the_refresh_command,
);
