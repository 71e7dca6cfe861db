//! Every tool of both doors declares an `outputSchema`, and its `structuredContent` validates
//! against the schema that door's `tools/list` declares (formats checked: times are ISO 8601
//! UTC, ids UUIDs): each tool called with real data on the player door and on the author door,
//! every tool of each list called at least once, and the schemas shown to refuse what they
//! should (an epoch-millisecond time, an unknown field).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use sidequest::campaign::CampaignService;
use sidequest::demo;
use sidequest::domain::Assignment;
use testkit::mcp::Client;

use crate::support;

/// The compiled output schemas of a door's `tools/list`, and the tools called so far.
struct Door {
    client: Client,
    schemas: BTreeMap<String, (Value, jsonschema::Validator)>,
    called: BTreeSet<String>,
}

impl Door {
    async fn new(client: Client) -> Self {
        let list = client.request("tools/list", json!({})).await;
        let mut schemas = BTreeMap::new();
        for t in list.result()["tools"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap().to_owned();
            let schema = t
                .get("outputSchema")
                .unwrap_or_else(|| panic!("{name} declares no outputSchema"))
                .clone();
            assert_eq!(schema["type"], "object", "{name}");
            assert!(
                schema["required"].as_array().is_some_and(|r| !r.is_empty()),
                "{name}: a schema that requires nothing is not one"
            );
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{name}: invalid outputSchema: {e}"));
            schemas.insert(name, (schema, validator));
        }
        Self {
            client,
            schemas,
            called: BTreeSet::new(),
        }
    }

    fn errors(&self, name: &str, value: &Value) -> Vec<String> {
        self.schemas[name]
            .1
            .iter_errors(value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    /// Calls `name`, asserts it succeeded with `structuredContent` equal to its text and valid
    /// against its declared schema, and returns it.
    async fn call(&mut self, name: &str, args: Value) -> Value {
        let reply = self.client.tool(name, args).await;
        assert!(!reply.is_error(), "{name} failed: {}", reply.text());
        let structured = reply.result()["structuredContent"].clone();
        assert_eq!(
            structured,
            reply.json(),
            "{name}: structuredContent is the text"
        );
        let errors = self.errors(name, &structured);
        assert!(errors.is_empty(), "{name}: {errors:?}\n{structured:#}");
        self.called.insert(name.to_owned());
        structured
    }

    fn assert_all_called(&self) {
        let declared: BTreeSet<String> = self.schemas.keys().cloned().collect();
        assert_eq!(self.called, declared, "every declared tool was checked");
    }
}

fn turn(op: &str, version: &Value, consequences: Value) -> Value {
    json!({
        "operation_id": op, "expected_version": version,
        "player_action": "I help Mira search the pier before dawn.",
        "narration": "You find a torn page from the keeper's journal.",
        "memory_markdown": "# Current state\nAt the harbor before dawn; a torn page was found.",
        "current_scene": "harbor", "consequences": consequences,
    })
}

async fn every_tool_answers_its_declared_output_schema(url: &str) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 2).await;
    let campaign = CampaignService::new(server.service.clone());
    let author = campaign
        .create_author_token(&world.gm, "schemas")
        .await
        .unwrap();
    // The GM also plays in another GM's assignment, so the author door lists both roles.
    let other_gm = demo::create_user(
        &server.store,
        &server.clock,
        server.service.random.as_ref(),
        "gm2",
        true,
        None,
    )
    .await
    .unwrap();
    let played = Assignment {
        id: uuid::Uuid::from_u128(0xfeed),
        gm_id: other_gm.id,
        player_id: world.gm.id,
        ..world.assignments[0].0.clone()
    };
    server.store.create_assignment(&played).await.unwrap();

