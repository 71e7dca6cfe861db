//! A whole week's play through the pages: the GM writes and publishes a scenario, creates an
//! assignment (twice: one assignment), generates a token; the assistant plays two turns and
//! finishes over the player door; the GM reviews (one approved, one rejected), meets a stale
//! form and a resubmitted one, reads and downloads the Polish report; the player sees the
//! decisions and notes and no GM-only text, revokes the token, and the next MCP call is 401.

use serde_json::json;
use uuid::Uuid;

use super::{Browser, page_world};
use crate::on_both_backends;

const SECRET_NODE: &str = "GM-ONLY: the keeper is the smuggler.";
const GM_NOTES: &str = "GM-NOTES: Mira lies about the map.";

async fn a_whole_session_through_the_pages(url: &str) {
    let w = page_world(url).await;
    let s = &w.server;
    let mut gm = Browser::new(s).sign_in("gm").await;
    let csrf = gm.csrf();

    // Scenario: create, add two nodes (one scene with GM-only text), edit one, delete one, publish.
    let r = gm
        .post(
            "/scenarios",
            &[("csrf", &csrf), ("title", "The Lighthouse")],
        )
        .await;
    r.expect(303);
    let editor = r.location().to_owned();
    let sid = editor.trim_start_matches("/scenarios/").to_owned();
    for (id, kind, title) in [
        ("dock", "scene", "The dock"),
        ("keeper", "npc", "The keeper"),
        ("gull", "note", "Gull"),
    ] {
        gm.post(
            &format!("{editor}/nodes"),
            &[
                ("csrf", &csrf),
                ("id", id),
                ("kind", kind),
                ("title", title),
                ("published", "1"),
                ("public_text", "Fog everywhere."),
                ("gm_text", SECRET_NODE),
            ],
        )
        .await
        .expect(303);
    }
    let edit = gm.get(&format!("{editor}?edit=dock")).await;
    edit.expect(200);
    assert!(edit.text.contains("value=\"The dock\""));
    gm.post(
        &format!("{editor}/nodes"),
        &[
            ("csrf", &csrf),
            ("existing", "1"),
            ("id", "dock"),
            ("kind", "scene"),
            ("title", "The old dock"),
            ("published", "1"),
            ("public_text", "Fog and tar."),
            ("gm_text", SECRET_NODE),
        ],
    )
    .await
    .expect(303);
    gm.post(&format!("{editor}/nodes/gull/delete"), &[("csrf", &csrf)])
        .await
        .expect(303);
    let r = gm
        .post(&format!("{editor}/publish"), &[("csrf", &csrf)])
        .await;
    assert_eq!(r.location(), format!("{editor}?done=published"));
    let page = gm.get(&format!("{editor}?done=published")).await;
    assert!(page.text.contains("The old dock") && !page.text.contains("Gull"));
    assert!(page.text.contains(&format!("/scenarios/{sid}/versions/1")));
    let v1 = gm.get(&format!("/scenarios/{sid}/versions/1")).await;
    v1.expect(200);
    assert!(v1.text.contains("Fog and tar."));

    // New assignment: the form documents visibility and bounds; submitted twice, one assignment.
    let form = gm.get(&format!("/plays/new?scenario={sid}")).await;
    form.expect(200);
    assert!(form.text.contains("Only you (the GM) see this."));
    assert!(form.text.contains("data-max=\"4000\""));
    assert!(form.text.contains("value=\"dock\"") && form.text.contains("value=\"keeper\""));
    let id = form.hidden("id");
    let fields = [
        ("csrf", csrf.as_str()),
        ("id", &id),
        ("scenario_id", &sid),
        ("source_version", "1"),
        ("player_username", "player"),
        ("mode", "downtime"),
        ("language", "pl"),
        ("character", "Arin"),
        ("brief", "Przeszukaj stary dok."),
        ("instructions", ""),
        ("boundaries", "Bez walki."),
        ("return_condition", "Powrót o świcie."),
        ("gm_notes", GM_NOTES),
        ("published_node_ids", "dock"),
        ("published_node_ids", "keeper"),
    ];
    let first = gm.post("/plays", &fields).await;
    first.expect(303);
    let second = gm.post("/plays", &fields).await;
    second.expect(303);
    assert_eq!(first.location(), second.location());
    assert_eq!(s.store.assignments_of(w.gm.id, 10).await.unwrap().len(), 1);
    let a = first.location().to_owned();

    // Token: shown once with the client configurations, then only its expiry.
    let issued = gm.post(&format!("{a}/token"), &[("csrf", &csrf)]).await;
    issued.expect(201);
    let token = issued.hidden_token();
    assert!(
        issued
            .text
            .contains("claude mcp add --transport http sidequest")
    );
    assert!(issued.text.contains("mcp-remote"));
    let again = gm.get(&a).await;
    assert!(!again.text.contains(&token));
    assert!(
        again
            .text
            .contains("The current token expires: 2026-01-15 00:00 UTC"),
        "{}",
        again.text
    );

    // The player's assistant: two turns and the finish.
    let assistant = s.client(&token);
    let mut ids = Vec::new();
    for (v, text) in [(1, "first"), (2, "second")] {
        let out = assistant
            .tool("commit_play_turn", json!({
                "operation_id": Uuid::new_v4(), "expected_version": v,
                "player_action": format!("I search, {text}"), "narration": format!("You find it, {text}"),
                "memory_markdown": "memory", "current_scene": "dock",
                "consequences": [{"category": "discovery", "description": format!("A clue, {text}")}],
            }))
            .await
            .json();
        ids.push(out["consequences"][0]["id"].as_str().unwrap().to_owned());
    }
    let done = assistant
        .tool("finish_play_session", json!({"operation_id": Uuid::new_v4(), "expected_version": 3, "summary": "Arin wraca o świcie."}))
        .await
        .json();
    assert_eq!(done["version"], 4);

    // The GM's page: journal, consequences, the timeline picture and its text.
    let page = gm.get(&a).await;
    assert!(
        page.text.contains("You find it, second") && page.text.contains("Arin wraca o świcie.")
    );
    assert!(
        page.text
            .contains("role=\"img\" aria-labelledby=\"tl-title tl-text\"")
    );
    assert_eq!(page.text.matches("<g class=\"step\">").count(), 3);
    assert!(page.text.contains("Turn 2 (consequences proposed: 1)"));

    // Review: two forms read at version 4; the first saves, its resubmission is the same
    // review, the second is stale and shows what changed.
    let q1 = gm.get(&format!("{a}/review")).await;
    q1.expect(200);
    let q2 = gm.get(&format!("{a}/review")).await;
    let op1 = q1.hidden("operation_id");
    let c0 = q1.hidden("c0");
    let c1 = q1.hidden("c1");
    assert_eq!(q1.hidden("expected_version"), "4");
    let decide = [
        ("csrf", csrf.as_str()),
        ("operation_id", &op1),
        ("expected_version", "4"),
        ("c0", &c0),
        ("d0", "approved"),
        ("n0", "Mira remembers you."),
        ("c1", &c1),
        ("d1", "rejected"),
        ("n1", "Not this time."),
    ];
    let saved = gm.post(&format!("{a}/review"), &decide).await;
    saved.expect(303);
    assert_eq!(saved.location(), format!("{a}/review?done=5"));
    let resubmitted = gm.post(&format!("{a}/review"), &decide).await;
    assert_eq!(resubmitted.location(), format!("{a}/review?done=5"));
    // Two turns, the finish and one review: the resubmission added nothing.
    assert_eq!(
        s.store
            .journal(id.parse().unwrap(), false)
            .await
            .unwrap()
            .len(),
        4
    );
    let op2 = q2.hidden("operation_id");
    let stale = gm
        .post(
            &format!("{a}/review"),
            &[
                ("csrf", csrf.as_str()),
                ("operation_id", &op2),
                ("expected_version", "4"),
                ("c0", &c0),
                ("d0", "rejected"),
                ("n0", ""),
            ],
        )
        .await;
    stale.expect(409);
    assert!(stale.text.contains("The assignment changed"));
    assert!(
        stale
            .text
            .contains("You saw version 4; it is now at version 5."),
        "{}",
        stale.text
    );
    assert!(stale.text.contains("Mira remembers you."));
    let after = gm.get(&format!("{a}/review?done=5")).await;
    assert!(after.text.contains("Nothing awaits review."));

    // The Polish report: page and download.
    let report = gm.get(&format!("{a}/report?lang=pl")).await;
    report.expect(200);
    assert!(report.text.contains("Raport z przygody pobocznej"));
    let md = gm.get(&format!("{a}/report.md?lang=pl")).await;
    md.expect(200);
    assert_eq!(md.header("content-type"), "text/markdown; charset=utf-8");
    assert!(
        md.header("content-disposition")
            .contains(&format!("sidequest-report-{id}-pl.md"))
    );
    assert!(md.text.contains("zatwierdzona") && md.text.contains(GM_NOTES));

    // The player: decisions and notes, never GM-only text, on any page.
    let mut player = Browser::new(s).sign_in("player").await;
    let home = player.get("/").await;
    assert!(home.text.contains(&format!("href=\"{a}\"")));
    for path in [
        a.clone(),
        format!("{a}/report?lang=pl"),
        format!("{a}/report.md?lang=pl"),
        format!("{a}/report?lang=en"),
        "/".into(),
    ] {
        let p = player.get(&path).await;
        p.expect(200);
        assert!(
            !p.text.contains(GM_NOTES) && !p.text.contains(SECRET_NODE),
            "{path}"
        );
    }
    let mine = player.get(&a).await;
    assert!(mine.text.contains("Mira remembers you.") && mine.text.contains("Not this time."));
    assert!(mine.text.contains("status-approved") && mine.text.contains("status-rejected"));
    assert!(!mine.text.contains("review-link"));
    // The player's timeline shows the GM's decisions too (from the consequences, not the
    // GM-only review event).
    assert!(
        mine.text
            .contains("GM decisions (approved: 1, rejected: 1)"),
        "{}",
        mine.text
    );
    assert_eq!(mine.text.matches("<g class=\"step\">").count(), 4);

    // The player revokes the token; the next MCP call is 401.
    let pcsrf = player.csrf();
    let r = player
        .post(&format!("{a}/token/revoke"), &[("csrf", &pcsrf)])
        .await;
    r.expect(303);
    let p = player.get(&format!("{a}?revoked=1")).await;
    assert!(p.text.contains("There is no live token."));
    assert_eq!(
        assistant.tool("get_play_context", json!({})).await.status,
        401
    );
}

