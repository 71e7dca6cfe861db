//! The REST API end to end over a real listener. This module owns what every area shares: the
//! browser client (session cookie, CSRF token, local address), users with cheap password hashes
//! and the demo world; each child module owns one area of the API and its tests.

mod access;
mod authoring;
mod creation;
mod envelope;
mod reports;
mod review;
mod sessions;
mod throttle;
mod tokens;

use std::net::IpAddr;

use reqwest::Method;
use serde_json::{Value, json};
use sidequest::domain::User;
use sidequest::store::NewUser;
use uuid::Uuid;

use crate::support::{self, Server};

// ---------------------------------------------------------------- client helpers

/// One HTTP answer.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: reqwest::header::HeaderMap,
    text: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.text))
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// Asserts the status, showing the body when it differs.
    #[track_caller]
    fn expect(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "body: {}", self.text);
        self
    }

    /// Asserts a 422 naming exactly these fields.
    #[track_caller]
    fn expect_fields(&self, fields: &[&str]) {
        self.expect(422);
        let body = self.json();
        assert_eq!(body["error"], "invalid_fields", "{body}");
        let mut got: Vec<String> = body["fields"]
            .as_object()
            .unwrap_or_else(|| panic!("no fields in {body}"))
            .keys()
            .cloned()
            .collect();
        got.sort();
        let mut want: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(got, want, "{body}");
    }
}

/// A browser: an optional session cookie and CSRF token, from one local address.
#[derive(Clone)]
struct Browser {
    base: String,
    http: reqwest::Client,
    cookie: Option<String>,
    csrf: Option<String>,
}

impl Browser {
    fn new(server: &Server) -> Self {
        Self::from_ip(server, "127.0.0.1")
    }

    /// A browser whose connections come from `ip` (any 127/8 address is the loopback).
    fn from_ip(server: &Server, ip: &str) -> Self {
        let ip: IpAddr = ip.parse().unwrap();
        Self {
            base: format!("http://{}", server.addr),
            http: reqwest::Client::builder()
                .local_address(ip)
                .build()
                .unwrap(),
            cookie: None,
            csrf: None,
        }
    }

    async fn send(&self, method: Method, path: &str, body: Option<&Value>, csrf: bool) -> Resp {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            req = req.header("cookie", format!("sq_session={c}"));
        }
        if let (true, Some(t)) = (csrf, &self.csrf) {
            req = req.header("x-csrf-token", t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body");
        Resp {
            status,
            headers,
            text,
        }
    }

    async fn get(&self, path: &str) -> Resp {
        self.send(Method::GET, path, None, true).await
    }

    async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(Method::POST, path, Some(&body), true).await
    }

    async fn post_empty(&self, path: &str) -> Resp {
        self.send(Method::POST, path, None, true).await
    }

    async fn put(&self, path: &str, body: Value) -> Resp {
        self.send(Method::PUT, path, Some(&body), true).await
    }

    async fn delete(&self, path: &str) -> Resp {
        self.send(Method::DELETE, path, None, true).await
    }

    async fn try_login(&self, username: &str, password: &str) -> Resp {
        self.send(
            Method::POST,
            "/api/auth/login",
            Some(&json!({"username": username, "password": password})),
            false,
        )
        .await
    }

    /// Logs in (expecting success) and keeps the cookie and CSRF token.
    async fn login(mut self, username: &str) -> Self {
        let r = self.try_login(username, &password_of(username)).await;
        r.expect(200);
        self.cookie = Some(cookie_value(r.header("set-cookie")).to_owned());
        self.csrf = Some(r.json()["csrf_token"].as_str().unwrap().to_owned());
        self
    }
}

fn cookie_value(set_cookie: &str) -> &str {
    set_cookie
        .strip_prefix("sq_session=")
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no session cookie in {set_cookie:?}"))
}

pub(crate) fn password_of(username: &str) -> String {
    format!("correct horse {username}")
}

