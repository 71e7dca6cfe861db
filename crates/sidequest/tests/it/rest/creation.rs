//! Assignment creation: idempotent by id and body, field validation at every bound, and the list
//! of the 200 most recent.

use serde_json::{Value, json};
use sidequest::domain::assignment::bounds;
use uuid::Uuid;

use super::{Browser, GM_SECRET, creation, play, world};

async fn creation_is_idempotent(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let id = Uuid::new_v4();
    let body = creation(id, w.scenario);
    let first = gm.post("/api/plays/", body.clone()).await;
    first.expect(201);
    assert_eq!(first.header("location"), format!("/api/plays/{id}/"));
    let created = first.json();
    assert_eq!(created["id"], id.to_string());
    assert_eq!(created["version"], 1);
    assert_eq!(created["status"], "active");
    assert_eq!(created["current_scene"], "harbor");
    assert_eq!(created["player_id"], w.player.id.to_string());
    assert_eq!(created["gm_notes"], GM_SECRET);

    // identical retry: the same assignment, 200
    let again = gm.post("/api/plays/", body.clone()).await;
    again.expect(200);
    assert_eq!(again.json(), created);
    // changed content, same id: 409, nothing changed
    let mut changed = body.clone();
    changed["brief"] = json!("Something else entirely.");
    let r = gm.post("/api/plays/", changed).await;
    r.expect(409);
    assert_eq!(r.json()["error"], "conflict");
    assert_eq!(gm.get(&play(id, "")).await.json()["brief"], body["brief"]);
    assert_eq!(
        gm.get("/api/plays/").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // eight concurrent identical creates: one assignment, one 201
    let id = Uuid::new_v4();
    let body = creation(id, w.scenario);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let gm = gm.clone();
            let body = body.clone();
            tokio::spawn(async move { gm.post("/api/plays/", body).await })
        })
        .collect();
    let mut statuses = Vec::new();
    let mut bodies = Vec::new();
    for t in tasks {
        let r = t.await.unwrap();
        statuses.push(r.status);
        bodies.push(r.json());
    }
    statuses.sort();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 201]);
    assert!(bodies.iter().all(|b| b == &bodies[0]));
    let items = gm.get("/api/plays/").await.json()["items"].clone();
    assert_eq!(items.as_array().unwrap().len(), 2);
    assert_eq!(
        items
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["id"] == id.to_string())
            .count(),
        1
    );
}

