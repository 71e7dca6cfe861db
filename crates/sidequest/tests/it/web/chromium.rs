//! The end-to-end test in a real browser: headless Chromium (Debian's `chromium` and
//! `chromium-driver`, over `testkit::webdriver`) as two people in two sessions. The GM signs
//! in, writes and publishes a scenario, creates an assignment (double-submitted: one
//! assignment), generates a token; the player's assistant plays two turns and finishes over
//! the player door; the GM reviews (one approved, one rejected) and downloads the Polish
//! report; the player sees the decisions and notes and no GM-only text on any page, revokes
//! the token, and the next MCP call is 401. Every page is photographed in both languages under
//! `target/web-screenshots/` and read for console errors and CSP violations.

use std::path::PathBuf;

use serde_json::json;
use testkit::webdriver::{self, Browser};
use uuid::Uuid;

use super::page_world;
use crate::on_both_backends;
use crate::rest::password_of;

const NODE_SECRET: &str = "GM-ONLY-NODE: the keeper is the smuggler";
const NOTES_SECRET: &str = "GM-ONLY-NOTES: Mira lies about the map";

/// Where the screenshots go (CI keeps them as artifacts; git ignores `target/`).
fn shots_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("web-screenshots")
}

/// The console entries that are errors: any SEVERE entry (failed loads, script errors) and
/// every Content-Security-Policy report, whatever its level.
async fn console_errors(b: &Browser) -> Vec<String> {
    b.console_log()
        .await
        .into_iter()
        .filter(|(level, message)| level == "SEVERE" || message.contains("Content Security Policy"))
        .map(|(level, message)| format!("{level}: {message}"))
        .collect()
}

/// Shows the current page in English and in Polish: a screenshot of each, no console error,
/// and the page's `<html lang>` as switched; returns to English.
async fn photograph(b: &Browser, base: &str, name: &str, backend: &str) {
    let url = b.current_url().await;
    let path = url.strip_prefix(base).unwrap_or("/").to_owned();
    for lang in ["pl", "en"] {
        let back = serde_urlencoded::to_string([("back", path.as_str())]).unwrap();
        b.goto(&format!("{base}/language/{lang}?{back}")).await;
        let html = b.page_source().await;
        assert!(
            html.contains(&format!("<html lang=\"{lang}\">")),
            "{name} in {lang}"
        );
        b.screenshot(&shots_dir().join(format!("{backend}-{name}-{lang}.png")))
            .await;
        let errors = console_errors(b).await;
        assert!(errors.is_empty(), "{name} ({lang}): {errors:?}");
    }
}

async fn sign_in(b: &Browser, base: &str, username: &str) {
    b.goto(&format!("{base}/")).await;
    b.find("#f-username").await.send_keys(username).await;
    b.find("#f-password")
        .await
        .send_keys(&password_of(username))
        .await;
    b.submit("#signin").await;
    b.wait_for_url("home", |u| u == format!("{base}/")).await;
}

async fn type_into(b: &Browser, css: &str, text: &str) {
    let e = b.find(css).await;
    e.clear().await;
    e.send_keys(text).await;
}

