//! Snapshots of Sidequest's wire surface: `tools/list` and `initialize` of the player door
//! (`/play/mcp`) and the author door (`/mcp`), the JSON-RPC errors and 401 refusals of both
//! doors (with `WWW-Authenticate`), the tool-level errors (`409:`, `404:`, `422:` texts with
//! `isError: true`) and the REST API's error body. A change of surface shows up in review as a
//! changed `.snap` file under `snapshots/`; the behaviour modules keep the detailed asserts.
//!
//! SQLite only: the backend does not change any of these answers (the behaviour modules run
//! every case on both). The server listens on a port-0 listener, so its address is replaced
//! by `[addr]`; ids are UUIDs (from the seeded random source, but redacted anyway so a change of
//! seed or of call order does not move a snapshot) and replaced by `[uuid]`; the clock is the
//! harness's fake one.

use reqwest::Method;
use serde_json::{Value, json};
use testkit::mcp::{Client, Reply};

use crate::support::{self, Server};

/// What a client sees of one MCP exchange: status, `WWW-Authenticate`/`Retry-After` when set,
/// and the body, with the server's address and every UUID redacted.
fn seen(server: &Server, reply: &Reply) -> Value {
    let mut out = json!({"status": reply.status});
    for name in ["www-authenticate", "retry-after", "allow"] {
        let value = reply.header(name);
        if !value.is_empty() {
            out[name] = json!(value);
        }
    }
    out["body"] = reply.body.clone();
    redact(server, out)
}

/// Replaces the listener's address with `[addr]` and every UUID with `[uuid]`.
fn redact(server: &Server, value: Value) -> Value {
    testkit::snapshot::redact(value, &[(&server.addr.to_string(), "[addr]")])
}

/// A server on a fresh SQLite file with the demo world (one assignment).
async fn demo() -> (testkit::db::TempDir, Server, sidequest::demo::DemoCreated) {
    let (dir, url) = support::fresh_url(&support::Backend::Sqlite)
        .await
        .expect("sqlite");
    let server = support::spawn(&url).await;
    let world = support::world(&server, 1).await;
    (dir.expect("a SQLite directory"), server, world)
}