async fn author_tokens_page(url: &str) {
    let w = page_world(url).await;
    let mut gm = Browser::new(&w.server).sign_in("gm").await;
    let csrf = gm.csrf();
    let r = gm
        .post(
            "/author-tokens",
            &[("csrf", &csrf), ("name", "Claude Desktop")],
        )
        .await;
    r.expect(201);
    let at = r
        .text
        .find("id=\"issued-token\" class=\"secret\" readonly value=\"")
        .unwrap();
    let token = r.text[at + 49..].split('"').next().unwrap().to_owned();
    assert!(token.starts_with("sqa_"), "{token}");
    let list = gm.get("/author-tokens").await;
    assert!(list.text.contains("Claude Desktop") && !list.text.contains(&token));
    let author =
        testkit::mcp::Client::new(format!("http://{}/mcp", w.server.addr), Some(token.clone()));
    assert_eq!(author.request("tools/list", json!({})).await.status, 200);
    let tid = w.server.store.author_tokens(w.gm.id).await.unwrap()[0].id;
    gm.post(&format!("/author-tokens/{tid}/revoke"), &[("csrf", &csrf)])
        .await
        .expect(303);
    assert_eq!(author.request("tools/list", json!({})).await.status, 401);
    let r = gm
        .post(
            "/author-tokens",
            &[("csrf", &csrf), ("name", &"n".repeat(101))],
        )
        .await;
    r.expect(422);
    assert!(
        r.text
            .contains("id=\"e-name\">has 101 characters; at most 100 allowed"),
        "{}",
        r.text
    );
}

