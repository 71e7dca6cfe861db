//! The player door end to end over a real listener: the contract's examples, every limit at
//! the bound and one past it, replay and conflict rules, authentication and visibility.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{self, Server};
use sidequest::domain::{ConsequenceStatus, EventKind, JournalEvent, OperationKind, Receipt};
use sidequest::store::{Decided, Decision, Load, WritePlan};

const OP1: &str = "10000000-0000-4000-8000-000000000001";
const OP2: &str = "10000000-0000-4000-8000-000000000002";

fn example_turn() -> Value {
    json!({ "operation_id": OP1, "expected_version": 1, "player_action": "I help Mira search the pier before dawn.", "narration": "You find a torn page from the keeper's journal and promise to return tomorrow.", "memory_markdown": "# Current state\nAt the harbor before dawn.\n\n# Established during play\nArin helped Mira search. A torn page was found.\n\n# Pending campaign consequences\nMira may become a contact; the GM has not approved this.\n\n# Return\nRejoin the party at dawn.\n", "current_scene": "harbor", "consequences": [ {"category": "relationship", "description": "Mira may become Arin's local contact."}, {"category": "discovery", "description": "Arin brings back the torn page for the GM to reconcile with the main plot."} ] })
}

fn example_finish() -> Value {
    json!({ "operation_id": OP2, "expected_version": 2, "summary": "Arin returns at dawn after helping Mira. The contact and journal-page discovery await the human GM." })
}

fn turn(op: Uuid, version: i64, text: &str) -> Value {
    json!({"operation_id": op.to_string(), "expected_version": version, "player_action": format!("act {text}"), "narration": format!("narrate {text}"), "memory_markdown": format!("memory {text}"), "current_scene": "harbor", "consequences": []})
}

async fn setup(url: &str) -> (Server, testkit::mcp::Client, sidequest::demo::DemoCreated) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    (server, client, world)
}

async fn context(client: &testkit::mcp::Client) -> Value {
    client.tool("get_play_context", json!({})).await.json()
}

fn assert_status(reply: &testkit::mcp::Reply, prefix: &str) {
    assert!(reply.is_error(), "expected isError, got {}", reply.body);
    let text = reply.text();
    assert!(
        text.starts_with(prefix),
        "expected text starting {prefix:?}, got {text:?}"
    );
}

async fn contract_examples(url: &str) {
    let (_server, client, world) = setup(url).await;
    let assignment = &world.assignments[0].0;
    let ctx = context(&client).await;
    assert_eq!(ctx["version"], 1);
    assert_eq!(ctx["assignment"]["current_scene"], "harbor");
    assert_eq!(ctx["assignment"]["character"], "Arin");

    let r = client.tool("commit_play_turn", example_turn()).await;
    let out = r.json();
    assert_eq!(r.result()["structuredContent"], out);
    assert_eq!(out["session_id"], assignment.id.to_string());
    assert_eq!(out["version"], 2);
    assert_eq!(out["replayed"], false);
    let cons = out["consequences"].as_array().unwrap();
    assert_eq!(cons.len(), 2);
    assert_eq!(cons[0]["status"], "pending");
    assert_eq!(cons[0]["category"], "relationship");
    assert_eq!(
        cons[0]["description"],
        "Mira may become Arin's local contact."
    );
    assert_eq!(cons[1]["category"], "discovery");
    assert!(Uuid::parse_str(cons[0]["id"].as_str().unwrap()).is_ok());

    let ctx = context(&client).await;
    assert_eq!(ctx["version"], 2);
    assert_eq!(ctx["memory_markdown"], example_turn()["memory_markdown"]);
    assert_eq!(ctx["recap"], example_turn()["narration"]);
    assert_eq!(ctx["consequences"].as_array().unwrap().len(), 2);

    let r = client
        .tool("finish_play_session", example_finish())
        .await
        .json();
    assert_eq!(r["status"], "completed");
    assert_eq!(r["version"], 3);
    assert_eq!(r["pending_consequences"], 2);
    assert_eq!(r["replayed"], false);

    let ctx = context(&client).await;
    assert_eq!(ctx["assignment"]["status"], "completed");
    assert_eq!(ctx["recap"], example_finish()["summary"]);

    // new turns fail after completion, and so does a second finish; there is no reopen
    let r = client
        .tool("commit_play_turn", turn(Uuid::new_v4(), 3, "late"))
        .await;
    assert_status(&r, "409: Play session is completed.");
    let r = client.tool("finish_play_session", json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 3, "summary": "again"})).await;
    assert_status(&r, "409: Play session is completed.");
    // identical earlier operations still replay
    let r = client.tool("commit_play_turn", example_turn()).await.json();
    assert_eq!(r["replayed"], true);
    assert_eq!(r["version"], 2);
    let r = client
        .tool("finish_play_session", example_finish())
        .await
        .json();
    assert_eq!(r["replayed"], true);
    assert_eq!(r["version"], 3);
}

