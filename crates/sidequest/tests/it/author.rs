//! The author door `/mcp` end to end over a real listener: author tokens and their separation
//! from play tokens, the private wiki (isolation and optimistic concurrency), scenario
//! authoring, GM review with the REST rules, and admission shared with `/play/mcp`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use mcp_door::{Admission, AdmissionError, Clock, DoorConfig, FakeClock, Limits, Permit};
use serde_json::{Value, json};
use sidequest::app::{self, AppState, ServeConfig};
use sidequest::campaign::CampaignService;
use sidequest::demo::{self, DemoCreated};
use sidequest::domain::{User, token};
use sidequest::service::PlayService;
use sidequest::store::{self, NewAuthorToken};
use testkit::mcp::{Client, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use uuid::Uuid;

use crate::support::{self, CountingRandom, Server};

fn campaign(service: &Arc<PlayService>) -> CampaignService {
    CampaignService::new(Arc::clone(service))
}

fn author_client(addr: SocketAddr, token: &str) -> Client {
    Client::new(format!("http://{addr}/mcp"), Some(token.to_owned()))
}

/// A new author token of `user` (id, plaintext).
async fn author_token(service: &Arc<PlayService>, user: &User) -> (Uuid, String) {
    let issued = campaign(service)
        .create_author_token(user, "test")
        .await
        .unwrap();
    assert_eq!(issued["mcp_path"], "/mcp");
    (
        issued["id"].as_str().unwrap().parse().unwrap(),
        issued["token"].as_str().unwrap().to_owned(),
    )
}

async fn new_user(server: &Server, username: &str, is_gm: bool) -> User {
    demo::create_user(
        &server.store,
        &server.clock,
        server.service.random.as_ref(),
        username,
        is_gm,
        None,
    )
    .await
    .unwrap()
}

/// A server, the demo world and an author client of its GM.
pub(crate) async fn setup(url: &str) -> (Server, DemoCreated, Client) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 1).await;
    let (_, token) = author_token(&server.service, &world.gm).await;
    let client = author_client(server.addr, &token);
    (server, world, client)
}

fn assert_status(reply: &Reply, prefix: &str) {
    assert!(reply.is_error(), "expected isError, got {}", reply.body);
    let text = reply.text();
    assert!(
        text.starts_with(prefix),
        "expected text starting {prefix:?}, got {text:?}"
    );
}

fn assert_unauthorized(reply: &Reply) {
    assert_eq!(reply.status, 401, "body {}", reply.body);
    assert!(
        reply.header("www-authenticate").starts_with("Bearer"),
        "{:?}",
        reply.header("www-authenticate")
    );
}

