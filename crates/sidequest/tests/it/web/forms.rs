//! The pages' shared rules: security headers and the two static files, sign in and out with
//! the REST login's throttle and single failure answer, CSRF refusal on every form, bounds at
//! the limit and one past with the error at the field, and the remembered language switch.

use uuid::Uuid;

use super::{Browser, page_world};
use crate::on_both_backends;

const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                   frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

async fn headers_and_static_files(url: &str) {
    let w = page_world(url).await;
    let mut anon = Browser::new(&w.server);
    let r = anon.get("/").await;
    r.expect(303);
    assert_eq!(r.location(), "/signin?next=%2F");
    let r = anon.get("/signin").await;
    r.expect(200);
    assert_eq!(r.header("content-security-policy"), CSP);
    assert_eq!(r.header("x-frame-options"), "DENY");
    assert_eq!(r.header("referrer-policy"), "no-referrer");
    assert_eq!(r.header("cache-control"), "no-store");
    assert!(
        r.text
            .contains("<link rel=\"stylesheet\" href=\"/static/sidequest.css\">")
    );
    // No inline script anywhere: the one script element is the file's.
    assert_eq!(r.text.matches("<script").count(), 1);
    assert!(
        r.text
            .contains("<script src=\"/static/sidequest.js\" defer></script>")
    );
    assert!(!r.text.contains(" onclick=") && !r.text.contains(" style=\""));
    let css = anon.get("/static/sidequest.css").await;
    css.expect(200);
    assert_eq!(css.header("content-type"), "text/css; charset=utf-8");
    assert!(css.text.contains(":focus-visible"));
    let js = anon.get("/static/sidequest.js").await;
    js.expect(200);
    assert_eq!(js.header("content-type"), "text/javascript; charset=utf-8");
    assert!(js.text.contains("data-max"));
    let icon = anon.get("/static/favicon.svg").await;
    icon.expect(200);
    assert_eq!(icon.header("content-type"), "image/svg+xml");
}

async fn sign_in_and_out(url: &str) {
    let w = page_world(url).await;
    let mut b = Browser::new(&w.server);
    // A wrong password and an unknown user get the same answer.
    let wrong = b
        .post(
            "/signin",
            &[("username", "gm"), ("password", "nope"), ("next", "/")],
        )
        .await;
    wrong.expect(401);
    let unknown = b
        .post(
            "/signin",
            &[("username", "nobody"), ("password", "nope"), ("next", "/")],
        )
        .await;
    unknown.expect(401);
    let msg = "Unknown username or wrong password.";
    assert!(wrong.text.contains(msg) && unknown.text.contains(msg));
    assert!(wrong.text.contains("aria-invalid=\"true\""));
    assert!(b.cookies.is_empty());

    let mut gm = Browser::new(&w.server).sign_in("gm").await;
    let home = gm.get("/").await;
    home.expect(200);
    assert!(home.text.contains("Your campaigns"));
    assert!(home.text.contains("Your scenarios"));
    // The page session is the REST session: the same cookie and CSRF token answer the API.
    let me = reqwest::Client::new()
        .get(format!("http://{}/api/auth/me", w.server.addr))
        .header("cookie", format!("sq_session={}", gm.cookies["sq_session"]))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);

    let csrf = gm.csrf();
    let out = gm.post("/signout", &[("csrf", &csrf)]).await;
    out.expect(303);
    assert_eq!(out.location(), "/signin?signed_out=1");
    assert!(gm.cookies.is_empty());
    gm.get("/").await.expect(303);
    // The ended session is gone from the store too.
    let mut old = Browser::new(&w.server);
    old.cookies.insert("sq_session".into(), "0".repeat(64));
    old.get("/").await.expect(303);
}

