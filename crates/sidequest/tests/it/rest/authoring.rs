//! Scenario authoring (drafts, nodes, publishing) and author personal tokens through REST.

use serde_json::{Value, json};
use uuid::Uuid;

use super::{Browser, creation, token, world};

async fn scenario_authoring(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let r = gm
        .post("/api/scenarios/", json!({"title": "The Salt Roads"}))
        .await;
    r.expect(201);
    let sc = r.json();
    let id = sc["id"].as_str().unwrap().to_owned();
    assert_eq!(sc["version"], 0);
    assert_eq!(r.header("location"), format!("/api/scenarios/{id}/"));
    gm.post("/api/scenarios/", json!({"title": ""}))
        .await
        .expect_fields(&["title"]);
    gm.post("/api/scenarios/", json!({"title": "x".repeat(201)}))
        .await
        .expect_fields(&["title"]);
    // nothing to publish yet
    gm.post_empty(&format!("/api/scenarios/{id}/publish/"))
        .await
        .expect_fields(&["nodes"]);

    let node = |kind: &str, title: &str, text: &str| json!({"kind": kind, "title": title, "published": true, "public_text": text, "gm_text": format!("GM: {title}")});
    let base = format!("/api/scenarios/{id}/nodes");
    gm.put(
        &format!("{base}/dock/"),
        node("scene", "The Dock", "Ropes creak. (v1)"),
    )
    .await
    .expect(200);
    gm.put(
        &format!("{base}/oska/"),
        node("npc", "Oska", "A ferrywoman."),
    )
    .await
    .expect(200);
    gm.put(
        &format!("{base}/lantern/"),
        node("item", "Lantern", "Brass."),
    )
    .await
    .expect(200);
    gm.put(
        &format!("{base}/saltmere/"),
        node("location", "Saltmere", "A town."),
    )
    .await
    .expect(200);
    let mut secret = node("note", "Secret", "");
    secret["published"] = json!(false);
    gm.put(&format!("{base}/secret/"), secret).await.expect(200);
    gm.put(&format!("{base}/bad/"), node("monster", "Grue", ""))
        .await
        .expect_fields(&["kind"]);
    gm.put(&format!("{base}/Bad%20Id/"), node("scene", "x", ""))
        .await
        .expect_fields(&["id"]);
    gm.put(&format!("{base}/dock/"), json!({"kind": "scene"}))
        .await
        .expect_fields(&["title"]);
    gm.put(
        &format!("{base}/big/"),
        node("scene", "Big", &"z".repeat(20_001)),
    )
    .await
    .expect_fields(&["public_text"]);
    gm.put(
        &format!("{base}/big/"),
        node("scene", "Big", &"z".repeat(20_000)),
    )
    .await
    .expect(200);
    gm.delete(&format!("{base}/big/")).await.expect(200);
    gm.delete(&format!("{base}/big/")).await.expect(404);

    let r = gm
        .post_empty(&format!("/api/scenarios/{id}/publish/"))
        .await;
    r.expect(200);
    assert_eq!(r.json()["source_version"], 1);
    let scenario: Uuid = id.parse().unwrap();
    let mut body = creation(Uuid::new_v4(), scenario);
    body["published_node_ids"] = json!(["dock", "oska"]);
    let v1_play: Uuid = body["id"].as_str().unwrap().parse().unwrap();
    gm.post("/api/plays/", body.clone()).await.expect(201);
    // an unpublished node is not usable
    let mut hidden = creation(Uuid::new_v4(), scenario);
    hidden["published_node_ids"] = json!(["dock", "secret"]);
    gm.post("/api/plays/", hidden)
        .await
        .expect_fields(&["published_node_ids"]);

    // edit and publish again: version 2
    gm.put(
        &format!("{base}/dock/"),
        node("scene", "The Dock", "The tide is out. (v2)"),
    )
    .await
    .expect(200);
    let r = gm
        .post_empty(&format!("/api/scenarios/{id}/publish/"))
        .await;
    r.expect(200);
    assert_eq!(r.json()["source_version"], 2);
    let detail = gm.get(&format!("/api/scenarios/{id}/")).await.json();
    assert_eq!(detail["version"], 2);
    let dock = detail["published_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "dock")
        .unwrap()
        .clone();
    assert_eq!(dock["public_text"], "The tide is out. (v2)");
    assert_eq!(detail["draft_nodes"].as_array().unwrap().len(), 5);
    let listed = gm.get("/api/scenarios/").await.json();
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == id && s["version"] == 2)
    );

    // the assignment on v1 still sees v1; a new one on v2 sees v2
    let materials = |ctx: Value| {
        ctx["materials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == "dock")
            .unwrap()["text"]
            .clone()
    };
    let t1 = token(&gm, v1_play).await;
    let ctx = s
        .client(&t1)
        .tool("get_play_context", json!({}))
        .await
        .json();
    assert_eq!(materials(ctx.clone()), "Ropes creak. (v1)");
    assert_eq!(ctx["assignment"]["source_version"], 1);
    assert!(
        !ctx.to_string().contains("GM: "),
        "GM-only node text never reaches the player"
    );
    let mut body2 = creation(Uuid::new_v4(), scenario);
    body2["source_version"] = json!(2);
    body2["published_node_ids"] = json!(["dock"]);
    let v2_play: Uuid = body2["id"].as_str().unwrap().parse().unwrap();
    gm.post("/api/plays/", body2).await.expect(201);
    let t2 = token(&gm, v2_play).await;
    let ctx = s
        .client(&t2)
        .tool("get_play_context", json!({}))
        .await
        .json();
    assert_eq!(materials(ctx), "The tide is out. (v2)");
}

