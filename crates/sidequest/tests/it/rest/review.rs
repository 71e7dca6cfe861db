//! GM review of consequences with its rules, and journal paging.

use serde_json::json;
use uuid::Uuid;

use super::{Browser, create_assignment, play, token, turn, version_of, world};

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

crate::on_both_backends!(review_rules, journal_paging);