async fn replay_after_later_turn_and_review(url: &str) {
    let (server, client, world) = setup(url).await;
    let assignment_id = world.assignments[0].0.id;
    let first = client.tool("commit_play_turn", example_turn()).await.json();
    let second = client
        .tool("commit_play_turn", turn(Uuid::new_v4(), 2, "two"))
        .await
        .json();
    assert_eq!(second["version"], 3);

    // identical replay after a later turn: the original receipt, replayed
    let mut expected = first.clone();
    expected["replayed"] = json!(true);
    assert_eq!(
        client.tool("commit_play_turn", example_turn()).await.json(),
        expected
    );

    // key order and UUID letter case do not make a different operation
    let mut shuffled = serde_json::Map::new();
    let original = example_turn();
    let obj = original.as_object().unwrap();
    for key in obj.keys().rev() {
        shuffled.insert(key.clone(), obj[key].clone());
    }
    shuffled.insert("operation_id".into(), json!(OP1.to_uppercase()));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"arguments":{},"name":"commit_play_turn"}}}}"#,
        serde_json::to_string(&shuffled).unwrap()
    );
    assert_eq!(client.post_raw(body).await.json(), expected);

    // a GM review decides the consequences and bumps the version; the replay still shows the
    // statuses of that operation
    let ids: Vec<Uuid> = first["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().parse().unwrap())
        .collect();
    let review_op = Uuid::new_v4();
    let decided_ids = ids.clone();
    server
        .store
        .apply(
            assignment_id,
            review_op,
            Load::consequences(&ids),
            Box::new(move |state| {
                assert_eq!(state.consequences.len(), 2);
                let a = state.assignment;
                let version = a.version + 1;
                Ok(Decision::Write(Box::new(WritePlan {
                    version,
                    status: a.status,
                    memory: a.memory.clone(),
                    current_scene: a.current_scene.clone(),
                    summary: a.summary.clone(),
                    updated_at: 5,
                    events: vec![JournalEvent {
                        version,
                        kind: EventKind::Review,
                        operation_id: Some(review_op),
                        player_action: None,
                        narration: None,
                        summary: None,
                        gm_private: Some("GM-PRIVATE review".into()),
                        scene: None,
                        created_at: 5,
                    }],
                    consequences: vec![],
                    decisions: decided_ids
                        .iter()
                        .map(|id| Decided {
                            id: *id,
                            status: ConsequenceStatus::Approved,
                            note: Some("Fits the main session".into()),
                            decided_at: 5,
                        })
                        .collect(),
                    receipt: Receipt {
                        assignment_id: a.id,
                        operation_id: review_op,
                        kind: OperationKind::Review,
                        args_hash: "x".into(),
                        result: json!({}),
                        version,
                        created_at: 5,
                    },
                })))
            }),
        )
        .await
        .unwrap();
    let replay = client.tool("commit_play_turn", example_turn()).await.json();
    assert_eq!(replay, expected);
    assert_eq!(replay["consequences"][0]["status"], "pending");
    let ctx = context(&client).await;
    assert_eq!(ctx["version"], 4);
    let statuses: Vec<&str> = ctx["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["approved", "approved"]);
    assert_eq!(ctx["consequences"][0]["gm_note"], "Fits the main session");

    // the journal shows the version gap but no review event, and no GM-private text
    let journal = client.tool("read_play_journal", json!({})).await.json();
    assert_eq!(journal["total"], 2);
    let versions: Vec<i64> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [2, 3]);
    assert!(!journal.to_string().contains("GM-PRIVATE"));

    // the finish after review still counts pending correctly (none) and replays later
    let fin = json!({"operation_id": OP2, "expected_version": 4, "summary": "done"});
    let r = client.tool("finish_play_session", fin.clone()).await.json();
    assert_eq!(r["pending_consequences"], 0);
    assert_eq!(r["version"], 5);
    assert_eq!(
        client.tool("finish_play_session", fin).await.json()["replayed"],
        true
    );
}

