//! The fixture tools that report progress through the door's per-call reporter
//! (`CallContext::progress`): `test_tool_with_progress` (the `tools-call-with-progress`
//! scenario) and the two stream diagnostics of `server-stateless`, `test_streaming_elicitation`
//! (a streamed answer carries notifications and the result, never a request) and
//! `test_logging_tool` (no `notifications/message` without a `logLevel`; the door sends none).

use std::time::Duration;

use mcp_door::model::{CallToolResult, ContentBlock};
use mcp_door::{CallContext, ToolDecl, ToolFailure};
use serde_json::{Map, Value, json};

use crate::mrtr::{accepted, ask, elicit};

/// The pause between two reports, so each goes out on its own.
const STEP: Duration = Duration::from_millis(50);

fn report(ctx: &CallContext, progress: f64, message: &str) -> Result<(), ToolFailure> {
    ctx.progress
        .report(progress, Some(100.0), Some(message))
        .map_err(|e| ToolFailure::Internal(e.to_string()))
}

/// Reports 0, 50 and 100 of 100, `STEP` apart.
async fn three_steps(ctx: &CallContext, what: &str) -> Result<(), ToolFailure> {
    for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        report(ctx, progress, &format!("{what}: step {} of 3", i + 1))?;
    }
    Ok(())
}

fn text(t: impl Into<String>) -> Result<CallToolResult, ToolFailure> {
    Ok(CallToolResult::success(vec![ContentBlock::text(t.into())]))
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

pub fn tools() -> Vec<ToolDecl> {
    vec![
        ToolDecl::new(
            "test_tool_with_progress",
            "Progress",
            "Works in three steps 50 ms apart, reporting 0, 50 and 100 of 100 when the call carries _meta.progressToken.",
            no_arguments(),
            |ctx: CallContext, _args: Map<String, Value>| async move {
                three_steps(&ctx, "progress").await?;
                text("Progress tool completed")
            },
        ),
        ToolDecl::new(
            "test_streaming_elicitation",
            "Streaming elicitation",
            "Reports progress, then asks the user's name with an input_required answer (2026-07-28); the retry that brings it back completes. Its stream carries notifications and the answer, never a request.",
            no_arguments(),
            |ctx: CallContext, _args: Map<String, Value>| async move {
                let name = accepted(&ctx, "user_name", "name")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match name {
                    Some(name) => {
                        report(&ctx, 100.0, "answered")?;
                        text(format!("Hello, {name}!"))
                    }
                    None => {
                        report(&ctx, 0.0, "asking the user")?;
                        tokio::time::sleep(STEP).await;
                        Err(ToolFailure::InputRequired(ask(
                            vec![(
                                "user_name",
                                elicit(
                                    "What is your name?",
                                    json!({"name": {"type": "string"}}),
                                    &["name"],
                                ),
                            )],
                            None,
                        )))
                    }
                }
            },
        ),
        ToolDecl::new(
            "test_logging_tool",
            "Logging",
            "Works in three steps, reporting progress. mcp-door offers no logging (deprecated in 2026-07-28), so no answer carries notifications/message, with or without _meta logLevel.",
            no_arguments(),
            |ctx: CallContext, _args: Map<String, Value>| async move {
                three_steps(&ctx, "logging").await?;
                text("Logging tool completed")
            },
        ),
    ]
}
