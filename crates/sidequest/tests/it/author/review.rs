//! GM review of consequences over the author door, with the REST rules.

use serde_json::{Value, json};
use uuid::Uuid;

use super::{assert_status, author_client, author_token, new_user, setup};

fn review(op: &str, expected: i64, assignment: Uuid, decisions: Value) -> Value {
    json!({"operation_id": op, "expected_version": expected, "assignment_id": assignment.to_string(), "decisions": decisions})
}

async fn review_through_the_door(url: &str) {
    let (server, world, gm) = setup(url).await;
    let assignment = world.assignments[0].0.id;
    let player = server.client(&world.assignments[0].1);
    let turn = player
        .tool(
            "commit_play_turn",
            json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 1,
            "player_action": "I help Mira.", "narration": "You find a torn page.",
            "memory_markdown": "Helped Mira.", "current_scene": "harbor",
            "consequences": [
                {"category": "relationship", "description": "Mira may become a contact."},
                {"category": "discovery", "description": "A torn page from the keeper's journal."}
            ]}),
        )
        .await
        .json();
    let c0 = turn["consequences"][0]["id"].as_str().unwrap().to_owned();
    let c1 = turn["consequences"][1]["id"].as_str().unwrap().to_owned();

    // what is waiting
    let pending = gm.tool("list_pending_consequences", json!({})).await.json();
    let groups = pending["assignments"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["assignment_id"], assignment.to_string());
    assert_eq!(groups[0]["version"], 2);
    assert_eq!(groups[0]["pending"].as_array().unwrap().len(), 2);
    let a = gm
        .tool("get_assignment", json!({"assignment_id": assignment}))
        .await
        .json();
    assert_eq!(a["pending_consequences"], 2);
    assert_eq!(a["role"], "gm");
    assert_eq!(a["gm_notes"], world.assignments[0].0.gm_notes);
    assert_eq!(a["consequences"].as_array().unwrap().len(), 2);
    assert_eq!(a["consequences"][0]["status"], "pending");
    let list = gm.tool("list_assignments", json!({})).await.json();
    assert_eq!(list["items"][0]["id"], assignment.to_string());
    let journal = gm
        .tool(
            "read_assignment_journal",
            json!({"assignment_id": assignment}),
        )
        .await
        .json();
    assert_eq!(journal["total"], 1);
    assert_eq!(journal["entries"][0]["narration"], "You find a torn page.");

    // argument rules
    let d = |id: &str| json!({"id": id, "decision": "approved"});
    let op = "30000000-0000-4000-8000-000000000001";
    for (bad, prefix) in [
        (
            review(op, 2, assignment, json!([])),
            "422: Invalid arguments: /decisions",
        ),
        (
            review(op, 2, assignment, json!(vec![d(&c0); 21])),
            "422: Invalid arguments: /decisions",
        ),
        (
            review(op, 2, assignment, json!([{"id": c0, "decision": "maybe"}])),
            "422: Invalid arguments: /decisions/0/decision",
        ),
        (
            review(
                op,
                2,
                assignment,
                json!([{"id": c0, "decision": "approved", "note": "n".repeat(2001)}]),
            ),
            "422: Invalid arguments: /decisions/0/note",
        ),
        (
            review(
                op,
                2,
                assignment,
                json!([{"id": c0, "decision": "approved", "status": "x"}]),
            ),
            "422: Invalid arguments: /decisions/0",
        ),
        (
            review(op, 0, assignment, json!([d(&c0)])),
            "422: Invalid arguments: /expected_version",
        ),
        (
            review(op, 2, assignment, json!([d(&c0), d(&c0)])),
            "422: Invalid arguments: /decisions/1/id",
        ),
        (
            review(op, 2, assignment, json!([d(&Uuid::new_v4().to_string())])),
            "422: Invalid arguments: /decisions/0/id",
        ),
    ] {
        assert_status(&gm.tool("review_consequences", bad).await, prefix);
    }
    // a stale version writes nothing
    assert_status(
        &gm.tool(
            "review_consequences",
            review(op, 1, assignment, json!([d(&c0)])),
        )
        .await,
        "409: Version conflict: expected 1, current 2. Call get_assignment",
    );

    let note = "Fits the main session; Mira remembers Arin's help.";
    let first = review(
        op,
        2,
        assignment,
        json!([{"id": c0, "decision": "approved", "note": note}]),
    );
    let r = gm.tool("review_consequences", first.clone()).await.json();
    assert_eq!(r["version"], 3);
    assert_eq!(r["replayed"], false);
    assert_eq!(r["decisions"][0]["status"], "approved");
    // an identical retry replays the receipt; the same id with other arguments conflicts
    let again = gm.tool("review_consequences", first).await.json();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["version"], 3);
    assert_status(
        &gm.tool(
            "review_consequences",
            review(op, 2, assignment, json!([d(&c1)])),
        )
        .await,
        &format!("409: Operation {op} was already used with different arguments."),
    );
    // a decided consequence cannot be decided again
    assert_status(
        &gm.tool(
            "review_consequences",
            review(
                "30000000-0000-4000-8000-000000000002",
                3,
                assignment,
                json!([{"id": c0, "decision": "rejected"}]),
            ),
        )
        .await,
        &format!("409: Consequence {c0} is already decided."),
    );
    let r = gm
        .tool(
            "review_consequences",
            review(
                "30000000-0000-4000-8000-000000000003",
                3,
                assignment,
                json!([{"id": c1, "decision": "rejected"}]),
            ),
        )
        .await
        .json();
    assert_eq!(r["version"], 4);
    assert_eq!(
        gm.tool("list_pending_consequences", json!({})).await.json(),
        json!({"assignments": []})
    );

    // the player sees the decisions and the note
    let ctx = player.tool("get_play_context", json!({})).await.json();
    assert_eq!(ctx["version"], 4);
    let by_id = |id: &str| {
        ctx["consequences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id(&c0)["status"], "approved");
    assert_eq!(by_id(&c0)["gm_note"], note);
    assert_eq!(by_id(&c1)["status"], "rejected");

    // another GM cannot read or review it; unknown assignments are 404
    let gm2 = new_user(&server, "gm2", true).await;
    let (_, t2) = author_token(&server.service, &gm2).await;
    let other = author_client(server.addr, &t2);
    assert_status(
        &other
            .tool("get_assignment", json!({"assignment_id": assignment}))
            .await,
        "404: Not found",
    );
    assert_status(
        &other
            .tool(
                "review_consequences",
                review(
                    "30000000-0000-4000-8000-000000000004",
                    4,
                    assignment,
                    json!([d(&c1)]),
                ),
            )
            .await,
        "404: Not found",
    );
    assert_eq!(
        other.tool("list_assignments", json!({})).await.json(),
        json!({"items": []})
    );
    assert_status(
        &gm.tool("get_assignment", json!({"assignment_id": Uuid::new_v4()}))
            .await,
        "404: Not found",
    );
}

crate::on_both_backends!(review_through_the_door);