async fn creation_validation(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let rival = Browser::new(s).login("rival").await;
    let player = Browser::new(s).login("player").await;
    let fresh = || creation(Uuid::new_v4(), w.scenario);
    let with = |field: &str, value: Value| {
        let mut b = fresh();
        b[field] = value;
        b
    };

    // required non-empty texts, each named
    let mut b = fresh();
    for f in ["character", "brief", "boundaries", "return_condition"] {
        b[f] = json!("");
    }
    let r = gm.post("/api/plays/", b).await;
    r.expect_fields(&["character", "brief", "boundaries", "return_condition"]);
    assert_eq!(
        r.json()["fields"]["brief"],
        "is required and must not be empty"
    );
    gm.post("/api/plays/", with("boundaries", json!("   ")))
        .await
        .expect_fields(&["boundaries"]);
    // optional texts may be empty
    let mut b = fresh();
    b["instructions"] = json!("");
    b["gm_notes"] = json!("");
    gm.post("/api/plays/", b).await.expect(201);
    // a required field missing from the body, an unknown field, a wrong type, a bad enum
    let mut b = fresh();
    b.as_object_mut().unwrap().remove("brief");
    gm.post("/api/plays/", b).await.expect_fields(&["brief"]);
    gm.post("/api/plays/", with("colour", json!("red")))
        .await
        .expect_fields(&["colour"]);
    gm.post("/api/plays/", with("source_version", json!("one")))
        .await
        .expect_fields(&["source_version"]);
    gm.post("/api/plays/", with("mode", json!("raid")))
        .await
        .expect_fields(&["mode"]);
    gm.post("/api/plays/", with("language", json!("de")))
        .await
        .expect_fields(&["language"]);
    gm.post("/api/plays/", with("id", json!("not-a-uuid")))
        .await
        .expect_fields(&["id"]);

    // nodes: unpublished, unknown, duplicated, none a scene, too many
    gm.post(
        "/api/plays/",
        with("published_node_ids", json!(["harbor", "vault"])),
    )
    .await
    .expect_fields(&["published_node_ids"]);
    gm.post(
        "/api/plays/",
        with("published_node_ids", json!(["harbor", "atlantis"])),
    )
    .await
    .expect_fields(&["published_node_ids"]);
    gm.post(
        "/api/plays/",
        with("published_node_ids", json!(["harbor", "harbor"])),
    )
    .await
    .expect_fields(&["published_node_ids"]);
    gm.post("/api/plays/", with("published_node_ids", json!(["mira"])))
        .await
        .expect_fields(&["published_node_ids"]);
    let many: Vec<String> = (0..=bounds::PUBLISHED_NODES)
        .map(|i| format!("n{i}"))
        .collect();
    gm.post("/api/plays/", with("published_node_ids", json!(many)))
        .await
        .expect_fields(&["published_node_ids"]);
    // source version that was never published
    // (its nodes are then not nodes of that version either)
    for v in [0, 2] {
        gm.post("/api/plays/", with("source_version", json!(v)))
            .await
            .expect_fields(&["source_version", "published_node_ids"]);
    }

    // the player: unknown, inactive
    gm.post("/api/plays/", with("player_username", json!("nobody")))
        .await
        .expect_fields(&["player_username"]);
    let gone = s.store.user_by_username("gone").await.unwrap().unwrap();
    s.store.set_user_active(gone.id, false).await.unwrap();
    gm.post("/api/plays/", with("player_username", json!("gone")))
        .await
        .expect_fields(&["player_username"]);

    // another GM's scenario (or one that does not exist) is not the rival's to use: 422 on
    // scenario_id, which reveals nothing about whether it exists
    let r = rival.post("/api/plays/", fresh()).await;
    r.expect_fields(&["scenario_id"]);
    let r2 = rival
        .post("/api/plays/", with("scenario_id", json!(Uuid::new_v4())))
        .await;
    assert_eq!(r.text, r2.text);
    // a player is no GM
    let r = player.post("/api/plays/", fresh()).await;
    r.expect(403);
    assert_eq!(r.json()["error"], "forbidden");

    // text bounds, counted in characters: at the limit 201, one past 422 naming the field
    for (field, max) in [
        ("character", bounds::CHARACTER),
        ("brief", bounds::BRIEF),
        ("instructions", bounds::INSTRUCTIONS),
        ("boundaries", bounds::BOUNDARIES),
        ("return_condition", bounds::RETURN_CONDITION),
        ("gm_notes", bounds::GM_NOTES),
    ] {
        let r = gm
            .post("/api/plays/", with(field, json!("ą".repeat(max + 1))))
            .await;
        r.expect_fields(&[field]);
        assert_eq!(
            r.json()["fields"][field],
            format!("has {} characters; at most {max} allowed", max + 1)
        );
        gm.post("/api/plays/", with(field, json!("ą".repeat(max))))
            .await
            .expect(201);
    }
    // nothing refused was created
    let n = gm.get("/api/plays/").await.json()["items"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(n, 7);
}

async fn list_returns_the_200_most_recent(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let template = creation(Uuid::new_v4(), w.scenario);
    let mut last = Uuid::nil();
    for i in 0..201 {
        s.clock.advance_millis(1);
        last = Uuid::new_v4();
        let a = sidequest::domain::Assignment {
            id: last,
            scenario_id: w.scenario,
            source_version: 1,
            gm_id: w.gm.id,
            player_id: w.player.id,
            mode: sidequest::domain::Mode::Solo,
            language: sidequest::domain::Language::En,
            character: format!("Hero {i}"),
            brief: template["brief"].as_str().unwrap().into(),
            instructions: String::new(),
            boundaries: "b".into(),
            return_condition: "r".into(),
            gm_notes: String::new(),
            published_node_ids: vec!["harbor".into()],
            auto_approve: false,
            status: sidequest::domain::PlayStatus::Active,
            version: 1,
            memory: String::new(),
            current_scene: Some("harbor".into()),
            summary: None,
            created_at: 1_767_225_600_000 + i,
            updated_at: 1_767_225_600_000 + i,
        };
        s.store.create_assignment(&a).await.unwrap();
    }
    let items = gm.get("/api/plays/").await.json()["items"].clone();
    let items = items.as_array().unwrap();
    assert_eq!(items.len(), 200);
    assert_eq!(items[0]["id"], last.to_string());
    assert_eq!(items[0]["character"], "Hero 200");
    assert_eq!(items[199]["character"], "Hero 1");
    let player = Browser::new(s).login("player").await;
    let items = player.get("/api/plays/").await.json()["items"].clone();
    assert_eq!(items.as_array().unwrap().len(), 200);
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["role"] == "player" && a.get("gm_notes").is_none())
    );
}

crate::on_both_backends!(
    creation_is_idempotent,
    creation_validation,
    list_returns_the_200_most_recent,
);