    // ---- the player door, on the first assignment ----
    let mut player = Door::new(server.client(&world.assignments[0].1)).await;
    assert_eq!(player.schemas.len(), 5);
    let context = player.call("get_play_context", json!({})).await;
    assert_eq!(
        context["assignment"]["created_at"],
        "2026-01-01T00:00:00.000Z"
    );
    server.clock.advance_millis(61_784);
    let receipt = player
        .call(
            "commit_play_turn",
            turn(
                "10000000-0000-4000-8000-000000000001",
                &context["version"],
                json!([
                    {"category": "relationship", "description": "Mira may become Arin's contact."},
                    {"category": "discovery", "description": "A torn page of the keeper's journal."},
                ]),
            ),
        )
        .await;
    assert_eq!(receipt["replayed"], false);
    // a replay answers the same shape
    let replay = player
        .call(
            "commit_play_turn",
            turn(
                "10000000-0000-4000-8000-000000000001",
                &context["version"],
                json!([
                    {"category": "relationship", "description": "Mira may become Arin's contact."},
                    {"category": "discovery", "description": "A torn page of the keeper's journal."},
                ]),
            ),
        )
        .await;
    assert_eq!(replay["replayed"], true);
    let context = player.call("get_play_context", json!({})).await;
    assert_eq!(
        context["recent_events"][0]["created_at"],
        "2026-01-01T00:01:01.784Z"
    );
    assert_eq!(context["consequences"].as_array().unwrap().len(), 2);
    let journal = player
        .call("read_play_journal", json!({"offset": 0, "limit": 20}))
        .await;
    assert_eq!(
        journal["entries"][0]["created_at"],
        "2026-01-01T00:01:01.784Z"
    );
    let found = player
        .call("search_play_memory", json!({"query": "torn page"}))
        .await;
    assert!(!found["journal_excerpts"].as_array().unwrap().is_empty());