/// The demo world's player client and its GM's author client.
async fn doors(server: &Server, world: &sidequest::demo::DemoCreated) -> (Client, Client) {
    let issued = sidequest::campaign::CampaignService::new(server.service.clone())
        .create_author_token(&world.gm, "snapshots")
        .await
        .unwrap();
    let author = Client::new(format!("http://{}/mcp", server.addr), Some(issued.token));
    (server.client(&world.assignments[0].1), author)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_and_initialize_per_door() {
    let (_dir, server, world) = demo().await;
    let (player, author) = doors(&server, &world).await;
    for (door, client) in [("player", &player), ("author", &author)] {
        let list = client.request("tools/list", json!({})).await;
        insta::assert_json_snapshot!(
            format!("tools_list_{door}"),
            redact(&server, list.result().clone())
        );
        let init = client.initialize("2025-11-25").await;
        insta::assert_json_snapshot!(
            format!("initialize_{door}"),
            redact(&server, init.result().clone())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_errors_and_refusals() {
    let (_dir, server, world) = demo().await;
    let (player, author) = doors(&server, &world).await;
    let anonymous = server.anonymous();
    let unknown_token = Client::new(
        format!("http://{}/mcp", server.addr),
        Some("sqa_0123456789abcdef0123456789abcdef01234567".into()),
    );
    let play_token_at_author_door = Client::new(
        format!("http://{}/mcp", server.addr),
        Some(world.assignments[0].1.clone()),
    );
    let errors = json!({
        "parse_error": seen(&server, &player.post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#).await),
        "invalid_request_batch": seen(&server, &player.post_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await),
        "method_not_found": seen(&server, &player.request("no/such/method", json!({})).await),
        "invalid_params_unknown_tool": seen(&server, &player.tool("nope", json!({})).await),
        "author_tool_at_player_door": seen(&server, &player.tool("list_scenarios", json!({})).await),
        "player_door_no_token_401": seen(&server, &anonymous.request("tools/list", json!({})).await),
        "author_door_unknown_token_401": seen(&server, &unknown_token.request("tools/list", json!({})).await),
        "author_door_play_token_401": seen(&server, &play_token_at_author_door.request("tools/list", json!({})).await),
    });
    insta::assert_json_snapshot!("jsonrpc_errors", errors);
    // the author door frames errors the same way
    let author_parse = author
        .post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#)
        .await;
    assert_eq!(
        seen(&server, &author_parse),
        errors["parse_error"],
        "both doors share the framing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_level_errors() {
    let (_dir, server, world) = demo().await;
    let (player, author) = doors(&server, &world).await;
    let turn = |version: i64, scene: &str| {
        json!({
            "operation_id": "10000000-0000-4000-8000-000000000001",
            "expected_version": version,
            "player_action": "I help Mira search the pier.",
            "narration": "You find a torn page.",
            "memory_markdown": "# Current state\nAt the harbor.",
            "current_scene": scene,
            "consequences": []
        })
    };
    let errors = json!({
        "409_version_conflict": seen(&server, &player.tool("commit_play_turn", turn(99, "harbor")).await),
        "422_invalid_arguments": seen(&server, &player.tool("commit_play_turn", json!({"expected_version": "one"})).await),
        "422_unpublished_scene": seen(&server, &player.tool("commit_play_turn", turn(1, "vault")).await),
        "404_not_found": seen(&server, &author.tool("get_scenario", json!({"scenario_id": "20000000-0000-4000-8000-000000000002"})).await),
    });
    for case in errors.as_object().unwrap().values() {
        assert_eq!(case["body"]["result"]["isError"], true, "{case}");
    }
    insta::assert_json_snapshot!("tool_errors", errors);
}

/// A browser session of the demo GM: (client, cookie, CSRF token).
async fn gm_session(
    server: &Server,
    world: &sidequest::demo::DemoCreated,
) -> (reqwest::Client, String, String) {
    use argon2::{Algorithm, Argon2, Params, PasswordHasher, Version};
    // minimal cost, as in the REST tests: verification takes its parameters from the hash
    let hash = Argon2::new(
        Algorithm::Argon2id,
        Version::V0x13,
        Params::new(8, 1, 1, None).unwrap(),
    )
    .hash_password_with_salt(b"correct horse gm", &[7u8; 16])
    .unwrap()
    .to_string();
    server
        .store
        .set_password_hash(world.gm.id, Some(&hash))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let r = http
        .post(format!("http://{}/api/auth/login", server.addr))
        .json(&json!({"username": world.gm.username, "password": "correct horse gm"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap()
        .to_owned();
    let csrf = r.json::<Value>().await.unwrap()["csrf_token"]
        .as_str()
        .unwrap()
        .to_owned();
    (http, cookie, csrf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_error_bodies() {
    let (_dir, server, world) = demo().await;
    let (http, cookie, csrf) = gm_session(&server, &world).await;
    let base = format!("http://{}", server.addr);
    let send = |method: Method, path: &str, session: bool, with_csrf: bool, body: Option<&str>| {
        let mut req = http.request(method, format!("{base}{path}"));
        if session {
            req = req.header("cookie", &cookie);
        }
        if with_csrf {
            req = req.header("x-csrf-token", &csrf);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        async move {
            let r = req.send().await.unwrap();
            let mut out = json!({"status": r.status().as_u16()});
            for name in ["www-authenticate", "allow", "retry-after"] {
                if let Some(v) = r.headers().get(name).and_then(|v| v.to_str().ok()) {
                    out[name] = json!(v);
                }
            }
            let text = r.text().await.unwrap();
            out["body"] = serde_json::from_str(&text).unwrap_or(Value::String(text));
            out
        }
    };
    let errors = json!({
        "401_no_session": send(Method::GET, "/api/plays/", false, false, None).await,
        "403_no_csrf": send(Method::POST, "/api/scenarios/", true, false, Some(r#"{"title":"x"}"#)).await,
        "404_unknown_route": send(Method::GET, "/api/nothing-here", true, true, None).await,
        "405_method": send(Method::PATCH, "/api/plays/", true, true, Some("{}")).await,
        "400_malformed_json": send(Method::POST, "/api/scenarios/", true, true, Some(r#"{"title":"#)).await,
        "422_invalid_fields": send(Method::POST, "/api/scenarios/", true, true, Some(r#"{"title":""}"#)).await,
        "401_bad_login": send(Method::POST, "/api/auth/login", false, false, Some(r#"{"username":"gm","password":"wrong"}"#)).await,
    });
    insta::assert_json_snapshot!("rest_errors", redact(&server, errors));
}
