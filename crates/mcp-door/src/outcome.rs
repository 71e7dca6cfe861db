//! The per-request seam: what a request learns on its way through the door travels with it as
//! typed values, never in a side table keyed by request id or in a text parsed later. The door
//! keeps one [`Extensions`] per request: the method gate adds to it (a product's metering
//! outcome, see [`crate::GateRequest::extensions`]), handlers and presenters read it in
//! [`crate::CallContext::extensions`], a tool answers a [`CallOutcome`] (its result, its error
//! code, and values for the audit), and [`crate::AuditRecord`] hands the lot to the audit sink;
//! a call or a hook may instead answer [`InputRequired`], the interim 2026-07-28 request for input.
//! The wire rendering stays the product's; this module owns only what rides beside it.

use std::sync::Arc;

use bytes::Bytes;

pub use http::Extensions;
use rmcp::model::{CallToolResult, ContentBlock, ResultType};
use serde_json::{Map, Value};

/// The audit and metrics label of an `isError` result whose tool handed no error code.
pub const UNCODED_TOOL_ERROR: &str = "tool_error";

/// What a tool (or the presenter's invalid-arguments answer) returns to the door: the result
/// sent to the client, plus what the door records about it as values.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The `tools/call` result, rendered by the product.
    pub result: CallToolResult,
    /// The error code of an `isError` result: the product's closed error word (`bad_request`)
    /// or its status (`409`). It becomes [`crate::AuditRecord::error`] and the metrics'
    /// `outcome` label; ignored when the result is not an error.
    pub error_code: Option<String>,
    /// Typed values for the audit sink (e.g. the answer text a product keeps), merged into
    /// [`crate::AuditRecord::extensions`].
    pub extensions: Extensions,
    /// A successful JSON result serialized before ([`PreparedResult`]); when set, the door
    /// sends it instead of serializing `result` (which is then an empty success).
    pub prepared: Option<Arc<PreparedResult>>,
}

impl CallOutcome {
    /// A result that carries no error code (a success, or an uncoded `isError` result).
    pub fn new(result: CallToolResult) -> Self {
        Self {
            result,
            error_code: None,
            extensions: Extensions::new(),
            prepared: None,
        }
    }

    /// A successful JSON result serialized before (kept by the product, e.g. per version of
    /// what it renders): the door copies its bytes into the response.
    pub fn prepared(result: Arc<PreparedResult>) -> Self {
        Self {
            prepared: Some(result),
            ..Self::new(CallToolResult::success(Vec::new()))
        }
    }

    /// An `isError` result and its error code.
    pub fn failed(code: impl Into<String>, result: CallToolResult) -> Self {
        Self {
            error_code: Some(code.into()),
            ..Self::new(result)
        }
    }

    /// Adds a value the audit sink reads back with `record.extensions.get::<T>()`.
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The audit label of this outcome: `None` for a result that is not an error, else its
    /// error code ([`UNCODED_TOOL_ERROR`] when the tool gave none).
    pub fn error_label(&self) -> Option<String> {
        if self.result.is_error != Some(true) {
            return None;
        }
        Some(
            self.error_code
                .clone()
                .unwrap_or_else(|| UNCODED_TOOL_ERROR.to_owned()),
        )
    }
}

impl From<CallToolResult> for CallOutcome {
    fn from(result: CallToolResult) -> Self {
        Self::new(result)
    }
}

/// What [`crate::tool_json`] answers for a value (its JSON as the text block and as
/// `structuredContent`), serialized once: a product that answers the same value many times
/// keeps this and hands it back with [`CallOutcome::prepared`], so sending it again costs
/// neither a JSON rendering nor a copy: the response body is a few chunks, the request's own
/// envelope around these bytes, shared (reference-counted) with the product's cache. The door
/// writes exactly the bytes the `tool_json` result would serialize to under each protocol
/// revision.
#[derive(Debug)]
pub struct PreparedResult {
    /// rmcp's serialization of the text block, `{"type":"text","text":"…"}`.
    content: Bytes,
    /// The value, compact (what `structuredContent` serializes to).
    structured: Bytes,
}

impl PreparedResult {
    /// Serializes `value` as [`crate::tool_json`] would answer it.
    pub fn new(value: &Value) -> Result<Self, serde_json::Error> {
        // `to_string` writes UTF-8 and says so; the text block gets a copy, not a re-check.
        let structured = serde_json::to_string(value)?;
        let content = serde_json::to_vec(&ContentBlock::text(structured.clone()))?;
        Ok(Self {
            content: Bytes::from(content),
            structured: Bytes::from(structured.into_bytes()),
        })
    }

    /// The bytes it holds (what a cache weighs it by).
    pub fn size(&self) -> usize {
        self.content.len() + self.structured.len()
    }

    /// The JSON-RPC response carrying it, as the chunks of a body: `resultType` only in the
    /// stateless revision and `structuredContent` only from 2025-06-18 on, in rmcp's field
    /// order (`resultType`, `content`, `structuredContent`, `isError`), as [`crate::door`]'s
    /// revision rules leave a `tool_json` result. The two large chunks are this result's own
    /// bytes, not copies.
    pub(crate) fn response(
        &self,
        id: &Value,
        result_type: bool,
        structured: bool,
    ) -> Result<Vec<Bytes>, serde_json::Error> {
        let mut head = Vec::with_capacity(96);
        head.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        serde_json::to_writer(&mut head, id)?;
        head.extend_from_slice(b",\"result\":{");
        if result_type {
            head.extend_from_slice(b"\"resultType\":");
            serde_json::to_writer(&mut head, &ResultType::COMPLETE)?;
            head.push(b',');
        }
        head.extend_from_slice(b"\"content\":[");
        let mut chunks = vec![Bytes::from(head), self.content.clone()];
        if structured {
            chunks.push(Bytes::from_static(b"],\"structuredContent\":"));
            chunks.push(self.structured.clone());
            chunks.push(Bytes::from_static(b",\"isError\":false}}"));
        } else {
            chunks.push(Bytes::from_static(b"],\"isError\":false}}"));
        }
        Ok(chunks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn the_label_is_the_code_handed_over_never_the_text() {
        let text = |t: &str| vec![ContentBlock::text(t.to_owned())];
        let ok = CallOutcome::failed("409", CallToolResult::success(text("409: not an error")));
        assert_eq!(ok.error_label(), None);
        let coded = CallOutcome::failed("409", CallToolResult::error(text("{\"error\":1}")));
        assert_eq!(coded.error_label().as_deref(), Some("409"));
        let uncoded = CallOutcome::new(CallToolResult::error(text("422: looks like a code")));
        assert_eq!(uncoded.error_label().as_deref(), Some(UNCODED_TOOL_ERROR));
    }

    #[test]
    fn extensions_ride_the_outcome() {
        #[derive(Clone, Debug, PartialEq)]
        struct Answer(&'static str);
        let outcome = CallOutcome::new(CallToolResult::success(vec![])).with_extension(Answer("a"));
        assert_eq!(outcome.extensions.get::<Answer>(), Some(&Answer("a")));
    }
}

/// A 2026-07-28 interim answer (SEP-2322): requests the client must fulfil before the
/// request is retried with their `inputResponses`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRequired {
    /// Keyed requests, each `{"method": "elicitation/create" | "sampling/createMessage" |
    /// "roots/list", "params": {...}}`; ask only for what the client's capabilities declare
    /// (`CallContext::client_capabilities`).
    pub input_requests: Map<String, Value>,
    /// State to get back on the retry: the door seals it (HMAC) into `requestState` and hands
    /// it back, verified, in `CallContext::request_state`.
    pub state: Option<Value>,
}
