//! Feedback over the wire: filing (with the caller's own request id, never another's),
//! the ledger and its lifecycle through the operator's reply, delivery marking, the pending
//! flag in meta, and size-bounded pages.

use elixir::admin;
use elixir::domain::FeedbackStatus;
use serde_json::json;

use crate::on_both_backends;
use crate::support::{OTHER_PERSON_TOKEN, T0, spawn, success, tool_error};

async fn feedback_lifecycle(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    // a call to report on: its request id is the caller's own
    let bad = person.tool("elixir_docs", json!({"page": "nope"})).await;
    let reported = bad.header("x-request-id").to_owned();
    tool_error(&bad);

    let filed = success(&person.tool("elixir_feedback", json!({"message": "The nope page is missing.", "category": "bug", "request_id": reported})).await);
    let fb = &filed["feedback"];
    assert_eq!(fb["status"], "new");
    assert_eq!(fb["created_at"], "2026-01-01T00:00:00Z");
    assert_eq!(fb["attached_request"]["request_id"], reported);
    assert_eq!(fb["attached_request"]["tool"], "elixir_docs");
    assert_eq!(fb["attached_request"]["error_code"], "not_found");
    let id = fb["id"].as_i64().unwrap();
    // the audit row keeps the arguments and the answer the maintainer will see
    let audit = server
        .store
        .audit(reported.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(audit.arguments.as_deref(), Some("{\"page\":\"nope\"}"));
    assert!(audit.response.unwrap().contains("not_found"));
    assert_eq!(audit.account_id, Some(server.person.id));

    // someone else's request id, an unknown one, and the agent's view of the person's call
    let other = server.person_client(OTHER_PERSON_TOKEN);
    let body = tool_error(
        &other
            .tool(
                "elixir_feedback",
                json!({"message": "x", "request_id": reported}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "not_entitled");
    let body = tool_error(
        &person
            .tool(
                "elixir_feedback",
                json!({"message": "x", "request_id": "00000000-0000-4000-8000-000000000000"}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "not_entitled");
    let body = tool_error(
        &server
            .agent()
            .tool(
                "elixir_feedback",
                json!({"message": "x", "request_id": reported}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "not_entitled");
    // an agent files for an end user
    success(
        &server
            .agent()
            .tool(
                "elixir_feedback",
                json!({"message": "From a clanmate.", "on_behalf_of": "discord:42"}),
            )
            .await,
    );

    let page = success(&person.tool("elixir_my_feedback", json!({})).await);
    assert_eq!(
        page["total"], 1,
        "the agent's report is in the agent's ledger"
    );
    assert_eq!(page["items"][0]["status"], "new");
    assert_eq!(page["items"][0]["response"], json!(null));
    assert_eq!(page["items"][0]["related_tools"], json!(["elixir_docs"]));
    assert!(page["meta"].get("feedback_responses_pending").is_none());
    assert_eq!(page["next_offset"], json!(null));

    // the operator moves it along and replies (the CLI's function)
    server.clock.set_millis(T0 + 60_000);
    admin::reply_feedback(
        &server.store,
        T0 + 60_000,
        id,
        FeedbackStatus::Seen,
        None,
        None,
    )
    .await
    .unwrap();
    let page = success(
        &person
            .tool("elixir_my_feedback", json!({"status": "seen"}))
            .await,
    );
    assert_eq!(page["total"], 1);
    assert!(
        page["meta"].get("feedback_responses_pending").is_none(),
        "a status alone is no reply"
    );
    admin::reply_feedback(
        &server.store,
        T0 + 120_000,
        id,
        FeedbackStatus::Done,
        Some("Fixed: the page exists now."),
        Some("1.0.1"),
    )
    .await
    .unwrap();
    // pending shows on any answer, even one that is not about feedback
    let any = success(&person.tool("elixir_docs", json!({})).await);
    assert_eq!(any["meta"]["feedback_responses_pending"], 1);
    // a filtered page that does not carry the reply leaves it pending
    let empty = success(
        &person
            .tool("elixir_my_feedback", json!({"status": "planned"}))
            .await,
    );
    assert_eq!(empty["total"], 0);
    assert_eq!(empty["meta"]["feedback_responses_pending"], 1);
    // delivering it marks it read
    let page = success(
        &person
            .tool("elixir_my_feedback", json!({"status": "done"}))
            .await,
    );
    let item = &page["items"][0];
    assert_eq!(item["status"], "done");
    assert_eq!(item["response"], "Fixed: the page exists now.");
    assert_eq!(item["responded_at"], "2026-01-01T00:02:00Z");
    assert_eq!(item["shipped_in"], "1.0.1");
    assert!(page["meta"].get("feedback_responses_pending").is_none());
    let after = success(&person.tool("elixir_docs", json!({})).await);
    assert!(after["meta"].get("feedback_responses_pending").is_none());
    // since: reports filed or answered since then
    let since = success(
        &person
            .tool(
                "elixir_my_feedback",
                json!({"since": "2026-01-01T00:01:30Z"}),
            )
            .await,
    );
    assert_eq!(since["total"], 1);
    let since = success(
        &person
            .tool("elixir_my_feedback", json!({"since": "2026-01-02"}))
            .await,
    );
    assert_eq!(since["total"], 0);
}

async fn feedback_pages_are_bounded_by_size(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let long = "x".repeat(4000);
    for i in 0..12 {
        success(
            &person
                .tool(
                    "elixir_feedback",
                    json!({"message": long, "context": format!("report {i}")}),
                )
                .await,
        );
    }
    let first = success(
        &person
            .tool("elixir_my_feedback", json!({"limit": 50}))
            .await,
    );
    let shown = first["items"].as_array().unwrap().len();
    assert!((1..12).contains(&shown), "{shown}");
    assert_eq!(first["total"], 12);
    assert_eq!(first["next_offset"], shown);
    assert_eq!(first["items"][0]["context"], "report 11", "newest first");
    let second = success(
        &person
            .tool("elixir_my_feedback", json!({"limit": 50, "offset": shown}))
            .await,
    );
    let rest = second["items"].as_array().unwrap().len();
    assert_eq!(shown + rest, 12);
    assert_eq!(second["next_offset"], json!(null));
    // limit still applies
    let two = success(&person.tool("elixir_my_feedback", json!({"limit": 2})).await);
    assert_eq!(two["items"].as_array().unwrap().len(), 2);
    assert_eq!(two["next_offset"], 2);
}

/// SURFACE §1.4: `on_behalf_of` is declared only on agent and integration doors; a person door
/// drops it with a note instead of refusing it. Every other unknown argument is still refused.
async fn agent_only_arguments_on_the_person_door(url: &str) {
    let server = spawn(url).await;
    let note = elixir::mcp::call::ignored_note("on_behalf_of");
    assert_eq!(
        note,
        "on_behalf_of was ignored: it applies only on agent and integration doors."
    );
    // person door: ignored, with the note, and not stored
    let filed = success(
        &server
            .person()
            .tool(
                "elixir_feedback",
                json!({"message": "Mine.", "on_behalf_of": "discord:42"}),
            )
            .await,
    );
    let has_note = |body: &serde_json::Value| {
        body["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str() == Some(note.as_str()))
    };
    assert!(has_note(&filed), "{filed}");
    let id = filed["feedback"]["id"].as_i64().unwrap();
    let stored = server.store.feedback(id).await.unwrap().unwrap();
    assert_eq!(stored.on_behalf_of, None);
    // the same call without it carries no such note
    let plain = success(
        &server
            .person()
            .tool("elixir_feedback", json!({"message": "Mine."}))
            .await,
    );
    assert!(!has_note(&plain), "{plain}");
    // agent door: declared, used, no note
    let filed = success(
        &server
            .agent()
            .tool(
                "elixir_feedback",
                json!({"message": "From a clanmate.", "on_behalf_of": "discord:42"}),
            )
            .await,
    );
    assert!(!has_note(&filed), "{filed}");
    let id = filed["feedback"]["id"].as_i64().unwrap();
    let stored = server.store.feedback(id).await.unwrap().unwrap();
    assert_eq!(stored.on_behalf_of.as_deref(), Some("discord:42"));
    // empty is still a caller bug on the door that declares it
    let body = tool_error(
        &server
            .agent()
            .tool(
                "elixir_feedback",
                json!({"message": "x", "on_behalf_of": ""}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "bad_request");
    // an unknown argument is bad_request on every door, leniency or not
    for client in [server.person(), server.agent(), server.integration()] {
        for args in [
            json!({"message": "x", "bogus": 1}),
            json!({"message": "x", "on_behalf_of": "discord:42", "bogus": 1}),
        ] {
            let body = tool_error(&client.tool("elixir_feedback", args).await);
            assert_eq!(body["error"]["code"], "bad_request");
            assert!(
                body["error"]["message"].as_str().unwrap().contains("bogus"),
                "{body}"
            );
        }
    }
    // display_name is declared on no door's elixir_feedback, so no door drops it
    let body = tool_error(
        &server
            .person()
            .tool(
                "elixir_feedback",
                json!({"message": "x", "display_name": "Ann"}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "bad_request");
}

on_both_backends!(
    feedback_lifecycle,
    feedback_pages_are_bounded_by_size,
    agent_only_arguments_on_the_person_door
);