    // ---- the author door, as the GM ----
    let mut door = Door::new(Client::new(
        format!("http://{}/mcp", server.addr),
        Some(author.token.clone()),
    ))
    .await;
    assert_eq!(door.schemas.len(), 16);
    let assignment_id = world.assignments[0].0.id.to_string();
    let list = door.call("list_assignments", json!({})).await;
    let roles: BTreeSet<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, BTreeSet::from(["gm", "player"]));
    let pending = door.call("list_pending_consequences", json!({})).await;
    let group = pending["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["assignment_id"] == assignment_id.as_str())
        .unwrap()
        .clone();
    door.call(
        "review_consequences",
        json!({
            "operation_id": "10000000-0000-4000-8000-000000000003",
            "expected_version": group["version"],
            "assignment_id": assignment_id,
            "decisions": [
                {"id": group["pending"][0]["id"], "decision": "approved", "note": "Fits the main session."},
                {"id": group["pending"][1]["id"], "decision": "rejected"},
            ],
        }),
    )
    .await;
    let overview = door
        .call("get_assignment", json!({"assignment_id": assignment_id}))
        .await;
    assert!(
        overview["consequences"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["decided_at"] == "2026-01-01T00:01:01.784Z")
    );
    let gm_journal = door
        .call(
            "read_assignment_journal",
            json!({"assignment_id": assignment_id}),
        )
        .await;
    assert!(
        gm_journal["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "review")
    );
    // the player door's journal and search after a review (version gaps), then finish
    player.call("read_play_journal", json!({})).await;
    let context = player.call("get_play_context", json!({})).await;
    let finished = player
        .call(
            "finish_play_session",
            json!({
                "operation_id": "10000000-0000-4000-8000-000000000002",
                "expected_version": context["version"],
                "summary": "Arin returns at dawn after helping Mira.",
            }),
        )
        .await;
    assert_eq!(finished["status"], "completed");
    player.assert_all_called();

    // scenarios
    let scenario_id = world.scenario_id.to_string();
    door.call("list_scenarios", json!({})).await;
    door.call("get_scenario", json!({"scenario_id": scenario_id}))
        .await;
    let created = door
        .call("create_scenario", json!({"title": "The Salt Vault"}))
        .await;
    assert_eq!(created["created_at"], "2026-01-01T00:01:01.784Z");
    let new_id = created["id"].clone();
    door.call(
        "put_node",
        json!({"scenario_id": new_id, "node_id": "vault", "kind": "location", "title": "The vault", "published": true, "public_text": "A sealed door.", "gm_text": "Empty."}),
    )
    .await;
    door.call(
        "put_node",
        json!({"scenario_id": new_id, "node_id": "draft-only", "kind": "note", "title": "Scratch"}),
    )
    .await;
    door.call(
        "delete_node",
        json!({"scenario_id": new_id, "node_id": "draft-only"}),
    )
    .await;
    door.call("publish_scenario", json!({"scenario_id": new_id}))
        .await;
    let detail = door
        .call("get_scenario", json!({"scenario_id": new_id}))
        .await;
    assert_eq!(detail["published_nodes"][0]["id"], "vault");

    // the wiki, empty and then with two versions of a page
    door.call("wiki_list_pages", json!({})).await;
    door.call("wiki_search", json!({"query": "Mira"})).await;
    door.call(
        "wiki_write_page",
        json!({"slug": "mira", "title": "Mira", "body": "Harbor keeper's daughter.", "expected_version": 0}),
    )
    .await;
    door.call(
        "wiki_write_page",
        json!({"slug": "mira", "title": "Mira", "body": "Harbor keeper's daughter; a contact.", "expected_version": 1}),
    )
    .await;
    door.call("wiki_list_pages", json!({})).await;
    door.call("wiki_read_page", json!({"slug": "mira"})).await;
    door.call("wiki_read_page", json!({"slug": "mira", "version": 1}))
        .await;
    let hits = door.call("wiki_search", json!({"query": "contact"})).await;
    assert_eq!(hits["hits"][0]["slug"], "mira");
    let history = door
        .call("wiki_page_history", json!({"slug": "mira"}))
        .await;
    assert_eq!(history["versions"].as_array().unwrap().len(), 2);
    door.assert_all_called();

    // A failure is a tool result with isError and its text only: no structuredContent for a
    // schema to judge (MCP 2025-11-25 holds structured results to the schema).
    for (client, name, args) in [
        (
            &door.client,
            "get_scenario",
            json!({"scenario_id": "00000000-0000-4000-8000-000000000000"}),
        ),
        (
            &player.client,
            "commit_play_turn",
            turn("10000000-0000-4000-8000-000000000009", &json!(1), json!([])),
        ),
    ] {
        let failed = client.tool(name, args).await;
        assert!(failed.is_error(), "{name}: {}", failed.body);
        assert!(failed.result().get("structuredContent").is_none(), "{name}");
    }

    // The schemas refuse what they should: a time as epoch milliseconds, a time without
    // milliseconds, a field the tool does not answer, a closed set left.
    let mut epoch = context.clone();
    epoch["assignment"]["created_at"] = json!(1_767_225_600_000_i64);
    assert!(!player.errors("get_play_context", &epoch).is_empty());
    let mut coarse = created.clone();
    coarse["created_at"] = json!("2026-01-01T00:01:01Z");
    assert!(!door.errors("create_scenario", &coarse).is_empty());
    let mut extra = finished.clone();
    extra["memory"] = json!("");
    assert!(!player.errors("finish_play_session", &extra).is_empty());
    let mut leaked = list.clone();
    for item in leaked["items"].as_array_mut().unwrap() {
        item["gm_notes"] = json!("hidden");
    }
    assert!(
        !door.errors("list_assignments", &leaked).is_empty(),
        "gm_notes only where the caller is the GM"
    );
    let mut unknown = overview.clone();
    unknown["consequences"][0]["status"] = json!("maybe");
    assert!(!door.errors("get_assignment", &unknown).is_empty());
}

crate::on_both_backends!(every_tool_answers_its_declared_output_schema);
