//! Reports by role (GM or player) and language.

use serde_json::json;
use uuid::Uuid;

use super::{Browser, GM_SECRET, create_assignment, play, token, turn, world};

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

crate::on_both_backends!(reports_by_role_and_language);