async fn conflicts_write_nothing(url: &str) {
    let (_server, client, _world) = setup(url).await;
    client.tool("commit_play_turn", example_turn()).await.json();

    // same operation id, different arguments
    let mut changed = example_turn();
    changed["narration"] = json!("Something else happens.");
    let r = client.tool("commit_play_turn", changed).await;
    assert_status(
        &r,
        &format!("409: Operation {OP1} was already used with different arguments."),
    );
    // same operation id, another kind
    let r = client
        .tool(
            "finish_play_session",
            json!({"operation_id": OP1, "expected_version": 2, "summary": "x"}),
        )
        .await;
    assert_status(&r, "409: Operation");

    let before = context(&client).await;
    // stale and future versions with new ids
    for v in [1, 3, 99] {
        let r = client
            .tool("commit_play_turn", turn(Uuid::new_v4(), v, "stale"))
            .await;
        assert_status(
            &r,
            &format!(
                "409: Version conflict: expected {v}, current 2. Call get_play_context again."
            ),
        );
    }
    let r = client.tool("finish_play_session", json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 1, "summary": "x"})).await;
    assert_status(&r, "409: Version conflict: expected 1, current 2.");
    let after = context(&client).await;
    assert_eq!(before, after, "a refused operation must write nothing");
    assert_eq!(
        client.tool("read_play_journal", json!({})).await.json()["total"],
        1
    );
}

fn args_with(field: &str, value: Value) -> Value {
    let mut a = turn(Uuid::new_v4(), 1, "limits");
    a[field] = value;
    a
}

