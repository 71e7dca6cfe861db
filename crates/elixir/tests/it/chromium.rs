//! The web pages in a real browser: headless Chromium driven over WebDriver
//! (`testkit::webdriver`) through sign-in by email code and sign-out, the OAuth consent page
//! back to a loopback redirect URI, and creating and suspending an agent. The server runs on
//! its own `http://127.0.0.1:<port>` origin so the browser's `Origin`, `Sec-Fetch-Site` and
//! cookies are the real ones. SQLite only: storage is covered on both backends by `pages.rs`
//! and `oauth.rs`; these tests are about what a browser does with the pages. Each test skips
//! when chromedriver or Chromium is missing, and fails instead under `REQUIRE_SERVICES=1`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use testkit::db::TempDir;
use testkit::mcp::Client;
use testkit::webdriver::{self, Browser};

use crate::browser::newest_code;
use crate::support::{Options, Server, spawn_with, success};

/// A server with real OAuth on its own origin, and a browser; `None` when no browser is
/// installed (the test then skips). Bind every field: the database directory goes with `_db`.
struct Fixture {
    server: Server,
    browser: Browser,
    outbox: TempDir,
    _db: TempDir,
}

async fn fixture() -> Option<Fixture> {
    if !webdriver::available() {
        eprintln!("skipped: chromedriver or chromium not installed");
        return None;
    }
    let (db, url) = testkit::db::fresh_sqlite_url();
    let outbox = TempDir::new("elixir-chromium-");
    let options = Options {
        oauth_outbox: Some(outbox.path().to_owned()),
        browser_origin: true,
        ..Options::default()
    };
    let (server, browser) = tokio::join!(spawn_with(&url, options), Browser::start());
    Some(Fixture {
        server,
        browser,
        outbox,
        _db: db,
    })
}

/// Signs the browser in on `/signin` with the code from the outbox; ends on `/account`.
async fn sign_in(browser: &Browser, server: &Server, outbox: &Path, email: &str) {
    browser.goto(&server.url("/signin")).await;
    browser
        .find("input[name=email]")
        .await
        .send_keys(email)
        .await;
    browser.submit("button[value=send_code]").await;
    let code = newest_code(outbox);
    browser
        .find("input[name=code]")
        .await
        .send_keys(&code)
        .await;
    browser.submit("button[value=verify]").await;
    assert_eq!(browser.current_url().await, server.url("/account"));
}

async fn session_cookies(browser: &Browser) -> Vec<String> {
    browser
        .cookies()
        .await
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name == "mcp_session")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_wrong_code_and_sign_out() {
    let Some(Fixture {
        server,
        browser,
        outbox,
        _db,
    }) = fixture().await
    else {
        return;
    };

    // Signed out, the account page sends the browser to /signin.
    browser.goto(&server.url("/account")).await;
    assert_eq!(browser.current_url().await, server.url("/signin"));
    assert_eq!(browser.title().await, "Sign in · Elixir");

    // A wrong code: the error, still on /signin, no session cookie, /account still refused.
    browser
        .find("input[name=email]")
        .await
        .send_keys("King@Example.com")
        .await;
    browser.submit("button[value=send_code]").await;
    assert!(
        browser
            .find("form")
            .await
            .text()
            .await
            .contains("A code is on its way to king@example.com"),
        "{}",
        browser.page_source().await
    );
    let code = newest_code(outbox.path());
    let wrong = if code == "000000" { "111111" } else { "000000" };
    browser
        .find("input[name=code]")
        .await
        .send_keys(wrong)
        .await;
    browser.submit("button[value=verify]").await;
    assert_eq!(browser.current_url().await, server.url("/signin"));
    let error = browser.find("p.err").await.text().await;
    assert!(error.contains("4 attempts left"), "{error}");
    assert!(session_cookies(&browser).await.is_empty());
    browser.goto(&server.url("/account")).await;
    assert_eq!(browser.current_url().await, server.url("/signin"));

    // The right code: /account shows the (case-folded) address and the account id.
    sign_in(&browser, &server, outbox.path(), "King@Example.com").await;
    let body = browser.find("body").await.text().await;
    assert!(body.contains("king@example.com"), "{body}");
    assert!(body.contains(&server.person.id.to_string()), "{body}");
    assert_eq!(session_cookies(&browser).await, ["mcp_session"]);

    // The navigation works while signed in.
    browser
        .click_and_wait("nav a[href=\"/account/agents\"]")
        .await;
    assert_eq!(browser.current_url().await, server.url("/account/agents"));
    assert_eq!(browser.title().await, "Agents · Elixir");

    // Sign out: the cookie is gone and /account refuses again.
    browser.submit("nav form[action=\"/signout\"] button").await;
    assert!(session_cookies(&browser).await.is_empty());
    browser.goto(&server.url("/account")).await;
    assert_eq!(browser.current_url().await, server.url("/signin"));

    browser.close().await;
}

