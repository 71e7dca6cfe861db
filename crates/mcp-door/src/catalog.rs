//! The catalog: each tool declared once — name, title, description, schemas, annotations,
//! required scope, the principal kinds that see it, and its handler. `tools/list`, argument
//! validation and the per-kind fingerprint all come from these declarations.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::auth::Principal;
use crate::outcome::{CallOutcome, Extensions};

/// What a handler knows about the call besides its arguments.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub principal: Arc<Principal>,
    pub request_id: Uuid,
    /// The revision this request speaks (`2025-03-26` … `2026-07-28`).
    pub protocol_version: String,
    /// The client's capabilities as a 2026-07-28 request declares them in `_meta`; `None` on
    /// a handshake-era request (a stateless door never keeps what `initialize` said).
    pub client_capabilities: Option<Value>,
    /// A 2026-07-28 retry's `inputResponses` (the client's answers to an `input_required`).
    pub input_responses: Option<Map<String, Value>>,
    /// The state of the `input_required` answer this request retries, verified by the door.
    pub request_state: Option<Value>,
    /// Undeclared arguments the door removed before validation because the presenter lists
    /// them as lenient for this tool and kind (see `Presenter::lenient_arguments`).
    pub ignored_arguments: Vec<String>,
    /// What the request has learned so far, as typed values: whatever the method gate added
    /// (a product's metering outcome). Read with `ctx.extensions.get::<T>()`.
    pub extensions: Extensions,
    /// This call's progress reporter: live when the client sent `_meta.progressToken` and
    /// reads event streams (then the door answers with an SSE stream once the tool reports),
    /// otherwise reports are checked and dropped. See [`crate::progress`].
    pub progress: crate::progress::Progress,
}

/// A failure that is not the product's domain answer: the door renders it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolFailure {
    /// A dependency (database, upstream) is unavailable → HTTP 503.
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// A bug or unexpected state → JSON-RPC −32603; the detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
    /// The call needs client capabilities the request did not declare (a `ClientCapabilities`
    /// object naming them, e.g. `{"sampling": {}}`) → 2026-07-28: HTTP 400 with −32021 and
    /// `data.requiredCapabilities`; a handshake-era request: −32600 with the same data.
    #[error("missing client capability: {0}")]
    MissingClientCapability(Value),
    /// Not a failure: the call needs input from the client first → 2026-07-28: an
    /// `input_required` result; a handshake-era request: −32600 saying so.
    #[error("input required: {0:?}")]
    InputRequired(crate::outcome::InputRequired),
}

/// A tool handler: validated arguments in, a tool result and what the door records about it
/// out.
pub type Handler = Arc<
    dyn Fn(CallContext, Map<String, Value>) -> BoxFuture<'static, Result<CallOutcome, ToolFailure>>
        + Send
        + Sync,
>;

/// One tool, declared once.
#[derive(Clone)]
pub struct ToolDecl {
    pub name: String,
    pub title: String,
    pub description: String,
    /// A JSON Schema (2020-12) object; arguments are validated against it before the handler.
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Option<ToolAnnotations>,
    /// A scope the principal must hold (HTTP 403 otherwise).
    pub scope: Option<String>,
    /// The principal kinds that see this tool; `None` means every kind.
    pub kinds: Option<Vec<String>>,
    /// The tool's `_meta` object in `tools/list`, if the product adds one.
    pub meta: Option<Map<String, Value>>,
    /// The handler confirms a provisional caller itself ([`crate::Authenticator::confirm`]),
    /// in the statement that does its work, before any effect: the door does not confirm
    /// before calling it (unless the client asked for progress, or the door has a method gate,
    /// which meters a call before its handler runs), only before answering.
    pub confirms_caller: bool,
    pub handler: Handler,
}

