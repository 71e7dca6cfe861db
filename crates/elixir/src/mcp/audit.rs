//! The call log: every `tools/call` that reached a principal becomes one `audit` row (request
//! id, account, agent, door, tool, arguments and answer trimmed at 4,000 bytes, error code,
//! duration). The door's audit hook must not block, so it hands each row to the
//! [`AuditWriter`](crate::mcp::audit_writer::AuditWriter) queue, which owns storing them. The answer
//! and its error code come with the door's record, as values the tool handed over
//! ([`Answer`], `CallOutcome::error_code`). The hook also settles the request's metering
//! (`access::refunds::settle`): the record is the one place that sees every finished request.

use std::sync::Arc;

use mcp_door::{AuditRecord, AuditSink, TracingAudit};
use uuid::Uuid;

use crate::domain::trim_bytes;
use crate::model::AuditEntry;
use crate::services::Services;

/// The answer text of a tool call as its envelope rendered it, handed to the audit in the
/// call's `CallOutcome` extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer(pub String);

/// Arguments and answers are kept up to this many bytes.
pub const AUDIT_TRIM_BYTES: usize = 4_000;

/// The principal subject the authenticator sets: `account:<id>` for a person,
/// `agent:<agent id>:account:<owner id>` for an agent or integration.
pub fn subject_ids(subject: &str) -> (Option<Uuid>, Option<Uuid>) {
    let parts: Vec<&str> = subject.split(':').collect();
    match parts.as_slice() {
        ["account", a] => (Uuid::parse_str(a).ok(), None),
        ["agent", g, "account", a] => (Uuid::parse_str(a).ok(), Uuid::parse_str(g).ok()),
        _ => (None, None),
    }
}

/// The door's audit hook: logs every request and queues a row for each tool call.
pub struct ElixirAudit {
    pub services: Arc<Services>,
}

impl AuditSink for ElixirAudit {
    fn record(&self, record: AuditRecord) {
        crate::access::refunds::settle(&self.services, &record.extensions);
        let (Some(tool), Some(subject)) = (record.tool.clone(), record.subject.clone()) else {
            TracingAudit.record(record);
            return;
        };
        let (account_id, agent_id) = subject_ids(&subject);
        let arguments = record
            .arguments
            .as_ref()
            .map(|a| trim_bytes(&a.to_string(), AUDIT_TRIM_BYTES));
        let entry = AuditEntry {
            request_id: record.request_id,
            account_id,
            agent_id,
            door: record.door.clone(),
            tool: Some(tool),
            arguments,
            response: record
                .extensions
                .get::<Answer>()
                .map(|a| trim_bytes(&a.0, AUDIT_TRIM_BYTES)),
            error_code: record.error.clone(),
            duration_ms: i64::try_from(record.duration_ms).unwrap_or(i64::MAX),
            created_at: self.services.now(),
        };
        TracingAudit.record(record);
        self.services.audit.submit(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::subject_ids;

    #[test]
    fn subjects_parse_back() {
        let a = "7b1f8c9e-1111-4222-8333-444455556666";
        let g = "0d4e5f6a-1111-4222-8333-444455556666";
        assert_eq!(
            subject_ids(&format!("account:{a}")).0.unwrap().to_string(),
            a
        );
        let (acc, agent) = subject_ids(&format!("agent:{g}:account:{a}"));
        assert_eq!(acc.unwrap().to_string(), a);
        assert_eq!(agent.unwrap().to_string(), g);
        assert_eq!(subject_ids("nonsense"), (None, None));
    }
}
