//! The REST access matrix carried to the pages: each page for the GM, the player, another GM,
//! a deactivated account and an anonymous visitor — shown, refused (403) or not found (404,
//! never revealing that it exists); the player's pages never hold GM-only text.

use super::{Browser, page_world};
use crate::on_both_backends;
use crate::rest::turn;

/// The start of the GM notes of `crate::rest::GM_SECRET` (the rest has an apostrophe, which
/// pages escape).
const GM_SECRET: &str = "GM-SECRET: Mira";

async fn every_page_for_every_actor(url: &str) {
    let w = page_world(url).await;
    let s = &w.server;
    let mut gm = Browser::new(s).sign_in("gm").await;
    let mut player = Browser::new(s).sign_in("player").await;
    let mut rival = Browser::new(s).sign_in("rival").await;
    let mut gone = Browser::new(s).sign_in("gone").await;
    let gone_user = s.store.user_by_username("gone").await.unwrap().unwrap();
    s.store.set_user_active(gone_user.id, false).await.unwrap();
    let mut anon = Browser::new(s);

    let csrf = gm.csrf();
    let form = gm.get(&format!("/plays/new?scenario={}", w.scenario)).await;
    let id = form.hidden("id");
    let sc = w.scenario.to_string();
    gm.post("/plays", &super::forms::creation(&csrf, &id, &sc, "Arin"))
        .await
        .expect(303);
    let a = format!("/plays/{id}");
    let issued = gm.post(&format!("{a}/token"), &[("csrf", &csrf)]).await;
    issued.expect(201);
    let token = issued.hidden_token();
    turn(s, &token, 1, 1, "matrix").await;

    // (path, gm, player, rival, gone, anonymous); 303 is the sign-in redirect.
    let table: Vec<(String, [u16; 5])> = vec![
        ("/".into(), [200, 200, 200, 303, 303]),
        (a.clone(), [200, 200, 404, 303, 303]),
        (format!("{a}?offset=10"), [200, 200, 404, 303, 303]),
        (format!("{a}/review"), [200, 403, 404, 303, 303]),
        (format!("{a}/report"), [200, 200, 404, 303, 303]),
        (format!("{a}/report?lang=pl"), [200, 200, 404, 303, 303]),
        (format!("{a}/report.md?lang=en"), [200, 200, 404, 303, 303]),
        (
            format!("/scenarios/{}", w.scenario),
            [200, 403, 404, 303, 303],
        ),
        (
            format!("/scenarios/{}/versions/1", w.scenario),
            [200, 403, 404, 303, 303],
        ),
        (
            format!("/scenarios/{}/versions/2", w.scenario),
            [404, 403, 404, 303, 303],
        ),
        (
            format!("/plays/new?scenario={}", w.scenario),
            [200, 403, 404, 303, 303],
        ),
        ("/author-tokens".into(), [200, 403, 200, 303, 303]),
        ("/plays/not-a-uuid".into(), [404, 404, 404, 303, 303]),
        (
            format!("/plays/{}", uuid::Uuid::new_v4()),
            [404, 404, 404, 303, 303],
        ),
    ];
    for (path, want) in &table {
        let got = [
            gm.get(path).await,
            player.get(path).await,
            rival.get(path).await,
            gone.get(path).await,
            anon.get(path).await,
        ];
        let statuses: Vec<u16> = got.iter().map(|p| p.status).collect();
        assert_eq!(&statuses[..], &want[..], "{path}");
        // Whatever the player is shown, no GM-only text is in it.
        assert!(
            !got[1].text.contains(GM_SECRET),
            "{path} shows the GM notes to the player"
        );
        assert!(!got[2].text.contains(GM_SECRET), "{path}");
        if *path == a || path.contains("/report") {
            assert!(
                got[0].text.contains(GM_SECRET),
                "{path} hides the GM notes from the GM"
            );
        }
    }
    // A player cannot act for the GM: the review form is refused even with the token.
    let pcsrf = player.csrf();
    let r = player
        .post(
            &format!("{a}/review"),
            &[
                ("csrf", &pcsrf),
                ("operation_id", &uuid::Uuid::new_v4().to_string()),
                ("expected_version", "2"),
                ("c0", &uuid::Uuid::new_v4().to_string()),
                ("d0", "approved"),
            ],
        )
        .await;
    r.expect(403);
    // Another GM's token revocation of this assignment is 404 and revokes nothing.
    let rcsrf = rival.csrf();
    rival
        .post(&format!("{a}/token/revoke"), &[("csrf", &rcsrf)])
        .await
        .expect(404);
    assert_eq!(
        s.client(&token)
            .tool("get_play_context", serde_json::json!({}))
            .await
            .status,
        200
    );
}

on_both_backends!(every_page_for_every_actor);