impl std::fmt::Debug for ToolDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDecl")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDecl {
    /// Declares a tool whose async handler answers a bare [`CallToolResult`]: for tools whose
    /// results are never domain errors (an `isError` result of theirs is audited as
    /// [`crate::outcome::UNCODED_TOOL_ERROR`]). Tools with error codes use
    /// [`ToolDecl::new_with_outcome`].
    pub fn new<F, Fut>(
        name: &str,
        title: &str,
        description: &str,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(CallContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CallToolResult, ToolFailure>> + Send + 'static,
    {
        Self::new_with_outcome(name, title, description, input_schema, move |ctx, args| {
            let answer = handler(ctx, args);
            async move { answer.await.map(CallOutcome::from) }
        })
    }

    /// Declares a tool whose async handler answers a [`CallOutcome`]: its result plus, for an
    /// `isError` result, the error code the audit and metrics record.
    pub fn new_with_outcome<F, Fut>(
        name: &str,
        title: &str,
        description: &str,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(CallContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CallOutcome, ToolFailure>> + Send + 'static,
    {
        Self {
            name: name.to_owned(),
            title: title.to_owned(),
            description: description.to_owned(),
            input_schema,
            output_schema: None,
            annotations: None,
            scope: None,
            kinds: None,
            meta: None,
            confirms_caller: false,
            handler: Arc::new(move |ctx, args| Box::pin(handler(ctx, args))),
        }
    }

    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Declares that the handler confirms a provisional caller in its own statement, before
    /// any effect, and never answers with what a refused caller must not learn (see
    /// [`ToolDecl::confirms_caller`]).
    pub fn confirming_caller(mut self) -> Self {
        self.confirms_caller = true;
        self
    }

    pub fn with_scope(mut self, scope: &str) -> Self {
        self.scope = Some(scope.to_owned());
        self
    }

    /// Sets the tool's `_meta` (part of `tools/list` and so of the fingerprint).
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    pub fn for_kinds(mut self, kinds: &[&str]) -> Self {
        self.kinds = Some(kinds.iter().map(|k| (*k).to_owned()).collect());
        self
    }

    /// Whether principals of `kind` see this tool.
    pub fn visible_to(&self, kind: &str) -> bool {
        self.kinds
            .as_ref()
            .is_none_or(|k| k.iter().any(|x| x == kind))
    }

    fn wire(&self) -> Result<Tool, CatalogError> {
        let object = |v: &Value, what: &str| {
            v.as_object()
                .cloned()
                .map(Arc::new)
                .ok_or_else(|| CatalogError::Schema {
                    tool: self.name.clone(),
                    message: format!("{what} must be a JSON object"),
                })
        };
        let mut tool = Tool::new(
            self.name.clone(),
            self.description.clone(),
            object(&self.input_schema, "inputSchema")?,
        )
        .with_title(self.title.clone());
        if let Some(o) = &self.output_schema {
            tool = tool.with_raw_output_schema(object(o, "outputSchema")?);
        }
        if let Some(a) = &self.annotations {
            tool = tool.with_annotations(a.clone());
        }
        if let Some(m) = &self.meta {
            tool = tool.with_meta(rmcp::model::MetaObject(m.clone()));
        }
        Ok(tool)
    }
}

/// A catalog could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    #[error("tool {0} is declared twice")]
    Duplicate(String),
    #[error("tool {tool}: {message}")]
    Schema { tool: String, message: String },
}

/// One argument violation: where (a JSON pointer into the arguments) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

struct Entry {
    decl: ToolDecl,
    wire: Value,
    validator: jsonschema::Validator,
}

/// The tools of one door.
pub struct Catalog {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.decl.name))
            .finish()
    }
}

