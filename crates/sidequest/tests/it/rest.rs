//! The REST API end to end over a real listener: sessions and CSRF, the access matrix of every
//! endpoint, login throttling, idempotent creation, review, tokens, reports and authoring.

use std::net::IpAddr;

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{self, Server};
use sidequest::domain::User;
use sidequest::domain::assignment::bounds;
use sidequest::store::NewUser;

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

fn password_of(username: &str) -> String {
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
struct World {
    server: Server,
    scenario: Uuid,
    gm: User,
    player: User,
}

async fn world(url: &str) -> World {
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

const GM_SECRET: &str = "GM-SECRET: Mira's brother sails with the smugglers.";

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
async fn turn(server: &Server, token: &str, version: i64, n: usize, text: &str) -> Vec<Uuid> {
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

// ---------------------------------------------------------------- access matrix

const ACTORS: [&str; 5] = ["anonymous", "gm", "player", "rival gm", "deactivated"];

/// One endpoint: statuses per actor (anonymous, GM, player, rival GM, deactivated) without and
/// with the CSRF token. Every cell is called once, in table order, without the token first.
struct Row {
    method: Method,
    path: String,
    body: Option<Value>,
    without_csrf: [u16; 5],
    with_csrf: [u16; 5],
}

fn row(
    method: Method,
    path: String,
    body: Option<Value>,
    without_csrf: [u16; 5],
    with_csrf: [u16; 5],
) -> Row {
    Row {
        method,
        path,
        body,
        without_csrf,
        with_csrf,
    }
}

async fn access_matrix(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let player = Browser::new(s).login("player").await;
    let rival = Browser::new(s).login("rival").await;
    let gone = Browser::new(s).login("gone").await;
    gone.get("/api/auth/me").await.expect(200);
    let gone_user = s.store.user_by_username("gone").await.unwrap().unwrap();
    s.store.set_user_active(gone_user.id, false).await.unwrap();
    let anon = Browser::new(s);
    // every actor presents a CSRF token when the cell says so; anonymous has none to send
    let actors = [&anon, &gm, &player, &rival, &gone];

    let a = create_assignment(&gm, w.scenario).await;
    let t = token(&gm, a).await;
    let ids = turn(s, &t, 1, 2, "matrix").await;
    let review = json!({"operation_id": Uuid::new_v4(), "expected_version": 2, "decisions": [{"id": ids[0], "decision": "approved", "note": "ok"}]});
    let new_play = creation(Uuid::new_v4(), w.scenario);
    let author_token = gm
        .post("/api/author-tokens/", json!({"name": "matrix"}))
        .await
        .json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let unknown = Uuid::new_v4();
    let sc = w.scenario;
    let node = json!({"kind": "note", "title": "Matrix", "public_text": "p", "gm_text": "g"});

    use Method as M;
    #[rustfmt::skip]
    let table = vec![
        //  method      path                                            body                    without CSRF: anon gm player rival gone  /  with CSRF
        row(M::GET,    "/api/auth/me".into(),                            None,                  [401, 200, 200, 200, 401], [401, 200, 200, 200, 401]),
        row(M::GET,    "/api/plays/".into(),                             None,                  [401, 200, 200, 200, 401], [401, 200, 200, 200, 401]),
        row(M::POST,   "/api/plays/".into(),                             Some(new_play),        [401, 403, 403, 403, 401], [401, 201, 403, 422, 401]),
        row(M::GET,    play(a, ""),                                      None,                  [401, 200, 200, 404, 401], [401, 200, 200, 404, 401]),
        row(M::GET,    play(unknown, ""),                                None,                  [401, 404, 404, 404, 401], [401, 404, 404, 404, 401]),
        row(M::GET,    play(a, "journal/?offset=0&limit=10"),            None,                  [401, 200, 200, 404, 401], [401, 200, 200, 404, 401]),
        row(M::GET,    play(a, "consequences/"),                         None,                  [401, 200, 200, 404, 401], [401, 200, 200, 404, 401]),
        row(M::GET,    play(a, "report/?lang=en"),                       None,                  [401, 200, 200, 404, 401], [401, 200, 200, 404, 401]),
        row(M::POST,   play(a, "review/"),                               Some(review),          [401, 403, 403, 403, 401], [401, 200, 403, 404, 401]),
        row(M::POST,   play(a, "access/"),                               None,                  [401, 403, 403, 403, 401], [401, 201, 201, 404, 401]),
        row(M::DELETE, play(a, "access/"),                               None,                  [401, 403, 403, 403, 401], [401, 200, 200, 404, 401]),
        row(M::GET,    "/api/scenarios/".into(),                         None,                  [401, 200, 403, 200, 401], [401, 200, 403, 200, 401]),
        row(M::POST,   "/api/scenarios/".into(),                         Some(json!({"title": "New"})), [401, 403, 403, 403, 401], [401, 201, 403, 201, 401]),
        row(M::GET,    format!("/api/scenarios/{sc}/"),                  None,                  [401, 200, 403, 404, 401], [401, 200, 403, 404, 401]),
        row(M::PUT,    format!("/api/scenarios/{sc}/nodes/matrix/"),     Some(node),            [401, 403, 403, 403, 401], [401, 200, 403, 404, 401]),
        row(M::DELETE, format!("/api/scenarios/{sc}/nodes/matrix/"),     None,                  [401, 403, 403, 403, 401], [401, 200, 403, 404, 401]),
        row(M::POST,   format!("/api/scenarios/{sc}/publish/"),          None,                  [401, 403, 403, 403, 401], [401, 200, 403, 404, 401]),
        row(M::GET,    "/api/author-tokens/".into(),                     None,                  [401, 200, 200, 200, 401], [401, 200, 200, 200, 401]),
        row(M::POST,   "/api/author-tokens/".into(),                     Some(json!({"name": "t"})), [401, 403, 403, 403, 401], [401, 201, 403, 201, 401]),
        row(M::DELETE, format!("/api/author-tokens/{author_token}/"),    None,                  [401, 403, 403, 403, 401], [401, 200, 404, 404, 401]),
        row(M::POST,   "/api/auth/logout".into(),                        None,                  [401, 403, 403, 403, 401], [401, 204, 204, 204, 401]),
    ];

    let mut failures = Vec::new();
    for r in &table {
        for (actor, who) in actors.iter().enumerate() {
            for (csrf, expected) in [(false, r.without_csrf[actor]), (true, r.with_csrf[actor])] {
                let got = who
                    .send(r.method.clone(), &r.path, r.body.as_ref(), csrf)
                    .await;
                if got.status != expected {
                    failures.push(format!(
                        "{} {} as {} {} CSRF: expected {expected}, got {} {}",
                        r.method,
                        r.path,
                        ACTORS[actor],
                        if csrf { "with" } else { "without" },
                        got.status,
                        got.text
                    ));
                }
                // every refusal is the JSON error shape
                if got.status >= 400 {
                    let body = got.json();
                    assert!(
                        body["error"].is_string() && body["message"].is_string(),
                        "{body}"
                    );
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "access matrix:\n{}",
        failures.join("\n")
    );
}

/// What another user may never learn: the rival's list is empty and a 404 for a real
/// assignment is byte-identical to one for an id that does not exist.
async fn never_reveal_an_assignment(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let rival = Browser::new(s).login("rival").await;
    let player = Browser::new(s).login("player").await;
    let a = create_assignment(&gm, w.scenario).await;
    assert_eq!(rival.get("/api/plays/").await.json()["items"], json!([]));
    let real = rival.get(&play(a, "")).await;
    let none = rival.get(&play(Uuid::new_v4(), "")).await;
    assert_eq!((real.status, &real.text), (none.status, &none.text));
    // a malformed id is simply not found
    rival.get("/api/plays/not-a-uuid/").await.expect(404);
    // the player sees it without GM notes; the GM with them
    let as_player = player.get(&play(a, "")).await.json();
    assert_eq!(as_player["role"], "player");
    assert!(as_player.get("gm_notes").is_none());
    assert!(!as_player.to_string().contains("GM-SECRET"));
    let as_gm = gm.get(&play(a, "")).await.json();
    assert_eq!(as_gm["gm_notes"], GM_SECRET);
    let listed = player.get("/api/plays/").await.json();
    assert_eq!(listed["items"][0]["id"], a.to_string());
    assert!(!listed.to_string().contains("GM-SECRET"));
}

// ---------------------------------------------------------------- sessions

async fn login_logout_and_sessions(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let b = Browser::new(s);
    let r = b.try_login("player", &password_of("player")).await;
    r.expect(200);
    let set_cookie = r.header("set-cookie").to_owned();
    let cookie = cookie_value(&set_cookie).to_owned();
    assert_eq!(cookie.len(), 64);
    assert!(cookie.bytes().all(|c| c.is_ascii_hexdigit()));
    for attr in [
        "; Path=/",
        "; HttpOnly",
        "; SameSite=Lax",
        "; Max-Age=604800",
    ] {
        assert!(set_cookie.contains(attr), "{set_cookie}");
    }
    assert!(!set_cookie.contains("Secure"), "plain http: {set_cookie}");
    assert_eq!(r.header("cache-control"), "no-store");
    let body = r.json();
    let csrf = body["csrf_token"].as_str().unwrap().to_owned();
    assert_eq!(csrf.len(), 64);
    assert_ne!(csrf, cookie);
    assert_eq!(body["user"]["username"], "player");
    assert_eq!(body["user"]["id"], w.player.id.to_string());
    assert_eq!(body["user"]["is_gm"], false);

    // the store keeps digests only
    let record = s
        .store
        .session(&sidequest::domain::token::digest(&cookie))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.user.id, w.player.id);
    assert_eq!(record.csrf_digest, sidequest::domain::token::digest(&csrf));
    assert!(s.store.session(&cookie).await.unwrap().is_none());

    let player = Browser {
        cookie: Some(cookie.clone()),
        csrf: Some(csrf.clone()),
        ..b.clone()
    };
    let me = player.get("/api/auth/me").await;
    me.expect(200);
    assert_eq!(me.json()["user"]["username"], "player");

    // behind TLS (X-Forwarded-Proto) the cookie is Secure
    let r = b
        .http
        .post(format!("{}/api/auth/login", b.base))
        .header("x-forwarded-proto", "https")
        .json(&json!({"username": "gm", "password": password_of("gm")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sc = r.headers()["set-cookie"].to_str().unwrap();
    assert!(sc.ends_with("; Secure"), "{sc}");

    // a wrong CSRF token is 403 and ends nothing; logout with the token ends the session
    let mut wrong = player.clone();
    wrong.csrf = Some("0".repeat(64));
    let r = wrong.post_empty("/api/auth/logout").await;
    r.expect(403);
    assert_eq!(r.json()["error"], "csrf_failed");
    player
        .send(Method::POST, "/api/auth/logout", None, false)
        .await
        .expect(403);
    player.get("/api/auth/me").await.expect(200);
    let r = player.post_empty("/api/auth/logout").await;
    r.expect(204);
    assert!(r.header("set-cookie").starts_with("sq_session=;"));
    assert!(r.header("set-cookie").contains("Max-Age=0"));
    let r = player.get("/api/auth/me").await;
    r.expect(401);
    assert_eq!(r.json()["error"], "unauthenticated");
    assert!(!r.header("www-authenticate").is_empty());

    // a session is refused once expired
    let player = Browser::new(s).login("player").await;
    s.clock
        .advance_millis(sidequest::domain::token::SESSION_TTL_MS - 1);
    player.get("/api/auth/me").await.expect(200);
    s.clock.advance_millis(1);
    player.get("/api/auth/me").await.expect(401);

    // garbage cookies are simply not a session
    let mut junk = Browser::new(s);
    junk.cookie = Some("zz".repeat(32));
    junk.get("/api/auth/me").await.expect(401);

    // login bodies: unparsable JSON 400, wrong shape 422, not JSON 415
    let r = b
        .http
        .post(format!("{}/api/auth/login", b.base))
        .header("content-type", "application/json")
        .body("{\"username\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "malformed_json");
    let r = b
        .send(
            Method::POST,
            "/api/auth/login",
            Some(&json!({"username": "gm", "password": "x", "remember": true})),
            false,
        )
        .await;
    r.expect_fields(&["remember"]);
    let r = b
        .send(
            Method::POST,
            "/api/auth/login",
            Some(&json!({"username": "gm", "password": 5})),
            false,
        )
        .await;
    r.expect_fields(&["password"]);
    let r = b
        .http
        .post(format!("{}/api/auth/login", b.base))
        .body("username=gm")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
}

async fn one_answer_for_every_login_failure(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let b = Browser::new(s);
    let wrong = b.try_login("player", "not the password").await;
    let unknown = b.try_login("nobody", "not the password").await;
    let no_password = {
        // a user without a password cannot log in, and learns nothing either
        make_user(s, "nopass", false).await;
        let u = s.store.user_by_username("nopass").await.unwrap().unwrap();
        s.store.set_password_hash(u.id, None).await.unwrap();
        b.try_login("nopass", "anything").await
    };
    // deactivated, with the right password
    let gone = s.store.user_by_username("gone").await.unwrap().unwrap();
    s.store.set_user_active(gone.id, false).await.unwrap();
    let inactive = b.try_login("gone", &password_of("gone")).await;
    for r in [&wrong, &unknown, &no_password, &inactive] {
        r.expect(401);
        assert_eq!(r.text, wrong.text);
        assert_eq!(
            r.header("www-authenticate"),
            wrong.header("www-authenticate")
        );
        assert!(r.header("set-cookie").is_empty());
    }
    assert_eq!(wrong.json()["error"], "invalid_credentials");
    assert!(wrong.json().get("fields").is_none());
}

async fn login_throttling(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let since = 0;
    let failures = |key: &'static str| {
        let store = s.store.clone();
        async move { store.login_failures_since(key, since).await.unwrap() }
    };

    // the right password clears the username's failures, never the address's
    let b = Browser::from_ip(s, "127.0.0.9");
    for _ in 0..3 {
        b.try_login("gm", "wrong").await.expect(401);
    }
    assert_eq!(failures("user:gm").await, 3);
    b.clone().login("gm").await;
    assert_eq!(failures("user:gm").await, 0);
    assert_eq!(failures("ip:127.0.0.9").await, 3);

    // per username: nine failures from several addresses are 401, the tenth is 429
    for i in 0..9 {
        let b = Browser::from_ip(s, &format!("127.0.0.{}", 10 + i % 3));
        b.try_login("player", "wrong").await.expect(401);
    }
    let r = Browser::from_ip(s, "127.0.0.13")
        .try_login("player", "wrong")
        .await;
    r.expect(429);
    assert_eq!(r.header("retry-after"), "900");
    assert_eq!(r.json()["error"], "too_many_attempts");
    assert_eq!(failures("user:player").await, 10);
    // now even the right password from a fresh address is refused, and spends nothing
    for _ in 0..3 {
        Browser::from_ip(s, "127.0.0.14")
            .try_login("player", &password_of("player"))
            .await
            .expect(429);
    }
    assert_eq!(failures("user:player").await, 10);
    assert_eq!(failures("ip:127.0.0.14").await, 0);
    // other users are unaffected
    Browser::from_ip(s, "127.0.0.14").login("gm").await;

    // per address: ten failures over unknown usernames, then that address is refused even
    // for a real user with the right password; another address is not
    let b = Browser::from_ip(s, "127.0.0.20");
    for i in 0..9 {
        b.try_login(&format!("ghost{i}"), "wrong").await.expect(401);
    }
    b.try_login("ghost9", "wrong").await.expect(429);
    assert_eq!(failures("ip:127.0.0.20").await, 10);
    b.try_login("rival", &password_of("rival"))
        .await
        .expect(429);
    assert_eq!(failures("user:rival").await, 0);
    assert_eq!(failures("ip:127.0.0.20").await, 10);
    Browser::from_ip(s, "127.0.0.21").login("rival").await;

    // the window is 15 minutes
    s.clock.advance_millis(15 * 60 * 1000 - 1);
    b.try_login("rival", &password_of("rival"))
        .await
        .expect(429);
    s.clock.advance_millis(1);
    Browser::from_ip(s, "127.0.0.14").login("player").await;
    b.clone().login("rival").await;
}

async fn deactivation_ends_live_sessions(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gone = Browser::new(s).login("gone").await;
    let second = Browser::new(s).login("gone").await;
    gone.get("/api/auth/me").await.expect(200);
    // through the command line, as an operator would
    let cli = <sidequest::cli::Cli as clap::Parser>::try_parse_from([
        "sidequest",
        "--database-url",
        url,
        "user",
        "deactivate",
        "--username",
        "gone",
    ])
    .unwrap();
    sidequest::cli::run(cli).await.unwrap();
    gone.get("/api/auth/me").await.expect(401);
    second.get("/api/plays/").await.expect(401);
    let digest = sidequest::domain::token::digest(gone.cookie.as_deref().unwrap());
    assert!(
        s.store.session(&digest).await.unwrap().is_none(),
        "the CLI deletes the sessions"
    );
    Browser::new(s)
        .try_login("gone", &password_of("gone"))
        .await
        .expect(401);

    // a user deactivated behind the CLI's back (store only) is refused at once as well
    let player = Browser::new(s).login("player").await;
    s.store.set_user_active(w.player.id, false).await.unwrap();
    player.get("/api/auth/me").await.expect(401);
    s.store.set_user_active(w.player.id, true).await.unwrap();
    player.get("/api/auth/me").await.expect(200);
}

// ---------------------------------------------------------------- creation

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

// ---------------------------------------------------------------- review and journal

async fn review_rules(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let player = Browser::new(s).login("player").await;
    let a = create_assignment(&gm, w.scenario).await;
    let t = token(&player, a).await;
    let mut pending = turn(s, &t, 1, 10, "first").await;
    pending.extend(turn(s, &t, 2, 10, "second").await);
    pending.extend(turn(s, &t, 3, 3, "third").await);
    assert_eq!(version_of(&gm, a).await, 4);
    // a consequence of another assignment
    let b = create_assignment(&gm, w.scenario).await;
    let tb = token(&gm, b).await;
    let foreign = turn(s, &tb, 1, 1, "elsewhere").await[0];

    let path = play(a, "review/");
    let decide = |ids: &[Uuid], version: i64| {
        json!({"operation_id": Uuid::new_v4(), "expected_version": version,
               "decisions": ids.iter().map(|id| json!({"id": id, "decision": "approved", "note": "ok"})).collect::<Vec<_>>()})
    };
    // bounds: 0 and 21 decisions refused
    gm.post(&path, decide(&[], 4))
        .await
        .expect_fields(&["decisions"]);
    gm.post(&path, decide(&pending[..21], 4))
        .await
        .expect_fields(&["decisions"]);
    // duplicates, foreign consequence, bad verdict, note over 2,000 characters, unknown field
    let dup = decide(&[pending[0], pending[0]], 4);
    gm.post(&path, dup)
        .await
        .expect_fields(&["decisions[1].id"]);
    gm.post(&path, decide(&[pending[0], foreign], 4))
        .await
        .expect_fields(&["decisions[1].id"]);
    let mut bad = decide(&[pending[0]], 4);
    bad["decisions"][0]["decision"] = json!("maybe");
    gm.post(&path, bad)
        .await
        .expect_fields(&["decisions[0].decision"]);
    let mut long = decide(&[pending[0]], 4);
    long["decisions"][0]["note"] = json!("ł".repeat(2001));
    gm.post(&path, long)
        .await
        .expect_fields(&["decisions[0].note"]);
    let mut extra = decide(&[pending[0]], 4);
    extra["decisions"][0]["status"] = json!("approved");
    gm.post(&path, extra)
        .await
        .expect_fields(&["decisions[0].status"]);
    // a stale (or future) version
    for v in [3, 5] {
        let r = gm.post(&path, decide(&pending[..1], v)).await;
        r.expect(409);
        assert_eq!(r.json()["error"], "version_conflict");
    }
    assert_eq!(version_of(&gm, a).await, 4, "refusals write nothing");

    // twenty decisions, one with a 2,000-character note, one rejection: accepted
    let mut twenty = decide(&pending[..20], 4);
    twenty["decisions"][0]["note"] = json!("ł".repeat(2000));
    twenty["decisions"][1]["decision"] = json!("rejected");
    twenty["decisions"][1]["note"] = json!("Not in this campaign.");
    let r = gm.post(&path, twenty.clone()).await;
    r.expect(200);
    let receipt = r.json();
    assert_eq!(receipt["version"], 5);
    assert_eq!(receipt["replayed"], false);
    assert_eq!(receipt["session_id"], a.to_string());
    assert_eq!(receipt["decisions"].as_array().unwrap().len(), 20);
    assert_eq!(receipt["decisions"][1]["status"], "rejected");
    // the identical review again: the same receipt, replayed
    let mut replay = receipt.clone();
    replay["replayed"] = json!(true);
    assert_eq!(gm.post(&path, twenty.clone()).await.json(), replay);
    // the same operation id with other content
    let mut reused = twenty.clone();
    reused["decisions"][2]["note"] = json!("changed");
    let r = gm.post(&path, reused).await;
    r.expect(409);
    assert_eq!(r.json()["error"], "operation_reused");
    // an already decided consequence
    let r = gm.post(&path, decide(&[pending[20], pending[3]], 5)).await;
    r.expect(409);
    assert_eq!(r.json()["error"], "already_decided");
    assert_eq!(version_of(&gm, a).await, 5);

    // the player finishes; the GM may still review
    let fin = s
        .client(&t)
        .tool("finish_play_session", json!({"operation_id": Uuid::new_v4(), "expected_version": 5, "summary": "Back at dawn."}))
        .await
        .json();
    assert_eq!(fin["pending_consequences"], 3);
    let r = gm.post(&path, decide(&pending[20..], 6)).await;
    r.expect(200);
    assert_eq!(r.json()["version"], 7);
    assert_eq!(gm.get(&play(a, "")).await.json()["status"], "completed");
    assert_eq!(gm.get(&play(a, "")).await.json()["pending_consequences"], 0);
    // replays stay valid after completion and later reviews
    assert_eq!(gm.post(&path, twenty).await.json(), replay);

    // the player's journal: turns and the finish, with gaps where reviews were
    let pj = player
        .get(&play(a, "journal/?offset=0&limit=20"))
        .await
        .json();
    let versions: Vec<i64> = pj["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [2, 3, 4, 6]);
    assert_eq!(pj["total"], 4);
    assert!(
        pj["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "review" && e.get("gm_private").is_none())
    );
    // the GM's journal shows the review events
    let gj = gm.get(&play(a, "journal/?limit=20")).await.json();
    let kinds: Vec<(i64, String)> = gj["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["version"].as_i64().unwrap(),
                e["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (2, "turn"),
            (3, "turn"),
            (4, "turn"),
            (5, "review"),
            (6, "finish"),
            (7, "review")
        ]
        .map(|(v, k)| (v, k.to_owned()))
    );
    assert!(
        gj["entries"][3]["gm_private"]
            .as_str()
            .unwrap()
            .contains("rejected")
    );
    // the player sees decisions and notes
    let pc = player.get(&play(a, "consequences/")).await.json();
    let items = pc["items"].as_array().unwrap();
    assert_eq!(items.len(), 23);
    assert!(
        items
            .iter()
            .any(|c| c["status"] == "rejected" && c["gm_note"] == "Not in this campaign.")
    );
    assert!(items.iter().all(|c| c["status"] != "pending"));
}

async fn journal_paging(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let a = create_assignment(&gm, w.scenario).await;
    let t = token(&gm, a).await;
    for v in 1..=3 {
        turn(s, &t, v, 0, &format!("t{v}")).await;
    }
    let page = gm.get(&play(a, "journal/")).await.json();
    assert_eq!(
        (
            page["total"].as_i64(),
            page["offset"].as_i64(),
            page["limit"].as_i64()
        ),
        (Some(3), Some(0), Some(10))
    );
    let page = gm.get(&play(a, "journal/?offset=1&limit=1")).await.json();
    assert_eq!(page["entries"].as_array().unwrap().len(), 1);
    assert_eq!(page["entries"][0]["version"], 3);
    let page = gm.get(&play(a, "journal/?offset=50&limit=20")).await.json();
    assert_eq!(page["entries"], json!([]));
    assert_eq!(page["total"], 3);
    gm.get(&play(a, "journal/?limit=1")).await.expect(200);
    for (q, field) in [
        ("offset=-1", "offset"),
        ("limit=0", "limit"),
        ("limit=21", "limit"),
        ("limit=ten", "limit"),
        ("offset=1.5", "offset"),
    ] {
        gm.get(&play(a, &format!("journal/?{q}")))
            .await
            .expect_fields(&[field]);
    }
    gm.get(&play(a, "journal/?offset=-1&limit=99"))
        .await
        .expect_fields(&["offset", "limit"]);
}

// ---------------------------------------------------------------- tokens

async fn tokens_through_rest(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let player = Browser::new(s).login("player").await;
    let a = create_assignment(&gm, w.scenario).await;

    let r = gm.post_empty(&play(a, "access/")).await;
    r.expect(201);
    let issued = r.json();
    let gm_token = issued["token"].as_str().unwrap().to_owned();
    assert!(gm_token.starts_with("sqp_") && gm_token.len() == 44);
    assert_eq!(issued["mcp_path"], "/play/mcp");
    assert_eq!(issued["assignment_id"], a.to_string());
    assert_eq!(r.header("cache-control"), "no-store");
    // the token works at /play/mcp
    let ctx = s
        .client(&gm_token)
        .tool("get_play_context", json!({}))
        .await
        .json();
    assert_eq!(ctx["session_id"], a.to_string());
    turn(s, &gm_token, 1, 0, "one").await;
    // the token is never shown again
    assert!(!gm.get(&play(a, "")).await.text.contains(&gm_token));

    // the player rotates it: the GM's token stops at once, the version does not move
    let before = version_of(&gm, a).await;
    let player_token = token(&player, a).await;
    assert_ne!(player_token, gm_token);
    assert_eq!(
        s.client(&gm_token)
            .request("tools/list", json!({}))
            .await
            .status,
        401
    );
    assert_eq!(
        s.client(&player_token)
            .tool("get_play_context", json!({}))
            .await
            .json()["version"],
        before
    );
    assert_eq!(version_of(&gm, a).await, before);

    // revocation by the player, then by the GM (nothing left to revoke)
    let r = player.delete(&play(a, "access/")).await;
    r.expect(200);
    assert_eq!(r.json()["revoked"], 1);
    assert_eq!(
        s.client(&player_token)
            .request("tools/list", json!({}))
            .await
            .status,
        401
    );
    let r = gm.delete(&play(a, "access/")).await;
    r.expect(200);
    assert_eq!(r.json()["revoked"], 0);
    // the GM can issue again, and revoke it
    let again = token(&gm, a).await;
    assert_eq!(
        s.client(&again)
            .request("tools/list", json!({}))
            .await
            .status,
        200
    );
    gm.delete(&play(a, "access/")).await.expect(200);
    assert_eq!(
        s.client(&again)
            .request("tools/list", json!({}))
            .await
            .status,
        401
    );
    assert_eq!(version_of(&gm, a).await, before);
}

// ---------------------------------------------------------------- reports

async fn reports_by_role_and_language(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    let player = Browser::new(s).login("player").await;
    let a = create_assignment(&gm, w.scenario).await;
    let t = token(&player, a).await;
    let ids = turn(s, &t, 1, 2, "pier").await;
    gm.post(
        &play(a, "review/"),
        json!({"operation_id": Uuid::new_v4(), "expected_version": 2, "decisions": [
            {"id": ids[0], "decision": "approved", "note": "Mira remembers Arin."},
            {"id": ids[1], "decision": "rejected"}]}),
    )
    .await
    .expect(200);

    for (lang, headings) in [
        (
            "en",
            [
                "# Sidequest report: Arin",
                "## Brief",
                "## Journal",
                "## Consequences",
            ],
        ),
        (
            "pl",
            [
                "# Raport z przygody pobocznej: Arin",
                "## Zarys",
                "## Dziennik",
                "## Konsekwencje",
            ],
        ),
    ] {
        let gm_report = gm.get(&play(a, &format!("report/?lang={lang}"))).await;
        let player_report = player.get(&play(a, &format!("report/?lang={lang}"))).await;
        for r in [&gm_report, &player_report] {
            r.expect(200);
            assert_eq!(r.header("content-type"), "text/markdown; charset=utf-8");
            for h in headings {
                assert!(r.text.contains(h), "{lang}: {h} missing in\n{}", r.text);
            }
            assert!(r.text.contains("It happens: pier"));
            assert!(
                r.text.contains("Mira remembers Arin."),
                "the review note is the player's too"
            );
        }
        // GM-only material: the GM notes and the review event, which names each decided
        // consequence in the reader's language
        let decided = if lang == "pl" {
            "zatwierdzona"
        } else {
            "approved"
        };
        let private = format!("- {decided}: pier finding 0");
        assert!(gm_report.text.contains(GM_SECRET));
        assert!(gm_report.text.contains(&private));
        assert!(
            !player_report.text.contains("GM-SECRET"),
            "{}",
            player_report.text
        );
        assert!(
            !player_report.text.contains(&private),
            "{}",
            player_report.text
        );
        let gm_heading = if lang == "pl" {
            "Przegląd MG"
        } else {
            "GM review"
        };
        assert!(gm_report.text.contains(gm_heading));
        assert!(!player_report.text.contains(gm_heading));
    }
    // no lang: English; an unknown one: 422
    assert!(
        player
            .get(&play(a, "report/"))
            .await
            .text
            .starts_with("# Sidequest report")
    );
    player
        .get(&play(a, "report/?lang=xx"))
        .await
        .expect_fields(&["lang"]);
}

// ---------------------------------------------------------------- authoring

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
    gm.delete(&format!("/api/author-tokens/{id}/"))
        .await
        .expect(200);
    assert!(gm.get("/api/author-tokens/").await.json()["items"][0]["revoked_at"].is_i64());
    gm.delete(&format!("/api/author-tokens/{id}/"))
        .await
        .expect(404);
}

// ---------------------------------------------------------------- the HTTP envelope

async fn http_envelope(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    // unknown routes and methods answer in the JSON error shape
    let r = gm.get("/api/nothing-here").await;
    r.expect(404);
    assert_eq!(r.json()["error"], "not_found");
    let r = gm
        .send(Method::PATCH, "/api/plays/", Some(&json!({})), true)
        .await;
    r.expect(405);
    assert_eq!(r.json()["error"], "method_not_allowed");
    // authentication comes before the body is even looked at
    Browser::new(s)
        .send(Method::POST, "/api/plays/", Some(&json!("junk")), false)
        .await
        .expect(401);

    // 300 KB: 307,200 bytes are read (and judged on their content), one more is 413
    let frame = serde_json::to_string(&json!({"title": ""})).unwrap().len();
    let exact = format!("{{\"title\":\"{}\"}}", "x".repeat(307_200 - frame));
    assert_eq!(exact.len(), 307_200);
    let send_raw = |body: String| {
        gm.http
            .post(format!("{}/api/scenarios/", gm.base))
            .header(
                "cookie",
                format!("sq_session={}", gm.cookie.as_deref().unwrap()),
            )
            .header("x-csrf-token", gm.csrf.as_deref().unwrap())
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let r = send_raw(exact.clone()).await.unwrap();
    assert_eq!(r.status(), 422);
    let over = format!("{{\"title\":\"{}\"}}", "x".repeat(307_201 - frame));
    let r = send_raw(over).await.unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"],
        "payload_too_large"
    );
    // chunked (no Content-Length) counts the same
    assert_eq!(
        chunked_post(&gm, s, "/api/scenarios/", exact.as_bytes()).await,
        422
    );
    let over = format!("{{\"title\":\"{}\"}}", "x".repeat(307_201 - frame));
    assert_eq!(
        chunked_post(&gm, s, "/api/scenarios/", over.as_bytes()).await,
        413
    );

    // malformed JSON is 400; a JSON body of the wrong shape is 422
    let r = send_raw("{\"title\": ".into()).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "malformed_json");
    assert!(body.get("fields").is_none());
    let r = send_raw("[1, 2]".into()).await.unwrap();
    assert_eq!(r.status(), 422);
    assert!(r.json::<Value>().await.unwrap()["fields"].is_object());
}

/// POSTs `body` with `Transfer-Encoding: chunked` over a raw connection; gives the status.
async fn chunked_post(who: &Browser, server: &Server, path: &str, body: &[u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: sidequest\r\nCookie: sq_session={}\r\nX-CSRF-Token: {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        who.cookie.as_deref().unwrap(),
        who.csrf.as_deref().unwrap()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    // the server may answer 413 and stop reading before the last chunk
    for chunk in body.chunks(4096) {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        if conn.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = conn.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = conn.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

crate::on_both_backends!(
    access_matrix,
    never_reveal_an_assignment,
    login_logout_and_sessions,
    one_answer_for_every_login_failure,
    login_throttling,
    deactivation_ends_live_sessions,
    creation_is_idempotent,
    creation_validation,
    list_returns_the_200_most_recent,
    review_rules,
    journal_paging,
    tokens_through_rest,
    reports_by_role_and_language,
    scenario_authoring,
    author_tokens,
    http_envelope,
);
