//! The method gate: consulted after framing for every request and again for each resolved
//! `tools/call` before argument validation; its refusals are rendered as the product words them.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use http::StatusCode;
use mcp_door::{
    Catalog, Door, FakeClock, GateRefusal, GateRequest, GateStage, LocalAdmission, MethodGate,
};
use serde_json::json;

use crate::support::{
    Probes, ToyAuth, ToyPresenter, post, roomy_limits, rpc_body, send, toy_tools,
};

/// Refuses `tools/list` with a 429 and `echo` (once resolved) with a 200 JSON-RPC error; logs
/// every consultation.
#[derive(Default)]
struct Gate {
    seen: Mutex<Vec<(GateStage, String, Option<String>)>>,
}

#[async_trait]
impl MethodGate for Gate {
    async fn check(&self, r: &mut GateRequest<'_>) -> Result<(), GateRefusal> {
        self.seen
            .lock()
            .unwrap()
            .push((r.stage, r.method.to_owned(), r.tool.map(str::to_owned)));
        match (r.stage, r.method, r.tool) {
            (GateStage::Framed, "tools/list", _) => Err(GateRefusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                retry_after_secs: Some(42),
                code: -32029,
                message: "Hourly rate spent".into(),
                data: Some(json!({"window": "hour", "request_id": r.request_id.to_string()})),
            }),
            (GateStage::ToolResolved, _, Some("echo")) => Err(GateRefusal {
                status: StatusCode::OK,
                retry_after_secs: None,
                code: -32029,
                message: "Daily quota spent".into(),
                data: Some(json!({"window": "day"})),
            }),
            _ => Ok(()),
        }
    }
}

fn door(gate: Arc<Gate>) -> axum::Router {
    let probes = Probes::default();
    let catalog = Arc::new(Catalog::new(toy_tools(&probes, "Echoes text back.")).unwrap());
    let clock = FakeClock::new(1_700_000_000_000);
    Door::new(
        "/mcp",
        Arc::new(ToyAuth::default()),
        catalog,
        Arc::new(LocalAdmission::new(roomy_limits(), Arc::new(clock))),
        Arc::new(ToyPresenter),
    )
    .with_method_gate(gate)
    .router()
}

#[tokio::test]
async fn gate_refusals_are_rendered_as_worded_and_stages_are_in_order() {
    let gate = Arc::new(Gate::default());
    let router = door(Arc::clone(&gate));
    let token = Some("good-writer");

    // 429 with Retry-After and the product's body; the request id in data is the door's
    let r = send(&router, post(token, rpc_body(3, "tools/list", json!({})))).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.retry_after(), 42);
    let body = r.json();
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32029);
    assert_eq!(body["error"]["data"]["window"], "hour");
    assert_eq!(
        body["error"]["data"]["request_id"],
        r.header("x-request-id").unwrap()
    );

    // a resolved tool call refused at the second stage, 200 and no Retry-After
    let r = send(
        &router,
        post(
            token,
            rpc_body(
                4,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "hi"}}),
            ),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.header("retry-after").is_none());
    assert_eq!(r.json()["error"]["data"], json!({"window": "day"}));

    // the second stage sees calls before validation (invalid arguments still reach it) but
    // never unknown, hidden or out-of-scope tools
    let r = send(
        &router,
        post(
            token,
            rpc_body(
                5,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "far too long"}}),
            ),
        ),
    )
    .await;
    assert_eq!(r.json()["error"]["code"], -32029);
    for (name, code) in [("nope", -32602), ("secret", -32601)] {
        let r = send(
            &router,
            post(token, rpc_body(6, "tools/call", json!({"name": name}))),
        )
        .await;
        assert_eq!(r.json()["error"]["code"], code, "{name}");
    }
    let r = send(
        &router,
        post(
            Some("good-user"),
            rpc_body(7, "tools/call", json!({"name": "scoped"})),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // an allowed call passes both stages and runs
    let r = send(
        &router,
        post(token, rpc_body(8, "tools/call", json!({"name": "scoped"}))),
    )
    .await;
    assert_eq!(r.result()["structuredContent"], json!({"wrote": true}));

    // notifications never reach the gate; ping does (the product decides what is exempt)
    let r = send(
        &router,
        post(
            token,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    send(&router, post(token, rpc_body(9, "ping", json!({}))))
        .await
        .result();

    let seen = gate.seen.lock().unwrap().clone();
    let s = |stage, m: &str, t: Option<&str>| (stage, m.to_owned(), t.map(str::to_owned));
    use GateStage::{Framed, ToolResolved};
    assert_eq!(
        seen,
        vec![
            s(Framed, "tools/list", None),
            s(Framed, "tools/call", Some("echo")),
            s(ToolResolved, "tools/call", Some("echo")),
            s(Framed, "tools/call", Some("echo")),
            s(ToolResolved, "tools/call", Some("echo")),
            s(Framed, "tools/call", Some("nope")),
            s(Framed, "tools/call", Some("secret")),
            s(Framed, "tools/call", Some("scoped")),
            s(Framed, "tools/call", Some("scoped")),
            s(ToolResolved, "tools/call", Some("scoped")),
            s(Framed, "ping", None),
        ]
    );
}
