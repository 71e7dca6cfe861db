//! The campaign wiki over the author door: private to its owner (never reaching another GM or the
//! player) and written with optimistic concurrency.

use serde_json::json;
use uuid::Uuid;

use super::{assert_status, author_client, author_token, new_user, setup};

const SECRET: &str = "SMUGGLER-LEDGER hidden under the third pier plank";

async fn wiki_is_private(url: &str) {
    let (server, world, a) = setup(url).await;
    for (slug, title, body) in [
        ("harbor-secrets", "Harbor secrets", SECRET),
        (
            "npcs",
            "NPCs",
            "Mira mends nets; her brother runs with the smugglers.",
        ),
    ] {
        let r = a
            .tool(
                "wiki_write_page",
                json!({"slug": slug, "title": title, "body": body, "expected_version": 0}),
            )
            .await
            .json();
        assert_eq!(r["version"], 1);
    }
    let list = a.tool("wiki_list_pages", json!({})).await.json();
    let slugs: Vec<&str> = list["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["harbor-secrets", "npcs"]);
    let hits = a
        .tool("wiki_search", json!({"query": "smuggler"}))
        .await
        .json();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 2);

    // another GM sees none of it
    let gm2 = new_user(&server, "gm2", true).await;
    let (_, t2) = author_token(&server.service, &gm2).await;
    let b = author_client(server.addr, &t2);
    assert_eq!(
        b.tool("wiki_list_pages", json!({})).await.json(),
        json!({"pages": []})
    );
    assert_status(
        &b.tool("wiki_read_page", json!({"slug": "harbor-secrets"}))
            .await,
        "404:",
    );
    assert_status(
        &b.tool("wiki_page_history", json!({"slug": "harbor-secrets"}))
            .await,
        "404:",
    );
    for q in ["SMUGGLER", "Mira", "pier"] {
        assert_eq!(
            b.tool("wiki_search", json!({"query": q})).await.json(),
            json!({"hits": []}),
            "{q}"
        );
    }
    // updating A's page is a conflict for B (B's page does not exist), and creating is B's own
    assert_status(
        &b.tool(
            "wiki_write_page",
            json!({"slug": "harbor-secrets", "title": "x", "body": "y", "expected_version": 1}),
        )
        .await,
        "409:",
    );
    let own = b
        .tool(
            "wiki_write_page",
            json!({"slug": "harbor-secrets", "title": "B's harbor", "body": "B's notes", "expected_version": 0}),
        )
        .await
        .json();
    assert_eq!(own["version"], 1);
    assert_eq!(
        b.tool("wiki_read_page", json!({"slug": "harbor-secrets"}))
            .await
            .json()["body"],
        "B's notes"
    );
    let mine = a
        .tool("wiki_read_page", json!({"slug": "harbor-secrets"}))
        .await
        .json();
    assert_eq!(mine["body"], SECRET);
    assert_eq!(mine["version"], 1);
    assert_eq!(
        b.tool("wiki_list_pages", json!({})).await.json()["pages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // nothing of the wiki reaches the player door, whatever the player does
    let player = server.client(&world.assignments[0].1);
    let turn = json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 1,
        "player_action": "I search the pier for a ledger.", "narration": "The planks creak.",
        "memory_markdown": "Searching the pier.", "current_scene": "harbor", "consequences": []});
    let mut seen = player
        .tool("commit_play_turn", turn)
        .await
        .json()
        .to_string();
    seen.push_str(
        &player
            .tool("get_play_context", json!({}))
            .await
            .json()
            .to_string(),
    );
    seen.push_str(
        &player
            .tool("read_play_journal", json!({"limit": 20}))
            .await
            .json()
            .to_string(),
    );
    for q in ["SMUGGLER-LEDGER", "third pier plank", "brother runs"] {
        let mut found = player
            .tool("search_play_memory", json!({"query": q}))
            .await
            .json();
        found.as_object_mut().unwrap().remove("query");
        seen.push_str(&found.to_string());
    }
    seen.push_str(
        &player
            .request("tools/list", json!({}))
            .await
            .body
            .to_string(),
    );
    seen.push_str(&player.initialize("2025-11-25").await.body.to_string());
    for leak in [
        "SMUGGLER-LEDGER",
        "third pier plank",
        "brother runs",
        "harbor-secrets",
    ] {
        assert!(
            !seen.contains(leak),
            "wiki text {leak:?} reached the player"
        );
    }
}