fn names(tools: &Reply) -> Vec<String> {
    tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn tokens_are_separated(url: &str) {
    let (server, world, gm) = setup(url).await;
    let play_token = &world.assignments[0].1;
    assert_eq!(gm.request("tools/list", json!({})).await.status, 200);
    let author_plaintext = gm.token.clone().unwrap();

    // an author token at the player door, a play token here, no token, an unknown token
    let at_play_door = server.client(&author_plaintext);
    let play_here = author_client(server.addr, play_token);
    let anonymous = Client::new(format!("http://{}/mcp", server.addr), None);
    let unknown = author_client(server.addr, "sqa_0123456789abcdef0123456789abcdef01234567");
    for c in [&at_play_door, &play_here, &anonymous, &unknown] {
        for (method, params) in [
            ("initialize", json!({"protocolVersion": "2025-11-25"})),
            ("tools/list", json!({})),
            (
                "tools/call",
                json!({"name": "wiki_list_pages", "arguments": {}}),
            ),
            (
                "tools/call",
                json!({"name": "get_play_context", "arguments": {}}),
            ),
        ] {
            assert_unauthorized(&c.request(method, params).await);
        }
    }
    // both still work at their own doors
    assert_eq!(
        server
            .client(play_token)
            .request("tools/list", json!({}))
            .await
            .status,
        200
    );
    assert_eq!(gm.request("tools/list", json!({})).await.status, 200);

    // a player cannot get an author token, and one stored for a non-GM is refused
    let refused = campaign(&server.service)
        .create_author_token(&world.player, "mine")
        .await
        .unwrap_err();
    assert_eq!(refused.status(), 403);
    let forged = token::format_author_token([7; 20]);
    server
        .store
        .create_author_token(&NewAuthorToken {
            id: Uuid::new_v4(),
            user_id: world.player.id,
            name: "forged".into(),
            digest: token::digest(&forged),
            created_at: server.clock.now_millis(),
            expires_at: server.clock.now_millis() + token::AUTHOR_TOKEN_TTL_MS,
        })
        .await
        .unwrap();
    assert_unauthorized(
        &author_client(server.addr, &forged)
            .request("tools/list", json!({}))
            .await,
    );

    // revocation by the owner: at once, and only that token
    let (id, second) = author_token(&server.service, &world.gm).await;
    let second = author_client(server.addr, &second);
    assert_eq!(second.request("ping", json!({})).await.status, 200);
    let revoked = campaign(&server.service)
        .revoke_author_token(&world.gm, id)
        .await
        .unwrap();
    assert_eq!(revoked["revoked"], id.to_string());
    assert_unauthorized(&second.request("ping", json!({})).await);
    assert_eq!(gm.request("ping", json!({})).await.status, 200);
    // another GM cannot revoke it
    let other = new_user(&server, "gm2", true).await;
    let (id, _) = author_token(&server.service, &world.gm).await;
    assert_eq!(
        campaign(&server.service)
            .revoke_author_token(&other, id)
            .await
            .unwrap_err()
            .status(),
        404
    );

    // an inactive GM loses the door, and gets it back when reactivated
    server
        .store
        .set_user_active(world.gm.id, false)
        .await
        .unwrap();
    assert_unauthorized(&gm.request("tools/list", json!({})).await);
    server
        .store
        .set_user_active(world.gm.id, true)
        .await
        .unwrap();
    assert_eq!(gm.request("tools/list", json!({})).await.status, 200);

    // expiry: valid until 90 days, refused at 90 days
    let (_, token) = author_token(&server.service, &world.gm).await;
    let fresh = author_client(server.addr, &token);
    let expires_at = server.clock.now_millis() + token::AUTHOR_TOKEN_TTL_MS;
    server.clock.set_millis(expires_at - 1);
    assert_eq!(fresh.request("tools/list", json!({})).await.status, 200);
    server.clock.set_millis(expires_at);
    assert_unauthorized(&fresh.request("tools/list", json!({})).await);
}

const AUTHOR_TOOLS: [&str; 16] = [
    "list_scenarios",
    "get_scenario",
    "create_scenario",
    "put_node",
    "delete_node",
    "publish_scenario",
    "list_assignments",
    "get_assignment",
    "read_assignment_journal",
    "list_pending_consequences",
    "review_consequences",
    "wiki_list_pages",
    "wiki_read_page",
    "wiki_write_page",
    "wiki_search",
    "wiki_page_history",
];

async fn initialize_and_catalog(url: &str) {
    let (server, world, gm) = setup(url).await;
    let init = gm.initialize("2025-11-25").await;
    let result = init.result();
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "sidequest-author");
    assert!(
        result["serverInfo"]["version"]
            .as_str()
            .unwrap()
            .contains("+tools.")
    );
    let instructions = result["instructions"].as_str().unwrap();
    assert!(instructions.contains("Review decisions are final"));
    assert!(instructions.contains("private to this GM"));

    let tools = gm.request("tools/list", json!({})).await;
    assert_eq!(names(&tools), AUTHOR_TOOLS);
    for t in tools.result()["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(t["inputSchema"]["additionalProperties"], false, "{name}");
        assert!(t["description"].as_str().unwrap().len() > 60, "{name}");
        let a = &t["annotations"];
        let reads = name.starts_with("list_")
            || name.starts_with("get_")
            || name.starts_with("read_")
            || [
                "wiki_list_pages",
                "wiki_read_page",
                "wiki_search",
                "wiki_page_history",
            ]
            .contains(&name);
        assert_eq!(a["readOnlyHint"], reads, "{name}");
        assert_eq!(a["destructiveHint"], name == "delete_node", "{name}");
        if reads {
            assert_eq!(a["idempotentHint"], true, "{name}");
        }
    }

    // the player door: no wiki tool, no author tool
    let player = server.client(&world.assignments[0].1);
    let player_tools = names(&player.request("tools/list", json!({})).await);
    assert_eq!(player_tools.len(), 5);
    for name in &player_tools {
        assert!(!name.contains("wiki"), "{name}");
        assert!(!AUTHOR_TOOLS.contains(&name.as_str()), "{name}");
    }
    // an author tool called at the player door is unknown there
    let r = player.tool("wiki_list_pages", json!({})).await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
}

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

