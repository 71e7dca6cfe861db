//! Every error layer's shape: hidden and unknown tools (JSON-RPC), scope refusals (HTTP 403 +
//! −32003), tool errors (`isError`, `{error, meta}`, no structuredContent) per code, and the
//! 48,000-character result cap through a test-only tool.

use elixir::access::kinds::Kind;
use elixir::mcp::args;
use elixir::mcp::call::{Success, handler};
use elixir::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{Options, READ_ONLY_TOKEN, spawn, spawn_with, success, tool_error};

async fn hidden_and_unknown_tools(url: &str) {
    let server = spawn(url).await;
    let r = server
        .integration()
        .tool("elixir_settings", json!({}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["error"]["code"], -32601);
    assert_eq!(r.body["error"]["data"]["kind"], "integration");
    assert!(
        r.body["error"]["data"]["hint"]
            .as_str()
            .unwrap()
            .contains("re-read tools/list")
    );

    let r = server.person().tool("elixir_doc", json!({})).await;
    assert_eq!(r.body["error"]["code"], -32602);
    assert!(r.body["error"]["data"]["hint"].is_string());
    assert!(
        r.body["error"]["data"]["candidates"]
            .as_array()
            .unwrap()
            .contains(&json!("elixir_docs"))
    );
}

async fn scope_refusal_shape(url: &str) {
    let server = spawn(url).await;
    let client = server.person_client(READ_ONLY_TOKEN);
    let r = client
        .tool("elixir_feedback", json!({"message": "hi"}))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.header("www-authenticate"),
        "Bearer error=\"insufficient_scope\", scope=\"cr:read feedback:write\""
    );
    let error = &r.body["error"];
    assert_eq!(error["code"], -32003);
    assert_eq!(
        error["message"],
        "The access token lacks the capability required by this tool: feedback:write."
    );
    assert_eq!(error["data"]["required_scope"], "feedback:write");
    assert_eq!(error["data"]["granted_scope"], "cr:read");
    assert!(
        error["data"]["hint"]
            .as_str()
            .unwrap()
            .contains("Account -> Connections")
    );
    // read tools still answer on that grant
    success(&client.tool("elixir_docs", json!({})).await);
}