/// An argon2id hash with minimal cost (verification takes its parameters from the hash), so
/// tests stay fast; production hashes use argon2's defaults.
fn cheap_hash(password: &str) -> String {
    use argon2::{Algorithm, Argon2, Params, PasswordHasher, Version};
    let params = Params::new(8, 1, 1, None).unwrap();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_with_salt(password.as_bytes(), &[7u8; 16])
        .unwrap()
        .to_string()
}

async fn make_user(server: &Server, username: &str, gm: bool) -> User {
    server
        .store
        .create_user(&NewUser {
            id: Uuid::new_v4(),
            username: username.into(),
            display_name: format!("{username} (display)"),
            password_hash: Some(cheap_hash(&password_of(username))),
            is_gm: gm,
            created_at: 0,
        })
        .await
        .unwrap()
}

// ---------------------------------------------------------------- world

/// The demo GM (`gm`) and player (`player`) with passwords, the demo scenario (published v1:
/// scenes harbor and lighthouse, npc mira, unpublished scene vault), another GM (`rival`)
/// and a second player (`gone`, to be deactivated).
pub(crate) struct World {
    pub(crate) server: Server,
    pub(crate) scenario: Uuid,
    pub(crate) gm: User,
    pub(crate) player: User,
}

pub(crate) async fn world(url: &str) -> World {
    let server = support::spawn(url).await;
    let demo = support::world(&server, 0).await;
    for u in [&demo.gm, &demo.player] {
        server
            .store
            .set_password_hash(u.id, Some(&cheap_hash(&password_of(&u.username))))
            .await
            .unwrap();
    }
    make_user(&server, "rival", true).await;
    make_user(&server, "gone", false).await;
    World {
        scenario: demo.scenario_id,
        gm: demo.gm,
        player: demo.player,
        server,
    }
}

pub(crate) const GM_SECRET: &str = "GM-SECRET: Mira's brother sails with the smugglers.";

fn creation(id: Uuid, scenario: Uuid) -> Value {
    json!({
        "id": id,
        "scenario_id": scenario,
        "source_version": 1,
        "player_username": "player",
        "mode": "solo",
        "language": "en",
        "character": "Arin",
        "brief": "Explore the harbor before dawn.",
        "instructions": "Keep it quiet and eerie.",
        "boundaries": "No deaths; stay out of the vault.",
        "return_condition": "Arin rejoins the party at dawn.",
        "gm_notes": GM_SECRET,
        "published_node_ids": ["harbor", "lighthouse", "mira"],
        "auto_approve": false,
    })
}

/// Creates an assignment through REST and gives its id.
async fn create_assignment(gm: &Browser, scenario: Uuid) -> Uuid {
    let id = Uuid::new_v4();
    gm.post("/api/plays/", creation(id, scenario))
        .await
        .expect(201);
    id
}

fn play(id: Uuid, suffix: &str) -> String {
    format!("/api/plays/{id}/{suffix}")
}

/// A play token through REST.
async fn token(who: &Browser, id: Uuid) -> String {
    let r = who.post_empty(&play(id, "access/")).await;
    r.expect(201);
    r.json()["token"].as_str().unwrap().to_owned()
}

/// Commits one turn through the player door with `n` consequences; gives their ids.
pub(crate) async fn turn(
    server: &Server,
    token: &str,
    version: i64,
    n: usize,
    text: &str,
) -> Vec<Uuid> {
    let args = json!({
        "operation_id": Uuid::new_v4(),
        "expected_version": version,
        "player_action": format!("I act: {text}"),
        "narration": format!("It happens: {text}"),
        "memory_markdown": format!("memory after {text}"),
        "current_scene": "harbor",
        "consequences": (0..n).map(|i| json!({"category": "discovery", "description": format!("{text} finding {i}")})).collect::<Vec<_>>(),
    });
    let out = server
        .client(token)
        .tool("commit_play_turn", args)
        .await
        .json();
    assert_eq!(out["version"], version + 1);
    out["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().parse().unwrap())
        .collect()
}

async fn version_of(who: &Browser, id: Uuid) -> i64 {
    who.get(&play(id, "")).await.json()["version"]
        .as_i64()
        .unwrap()
}