/// A review note of 2,000 characters is saved; 2,001 comes back at its field.
async fn review_note_bounds(url: &str) {
    let w = page_world(url).await;
    let s = &w.server;
    let mut gm = Browser::new(s).sign_in("gm").await;
    let csrf = gm.csrf();
    let form = gm.get(&format!("/plays/new?scenario={}", w.scenario)).await;
    let id = form.hidden("id");
    let sc = w.scenario.to_string();
    gm.post("/plays", &super::forms::creation(&csrf, &id, &sc, "Arin"))
        .await
        .expect(303);
    let a = format!("/plays/{id}");
    let token = gm
        .post(&format!("{a}/token"), &[("csrf", &csrf)])
        .await
        .hidden_token();
    crate::rest::turn(s, &token, 1, 1, "bounds").await;
    let q = gm.get(&format!("{a}/review")).await;
    let (op, c0) = (q.hidden("operation_id"), q.hidden("c0"));
    let past = "ż".repeat(2001);
    let r = gm
        .post(
            &format!("{a}/review"),
            &[
                ("csrf", csrf.as_str()),
                ("operation_id", &op),
                ("expected_version", "2"),
                ("c0", &c0),
                ("d0", "approved"),
                ("n0", &past),
            ],
        )
        .await;
    r.expect(422);
    assert!(
        r.text
            .contains("<p class=\"err\" id=\"e-n0\">2001 characters, at most 2000 allowed</p>"),
        "{}",
        r.text
    );
    let none = gm
        .post(
            &format!("{a}/review"),
            &[
                ("csrf", csrf.as_str()),
                ("operation_id", &op),
                ("expected_version", "2"),
                ("c0", &c0),
                ("d0", "skip"),
            ],
        )
        .await;
    none.expect(422);
    assert!(none.text.contains("id=\"e-decisions\""));
    let at = "ż".repeat(2000);
    gm.post(
        &format!("{a}/review"),
        &[
            ("csrf", csrf.as_str()),
            ("operation_id", &op),
            ("expected_version", "2"),
            ("c0", &c0),
            ("d0", "approved"),
            ("n0", &at),
        ],
    )
    .await
    .expect(303);
}

