//! The access matrix of every endpoint (each actor, without and with the CSRF token) and the
//! 404 that never reveals another GM's assignment.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Browser, GM_SECRET, create_assignment, creation, play, token, turn, world};

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

crate::on_both_backends!(access_matrix, never_reveal_an_assignment);