async fn limits_at_the_bound_and_one_past(url: &str) {
    let (server, _c, _w) = setup(url).await;
    // one fresh assignment per accepted case keeps expected_version at 1
    let world = support::world(&server, 6).await;
    let mut tokens = world.assignments.iter().map(|(_, t)| server.client(t));
    let cases: Vec<(&str, usize)> = vec![
        ("player_action", 4000),
        ("narration", 6000),
        ("memory_markdown", 16000),
    ];
    for (field, max) in cases {
        let client = tokens.next().unwrap();
        // multi-byte characters: the limit is in characters, not bytes
        let r = client
            .tool(
                "commit_play_turn",
                args_with(field, json!("ą".repeat(max + 1))),
            )
            .await;
        assert_status(&r, "422: Invalid arguments: ");
        assert!(r.text().contains(&format!("/{field}")), "{}", r.text());
        let r = client
            .tool("commit_play_turn", args_with(field, json!("ą".repeat(max))))
            .await;
        assert!(!r.is_error(), "{field} at {max} chars: {}", r.text());
    }
    // consequences: 10 ok, 11 refused; description 1500 ok, 1501 refused
    let client = tokens.next().unwrap();
    let c = |n: usize, len: usize| {
        (0..n)
            .map(|_| json!({"category": "narrative", "description": "ż".repeat(len)}))
            .collect::<Vec<_>>()
    };
    let r = client
        .tool(
            "commit_play_turn",
            args_with("consequences", json!(c(11, 5))),
        )
        .await;
    assert_status(&r, "422: Invalid arguments: /consequences");
    let r = client
        .tool(
            "commit_play_turn",
            args_with("consequences", json!(c(1, 1501))),
        )
        .await;
    assert_status(&r, "422: Invalid arguments: /consequences/0/description");
    let r = client
        .tool(
            "commit_play_turn",
            args_with("consequences", json!(c(10, 1500))),
        )
        .await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(r.json()["consequences"].as_array().unwrap().len(), 10);

    // shape rules: exactly category + description, known categories, no unknown arguments
    let client = tokens.next().unwrap();
    for bad in [
        args_with(
            "consequences",
            json!([{"category": "narrative", "description": "x", "status": "approved"}]),
        ),
        args_with(
            "consequences",
            json!([{"category": "treasure", "description": "x"}]),
        ),
        args_with("consequences", json!([{"description": "x"}])),
        args_with("player_action", json!("")),
        args_with("expected_version", json!(0)),
        args_with("operation_id", json!("not-a-uuid")),
        args_with("session_id", json!("someone-else")),
    ] {
        let r = client.tool("commit_play_turn", bad.clone()).await;
        assert_status(&r, "422: Invalid arguments: ");
    }
    // nothing above was written
    assert_eq!(context(&client).await["version"], 1);
}

async fn scenes_must_be_published_scenes(url: &str) {
    let (_server, client, _w) = setup(url).await;
    for scene in ["mira", "vault", "nowhere"] {
        let r = client
            .tool("commit_play_turn", args_with("current_scene", json!(scene)))
            .await;
        assert_status(
            &r,
            "422: current_scene must be a published scene of this assignment.",
        );
    }
    let r = client
        .tool(
            "commit_play_turn",
            args_with("current_scene", json!("lighthouse")),
        )
        .await
        .json();
    assert_eq!(r["version"], 2);
    assert_eq!(
        context(&client).await["assignment"]["current_scene"],
        "lighthouse"
    );
}