impl Catalog {
    /// Compiles every schema once; refuses duplicates and invalid schemas.
    pub fn new(decls: Vec<ToolDecl>) -> Result<Self, CatalogError> {
        let mut entries = Vec::with_capacity(decls.len());
        let mut index = HashMap::new();
        for decl in decls {
            if index.insert(decl.name.clone(), entries.len()).is_some() {
                return Err(CatalogError::Duplicate(decl.name));
            }
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&decl.input_schema)
                .map_err(|e| CatalogError::Schema {
                    tool: decl.name.clone(),
                    message: e.to_string(),
                })?;
            let wire = serde_json::to_value(decl.wire()?).map_err(|e| CatalogError::Schema {
                tool: decl.name.clone(),
                message: e.to_string(),
            })?;
            entries.push(Entry {
                decl,
                wire,
                validator,
            });
        }
        Ok(Self { entries, index })
    }

    /// The declaration named `name`, whoever asks.
    pub fn get(&self, name: &str) -> Option<&ToolDecl> {
        self.index.get(name).map(|i| &self.entries[*i].decl)
    }

    /// `tools/list` for a principal kind, in declaration order.
    pub fn list_for(&self, kind: &str) -> Vec<Value> {
        self.entries
            .iter()
            .filter(|e| e.decl.visible_to(kind))
            .map(|e| e.wire.clone())
            .collect()
    }

    /// First 12 hex digits of SHA-256 over the canonical JSON of what `kind` receives.
    pub fn fingerprint(&self, kind: &str) -> String {
        let canonical = Value::Array(self.list_for(kind)).to_string();
        hex::encode(Sha256::digest(canonical.as_bytes()))[..12].to_owned()
    }

    /// Validates arguments against the tool's input schema; empty when valid.
    pub fn validate(&self, name: &str, arguments: &Value) -> Vec<Violation> {
        let Some(entry) = self.index.get(name).map(|i| &self.entries[*i]) else {
            return vec![Violation {
                pointer: String::new(),
                message: format!("unknown tool {name}"),
            }];
        };
        // Valid arguments (nearly every call) are answered by the short-circuiting check; the
        // errors are collected only for arguments it refuses.
        if entry.validator.is_valid(arguments) {
            return Vec::new();
        }
        entry
            .validator
            .iter_errors(arguments)
            .map(|e| {
                let pointer = e.instance_path().to_string();
                Violation {
                    pointer: if pointer.is_empty() {
                        "/".to_owned()
                    } else {
                        pointer
                    },
                    message: e.masked().to_string(),
                }
            })
            .collect()
    }
}

/// A successful tool result carrying `value` both as JSON text and as `structuredContent`.
pub fn tool_json(value: Value) -> CallToolResult {
    // `to_string` of the value itself would pass every piece through `fmt`; the bytes are
    // the same (compact JSON).
    let text = serde_json::to_string(&value).unwrap_or_else(|_| value.to_string());
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "n": {"type": "integer", "minimum": 1, "maximum": 3}
            },
            "required": ["id"],
            "additionalProperties": false
        });
        let decl = ToolDecl::new("t", "T", "A tool.", schema, |_ctx, _args| async {
            Ok(CallToolResult::success(Vec::new()))
        });
        Catalog::new(vec![decl]).expect("the schema compiles")
    }

    #[test]
    fn valid_arguments_have_no_violations_and_invalid_ones_list_each() {
        let c = catalog();
        let id = "6f1c2b1e-4c5d-4e8f-9a0b-1c2d3e4f5a6b";
        assert!(c.validate("t", &json!({"id": id})).is_empty());
        assert!(c.validate("t", &json!({"id": id, "n": 3})).is_empty());

        // One past the bound, a bad format and an undeclared key: every violation is listed,
        // each at its pointer.
        let found = c.validate("t", &json!({"id": "nope", "n": 4, "x": true}));
        let mut pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        pointers.sort_unstable();
        assert_eq!(pointers, ["/", "/id", "/n"], "{found:?}");
        assert!(found.iter().all(|v| !v.message.is_empty()));

        let missing = c.validate("t", &json!({}));
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].pointer, "/");
        assert!(missing[0].message.contains("id"), "{missing:?}");
    }
}
