//! Progress notifications: a `tools/call` with `_meta.progressToken` from a client that reads
//! event streams is answered `text/event-stream` once its tool reports — each
//! `notifications/progress`, then the response — and everything else stays one JSON body.
//! The deadline, the admission permit and the audit record hold across the stream, and a
//! client that leaves mid-stream does not cancel the call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use mcp_door::model::{CallToolResult, ContentBlock};
use mcp_door::{
    AuditRecord, AuditSink, CLIENT_CLOSED, CallContext, Catalog, Door, Limits, LocalAdmission,
    ToolDecl, ToolFailure, tool_json,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tower::ServiceExt;

use crate::support::{PATH, ToyAuth, ToyPresenter, rpc_body, small_config};

#[derive(Default)]
struct Captured(Mutex<Vec<AuditRecord>>);

impl AuditSink for Captured {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

impl Captured {
    /// The `n`th record, waiting for it: a streamed call's record closes after its stream.
    async fn nth(&self, n: usize) -> AuditRecord {
        for _ in 0..200 {
            if let Some(r) = self.0.lock().unwrap().get(n) {
                return r.clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no audit record #{n}");
    }
}

#[derive(Clone, Default)]
struct Probes {
    finished: Arc<AtomicUsize>,
    reported: Arc<Notify>,
    release: Arc<Notify>,
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn tools(probes: &Probes) -> Vec<ToolDecl> {
    let (finished, reported, release) = (
        Arc::clone(&probes.finished),
        Arc::clone(&probes.reported),
        Arc::clone(&probes.release),
    );
    vec![
        ToolDecl::new(
            "steps",
            "Steps",
            "Three steps, each reported.",
            no_arguments(),
            |ctx: CallContext, _args| async move {
                for (i, message) in ["start", "half", "done"].into_iter().enumerate() {
                    #[allow(clippy::cast_precision_loss)]
                    ctx.progress
                        .report(i as f64 * 50.0, Some(100.0), Some(message))
                        .map_err(|e| ToolFailure::Internal(e.to_string()))?;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok(tool_json(json!({"steps": 3})))
            },
        ),
        ToolDecl::new(
            "quiet",
            "Quiet",
            "Reports nothing.",
            no_arguments(),
            |_ctx, _args| async move { Ok(CallToolResult::success(vec![ContentBlock::text("quiet")])) },
        ),
        ToolDecl::new(
            "stuck",
            "Stuck",
            "Reports once, then outlives the deadline.",
            no_arguments(),
            |ctx: CallContext, _args| async move {
                ctx.progress
                    .report(1.0, None, Some("started"))
                    .map_err(|e| ToolFailure::Internal(e.to_string()))?;
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(tool_json(json!({"late": true})))
            },
        ),
        ToolDecl::new(
            "held",
            "Held",
            "Reports once, then waits for the test.",
            no_arguments(),
            move |ctx: CallContext, _args| {
                let (finished, reported, release) = (
                    Arc::clone(&finished),
                    Arc::clone(&reported),
                    Arc::clone(&release),
                );
                async move {
                    ctx.progress
                        .report(1.0, Some(2.0), None)
                        .map_err(|e| ToolFailure::Internal(e.to_string()))?;
                    reported.notify_one();
                    release.notified().await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok(tool_json(json!({"held": true})))
                }
            },
        ),
    ]
}

struct Fixture {
    router: Router,
    audit: Arc<Captured>,
    probes: Probes,
}

/// A door with the progress tools; one call in flight per credential, so a held permit shows.
fn fixture(deadline: Duration) -> Fixture {
    let probes = Probes::default();
    let audit = Arc::new(Captured::default());
    let limits = Limits {
        rate_per_window: 1000,
        credential_concurrency: 1,
        global_concurrency: 10,
        ..Limits::default()
    };
    let clock = mcp_door::FakeClock::new(1_700_000_000_000);
    let config = mcp_door::DoorConfig {
        tool_deadline: deadline,
        ..small_config()
    };
    let router = Door::new(
        PATH,
        Arc::new(ToyAuth::default()),
        Arc::new(Catalog::new(tools(&probes)).unwrap()),
        Arc::new(LocalAdmission::new(limits, Arc::new(clock))),
        Arc::new(ToyPresenter),
    )
    .with_config(config)
    .with_audit(audit.clone())
    .router();
    Fixture {
        router,
        audit,
        probes,
    }
}

fn call(tool: &str, token: Option<Value>, accept: &str) -> Request<Body> {
    let mut params = json!({"name": tool, "arguments": {}});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    Request::post(PATH)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, accept)
        .header(header::AUTHORIZATION, "Bearer good-user")
        .body(Body::from(rpc_body(1, "tools/call", params)))
        .unwrap()
}

const BOTH: &str = "application/json, text/event-stream";

/// The JSON messages of an event-stream body, each `event: message` with one `data:` line.
fn events(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).unwrap();
    assert!(text.ends_with("\n\n"), "unterminated stream: {text:?}");
    text.split_terminator("\n\n")
        .map(|event| {
            let mut lines = event.lines();
            assert_eq!(lines.next(), Some("event: message"), "in {event:?}");
            let data = lines.next().and_then(|l| l.strip_prefix("data: ")).unwrap();
            assert_eq!(lines.next(), None, "one data line per event: {event:?}");
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

async fn whole(router: &Router, request: Request<Body>) -> (http::response::Parts, Vec<u8>) {
    let (parts, body) = router.clone().oneshot(request).await.unwrap().into_parts();
    (parts, body.collect().await.unwrap().to_bytes().to_vec())
}

#[tokio::test]
async fn a_tool_that_reports_answers_an_event_stream_of_its_progress_then_its_result() {
    let f = fixture(Duration::from_secs(5));
    let (parts, body) = whole(&f.router, call("steps", Some(json!("p-1")), BOTH)).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers[header::CONTENT_TYPE], "text/event-stream");
    let frames = events(&body);
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert_eq!(
        frames[..3],
        [
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "p-1", "progress": 0, "total": 100, "message": "start"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "p-1", "progress": 50, "total": 100, "message": "half"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "p-1", "progress": 100, "total": 100, "message": "done"}}),
        ]
    );
    assert_eq!(frames[3]["id"], 1);
    assert_eq!(
        frames[3]["result"]["structuredContent"],
        json!({"steps": 3})
    );

    // the record closes with the stream: every byte sent, no error
    let record = f.audit.nth(0).await;
    assert_eq!(record.tool.as_deref(), Some("steps"));
    assert_eq!((record.http_status, record.error), (200, None));
    assert_eq!(record.response_bytes, body.len());
    assert!(record.duration_ms >= 40, "{}", record.duration_ms);

    // an integer token comes back as that integer
    let (_, body) = whole(&f.router, call("steps", Some(json!(7)), BOTH)).await;
    assert_eq!(events(&body)[0]["params"]["progressToken"], 7);
}

#[tokio::test]
async fn without_a_token_or_an_event_stream_accept_the_answer_stays_one_json_body() {
    let f = fixture(Duration::from_secs(5));
    let (streamed, body) = whole(&f.router, call("steps", Some(json!("p")), BOTH)).await;
    assert_eq!(streamed.headers[header::CONTENT_TYPE], "text/event-stream");
    let streamed = events(&body).pop().unwrap();
    for request in [
        call("steps", None, BOTH),
        call("steps", Some(json!("p")), "application/json"),
        call(
            "steps",
            Some(json!("p")),
            "application/json, text/event-stream;q=0",
        ),
    ] {
        let (parts, body) = whole(&f.router, request).await;
        assert_eq!(parts.status, StatusCode::OK);
        assert_eq!(parts.headers[header::CONTENT_TYPE], "application/json");
        // the same answer the stream ended with, as one body
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, streamed);
    }
    // a tool that reports nothing answers JSON even when progress was asked for
    let (parts, body) = whole(&f.router, call("quiet", Some(json!("p")), BOTH)).await;
    assert_eq!(parts.headers[header::CONTENT_TYPE], "application/json");
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "quiet");
}

#[tokio::test]
async fn a_token_that_is_neither_string_nor_integer_is_invalid_params_and_runs_nothing() {
    let f = fixture(Duration::from_secs(5));
    for token in [json!(1.5), json!({"a": 1}), json!(true)] {
        let (parts, body) = whole(&f.router, call("held", Some(token), BOTH)).await;
        assert_eq!(parts.status, StatusCode::OK);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], -32602);
        assert_eq!(
            body["error"]["message"],
            "params._meta.progressToken must be a string or an integer"
        );
    }
    assert_eq!(f.probes.finished.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_deadline_hit_mid_stream_ends_the_stream_with_the_deadline_error() {
    let f = fixture(Duration::from_millis(200));
    let (parts, body) = whole(&f.router, call("stuck", Some(json!("s")), BOTH)).await;
    assert_eq!(parts.status, StatusCode::OK);
    let events = events(&body);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(
        events[0]["params"],
        json!({"progressToken": "s", "progress": 1, "message": "started"})
    );
    assert_eq!(events[1]["id"], 1);
    assert_eq!(events[1]["error"]["code"], -32000);
    assert!(
        events[1]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Tool execution exceeded its deadline"),
        "{}",
        events[1]
    );
    let record = f.audit.nth(0).await;
    assert_eq!(
        (record.http_status, record.error.as_deref()),
        (200, Some("504"))
    );
    assert_eq!(record.response_bytes, body.len());

    // without a token the same tool is the usual 504
    let (parts, _) = whole(&f.router, call("stuck", None, BOTH)).await;
    assert_eq!(parts.status, StatusCode::GATEWAY_TIMEOUT);
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_does_not_cancel_the_call_or_free_its_slot_early() {
    let f = fixture(Duration::from_secs(5));
    let response = f
        .router
        .clone()
        .oneshot(call("held", Some(json!("h")), BOTH))
        .await
        .unwrap();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(events(&first)[0]["params"]["progress"], 1);
    drop(body); // the client leaves

    // the call still holds the credential's only slot
    let (busy, _) = whole(&f.router, call("quiet", None, BOTH)).await;
    assert_eq!(busy.status, StatusCode::TOO_MANY_REQUESTS);

    f.probes.release.notify_one();
    // record 0 is the refused call; the held one closes when the tool has ended
    let record = f.audit.nth(1).await;
    assert_eq!(
        f.probes.finished.load(Ordering::SeqCst),
        1,
        "the tool ran to its end"
    );
    assert_eq!(record.tool.as_deref(), Some("held"));
    assert_eq!(record.error.as_deref(), Some(CLIENT_CLOSED));
    assert_eq!(record.response_bytes, first.len());

    // and once it ended, the slot is free again
    let (parts, _) = whole(&f.router, call("quiet", None, BOTH)).await;
    assert_eq!(parts.status, StatusCode::OK);
}