/// A loopback OAuth client's redirect URI: a port-0 listener that records each query string.
async fn callback_listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/callback",
        axum::routing::get(move |query: axum::extract::RawQuery| async move {
            record.lock().unwrap().push(query.0.unwrap_or_default());
            axum::response::Html(
                "<!DOCTYPE html><title>Callback</title><p id=\"done\">Connected</p>",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/callback"), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consent_in_the_browser_with_one_capability_unticked() {
    let Some(Fixture {
        server,
        browser,
        outbox,
        _db,
    }) = fixture().await
    else {
        return;
    };
    let (redirect, seen) = callback_listener().await;
    let http = reqwest::Client::new();
    let registered: Value = http
        .post(server.url("/oauth/register"))
        .json(
            &json!({"client_name": "Browser client", "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    let verifier = format!("verifier-{}", "y".repeat(50));
    let resource = format!("{}/mcp", server.origin);
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", redirect.as_str()),
            (
                "code_challenge",
                &mcp_oauth::crypto::pkce_challenge(&verifier),
            ),
            ("code_challenge_method", "S256"),
            ("resource", resource.as_str()),
            ("state", "st4te"),
        ])
        .finish();

    browser
        .goto(&server.url(&format!("/oauth/authorize?{query}")))
        .await;
    let intro = browser.find(".box").await.text().await;
    assert!(
        intro.contains(&format!("Browser client wants to connect to {resource}")),
        "{intro}"
    );
    browser
        .find("input[name=email]")
        .await
        .send_keys("king@example.com")
        .await;
    browser.submit("button[value=send_code]").await;
    let code = newest_code(outbox.path());
    browser
        .find("input[name=code]")
        .await
        .send_keys(&code)
        .await;

    // The standard capabilities are offered ticked; untick feedback:write.
    let mut offered = Vec::new();
    for checkbox in browser.find_all("input[type=checkbox][name=scope]").await {
        offered.push((
            checkbox.attribute("value").await.unwrap(),
            checkbox.is_selected().await,
        ));
    }
    assert_eq!(
        offered,
        [
            ("cr:read".to_owned(), true),
            ("recordings:write".to_owned(), true),
            ("collections:write".to_owned(), true),
            ("account:write".to_owned(), true),
            ("feedback:write".to_owned(), true),
        ]
    );
    let feedback = browser
        .find("input[name=scope][value=\"feedback:write\"]")
        .await;
    feedback.click().await;
    assert!(!feedback.is_selected().await);
    browser.submit("button[value=verify]").await;

    // The browser lands on the client's loopback redirect URI with code, state and iss.
    let landed = browser
        .wait_for_url("the redirect URI", |u| u.starts_with(&redirect))
        .await;
    assert_eq!(browser.find("#done").await.text().await, "Connected");
    let landed = url::Url::parse(&landed).unwrap();
    assert_eq!(landed.host_str(), Some("127.0.0.1"));
    let param = |name: &str| {
        landed
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("no {name} in {landed}"))
    };
    let code = param("code");
    assert!(code.starts_with("eac_"), "{code}");
    assert_eq!(param("state"), "st4te");
    assert_eq!(param("iss"), server.origin);
    assert_eq!(
        *seen.lock().unwrap(),
        [landed.query().unwrap().to_owned()],
        "the redirect URI was loaded once, with the same query"
    );

    // The code is exchanged over HTTP; the token lacks the unticked capability.
    let token: Value = http
        .post(server.url("/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect.as_str()),
            ("client_id", client_id.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", resource.as_str()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        token["scope"], "cr:read recordings:write collections:write account:write",
        "{token}"
    );
    let person = Client::new(
        server.url("/mcp"),
        Some(token["access_token"].as_str().unwrap().to_owned()),
    );
    let init = person.initialize("2025-06-18").await;
    assert_eq!(
        init.result()["_meta"]["elixir.poapkings.com/principal"]["kind"],
        "person"
    );
    success(&person.tool("elixir_docs", json!({})).await);
    let refused = person
        .tool("elixir_feedback", json!({"message": "from the browser"}))
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.body["error"]["data"]["required_scope"],
        "feedback:write"
    );

    // Consent by code signed the browser in: the connection is listed, without feedback:write.
    browser.goto(&server.url("/account/connections")).await;
    assert_eq!(
        browser.current_url().await,
        server.url("/account/connections")
    );
    assert!(browser.page_source().await.contains("Browser client"));
    let mut ticked = Vec::new();
    for checkbox in browser.find_all("input[type=checkbox][name=scope]").await {
        if checkbox.is_selected().await {
            ticked.push(checkbox.attribute("value").await.unwrap());
        }
    }
    assert_eq!(
        ticked,
        [
            "cr:read",
            "recordings:write",
            "collections:write",
            "account:write"
        ]
    );

    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_an_agent_then_suspend_it() {
    let Some(Fixture {
        server,
        browser,
        outbox,
        _db,
    }) = fixture().await
    else {
        return;
    };
    sign_in(&browser, &server, outbox.path(), "king@example.com").await;

    // Create: the service key is shown once, with the door it opens.
    browser.goto(&server.url("/account/agents")).await;
    browser
        .find("form[action=\"/account/agents\"] input[name=name]")
        .await
        .send_keys("Scout")
        .await;
    assert!(
        browser
            .find("input[name=kind][value=agent]")
            .await
            .is_selected()
            .await
    );
    browser
        .submit("form[action=\"/account/agents\"] button[type=submit]")
        .await;
    assert_eq!(browser.title().await, "Service key · Elixir");
    let key = browser.find("#service-key").await.text().await;
    assert!(key.starts_with("svt_") && key.len() == 47, "{key}");
    let door = browser.find(".box code").await.text().await;
    let public_id = door
        .strip_prefix(&format!("{}/a/", server.origin))
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("door {door}"))
        .to_owned();
    let scout = server
        .store
        .agent_by_public_id(&public_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (scout.name.as_str(), scout.owner_account_id),
        ("Scout", server.person.id)
    );

    // The key works at the door the page showed.
    let client = Client::new(door.clone(), Some(key.clone()));
    success(&client.tool("elixir_docs", json!({})).await);

    // The agent's own page: active; Suspend → back on Agents, suspended.
    browser
        .goto(&server.url(&format!("/account/agents/{public_id}")))
        .await;
    assert_eq!(browser.title().await, "Scout · Elixir");
    assert_eq!(browser.find(".status").await.text().await, "active");
    assert!(!browser.page_source().await.contains(&key), "shown once");
    browser
        .submit(&format!(
            "form[action=\"/account/agents/{public_id}/suspend\"] button"
        ))
        .await;
    assert_eq!(
        browser.current_url().await,
        server.url("/account/agents?done=suspended")
    );
    assert!(
        browser
            .find("p.ok")
            .await
            .text()
            .await
            .starts_with("Agent suspended")
    );
    assert_eq!(
        browser
            .find(&format!("#agent-{public_id} .status"))
            .await
            .text()
            .await,
        "suspended"
    );

    // The next door call is refused.
    let refused = client.tool("elixir_docs", json!({})).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(
        refused.header("www-authenticate").contains("suspended"),
        "{}",
        refused.header("www-authenticate")
    );

    browser.close().await;
}

/// Account → Players in the browser: a tracked player recorded from a generated world shows
/// its recording, its trophy line and its win rate by mode as SVG pictures, each with the same
/// facts as text beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_players_page_draws_the_record() {
    use elixir::model::{Principal, Relationship, TrackPlayer};
    use elixir::recorder::ingest::{new_battles, player_rows};
    use mcp_door::Clock;
    use testkit::cr_api::{World, WorldConfig, render};

    let Some(Fixture {
        server,
        browser,
        outbox,
        _db,
    }) = fixture().await
    else {
        return;
    };
    let now = server.clock.now_millis();
    let day = 24 * 3_600_000;
    let world = World::generate(WorldConfig::new(5, 4, 20, now)).unwrap();
    let player = &world.players()[0];
    let tag = elixir_record::Tag::parse(&player.tag).unwrap();
    server
        .store
        .track_player(&TrackPlayer {
            account_id: server.person.id,
            principal: Principal::Person,
            player_tag: player.tag.clone(),
            relationship: Relationship::Primary,
            max_players: None,
            at: now - 20 * day,
        })
        .await
        .unwrap();
    // Ten daily reads of the log and the profile, as the recorder would store them.
    for d in (0..10).rev() {
        let at = now - d * day;
        let log = render::battlelog_json(&world, 0, at).to_string();
        let battles = elixir_record::Battle::from_battlelog(log.as_bytes())
            .unwrap()
            .battles;
        let rows = new_battles(&tag, &battles).unwrap();
        server
            .store
            .ingest_battles(&player.tag, None, at, &rows)
            .await
            .unwrap();
        let profile = render::player_json(&world, 0, at).unwrap().to_string();
        let read =
            elixir_record::normalize::player::PlayerProfile::from_upstream(profile.as_bytes())
                .unwrap();
        let (row, snapshot) = player_rows(&read.profile, at).unwrap();
        server.store.put_player(&row, &snapshot).await.unwrap();
    }

    sign_in(&browser, &server, outbox.path(), "king@example.com").await;
    browser.goto(&server.url("/account/players")).await;
    assert_eq!(browser.title().await, "Players · Elixir");
    let charts = browser.find_all("svg[role=img]").await;
    assert_eq!(charts.len(), 2, "a trophy line and a mode chart");
    let captions: Vec<String> = {
        let mut out = Vec::new();
        for c in browser.find_all("figcaption").await {
            out.push(c.text().await);
        }
        out
    };
    assert!(captions[0].starts_with("Trophies from "), "{captions:?}");
    assert!(captions[0].contains("10 profile reads"), "{captions:?}");
    assert!(
        captions[1].starts_with("Win rate by mode, last 30 days."),
        "{captions:?}"
    );
    let source = browser.page_source().await;
    assert!(source.contains(&player.tag), "the player is listed");
    assert!(source.contains("recording active"), "{source}");
    assert!(!source.contains("<script"), "no script on the page");
}
