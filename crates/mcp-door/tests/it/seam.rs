//! The per-request seam: what the gate counts reaches the handler and the audit as typed
//! extensions, and the audit's and metrics' error label is the code the tool handed over,
//! never a reading of its text.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_door::model::{CallToolResult, ContentBlock};
use mcp_door::{
    AuditRecord, AuditSink, CallContext, CallOutcome, Catalog, Door, FakeClock, GateRefusal,
    GateRequest, GateStage, LocalAdmission, MethodGate, Metrics, ToolDecl,
};
use serde_json::json;

use crate::support::{ToyAuth, ToyPresenter, post, roomy_limits, rpc_body, send};

/// What the toy gate counted at the framed stage.
#[derive(Debug, Clone, PartialEq)]
struct Counted(u32);

/// The counter the toy gate billed a resolved call to.
#[derive(Debug, Clone, PartialEq)]
struct Billed(&'static str);

/// The answer text a tool leaves for the audit.
#[derive(Debug, Clone, PartialEq)]
struct Answer(String);

/// Counts every framed request and bills every resolved call; the billing stage checks that
/// it sees the framed stage's count.
struct MeteringGate;

#[async_trait]
impl MethodGate for MeteringGate {
    async fn check(&self, r: &mut GateRequest<'_>) -> Result<(), GateRefusal> {
        match r.stage {
            GateStage::Framed => {
                r.extensions.insert(Counted(7));
            }
            _ => {
                if r.extensions.get::<Counted>() == Some(&Counted(7)) {
                    r.extensions.insert(Billed("calls:today"));
                }
            }
        }
        Ok(())
    }
}

#[derive(Default)]
struct Captured(Mutex<Vec<AuditRecord>>);

impl AuditSink for Captured {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

impl Captured {
    fn last(&self) -> AuditRecord {
        self.0.lock().unwrap().last().cloned().unwrap()
    }
}

fn tools() -> Vec<ToolDecl> {
    let any = || json!({"type": "object"});
    vec![
        // Its text looks like a Sidequest status and its body like an Elixir envelope: the
        // label must still be the code handed over.
        ToolDecl::new_with_outcome(
            "clash",
            "Clash",
            "Always conflicts.",
            any(),
            |ctx: CallContext, _args| async move {
                let counted = ctx.extensions.get::<Counted>().map_or(0, |c| c.0);
                let billed = ctx.extensions.get::<Billed>().map_or("-", |b| b.0);
                let text = format!(
                    "409: {{\"error\":{{\"code\":\"parsed\"}}}} counted {counted} billed {billed}"
                );
                Ok(CallOutcome::failed(
                    "version_conflict",
                    CallToolResult::error(vec![ContentBlock::text(text.clone())]),
                )
                .with_extension(Answer(text)))
            },
        ),
        ToolDecl::new(
            "shrug",
            "Shrug",
            "Fails without a code.",
            any(),
            |_c, _a| async move {
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "422: not a code".to_owned(),
                )]))
            },
        ),
    ]
}

#[tokio::test]
async fn gate_values_reach_the_handler_and_the_audit_and_the_label_is_the_code_handed_over() {
    let sink = Arc::new(Captured::default());
    let metrics = Arc::new(Metrics::new());
    let clock = FakeClock::new(1_700_000_000_000);
    let router = Door::new(
        "/mcp",
        Arc::new(ToyAuth::default()),
        Arc::new(Catalog::new(tools()).unwrap()),
        Arc::new(LocalAdmission::new(roomy_limits(), Arc::new(clock))),
        Arc::new(ToyPresenter),
    )
    .with_method_gate(Arc::new(MeteringGate))
    .with_audit(sink.clone())
    .with_metrics(metrics.clone())
    .router();
    let call = |tool: &str| {
        post(
            Some("good-user"),
            rpc_body(1, "tools/call", json!({"name": tool, "arguments": {}})),
        )
    };

    let r = send(&router, call("clash")).await;
    let text = r.tool_text();
    assert!(text.ends_with("counted 7 billed calls:today"), "{text}");
    let record = sink.last();
    assert_eq!(record.error.as_deref(), Some("version_conflict"));
    assert_eq!(record.extensions.get::<Counted>(), Some(&Counted(7)));
    assert_eq!(
        record.extensions.get::<Billed>(),
        Some(&Billed("calls:today"))
    );
    assert_eq!(record.extensions.get::<Answer>(), Some(&Answer(text)));
    assert_eq!(
        record.principal.as_ref().map(|p| p.subject.as_str()),
        Some("subject-of-user")
    );

    send(&router, call("shrug")).await;
    assert_eq!(sink.last().error.as_deref(), Some("tool_error"));

    // a request the gate saw but that is no tool call still carries the gate's values
    send(
        &router,
        post(Some("good-user"), rpc_body(2, "ping", json!({}))),
    )
    .await;
    let record = sink.last();
    assert_eq!(
        (record.error, record.extensions.get::<Counted>()),
        (None, Some(&Counted(7)))
    );
    assert_eq!(record.extensions.get::<Billed>(), None);

    let exposition = metrics.render().unwrap();
    for (tool, outcome) in [("clash", "version_conflict"), ("shrug", "tool_error")] {
        let series = format!("method=\"tools/call\",tool=\"{tool}\",outcome=\"{outcome}\"}} 1");
        assert!(exposition.contains(&series), "{series} in {exposition}");
    }
    assert!(!exposition.contains("outcome=\"409\""), "{exposition}");
    assert!(!exposition.contains("outcome=\"parsed\""), "{exposition}");
}
