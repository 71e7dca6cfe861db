//! Scenario authoring over the author door: drafts, nodes, publishing, and another GM's scenarios
//! out of reach.

use serde_json::{Value, json};
use sidequest::demo;

use super::{assert_status, author_client, author_token, new_user, setup};

async fn authoring_through_the_door(url: &str) {
    let (server, _world, gm) = setup(url).await;
    let created = gm
        .tool("create_scenario", json!({"title": "Saltmere Nights"}))
        .await
        .json();
    assert_eq!(created["version"], 0);
    let id = created["id"].as_str().unwrap().to_owned();
    assert_status(
        &gm.tool("publish_scenario", json!({"scenario_id": id}))
            .await,
        "422: Invalid fields: nodes:",
    );

    let docks = json!({"scenario_id": id, "node_id": "docks", "kind": "scene", "title": "The Docks",
        "published": true, "public_text": "Ropes and gulls.", "gm_text": "GM only: the crates hold rifles."});
    let r = gm.tool("put_node", docks.clone()).await.json();
    assert_eq!(r["id"], "docks");
    assert_eq!(r["published"], true);
    let r = gm
        .tool(
            "put_node",
            json!({"scenario_id": id, "node_id": "old-tom", "kind": "npc", "title": "Old Tom"}),
        )
        .await
        .json();
    // optional fields default
    assert_eq!(
        (r["published"].clone(), r["public_text"].clone()),
        (json!(false), json!(""))
    );

    // validation: bad kind, bad node id, blank title, unknown field, oversized text
    let with = |field: &str, value: Value| {
        let mut n = docks.clone();
        n[field] = value;
        n
    };
    for (bad, prefix) in [
        (
            with("kind", json!("monster")),
            "422: Invalid arguments: /kind",
        ),
        (
            with("node_id", json!("Docks!")),
            "422: Invalid arguments: /node_id",
        ),
        (
            with("node_id", json!("-docks")),
            "422: Invalid arguments: /node_id",
        ),
        (
            with("node_id", json!("d".repeat(65))),
            "422: Invalid arguments: /node_id",
        ),
        (with("title", json!("")), "422: Invalid arguments: /title"),
        (
            with("title", json!("  ")),
            "422: Invalid fields: title: must not be blank",
        ),
        (
            with("gm_text", json!("x".repeat(20_001))),
            "422: Invalid arguments: /gm_text",
        ),
        (
            with("scenario_id", json!("nope")),
            "422: Invalid arguments: /scenario_id",
        ),
        (with("secret", json!(1)), "422: Invalid arguments: "),
    ] {
        assert_status(&gm.tool("put_node", bad).await, prefix);
    }
    assert!(
        !gm.tool("put_node", with("public_text", json!("x".repeat(20_000))))
            .await
            .is_error()
    );
    assert!(!gm.tool("put_node", docks.clone()).await.is_error());

    let s = gm
        .tool("get_scenario", json!({"scenario_id": id}))
        .await
        .json();
    assert_eq!(s["draft_nodes"].as_array().unwrap().len(), 2);
    assert_eq!(s["published_nodes"], json!([]));

    let p = gm
        .tool("publish_scenario", json!({"scenario_id": id}))
        .await
        .json();
    assert_eq!(p["source_version"], 1);
    let s = gm
        .tool("get_scenario", json!({"scenario_id": id}))
        .await
        .json();
    assert_eq!(s["version"], 1);
    let published: Vec<&str> = s["published_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(published, ["docks", "old-tom"]);
    assert_eq!(
        s["published_nodes"][0]["gm_text"],
        "GM only: the crates hold rifles."
    );

    // edits change the draft, not the published version, until the next publish
    let r = gm
        .tool(
            "delete_node",
            json!({"scenario_id": id, "node_id": "old-tom"}),
        )
        .await
        .json();
    assert_eq!(r["deleted"], "old-tom");
    assert_status(
        &gm.tool(
            "delete_node",
            json!({"scenario_id": id, "node_id": "old-tom"}),
        )
        .await,
        "404:",
    );
    gm.tool("put_node", with("title", json!("The Night Docks")))
        .await
        .json();
    let s = gm
        .tool("get_scenario", json!({"scenario_id": id}))
        .await
        .json();
    assert_eq!(s["draft_nodes"].as_array().unwrap().len(), 1);
    assert_eq!(s["draft_nodes"][0]["title"], "The Night Docks");
    assert_eq!(s["published_nodes"].as_array().unwrap().len(), 2);
    assert_eq!(
        gm.tool("publish_scenario", json!({"scenario_id": id}))
            .await
            .json()["source_version"],
        2
    );
    let list = gm.tool("list_scenarios", json!({})).await.json();
    let titles: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, [demo::SCENARIO_TITLE, "Saltmere Nights"]);

    // another GM can neither see nor edit it
    let gm2 = new_user(&server, "gm2", true).await;
    let (_, t2) = author_token(&server.service, &gm2).await;
    let other = author_client(server.addr, &t2);
    assert_eq!(
        other.tool("list_scenarios", json!({})).await.json(),
        json!({"items": []})
    );
    assert_status(
        &other.tool("get_scenario", json!({"scenario_id": id})).await,
        "404: Not found",
    );
    assert_status(&other.tool("put_node", docks).await, "404: Not found");
    assert_status(
        &other
            .tool("publish_scenario", json!({"scenario_id": id}))
            .await,
        "404: Not found",
    );
}

crate::on_both_backends!(authoring_through_the_door);
