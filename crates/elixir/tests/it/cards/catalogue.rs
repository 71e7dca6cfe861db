//! `cards_catalog` over the doors and `elixir://cards`: the never-read null body, sizes, filters,
//! every argument at its bound and one past, not_found with candidates, freshness in meta.

use std::collections::BTreeSet;

use elixir::tools::cards::NEVER_READ_NOTE;
use serde_json::{Value, json};
use testkit::db::TempDir;
use testkit::mcp::Client;

use super::{DAY, FIXTURE, FakeApi, refresh, upstream};
use crate::on_both_backends;
use crate::support::{T0, spawn, success, tool_error};

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

on_both_backends!(
    catalogue_before_and_after_the_first_read,
    arguments_at_their_bounds
);