async fn author_tokens(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let rival = Browser::new(s).login("rival").await;
    let r = gm
        .post("/api/author-tokens/", json!({"name": "Claude desktop"}))
        .await;
    r.expect(201);
    let created = r.json();
    let plaintext = created["token"].as_str().unwrap().to_owned();
    assert!(plaintext.starts_with("sqa_"));
    assert_eq!(created["mcp_path"], "/mcp");
    let id = created["id"].as_str().unwrap().to_owned();
    let list = gm.get("/api/author-tokens/").await;
    assert!(
        !list.text.contains(&plaintext),
        "the plaintext is shown once"
    );
    let items = list.json()["items"].clone();
    assert_eq!(items[0]["name"], "Claude desktop");
    assert_eq!(items[0]["revoked_at"], Value::Null);
    // times are ISO 8601 UTC with milliseconds and Z; an author token lives 90 days
    assert_eq!(items[0]["created_at"], "2026-01-01T00:00:00.000Z");
    assert_eq!(items[0]["expires_at"], "2026-04-01T00:00:00.000Z");
    assert_eq!(created["expires_at"], "2026-04-01T00:00:00.000Z");
    assert_eq!(
        rival.get("/api/author-tokens/").await.json()["items"],
        json!([])
    );
    gm.post("/api/author-tokens/", json!({"name": ""}))
        .await
        .expect_fields(&["name"]);
    gm.post("/api/author-tokens/", json!({"name": "x".repeat(101)}))
        .await
        .expect_fields(&["name"]);
    rival
        .delete(&format!("/api/author-tokens/{id}/"))
        .await
        .expect(404);
    s.clock.advance_millis(1_234);
    gm.delete(&format!("/api/author-tokens/{id}/"))
        .await
        .expect(200);
    assert_eq!(
        gm.get("/api/author-tokens/").await.json()["items"][0]["revoked_at"],
        "2026-01-01T00:00:01.234Z"
    );
    gm.delete(&format!("/api/author-tokens/{id}/"))
        .await
        .expect(404);
}

crate::on_both_backends!(scenario_authoring, author_tokens);
