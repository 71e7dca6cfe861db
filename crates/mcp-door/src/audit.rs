//! The audit hook: one record per request, after the response is built. The record carries
//! what the request learned as values — the principal, the error code the tool handed over,
//! the typed extensions the gate and the tool added — so a sink never parses a response.

use std::sync::Arc;

use tracing::Level;
use uuid::Uuid;

use crate::auth::Principal;
use crate::logging::{self, Field};
use crate::outcome::Extensions;

/// What the door knows about a finished request.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    pub request_id: Uuid,
    pub door: String,
    /// The authenticated caller, product view included (`principal.ext::<T>()`).
    pub principal: Option<Arc<Principal>>,
    pub principal_kind: Option<String>,
    pub subject: Option<String>,
    pub method: Option<String>,
    pub tool: Option<String>,
    /// The tool arguments, for sinks that keep them (trim before storing); `None` for a sink
    /// that says it does not ([`AuditSink::keeps_arguments`]).
    pub arguments: Option<serde_json::Value>,
    pub http_status: u16,
    /// The door's error label: an HTTP status, a JSON-RPC code, or for an `isError` result the
    /// error code its tool handed over in [`crate::CallOutcome::error_code`].
    pub error: Option<String>,
    pub duration_ms: u64,
    pub response_bytes: usize,
    /// The request's typed values: the method gate's (a metering outcome) and the tool's
    /// ([`crate::CallOutcome::extensions`]).
    pub extensions: Extensions,
}

/// Receives audit records. Must not block: queue or log, never write synchronously.
pub trait AuditSink: Send + Sync + 'static {
    /// Takes one finished request's record.
    fn record(&self, record: AuditRecord);

    /// Whether this sink reads [`AuditRecord::arguments`]; the door copies a call's
    /// arguments into the record only for one that does.
    fn keeps_arguments(&self) -> bool {
        true
    }
}

/// Logs each request as a `tracing` event (never the arguments: they may hold game text). With
/// JSON lines as the output the line is written directly (`logging::json_event`): the same
/// bytes, the same `RUST_LOG` check, without tracing's dispatch and field visitor.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingAudit;

impl AuditSink for TracingAudit {
    fn record(&self, r: AuditRecord) {
        if !tracing::enabled!(target: TARGET, Level::INFO) {
            return;
        }
        let mut id = Uuid::encode_buffer();
        let line = AuditLine::of(&r, &mut id);
        if !logging::json_event(Level::INFO, TARGET, MESSAGE, &line.fields()) {
            line.trace();
        }
    }

    fn keeps_arguments(&self) -> bool {
        false
    }
}

/// The values of one request's audit line, borrowed from its record.
struct AuditLine<'a> {
    request_id: &'a str,
    door: &'a str,
    kind: &'a str,
    method: &'a str,
    tool: &'a str,
    status: u16,
    error: &'a str,
    duration_ms: u64,
    bytes: usize,
}

impl<'a> AuditLine<'a> {
    /// `r`'s line, its request id written into `id`; `-` for what the request never learned.
    fn of(r: &'a AuditRecord, id: &'a mut [u8]) -> Self {
        Self {
            request_id: r.request_id.hyphenated().encode_lower(id),
            door: &r.door,
            kind: r.principal_kind.as_deref().unwrap_or("-"),
            method: r.method.as_deref().unwrap_or("-"),
            tool: r.tool.as_deref().unwrap_or("-"),
            status: r.http_status,
            error: r.error.as_deref().unwrap_or("-"),
            duration_ms: r.duration_ms,
            bytes: r.response_bytes,
        }
    }

    /// The fields in the order [`AuditLine::trace`] names them.
    fn fields(&self) -> [(&'static str, Field<'a>); 9] {
        [
            ("request_id", Field::Str(self.request_id)),
            ("door", Field::Str(self.door)),
            ("kind", Field::Str(self.kind)),
            ("method", Field::Str(self.method)),
            ("tool", Field::Str(self.tool)),
            ("status", Field::U64(u64::from(self.status))),
            ("error", Field::Str(self.error)),
            ("duration_ms", Field::U64(self.duration_ms)),
            (
                "bytes",
                Field::U64(u64::try_from(self.bytes).unwrap_or(u64::MAX)),
            ),
        ]
    }

    /// The line as a `tracing` event (text output, or a span current).
    fn trace(&self) {
        tracing::info!(
            target: TARGET,
            request_id = self.request_id,
            door = self.door,
            kind = self.kind,
            method = self.method,
            tool = self.tool,
            status = self.status,
            error = self.error,
            duration_ms = self.duration_ms,
            bytes = self.bytes,
            "mcp request"
        );
    }
}

/// The audit line's message.
const MESSAGE: &str = "mcp request";

/// The audit line's target (as `tracing` names it, this module's path).
const TARGET: &str = module_path!();

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tool: Option<&str>, error: Option<&str>) -> AuditRecord {
        AuditRecord {
            request_id: Uuid::from_u128(0x70487857_b8ce_4702_acb4_84de8d7351bf),
            door: "/play/mcp".into(),
            principal: None,
            principal_kind: Some("player".into()),
            subject: None,
            method: Some("tools/call".into()),
            tool: tool.map(str::to_owned),
            arguments: None,
            http_status: 200,
            error: error.map(str::to_owned),
            duration_ms: 148,
            response_bytes: 5530,
            extensions: Extensions::default(),
        }
    }

    fn ascii_and_beyond() -> String {
        (0u8..=0x7f)
            .map(char::from)
            .chain(['é', '\u{2028}'])
            .collect()
    }

    #[test]
    fn the_direct_line_is_the_tracing_events_line() {
        let cases = [
            record(Some("get_play_context"), None),
            record(None, Some("-32602")),
            // A tool name is the client's text: escaped exactly as the field visitor does.
            record(
                Some("a \"quote\", a back\\slash, a\nnewline, \u{1} and ż"),
                None,
            ),
            // Every ASCII character, control characters included, and a few beyond.
            record(Some(&ascii_and_beyond()), Some("\u{7f}\u{80}€𝄞")),
        ];
        for r in cases {
            let mut id = Uuid::encode_buffer();
            let line = AuditLine::of(&r, &mut id);
            let traced = logging::testing::json_lines_of(|| line.trace());
            let direct = logging::testing::event_line_at(
                logging::testing::timestamp_of(&traced),
                Level::INFO,
                TARGET,
                MESSAGE,
                &line.fields(),
            );
            assert_eq!(direct, traced);
        }
    }

    #[test]
    fn a_record_the_filter_turns_away_writes_nothing() {
        let sink = logging::testing::lines_of(true, "mcp_door::audit=warn", || {
            TracingAudit.record(record(Some("get_play_context"), None));
        });
        assert_eq!(sink, "");
        let sink = logging::testing::json_lines_of(|| {
            TracingAudit.record(record(Some("get_play_context"), None));
        });
        assert!(sink.contains("\"tool\":\"get_play_context\""), "{sink}");
    }
}
