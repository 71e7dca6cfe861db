//! The per-request seam: what a request learns on its way through the door travels with it as
//! typed values, never in a side table keyed by request id or in a text parsed later. The door
//! keeps one [`Extensions`] per request: the method gate adds to it (a product's metering
//! outcome, see [`crate::GateRequest::extensions`]), handlers and presenters read it in
//! [`crate::CallContext::extensions`], a tool answers a [`CallOutcome`] (its result, its error
//! code, and values for the audit), and [`crate::AuditRecord`] hands the lot to the audit sink.
//! The wire rendering stays the product's; this module owns only what rides beside it.

pub use http::Extensions;
use rmcp::model::CallToolResult;

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
}

impl CallOutcome {
    /// A result that carries no error code (a success, or an uncoded `isError` result).
    pub fn new(result: CallToolResult) -> Self {
        Self {
            result,
            error_code: None,
            extensions: Extensions::new(),
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