fn review(op: &str, expected: i64, assignment: Uuid, decisions: Value) -> Value {
    json!({"operation_id": op, "expected_version": expected, "assignment_id": assignment.to_string(), "decisions": decisions})
}

async fn review_through_the_door(url: &str) {
    let (server, world, gm) = setup(url).await;
    let assignment = world.assignments[0].0.id;
    let player = server.client(&world.assignments[0].1);
    let turn = player
        .tool(
            "commit_play_turn",
            json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 1,
            "player_action": "I help Mira.", "narration": "You find a torn page.",
            "memory_markdown": "Helped Mira.", "current_scene": "harbor",
            "consequences": [
                {"category": "relationship", "description": "Mira may become a contact."},
                {"category": "discovery", "description": "A torn page from the keeper's journal."}
            ]}),
        )
        .await
        .json();
    let c0 = turn["consequences"][0]["id"].as_str().unwrap().to_owned();
    let c1 = turn["consequences"][1]["id"].as_str().unwrap().to_owned();

    // what is waiting
    let pending = gm.tool("list_pending_consequences", json!({})).await.json();
    let groups = pending["assignments"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["assignment_id"], assignment.to_string());
    assert_eq!(groups[0]["version"], 2);
    assert_eq!(groups[0]["pending"].as_array().unwrap().len(), 2);
    let a = gm
        .tool("get_assignment", json!({"assignment_id": assignment}))
        .await
        .json();
    assert_eq!(a["pending_consequences"], 2);
    assert_eq!(a["role"], "gm");
    assert_eq!(a["gm_notes"], world.assignments[0].0.gm_notes);
    assert_eq!(a["consequences"].as_array().unwrap().len(), 2);
    assert_eq!(a["consequences"][0]["status"], "pending");
    let list = gm.tool("list_assignments", json!({})).await.json();
    assert_eq!(list["items"][0]["id"], assignment.to_string());
    let journal = gm
        .tool(
            "read_assignment_journal",
            json!({"assignment_id": assignment}),
        )
        .await
        .json();
    assert_eq!(journal["total"], 1);
    assert_eq!(journal["entries"][0]["narration"], "You find a torn page.");

    // argument rules
    let d = |id: &str| json!({"id": id, "decision": "approved"});
    let op = "30000000-0000-4000-8000-000000000001";
    for (bad, prefix) in [
        (
            review(op, 2, assignment, json!([])),
            "422: Invalid arguments: /decisions",
        ),
        (
            review(op, 2, assignment, json!(vec![d(&c0); 21])),
            "422: Invalid arguments: /decisions",
        ),
        (
            review(op, 2, assignment, json!([{"id": c0, "decision": "maybe"}])),
            "422: Invalid arguments: /decisions/0/decision",
        ),
        (
            review(
                op,
                2,
                assignment,
                json!([{"id": c0, "decision": "approved", "note": "n".repeat(2001)}]),
            ),
            "422: Invalid arguments: /decisions/0/note",
        ),
        (
            review(
                op,
                2,
                assignment,
                json!([{"id": c0, "decision": "approved", "status": "x"}]),
            ),
            "422: Invalid arguments: /decisions/0",
        ),
        (
            review(op, 0, assignment, json!([d(&c0)])),
            "422: Invalid arguments: /expected_version",
        ),
        (
            review(op, 2, assignment, json!([d(&c0), d(&c0)])),
            "422: Invalid arguments: /decisions/1/id",
        ),
        (
            review(op, 2, assignment, json!([d(&Uuid::new_v4().to_string())])),
            "422: Invalid arguments: /decisions/0/id",
        ),
    ] {
        assert_status(&gm.tool("review_consequences", bad).await, prefix);
    }
    // a stale version writes nothing
    assert_status(
        &gm.tool(
            "review_consequences",
            review(op, 1, assignment, json!([d(&c0)])),
        )
        .await,
        "409: Version conflict: expected 1, current 2. Call get_assignment",
    );

    let note = "Fits the main session; Mira remembers Arin's help.";
    let first = review(
        op,
        2,
        assignment,
        json!([{"id": c0, "decision": "approved", "note": note}]),
    );
    let r = gm.tool("review_consequences", first.clone()).await.json();
    assert_eq!(r["version"], 3);
    assert_eq!(r["replayed"], false);
    assert_eq!(r["decisions"][0]["status"], "approved");
    // an identical retry replays the receipt; the same id with other arguments conflicts
    let again = gm.tool("review_consequences", first).await.json();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["version"], 3);
    assert_status(
        &gm.tool(
            "review_consequences",
            review(op, 2, assignment, json!([d(&c1)])),
        )
        .await,
        &format!("409: Operation {op} was already used with different arguments."),
    );
    // a decided consequence cannot be decided again
    assert_status(
        &gm.tool(
            "review_consequences",
            review(
                "30000000-0000-4000-8000-000000000002",
                3,
                assignment,
                json!([{"id": c0, "decision": "rejected"}]),
            ),
        )
        .await,
        &format!("409: Consequence {c0} is already decided."),
    );
    let r = gm
        .tool(
            "review_consequences",
            review(
                "30000000-0000-4000-8000-000000000003",
                3,
                assignment,
                json!([{"id": c1, "decision": "rejected"}]),
            ),
        )
        .await
        .json();
    assert_eq!(r["version"], 4);
    assert_eq!(
        gm.tool("list_pending_consequences", json!({})).await.json(),
        json!({"assignments": []})
    );

    // the player sees the decisions and the note
    let ctx = player.tool("get_play_context", json!({})).await.json();
    assert_eq!(ctx["version"], 4);
    let by_id = |id: &str| {
        ctx["consequences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id(&c0)["status"], "approved");
    assert_eq!(by_id(&c0)["gm_note"], note);
    assert_eq!(by_id(&c1)["status"], "rejected");

    // another GM cannot read or review it; unknown assignments are 404
    let gm2 = new_user(&server, "gm2", true).await;
    let (_, t2) = author_token(&server.service, &gm2).await;
    let other = author_client(server.addr, &t2);
    assert_status(
        &other
            .tool("get_assignment", json!({"assignment_id": assignment}))
            .await,
        "404: Not found",
    );
    assert_status(
        &other
            .tool(
                "review_consequences",
                review(
                    "30000000-0000-4000-8000-000000000004",
                    4,
                    assignment,
                    json!([d(&c1)]),
                ),
            )
            .await,
        "404: Not found",
    );
    assert_eq!(
        other.tool("list_assignments", json!({})).await.json(),
        json!({"items": []})
    );
    assert_status(
        &gm.tool("get_assignment", json!({"assignment_id": Uuid::new_v4()}))
            .await,
        "404: Not found",
    );
}

async fn per_token_limits_apply_to_author_tokens(url: &str) {
    let server = support::spawn_with(
        url,
        ServeConfig {
            limits: Limits {
                rate_per_window: 3,
                ..Limits::default()
            },
            ..ServeConfig::default()
        },
        5,
    )
    .await;
    let world = support::world(&server, 1).await;
    let (_, token) = author_token(&server.service, &world.gm).await;
    let gm = author_client(server.addr, &token);
    for i in 0..3 {
        assert_eq!(
            gm.request("ping", json!({})).await.status,
            200,
            "request {i}"
        );
    }
    let r = gm.request("tools/list", json!({})).await;
    assert_eq!(r.status, 429, "{}", r.body);
    let retry: u64 = r.header("retry-after").parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // another author token and a play token have their own budgets
    let (_, second) = author_token(&server.service, &world.gm).await;
    assert_eq!(
        author_client(server.addr, &second)
            .request("ping", json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        server
            .client(&world.assignments[0].1)
            .request("ping", json!({}))
            .await
            .status,
        200
    );
    server.clock.advance_millis(60_000);
    assert_eq!(gm.request("ping", json!({})).await.status, 200);
}

/// The shared admission, counting the requests it holds admitted, so a test can wait for
/// them without racing them.
struct Counting {
    inner: Arc<dyn Admission>,
    in_flight: Arc<AtomicI64>,
}

#[async_trait]
impl Admission for Counting {
    async fn admit(&self, credential: &str) -> Result<Permit, AdmissionError> {
        let permit = self.inner.admit(credential).await?;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let count = Arc::clone(&self.in_flight);
        Ok(Permit::new(move || {
            drop(permit);
            count.fetch_sub(1, Ordering::SeqCst);
        }))
    }
}

/// A server whose admission is wrapped in [`Counting`].
struct GateServer {
    addr: SocketAddr,
    in_flight: Arc<AtomicI64>,
    world: DemoCreated,
    author_tokens: [String; 2],
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl GateServer {
    async fn start(url: &str, config: ServeConfig) -> Self {
        let store = store::connect(url, &config.db).await.unwrap();
        store.migrate().await.unwrap();
        let clock = FakeClock::new(1_767_225_600_000);
        let mut state = AppState::new(
            store,
            &config,
            Arc::new(clock),
            Arc::new(CountingRandom::new(9)),
        )
        .await
        .unwrap();
        let in_flight = Arc::new(AtomicI64::new(0));
        state.admission = Arc::new(Counting {
            inner: Arc::clone(&state.admission),
            in_flight: Arc::clone(&in_flight),
        });
        let world = demo::run(&state.service, 2).await.unwrap();
        let author_tokens = [
            author_token(&state.service, &world.gm).await.1,
            author_token(&state.service, &world.gm).await.1,
        ];
        let router = app::app(state).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                router.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await;
        });
        Self {
            addr,
            in_flight,
            world,
            author_tokens,
            _shutdown: tx,
        }
    }

    async fn wait_in_flight(&self, n: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let now = self.in_flight.load(Ordering::SeqCst);
            if now == n {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "expected {n} admitted requests in flight, counted {now}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn play(&self, i: usize) -> Client {
        Client::new(
            format!("http://{}/play/mcp", self.addr),
            Some(self.world.assignments[i].1.clone()),
        )
    }

    fn author(&self, i: usize) -> Client {
        author_client(self.addr, &self.author_tokens[i])
    }
}

/// A request that passed admission and now waits for the rest of its body.
struct Held(TcpStream);

impl Held {
    async fn open(addr: SocketAddr, path: &str, token: &str) -> Self {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body.as_bytes()[..10]).await.unwrap();
        stream.flush().await.unwrap();
        Self(stream)
    }

    /// The status of the response, once the server gives up on the body.
    async fn status(mut self) -> u16 {
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), self.0.read_to_end(&mut raw))
            .await
            .expect("response in time")
            .unwrap();
        let text = String::from_utf8_lossy(&raw);
        text.split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"))
    }
}

