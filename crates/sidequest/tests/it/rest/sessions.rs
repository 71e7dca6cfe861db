//! Sessions: login, logout and `me`, one answer for every login failure, login throttling by
//! username and address, and deactivation ending live sessions.

use reqwest::Method;
use serde_json::{Value, json};

use super::{Browser, cookie_value, make_user, password_of, world};

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

crate::on_both_backends!(
    login_logout_and_sessions,
    one_answer_for_every_login_failure,
    login_throttling,
    deactivation_ends_live_sessions,
);