async fn gm_material_never_reaches_the_player(url: &str) {
    let (_server, client, world) = setup(url).await;
    client.tool("commit_play_turn", example_turn()).await.json();
    let mut seen = String::new();
    seen.push_str(&context(&client).await.to_string());
    seen.push_str(
        &client
            .tool("read_play_journal", json!({"limit": 20}))
            .await
            .json()
            .to_string(),
    );
    for q in ["GM only", "vault", "smuggler", "Mira"] {
        let mut found = client
            .tool("search_play_memory", json!({"query": q}))
            .await
            .json();
        // the echoed query is the caller's own text
        found.as_object_mut().unwrap().remove("query");
        seen.push_str(&found.to_string());
    }
    seen.push_str(
        &client
            .request("tools/list", json!({}))
            .await
            .body
            .to_string(),
    );
    assert!(!seen.contains("GM only"), "GM-only text leaked");
    assert!(!seen.contains(&world.assignments[0].0.gm_notes));
    assert!(!seen.contains("A flooded vault"), "unpublished node leaked");
    let ctx = context(&client).await;
    let ids: Vec<&str> = ctx["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["harbor", "lighthouse", "mira"]);
    assert!(
        ctx["agent_contract"]
            .as_str()
            .unwrap()
            .contains("Never invent GM decisions")
    );
}

async fn journal_paging_and_search(url: &str) {
    let (_server, client, _w) = setup(url).await;
    for i in 0..25 {
        let needle = if i % 2 == 0 { "lantern" } else { "rope" };
        let r = client
            .tool(
                "commit_play_turn",
                turn(Uuid::new_v4(), i + 1, &format!("{needle} {i}")),
            )
            .await;
        assert!(!r.is_error(), "{}", r.text());
    }
    let page = client.tool("read_play_journal", json!({})).await.json();
    assert_eq!(page["total"], 25);
    assert_eq!(page["offset"], 0);
    assert_eq!(page["entries"].as_array().unwrap().len(), 10);
    assert_eq!(page["entries"][0]["version"], 2);
    let page = client
        .tool("read_play_journal", json!({"offset": 20, "limit": 20}))
        .await
        .json();
    let versions: Vec<i64> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [22, 23, 24, 25, 26]);
    let page = client
        .tool("read_play_journal", json!({"offset": 100, "limit": 1}))
        .await
        .json();
    assert_eq!(page["entries"].as_array().unwrap().len(), 0);
    assert_eq!(page["total"], 25);
    for bad in [
        json!({"limit": 0}),
        json!({"limit": 21}),
        json!({"offset": -1}),
        json!({"limit": "5"}),
        json!({"page": 2}),
    ] {
        assert_status(
            &client.tool("read_play_journal", bad).await,
            "422: Invalid arguments: ",
        );
    }
    assert!(
        !client
            .tool("read_play_journal", json!({"limit": 1}))
            .await
            .is_error()
    );

    // the context shows the last five events
    let ctx = context(&client).await;
    let versions: Vec<i64> = ctx["recent_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [22, 23, 24, 25, 26]);

    // search: case-insensitive, newest first, at most ten
    let s = client
        .tool("search_play_memory", json!({"query": "LANTERN"}))
        .await
        .json();
    assert_eq!(s["version"], 26);
    let hits = s["journal_excerpts"].as_array().unwrap();
    assert_eq!(hits.len(), 10);
    assert_eq!(hits[0]["version"], 26);
    assert!(hits[0]["excerpt"].as_str().unwrap().contains("lantern 24"));
    assert_eq!(s["memory_excerpt"], "memory lantern 24");
    assert_eq!(s["memory_matched"], true);
    let s = client
        .tool("search_play_memory", json!({"query": "rope 23"}))
        .await
        .json();
    assert_eq!(s["journal_excerpts"].as_array().unwrap().len(), 1);
    assert_eq!(s["memory_matched"], false);
    // query bounds
    assert!(
        !client
            .tool("search_play_memory", json!({"query": "ł".repeat(200)}))
            .await
            .is_error()
    );
    assert_status(
        &client
            .tool("search_play_memory", json!({"query": "ł".repeat(201)}))
            .await,
        "422: Invalid arguments: /query",
    );
    assert_status(
        &client
            .tool("search_play_memory", json!({"query": ""}))
            .await,
        "422: Invalid arguments: /query",
    );
    assert_status(
        &client.tool("search_play_memory", json!({})).await,
        "422: Invalid arguments: ",
    );
}

async fn auto_approve_creates_approved_consequences(url: &str) {
    let (server, _c, world) = setup(url).await;
    let mut a = world.assignments[0].0.clone();
    a.id = Uuid::new_v4();
    a.auto_approve = true;
    server.store.create_assignment(&a).await.unwrap();
    let (token, _) = server.service.issue_token(a.id).await.unwrap();
    let client = server.client(&token);
    let mut t = example_turn();
    t["operation_id"] = json!(Uuid::new_v4().to_string());
    let r = client.tool("commit_play_turn", t).await.json();
    assert!(
        r["consequences"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "approved")
    );
    let fin = client.tool("finish_play_session", json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 2, "summary": "ok"})).await.json();
    assert_eq!(fin["pending_consequences"], 0);
}