async fn two_people_play_a_session_in_chromium(url: &str) {
    if !webdriver::available() {
        eprintln!("skipped: chromedriver or chromium not installed");
        return;
    }
    let backend = if url.starts_with("sqlite") {
        "sqlite"
    } else {
        "postgres"
    };
    let w = page_world(url).await;
    let s = &w.server;
    let base = format!("http://{}", s.addr);
    let gm = Browser::start().await;
    gm.resize(1100, 1600).await;

    // The GM signs in (the sign-in page first, photographed before and after).
    // The console channel works: an inline script (refused by the CSP) and a missing image
    // on one of our pages are both reported.
    gm.goto(&format!("{base}/signin")).await;
    gm.execute(
        "const s = document.createElement('script'); s.textContent = 'window.x = 1;'; \
         document.body.appendChild(s); const i = document.createElement('img'); \
         i.src = '/static/missing.png'; document.body.appendChild(i); \
         return new Promise(r => setTimeout(r, 300));",
        vec![],
    )
    .await;
    let logged = console_errors(&gm).await;
    assert!(
        logged.iter().any(|e| e.contains("Content Security Policy")),
        "{logged:?}"
    );
    assert!(
        logged.iter().any(|e| e.contains("missing.png")),
        "{logged:?}"
    );
    gm.goto(&format!("{base}/signin")).await;
    photograph(&gm, &base, "signin", backend).await;
    sign_in(&gm, &base, "gm").await;
    photograph(&gm, &base, "home-gm", backend).await;

    // Writes a scenario: title, one scene with GM-only text, one NPC; publishes it.
    type_into(&gm, "#f-title", "The Lighthouse").await;
    gm.submit("#create-scenario").await;
    let editor = gm
        .wait_for_url("the editor", |u| u.contains("/scenarios/"))
        .await;
    let sid = editor.rsplit('/').next().unwrap().to_owned();
    for (id, kind, title) in [
        ("dock", "scene", "The old dock"),
        ("keeper", "npc", "The keeper"),
    ] {
        type_into(&gm, "#f-id", id).await;
        gm.find(&format!("#f-kind option[value=\"{kind}\"]"))
            .await
            .click()
            .await;
        type_into(&gm, "#f-title", title).await;
        type_into(&gm, "#f-public_text", "Fog and tar everywhere.").await;
        type_into(&gm, "#f-gm_text", NODE_SECRET).await;
        gm.submit("#save-node").await;
        assert!(gm.page_source().await.contains(title));
    }
    // The live counter counts as the GM types (the script runs under the CSP).
    type_into(&gm, "#f-title", "abc").await;
    assert_eq!(gm.find("#c-title").await.text().await, "3 / 200");
    photograph(&gm, &base, "scenario-editor", backend).await;
    gm.submit("#publish").await;
    assert!(gm.page_source().await.contains("/versions/1"));
    gm.goto(&format!("{base}/scenarios/{sid}/versions/1")).await;
    photograph(&gm, &base, "scenario-version", backend).await;

    // Creates the assignment; the button is clicked twice before the answer comes.
    gm.goto(&format!("{base}/plays/new?scenario={sid}")).await;
    type_into(&gm, "#f-player_username", "player").await;
    type_into(&gm, "#f-character", "Arin").await;
    assert_eq!(gm.find("#c-character").await.text().await, "4 / 200");
    type_into(&gm, "#f-brief", "Search the old dock before dawn.").await;
    type_into(&gm, "#f-boundaries", "No fights.").await;
    type_into(&gm, "#f-return_condition", "Back at dawn.").await;
    type_into(&gm, "#f-gm_notes", NOTES_SECRET).await;
    gm.find("input[name=published_node_ids][value=dock]")
        .await
        .click()
        .await;
    gm.find("input[name=published_node_ids][value=keeper]")
        .await
        .click()
        .await;
    photograph(&gm, &base, "new-assignment", backend).await;
    // photographing reloaded the form: fill it again, then double-submit it
    type_into(&gm, "#f-player_username", "player").await;
    type_into(&gm, "#f-character", "Arin").await;
    type_into(&gm, "#f-brief", "Search the old dock before dawn.").await;
    type_into(&gm, "#f-boundaries", "No fights.").await;
    type_into(&gm, "#f-return_condition", "Back at dawn.").await;
    type_into(&gm, "#f-gm_notes", NOTES_SECRET).await;
    gm.find("input[name=published_node_ids][value=dock]")
        .await
        .click()
        .await;
    gm.find("input[name=published_node_ids][value=keeper]")
        .await
        .click()
        .await;
    gm.execute(
        "const f = document.querySelector('form[action=\"/plays\"]'); f.requestSubmit(); f.requestSubmit();",
        vec![],
    )
    .await;
    let play = gm
        .wait_for_url("the assignment page", |u| {
            u.contains("/plays/") && !u.contains("/new")
        })
        .await;
    let a = play.strip_prefix(&base).unwrap().to_owned();
    assert_eq!(s.store.assignments_of(w.gm.id, 10).await.unwrap().len(), 1);

    // Generates the token: shown once with the MCP client configurations.
    gm.submit("#token-generate").await;
    let token = gm
        .find("#play-token")
        .await
        .attribute("value")
        .await
        .unwrap();
    assert!(token.starts_with("sqp_"), "{token}");
    assert!(gm.find("#cfg-code").await.text().await.contains(&token));
    gm.screenshot(&shots_dir().join(format!("{backend}-token-shown-en.png")))
        .await;
    assert!(console_errors(&gm).await.is_empty());

    // The player's assistant: two turns and the finish, over the player door. Between the
    // turns the GM opens the review queue; the second turn makes that form stale.
    let assistant = s.client(&token);
    for (v, text) in [(1, "first"), (2, "second")] {
        if v == 2 {
            gm.goto(&format!("{base}{a}/review")).await;
            gm.find("input[name=d0][value=approved]")
                .await
                .click()
                .await;
        }
        assistant
            .tool("commit_play_turn", json!({
                "operation_id": Uuid::new_v4(), "expected_version": v,
                "player_action": format!("I search the dock, {text}"),
                "narration": format!("You find a clue, {text}"),
                "memory_markdown": "memory", "current_scene": "dock",
                "consequences": [{"category": "discovery", "description": format!("Clue {text}")}],
            }))
            .await
            .json();
    }
    // The stale form: nothing saved, what changed is shown.
    gm.submit("#submit-review").await;
    let stale = gm.find("#stale").await.text().await;
    assert!(
        stale.contains("You saw version 2; it is now at version 3."),
        "{stale}"
    );
    assert!(stale.contains("You find a clue, second"), "{stale}");
    gm.screenshot(&shots_dir().join(format!("{backend}-review-stale-en.png")))
        .await;
    // The document's own 409 is the one entry: Chromium logs any non-2xx document as a
    // failed load; no script error, no CSP violation.
    let errors = console_errors(&gm).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(&format!("{base}{a}/review - Failed to load resource"))
            && errors[0].contains("status of 409"),
        "{errors:?}"
    );
    assert_eq!(
        s.store
            .pending_count(a.trim_start_matches("/plays/").parse().unwrap())
            .await
            .unwrap(),
        2
    );
    assistant
        .tool("finish_play_session", json!({"operation_id": Uuid::new_v4(), "expected_version": 3, "summary": "Arin is back at dawn."}))
        .await
        .json();

    gm.goto(&format!("{base}{a}")).await;
    photograph(&gm, &base, "assignment-gm", backend).await;

    // The GM reviews: the first approved, the second rejected, each with a note.
    gm.goto(&format!("{base}{a}/review")).await;
    photograph(&gm, &base, "review", backend).await;
    gm.find("input[name=d0][value=approved]")
        .await
        .click()
        .await;
    type_into(&gm, "#f-n0", "Mira remembers you.").await;
    gm.find("input[name=d1][value=rejected]")
        .await
        .click()
        .await;
    type_into(&gm, "#f-n1", "Not this time.").await;
    gm.submit("#submit-review").await;
    assert!(gm.find("#review-done").await.text().await.contains("5"));

    // The Polish report, read and downloaded with the GM's session.
    gm.goto(&format!("{base}{a}/report?lang=pl")).await;
    assert!(
        gm.page_source()
            .await
            .contains("Raport z przygody pobocznej")
    );
    photograph(&gm, &base, "report", backend).await;
    gm.goto(&format!("{base}{a}/report?lang=pl")).await;
    let href = gm.find("#download").await.attribute("href").await.unwrap();
    let cookie = gm
        .cookies()
        .await
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("; ");
    let download = reqwest::Client::new()
        .get(format!("{base}{href}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert!(
        download.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("-pl.md")
    );
    let md = download.text().await.unwrap();
    assert!(md.contains("zatwierdzona") && md.contains("odrzucona") && md.contains(NOTES_SECRET));
    gm.goto(&format!("{base}/author-tokens")).await;
    photograph(&gm, &base, "author-tokens", backend).await;

    // The player, in a browser of their own.
    let player = Browser::start().await;
    player.resize(1100, 1600).await;
    sign_in(&player, &base, "player").await;
    photograph(&player, &base, "home-player", backend).await;
    player.click_and_wait(&format!("a[href=\"{a}\"]")).await;
    let page = player.page_source().await;
    assert!(page.contains("Mira remembers you.") && page.contains("Not this time."));
    assert!(page.contains("status-approved") && page.contains("status-rejected"));
    photograph(&player, &base, "assignment-player", backend).await;
    for path in [
        "/".to_owned(),
        a.clone(),
        format!("{a}/report?lang=pl"),
        format!("{a}/report?lang=en"),
    ] {
        player.goto(&format!("{base}{path}")).await;
        let html = player.page_source().await;
        assert!(
            !html.contains("GM-ONLY"),
            "{path} shows GM-only text to the player"
        );
    }
    // The player revokes the token; the next MCP call is 401.
    player.goto(&format!("{base}{a}")).await;
    player.submit("#token-revoke").await;
    assert!(
        player
            .page_source()
            .await
            .contains("There is no live token.")
    );
    assert_eq!(
        assistant.tool("get_play_context", json!({})).await.status,
        401
    );
    assert!(console_errors(&player).await.is_empty());

    // Keyboard only: Tab from the top reaches the skip link first, and focus is visible.
    player.goto(&format!("{base}/")).await;
    let focused = player
        .execute(
            "document.body.focus(); return new Promise(r => setTimeout(r, 0)).then(() => document.activeElement.tagName);",
            vec![],
        )
        .await;
    assert_eq!(focused, json!("BODY"));
    player.find("body").await.send_keys("\u{E004}").await;
    let active = player
        .execute("return document.activeElement.className + '|' + getComputedStyle(document.activeElement).left;", vec![])
        .await;
    assert!(active.as_str().unwrap().starts_with("skip|"), "{active}");

    gm.close().await;
    player.close().await;
}

on_both_backends!(two_people_play_a_session_in_chromium);
