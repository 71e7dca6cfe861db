//! Who gets through the author door and what it offers: author tokens kept apart from play
//! tokens (either way), GMs only, revocation, deactivation and expiry; `initialize` and the author
//! tool catalogue.

use mcp_door::Clock;
use serde_json::json;
use sidequest::domain::token;
use sidequest::store::NewAuthorToken;
use testkit::mcp::Client;
use uuid::Uuid;

use super::{assert_unauthorized, author_client, author_token, campaign, names, new_user, setup};

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
    assert_eq!(revoked.id, id);
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

crate::on_both_backends!(tokens_are_separated, initialize_and_catalog);
