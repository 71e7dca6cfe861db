//! Play tokens issued and revoked through REST.

use serde_json::json;

use super::{Browser, create_assignment, play, token, turn, version_of, world};

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

crate::on_both_backends!(tokens_through_rest);
