//! The audit hook: one record per request, carrying the id the client saw.

use std::sync::{Arc, Mutex};

use http::StatusCode;
use serde_json::json;

use crate::support::{Toy, post};
use mcp_door::{AuditRecord, AuditSink};

#[derive(Default)]
struct Captured(Mutex<Vec<AuditRecord>>);

impl AuditSink for Captured {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

impl Captured {
    fn last(&self) -> AuditRecord {
        self.0
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("no audit record")
    }
}

#[tokio::test]
async fn each_request_is_audited_under_the_id_the_client_saw() {
    let sink = Arc::new(Captured::default());
    let toy = Toy::builder().audit(sink.clone()).build();

    let ok = toy.call("good-user", "echo", json!({"text": "hi"})).await;
    let record = sink.last();
    assert_eq!(
        record.request_id.to_string(),
        ok.header("x-request-id").unwrap()
    );
    assert_eq!(record.door, "/mcp");
    assert_eq!(record.principal_kind.as_deref(), Some("user"));
    assert_eq!(record.subject.as_deref(), Some("subject-of-user"));
    assert_eq!(record.method.as_deref(), Some("tools/call"));
    assert_eq!(record.tool.as_deref(), Some("echo"));
    assert_eq!(record.arguments, Some(json!({"text": "hi"})));
    assert_eq!(record.http_status, 200);
    assert_eq!(record.error, None);
    assert_eq!(record.response_bytes, ok.body.len());

    toy.call("good-user", "echo", json!({"text": "toolong"}))
        .await;
    assert_eq!(sink.last().error.as_deref(), Some("422"));

    toy.call("good-user", "secret", json!({})).await;
    assert_eq!(sink.last().error.as_deref(), Some("-32601"));

    toy.call("good-user", "slow", json!({})).await;
    let record = sink.last();
    assert_eq!(
        (record.http_status, record.error.as_deref()),
        (504, Some("504"))
    );

    let unauthorized = toy.send(post(Some("nope"), "{}")).await;
    assert_eq!(unauthorized.status, StatusCode::UNAUTHORIZED);
    let record = sink.last();
    assert_eq!(
        record.request_id.to_string(),
        unauthorized.header("x-request-id").unwrap()
    );
    assert_eq!((record.http_status, record.principal_kind), (401, None));

    assert_eq!(sink.0.lock().unwrap().len(), 5);
}

/// A sink that does not read arguments.
#[derive(Default)]
struct WithoutArguments(Captured);

impl AuditSink for WithoutArguments {
    fn record(&self, record: AuditRecord) {
        self.0.record(record);
    }

    fn keeps_arguments(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_sink_that_keeps_no_arguments_is_handed_none_and_the_tool_still_gets_them() {
    let sink = Arc::new(WithoutArguments::default());
    let toy = Toy::builder().audit(sink.clone()).build();

    let ok = toy.call("good-user", "echo", json!({"text": "hi"})).await;
    assert!(ok.tool_text().contains("hi"), "{}", ok.tool_text());
    let record = sink.0.last();
    assert_eq!(record.tool.as_deref(), Some("echo"));
    assert_eq!(record.arguments, None);
}