async fn wiki_optimistic_concurrency(url: &str) {
    let (_server, _world, gm) = setup(url).await;
    let write = |expected: i64, body: &str| json!({"slug": "tides", "title": "Tide tables", "body": body, "expected_version": expected});
    let v1 = gm.tool("wiki_write_page", write(0, "first")).await.json();
    assert_eq!(v1["version"], 1);
    assert_eq!(v1["slug"], "tides");
    // creating again is a conflict: the page exists
    assert_status(
        &gm.tool("wiki_write_page", write(0, "again")).await,
        "409: Wiki page tides is at version 1, not 0.",
    );
    let v2 = gm.tool("wiki_write_page", write(1, "second")).await.json();
    assert_eq!(v2["version"], 2);
    // a stale writer is refused and changes nothing
    assert_status(
        &gm.tool("wiki_write_page", write(1, "stale")).await,
        "409: Wiki page tides is at version 2, not 1.",
    );
    assert_status(
        &gm.tool("wiki_write_page", write(5, "future")).await,
        "409:",
    );
    let page = gm
        .tool("wiki_read_page", json!({"slug": "tides"}))
        .await
        .json();
    assert_eq!(
        (page["version"].clone(), page["body"].clone()),
        (json!(2), json!("second"))
    );

    let history = gm
        .tool("wiki_page_history", json!({"slug": "tides"}))
        .await
        .json();
    let versions: Vec<i64> = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [2, 1]);
    assert_eq!(history["versions"][1]["body_chars"], 5);
    let old = gm
        .tool("wiki_read_page", json!({"slug": "tides", "version": 1}))
        .await
        .json();
    assert_eq!(old["body"], "first");
    assert_status(
        &gm.tool("wiki_read_page", json!({"slug": "tides", "version": 3}))
            .await,
        "404:",
    );

    // argument rules at the bound and past it
    let body_max = "ż".repeat(100_000);
    let big = gm
        .tool(
            "wiki_write_page",
            json!({"slug": "big", "title": "t".repeat(200), "body": body_max, "expected_version": 0}),
        )
        .await;
    assert!(!big.is_error(), "{}", big.text());
    for (bad, pointer) in [
        (
            json!({"slug": "Bad Slug", "title": "t", "body": "", "expected_version": 0}),
            "/slug",
        ),
        (
            json!({"slug": "ok", "title": "", "body": "", "expected_version": 0}),
            "/title",
        ),
        (
            json!({"slug": "ok", "title": "t".repeat(201), "body": "", "expected_version": 0}),
            "/title",
        ),
        (
            json!({"slug": "ok", "title": "t", "body": "ż".repeat(100_001), "expected_version": 0}),
            "/body",
        ),
        (
            json!({"slug": "ok", "title": "t", "body": "", "expected_version": -1}),
            "/expected_version",
        ),
        (
            json!({"slug": "ok", "title": "t", "body": "", "expected_version": 0, "owner": "x"}),
            "/",
        ),
        (json!({"slug": "ok", "title": "t", "body": ""}), "/"),
    ] {
        assert_status(
            &gm.tool("wiki_write_page", bad).await,
            &format!("422: Invalid arguments: {pointer}"),
        );
    }
    assert_status(
        &gm.tool(
            "wiki_write_page",
            json!({"slug": "ok", "title": "   ", "body": "", "expected_version": 0}),
        )
        .await,
        "422: Invalid fields: title: must not be blank",
    );
    assert_status(
        &gm.tool("wiki_search", json!({"query": ""})).await,
        "422: Invalid arguments: /query",
    );
    assert_eq!(
        gm.tool("wiki_list_pages", json!({})).await.json()["pages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

crate::on_both_backends!(wiki_is_private, wiki_optimistic_concurrency);