on_both_backends!(
    a_whole_session_through_the_pages,
    author_tokens_page,
    journal_pages,
    review_note_bounds
);

/// The journal on the assignment page: ten entries a page, ascending by committed version,
/// with links to the earlier and later pages.
async fn journal_pages(url: &str) {
    let w = page_world(url).await;
    let s = &w.server;
    let mut player = Browser::new(s).sign_in("player").await;
    let mut gm = Browser::new(s).sign_in("gm").await;
    let csrf = gm.csrf();
    let form = gm.get(&format!("/plays/new?scenario={}", w.scenario)).await;
    let id = form.hidden("id");
    let sc = w.scenario.to_string();
    gm.post("/plays", &super::forms::creation(&csrf, &id, &sc, "Arin"))
        .await
        .expect(303);
    let a = format!("/plays/{id}");
    let token = gm
        .post(&format!("{a}/token"), &[("csrf", &csrf)])
        .await
        .hidden_token();
    for v in 1..=12 {
        crate::rest::turn(s, &token, v, 0, &format!("step-{v:02}")).await;
    }
    let first = player.get(&a).await;
    first.expect(200);
    assert!(first.text.contains("Entries 1–10 of 12"), "{}", first.text);
    let at = |page: &str, v: i64| page.find(&format!("step-{v:02}")).unwrap();
    assert!(at(&first.text, 1) < at(&first.text, 2) && at(&first.text, 9) < at(&first.text, 10));
    assert!(!first.text.contains("step-11") && !first.text.contains("rel=\"prev\""));
    assert!(
        first
            .text
            .contains(&format!("href=\"{a}?offset=10\" rel=\"next\""))
    );
    let second = player.get(&format!("{a}?offset=10")).await;
    assert!(second.text.contains("Entries 11–12 of 12"));
    assert!(second.text.contains("step-12") && !second.text.contains("step-10"));
    assert!(
        second
            .text
            .contains(&format!("href=\"{a}?offset=0\" rel=\"prev\""))
    );
    assert!(!second.text.contains("rel=\"next\""));
    player.get(&format!("{a}?offset=-1")).await.expect(422);
    player.get(&format!("{a}?offset=x")).await.expect(422);
}