fn assert_global_limit(reply: &Reply) {
    assert_eq!(reply.status, 429, "body {}", reply.body);
    assert_eq!(reply.header("retry-after"), "1");
    let message = reply.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("global concurrency exceeded"), "{message}");
}

async fn the_global_gate_is_shared_by_both_doors(url: &str) {
    let server = GateServer::start(
        url,
        ServeConfig {
            limits: Limits {
                rate_per_window: 1_000,
                credential_concurrency: 8,
                global_concurrency: 2,
                ..Limits::default()
            },
            door: DoorConfig {
                body_timeout: Duration::from_secs(3),
                ..DoorConfig::default()
            },
            ..ServeConfig::default()
        },
    )
    .await;
    assert_eq!(
        server.author(1).request("ping", json!({})).await.status,
        200
    );
    server.wait_in_flight(0).await;

    // one admitted request on each door fills the global gate of two
    let on_author = Held::open(server.addr, "/mcp", &server.author_tokens[0]).await;
    server.wait_in_flight(1).await;
    let on_player = Held::open(server.addr, "/play/mcp", &server.world.assignments[0].1).await;
    server.wait_in_flight(2).await;

    // every other credential is refused on either door
    assert_global_limit(&server.author(1).request("ping", json!({})).await);
    assert_global_limit(&server.play(1).request("tools/list", json!({})).await);
    assert_global_limit(&server.author(1).tool("wiki_list_pages", json!({})).await);
    assert_global_limit(&server.play(1).request("initialize", json!({})).await);
    // the refusals spent nothing
    server.wait_in_flight(2).await;

    // the held requests time out waiting for their bodies, and free the gate
    let (a, p) = tokio::join!(on_author.status(), on_player.status());
    assert_eq!((a, p), (408, 408));
    server.wait_in_flight(0).await;
    assert_eq!(
        server.author(1).request("ping", json!({})).await.status,
        200
    );
    assert_eq!(server.play(1).request("ping", json!({})).await.status, 200);
    assert!(
        !server
            .author(0)
            .tool("wiki_list_pages", json!({}))
            .await
            .is_error()
    );
}

crate::on_both_backends!(
    tokens_are_separated,
    initialize_and_catalog,
    wiki_is_private,
    wiki_optimistic_concurrency,
    authoring_through_the_door,
    review_through_the_door,
    per_token_limits_apply_to_author_tokens,
    the_global_gate_is_shared_by_both_doors,
);