async fn tool_error_bodies(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    // bad_request from the schema, before the handler: an unknown argument, a bound
    for (args, needle) in [
        (json!({"pages": "x"}), "remove the others"),
        (json!({"page": "limits", "verbosity": "tiny"}), "bounds"),
    ] {
        let body = tool_error(&person.tool("elixir_docs", args).await);
        assert_eq!(body["error"]["code"], "bad_request");
        assert_eq!(body["error"]["class"], "input");
        assert!(
            body["error"]["hint"].as_str().unwrap().contains(needle),
            "{body}"
        );
    }
    let body = tool_error(&person.tool("elixir_changelog", json!({"limit": 21})).await);
    assert_eq!(body["error"]["code"], "bad_request");
    // bad_request from the handler: a conflicting combination
    let body = tool_error(
        &person
            .tool("elixir_docs", json!({"section": "hourly-rate"}))
            .await,
    );
    assert_eq!(body["error"]["code"], "bad_request");
    // not_found with candidates
    let body = tool_error(&person.tool("elixir_docs", json!({"page": "limit"})).await);
    assert_eq!(body["error"]["code"], "not_found");
    assert_eq!(body["error"]["class"], "subject");
    assert!(
        body["error"]["candidates"]
            .as_array()
            .unwrap()
            .contains(&json!("limits"))
    );
    let body = tool_error(
        &person
            .tool(
                "elixir_docs",
                json!({"page": "limits", "section": "hourly"}),
            )
            .await,
    );
    assert!(
        body["error"]["candidates"]
            .as_array()
            .unwrap()
            .contains(&json!("hourly-rate"))
    );
    // invalid_tag, not_recorded, bad timezone
    let body = tool_error(
        &person
            .tool("elixir_settings", json!({"primary_player_tag": "#ABC"}))
            .await,
    );
    assert_eq!(body["error"]["code"], "invalid_tag");
    let body = tool_error(
        &person
            .tool(
                "elixir_settings",
                json!({"primary_player_tag": "20jjj2ccru"}),
            )
            .await,
    );
    assert_eq!(body["error"]["code"], "not_recorded");
    assert_eq!(
        body["error"]["hint"],
        "elixir_track_player({\"player_tag\": \"#20JJJ2CCRU\", \"relationship\": \"primary\"}) \
         tracks it as your primary."
    );
    // The message still names the normalized tag.
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("#20JJJ2CCRU")
    );
    let body = tool_error(
        &person
            .tool("elixir_settings", json!({"timezone": "Mars/Base"}))
            .await,
    );
    assert_eq!(body["error"]["code"], "bad_request");
    // the timezone is validated and stored, and the agent keeps its own
    let ok = success(
        &person
            .tool("elixir_settings", json!({"timezone": "Europe/Warsaw"}))
            .await,
    );
    assert_eq!(ok["changed"], json!(["timezone"]));
    assert_eq!(
        ok["settings"],
        json!({"timezone": "Europe/Warsaw", "primary_player": null, "tier": "member"})
    );
    let again = success(&person.tool("elixir_settings", json!({})).await);
    assert_eq!(again["settings"]["timezone"], "Europe/Warsaw");
    assert_eq!(again["changed"], json!([]));
    let agent = success(&server.agent().tool("elixir_settings", json!({})).await);
    assert_eq!(
        agent["settings"],
        json!({"timezone": "UTC", "primary_player": null, "tier": "member"})
    );
    // the audit kept the error code of each call
    server.state.services.audit.flush().await;
}

/// A test-only tool answering a body with `size` characters of padding.
fn pad_tool() -> ToolSpec {
    ToolSpec {
        name: "elixir_test_pad",
        group: Group::Help,
        title: "Pad",
        description: "Reference tool: test only; answers a body padded with size characters so the result cap can be probed.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::U],
        params: vec![Param::new("size", args::integer("Characters of padding.", 0, 100_000, 0))],
        compact_drops: None,
        output: vec![("pad", json!({"type": "string", "description": "Padding."}), true)],
        docs: "limits#result-cap".into(),
        too_large_hint: "elixir_test_pad({\"size\": 10}) answers less.".into(),
        handler: handler(|_ctx, a| async move {
            let size = usize::try_from(args::int(&a, "size", 0)).unwrap();
            Ok(Success::new().field("pad", Value::String("x".repeat(size))))
        }),
    }
}

async fn result_cap_at_48000_and_one_past(url: &str) {
    let server = spawn_with(
        url,
        Options {
            extra: vec![pad_tool()],
            ..Options::default()
        },
    )
    .await;
    let person = server.person();
    let base = person.tool("elixir_test_pad", json!({"size": 0})).await;
    let base_len = base.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .chars()
        .count();
    let fill = 48_000 - base_len;
    // the hour count goes from 1 to 2 and 3: same digit count, same envelope length
    let at = person.tool("elixir_test_pad", json!({"size": fill})).await;
    let text = at.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(text.chars().count(), 48_000);
    success(&at);
    let past = person
        .tool("elixir_test_pad", json!({"size": fill + 1}))
        .await;
    let body = tool_error(&past);
    assert_eq!(body["error"]["code"], "result_too_large");
    assert_eq!(body["error"]["message"], "Result exceeds 48000 characters.");
    assert_eq!(
        body["error"]["hint"],
        "elixir_test_pad({\"size\": 10}) answers less."
    );
    assert!(
        past.result()["content"][0]["text"].as_str().unwrap().len() < 2_000,
        "never sliced"
    );
}

on_both_backends!(
    hidden_and_unknown_tools,
    scope_refusal_shape,
    tool_error_bodies,
    result_cap_at_48000_and_one_past
);