async fn tokens_and_accounts(url: &str) {
    let (server, client, world) = setup(url).await;
    let assignment = &world.assignments[0].0;
    // a good token works on every method
    assert_eq!(
        client.initialize("2025-06-18").await.result()["protocolVersion"],
        "2025-06-18"
    );
    // missing, wrong, or non-play credentials: 401 with a Bearer challenge, on every method
    let anon = server.anonymous();
    let wrong = server.client("sqp_0000000000000000000000000000000000000000");
    let author_like = server.client("sqa_0123456789abcdef0123456789abcdef01234567");
    let garbage = server.client("hello");
    for c in [&anon, &wrong, &author_like, &garbage] {
        for (method, params) in [
            ("initialize", json!({"protocolVersion": "2025-11-25"})),
            ("tools/list", json!({})),
            (
                "tools/call",
                json!({"name": "get_play_context", "arguments": {}}),
            ),
        ] {
            let r = c.request(method, params).await;
            assert_eq!(r.status, 401, "{method}");
            assert!(
                r.header("www-authenticate").starts_with("Bearer"),
                "{method}"
            );
        }
    }
    // no OAuth discovery documents
    let http = reqwest::Client::new();
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/play/mcp",
        "/register",
    ] {
        let r = http
            .get(format!("http://{}{path}", server.addr))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 404, "{path}");
    }
    // rotation revokes the old token at once and does not change the version
    let (new_token, _) = server.service.issue_token(assignment.id).await.unwrap();
    assert_eq!(client.request("tools/list", json!({})).await.status, 401);
    let fresh = server.client(&new_token);
    assert_eq!(context(&fresh).await["version"], 1);
    // revocation
    server.service.revoke_token(assignment.id).await.unwrap();
    assert_eq!(fresh.request("tools/list", json!({})).await.status, 401);
    // expiry: valid until 14 days, refused at 14 days
    let (token, expires_at) = server.service.issue_token(assignment.id).await.unwrap();
    let c = server.client(&token);
    server.clock.set_millis(expires_at - 1);
    assert_eq!(c.request("tools/list", json!({})).await.status, 200);
    server.clock.set_millis(expires_at);
    assert_eq!(c.request("tools/list", json!({})).await.status, 401);
    // inactive player, inactive GM
    let (token, _) = server.service.issue_token(assignment.id).await.unwrap();
    let c = server.client(&token);
    server.clock.set_millis(expires_at - 14 * 24 * 3600 * 1000);
    assert_eq!(c.request("tools/list", json!({})).await.status, 200);
    server
        .store
        .set_user_active(world.player.id, false)
        .await
        .unwrap();
    assert_eq!(c.request("tools/list", json!({})).await.status, 401);
    server
        .store
        .set_user_active(world.player.id, true)
        .await
        .unwrap();
    assert_eq!(c.request("tools/list", json!({})).await.status, 200);
    server
        .store
        .set_user_active(world.gm.id, false)
        .await
        .unwrap();
    assert_eq!(c.request("initialize", json!({})).await.status, 401);
}

async fn a_token_is_bound_to_its_assignment(url: &str) {
    let (server, _c, _w) = setup(url).await;
    let world = support::world(&server, 2).await;
    let a = server.client(&world.assignments[0].1);
    let b = server.client(&world.assignments[1].1);
    a.tool("commit_play_turn", example_turn()).await.json();
    assert_eq!(context(&a).await["version"], 2);
    assert_eq!(context(&b).await["version"], 1);
    assert_eq!(
        context(&b).await["session_id"],
        world.assignments[1].0.id.to_string()
    );
    // the same operation id on another assignment is a different operation
    let r = b.tool("commit_play_turn", example_turn()).await.json();
    assert_eq!(r["replayed"], false);
    assert_eq!(r["session_id"], world.assignments[1].0.id.to_string());
}