async fn sign_in_is_throttled_like_the_rest_login(url: &str) {
    let w = page_world(url).await;
    let mut b = Browser::new(&w.server);
    for _ in 0..9 {
        b.post(
            "/signin",
            &[("username", "player"), ("password", "bad"), ("next", "/")],
        )
        .await
        .expect(401);
    }
    // The tenth failure reaches the limit; then even the right password is refused.
    let tenth = b
        .post(
            "/signin",
            &[("username", "player"), ("password", "bad"), ("next", "/")],
        )
        .await;
    tenth.expect(429);
    assert!(tenth.text.contains("Too many failed sign-ins"));
    let right = b
        .post(
            "/signin",
            &[
                ("username", "player"),
                ("password", &super::password_of("player")),
                ("next", "/"),
            ],
        )
        .await;
    right.expect(429);
    assert!(!b.cookies.contains_key("sq_session"));
}

/// Every form of the site, posted by a signed-in GM without the token, with a wrong one and
/// cross-site with the right one: 403 each time, and nothing changed.
async fn every_form_refuses_without_its_csrf_token(url: &str) {
    let w = page_world(url).await;
    let s = &w.server;
    let mut gm = Browser::new(s).sign_in("gm").await;
    let csrf = gm.csrf();
    // Something to act on: an assignment (through the page) and an author token.
    let form = gm.get(&format!("/plays/new?scenario={}", w.scenario)).await;
    form.expect(200);
    let id = form.hidden("id");
    let created = gm
        .post(
            "/plays",
            &creation(&csrf, &id, &w.scenario.to_string(), "Arin"),
        )
        .await;
    created.expect(303);
    let a = created.location().to_owned();
    gm.post("/author-tokens", &[("csrf", &csrf), ("name", "t1")])
        .await
        .expect(201);
    let tokens = w.server.service.store.author_tokens(w.gm.id).await.unwrap();
    let tid = tokens[0].id;
    let sid = w.scenario;
    let nodes_before = s.service.store.draft_nodes(sid).await.unwrap();
    let forms: Vec<(String, Vec<(&str, String)>)> = vec![
        ("/signout".into(), vec![]),
        ("/scenarios".into(), vec![("title", "x".into())]),
        (
            format!("/scenarios/{sid}/nodes"),
            vec![
                ("id", "n1".into()),
                ("kind", "scene".into()),
                ("title", "t".into()),
            ],
        ),
        (format!("/scenarios/{sid}/nodes/harbor/delete"), vec![]),
        (format!("/scenarios/{sid}/publish"), vec![]),
        ("/plays".into(), vec![("id", Uuid::new_v4().to_string())]),
        (format!("{a}/token"), vec![]),
        (format!("{a}/token/revoke"), vec![]),
        (
            format!("{a}/review"),
            vec![
                ("operation_id", Uuid::new_v4().to_string()),
                ("expected_version", "1".into()),
            ],
        ),
        ("/author-tokens".into(), vec![("name", "t2".into())]),
        (format!("/author-tokens/{tid}/revoke"), vec![]),
    ];
    for (path, fields) in &forms {
        let base: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = gm.post(path, &base).await;
        assert_eq!(r.status, 403, "{path} without a token: {}", r.text);
        assert!(
            r.text
                .contains("This form expired or came from another site"),
            "{path}"
        );
        let mut wrong = base.clone();
        wrong.push(("csrf", "0123456789abcdef"));
        assert_eq!(
            gm.post(path, &wrong).await.status,
            403,
            "{path} wrong token"
        );
        let mut right = base.clone();
        right.push(("csrf", &csrf));
        assert_eq!(
            gm.post_cross_site(path, &right).await.status,
            403,
            "{path} cross-site"
        );
    }
    // Nothing happened: still signed in, one scenario, its nodes, no token, the author token live.
    gm.get("/").await.expect(200);
    assert_eq!(
        s.service.store.scenarios_of(w.gm.id).await.unwrap().len(),
        1
    );
    assert_eq!(
        s.service.store.draft_nodes(sid).await.unwrap(),
        nodes_before
    );
    assert!(
        s.service
            .store
            .author_tokens(w.gm.id)
            .await
            .unwrap()
            .iter()
            .all(|t| t.revoked_at.is_none())
    );
    assert_eq!(
        s.service
            .store
            .assignments_of(w.gm.id, 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// The creation form's fields for the demo scenario.
pub(crate) fn creation<'a>(
    csrf: &'a str,
    id: &'a str,
    scenario: &'a str,
    character: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("csrf", csrf),
        ("id", id),
        ("scenario_id", scenario),
        ("source_version", "1"),
        ("player_username", "player"),
        ("mode", "solo"),
        ("language", "en"),
        ("character", character),
        ("brief", "Explore the harbor before dawn."),
        ("instructions", "Keep it quiet and eerie."),
        ("boundaries", "No deaths; stay out of the vault."),
        ("return_condition", "Arin rejoins the party at dawn."),
        ("gm_notes", crate::rest::GM_SECRET),
        ("published_node_ids", "harbor"),
        ("published_node_ids", "lighthouse"),
        ("published_node_ids", "mira"),
    ]
}

/// At the limit the form is accepted; one past, it comes back with the error at the field.
async fn bounds_at_the_limit_and_one_past(url: &str) {
    let w = page_world(url).await;
    let mut gm = Browser::new(&w.server).sign_in("gm").await;
    let csrf = gm.csrf();
    let scenario = w.scenario.to_string();
    let past = "ą".repeat(201);
    let id = Uuid::new_v4().to_string();
    let r = gm
        .post("/plays", &creation(&csrf, &id, &scenario, &past))
        .await;
    r.expect(422);
    assert!(
        r.text.contains(
            "<p class=\"err\" id=\"e-character\">has 201 characters; at most 200 allowed</p>"
        ),
        "{}",
        r.text
    );
    assert!(r.text.contains(
        "aria-describedby=\"h-character c-character e-character\" aria-invalid=\"true\""
    ));
    // The typed text and the same creation UUID come back, so a fix is the same creation.
    assert!(r.text.contains(&past));
    assert!(r.text.contains(&format!("name=\"id\" value=\"{id}\"")));
    let at = "ą".repeat(200);
    let ok = gm
        .post("/plays", &creation(&csrf, &id, &scenario, &at))
        .await;
    ok.expect(303);
    assert_eq!(ok.location(), format!("/plays/{id}"));

    // The scenario title: 200 passes, 201 is shown at the field, in Polish for a Polish page.
    gm.get("/language/pl?back=/").await.expect(303);
    let r = gm
        .post(
            "/scenarios",
            &[("csrf", &csrf), ("title", &"x".repeat(201))],
        )
        .await;
    r.expect(422);
    assert!(
        r.text
            .contains("<p class=\"err\" id=\"e-title\">ma 201 znaków; dozwolone najwyżej 200</p>"),
        "{}",
        r.text
    );
    gm.post(
        "/scenarios",
        &[("csrf", &csrf), ("title", &"x".repeat(200))],
    )
    .await
    .expect(303);
    // A required field left empty.
    let r = gm
        .post(
            "/plays",
            &creation(&csrf, &Uuid::new_v4().to_string(), &scenario, ""),
        )
        .await;
    r.expect(422);
    assert!(
        r.text.contains("id=\"e-character\">to pole jest wymagane"),
        "{}",
        r.text
    );
}

async fn language_switch_is_remembered(url: &str) {
    let w = page_world(url).await;
    let mut b = Browser::new(&w.server);
    let r = b.get("/language/pl?back=/signin").await;
    r.expect(303);
    assert_eq!(r.location(), "/signin");
    assert_eq!(b.cookies["sq_lang"], "pl");
    let page = b.get("/signin").await;
    assert!(page.text.contains("<html lang=\"pl\">"));
    assert!(page.text.contains("Zaloguj się"));
    // An outside `back` stays on the site; an unknown language is 404.
    let r = b.get("/language/en?back=//evil.example/").await;
    assert_eq!(r.location(), "/");
    b.get("/language/de").await.expect(404);
    let page = b.get("/signin").await;
    assert!(page.text.contains("<html lang=\"en\">") && page.text.contains("Sign in"));
}

on_both_backends!(
    headers_and_static_files,
    sign_in_and_out,
    sign_in_is_throttled_like_the_rest_login,
    every_form_refuses_without_its_csrf_token,
    bounds_at_the_limit_and_one_past,
    language_switch_is_remembered,
);