async fn initialize_and_discovery(url: &str) {
    let (server, client, world) = setup(url).await;
    let init = client.initialize("2025-11-25").await;
    let result = init.result();
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "sidequest");
    assert!(
        result["instructions"]
            .as_str()
            .unwrap()
            .starts_with("You are facilitating a Sidequest play session")
    );
    assert!(result["capabilities"]["tools"].is_object());
    // with an id it is a request, and no such request method exists
    let r = client
        .request("notifications/initialized", Value::Null)
        .await;
    assert_eq!(r.body["error"]["code"], -32601);
    let n = client
        .post_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    assert_eq!(n.status, 202);
    let tools = client.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "get_play_context",
            "read_play_journal",
            "search_play_memory",
            "commit_play_turn",
            "finish_play_session"
        ]
    );
    for t in tools.result()["tools"].as_array().unwrap() {
        assert_eq!(
            t["inputSchema"]["additionalProperties"], false,
            "{}",
            t["name"]
        );
        assert!(t["description"].as_str().unwrap().len() > 40);
    }
    // a Polish assignment gets Polish instructions
    let mut a = world.assignments[0].0.clone();
    a.id = Uuid::new_v4();
    a.language = sidequest::domain::Language::Pl;
    server.store.create_assignment(&a).await.unwrap();
    let (token, _) = server.service.issue_token(a.id).await.unwrap();
    let pl = server.client(&token);
    assert!(
        pl.initialize("2025-06-18").await.result()["instructions"]
            .as_str()
            .unwrap()
            .starts_with("Prowadzisz sesję gry Sidequest")
    );
    assert!(
        context(&pl).await["agent_contract"]
            .as_str()
            .unwrap()
            .contains("Nigdy nie wymyślaj decyzji MG")
    );
    // GET and DELETE are 405 with a play token, and 401 with the challenge without one
    let http = reqwest::Client::new();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = http
            .request(method.clone(), server.url())
            .bearer_auth(&world.assignments[0].1)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 405, "{method}");
        assert_eq!(r.headers()["allow"], "POST");
        let r = http
            .request(method.clone(), server.url())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401, "{method}");
        assert!(r.headers().contains_key("www-authenticate"), "{method}");
    }
}

async fn sixteen_concurrent_commits_one_wins(url: &str) {
    let (_server, client, _w) = setup(url).await;
    let mut tasks = Vec::new();
    for i in 0..16 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            c.tool(
                "commit_play_turn",
                turn(Uuid::new_v4(), 1, &format!("race {i}")),
            )
            .await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        let r = t.await.unwrap();
        if r.is_error() {
            assert!(
                r.text()
                    .starts_with("409: Version conflict: expected 1, current 2"),
                "{}",
                r.text()
            );
            conflicts += 1;
        } else {
            assert_eq!(r.json()["version"], 2);
            ok += 1;
        }
    }
    assert_eq!((ok, conflicts), (1, 15));
    let ctx = context(&client).await;
    assert_eq!(ctx["version"], 2);
    assert_eq!(
        client.tool("read_play_journal", json!({})).await.json()["total"],
        1
    );
}

async fn default_rate_limit_is_sixty_per_minute(url: &str) {
    let server = support::spawn_with(url, sidequest::app::ServeConfig::default(), 3).await;
    let world = support::world(&server, 2).await;
    let client = server.client(&world.assignments[0].1);
    for i in 0..60 {
        let r = if i == 0 {
            client.initialize("2025-11-25").await
        } else {
            client.request("ping", json!({})).await
        };
        assert_eq!(r.status, 200, "request {i}");
    }
    let r = client.request("tools/list", json!({})).await;
    assert_eq!(r.status, 429);
    let retry: u64 = r.header("retry-after").parse().unwrap();
    assert!((1..=60).contains(&retry));
    // notifications count too, and another token is unaffected
    let other = server.client(&world.assignments[1].1);
    assert_eq!(
        other
            .post_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await
            .status,
        202
    );
    // sixty seconds later the window has moved
    server.clock.advance_millis(60_000);
    assert_eq!(client.request("ping", json!({})).await.status, 200);
}

crate::on_both_backends!(
    contract_examples,
    replay_after_later_turn_and_review,
    conflicts_write_nothing,
    limits_at_the_bound_and_one_past,
    scenes_must_be_published_scenes,
    gm_material_never_reaches_the_player,
    journal_paging_and_search,
    auto_approve_creates_approved_consequences,
    tokens_and_accounts,
    a_token_is_bound_to_its_assignment,
    initialize_and_discovery,
    sixteen_concurrent_commits_one_wins,
    default_rate_limit_is_sixty_per_minute,
);
