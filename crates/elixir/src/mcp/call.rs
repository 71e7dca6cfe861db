//! One tool call on Elixir's side of the door, from the handler's context to the rendered
//! result: what a handler sees ([`ToolCtx`]) and returns (an [`Outcome`]: a [`Success`] being
//! assembled, or a [`Fail`]), the call's [`run`] (the handler, the ignored-argument notes,
//! refunds of a failed call, `meta`, rendering), the response envelope (SURFACE §3: success
//! bodies with `applied`, `notes`, `docs` and the closed `meta` set; tool errors with the
//! closed code set and their classes; the 48,000-character result cap) and the `meta` every
//! answer carries (§3.2: the fixed four keys, `quota` from the gate's snapshot or read now,
//! `feedback_responses_pending` when a reply waits). Every tool result leaves through
//! [`render`], so the rules hold in one place, and the door learns the answer's error code
//! and text as values (a `CallOutcome`). The declarations a call runs from are
//! `mcp::spec`'s; the data keys of `meta` only a tool knows (`freshness_seconds`,
//! `source_polls`) are the tool's.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_door::model::{CallToolResult, ContentBlock};
use mcp_door::{CallContext, CallOutcome, Extensions, ToolFailure};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::access::gate;
use crate::access::metering::{CatalogueStamp, QuotaSnapshot, hour_used};
use crate::domain::iso;
use crate::mcp::audit::Answer;
use crate::services::{Caller, Services};
use crate::store::StoreError;

/// What a handler sees.
#[derive(Clone)]
pub struct ToolCtx {
    pub services: Arc<Services>,
    pub caller: Caller,
    pub request_id: Uuid,
    /// The card catalogue's stamp the gate's metering statement read; `None` when the gate
    /// did not read one (the counters failed open), so a handler that needs it reads it.
    pub catalogue: Option<CatalogueStamp>,
}

/// A handler's failure: a domain answer, or a failure the door renders.
#[derive(Debug)]
pub enum Fail {
    Tool(ToolError),
    /// A dependency is down → HTTP 503.
    Unavailable(String),
    /// A bug → the `internal` tool error; the detail is logged only.
    Internal(String),
}

impl From<ToolError> for Fail {
    fn from(e: ToolError) -> Self {
        Fail::Tool(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(d) => Fail::Unavailable(d),
            // a budgeted read the database cancelled (SURFACE §4.5); the H tools word their
            // own hint, this is the answer of any other caller
            StoreError::Timeout(_) => {
                let mut e = ToolError::new(
                    ErrorCode::QueryTimeout,
                    "The query ran past its time budget and the database cancelled it; the call was not charged.",
                    "Narrow the window (days, from and to, or season) and call again.",
                );
                e.retry_after_s = Some(30);
                Fail::Tool(e)
            }
            other => Fail::Internal(other.to_string()),
        }
    }
}

pub type Outcome = Result<Success, Fail>;
pub type SpecHandler = Arc<
    dyn Fn(ToolCtx, Map<String, Value>) -> Pin<Box<dyn Future<Output = Outcome> + Send>>
        + Send
        + Sync,
>;

/// Wraps an async function as a [`SpecHandler`].
pub fn handler<F, Fut>(f: F) -> SpecHandler
where
    F: Fn(ToolCtx, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    Arc::new(move |ctx, args| Box::pin(f(ctx, args)))
}

/// What a call's run needs of its tool's declaration, taken from the [`ToolSpec`] when its
/// door declaration is built ([`ToolSpec::decl`] hands the door a closure over it that calls
/// [`run`]).
///
/// [`ToolSpec`]: crate::mcp::spec::ToolSpec
/// [`ToolSpec::decl`]: crate::mcp::spec::ToolSpec::decl
pub struct CallSpec {
    /// The tool's name, for the log of an internal failure.
    pub name: &'static str,
    /// The `docs` pointer answers carry unless they name a better one.
    pub docs: String,
    /// The `result_too_large` hint.
    pub too_large_hint: String,
    pub handler: SpecHandler,
}

/// Runs one call: the handler, then `meta`, rendering, the result cap, refunds, and the
/// outcome the door audits (error code and answer text as values).
pub async fn run(
    spec: Arc<CallSpec>,
    services: Arc<Services>,
    call: CallContext,
    args: Map<String, Value>,
) -> Result<CallOutcome, ToolFailure> {
    let caller = call
        .principal
        .ext::<Caller>()
        .cloned()
        .ok_or_else(|| ToolFailure::Internal("principal without an Elixir caller".into()))?;
    let request_id = call.request_id;
    let ignored = call.ignored_arguments;
    let metered = call.extensions;
    let ctx = ToolCtx {
        services: Arc::clone(&services),
        caller: caller.clone(),
        request_id,
        catalogue: metered.get::<CatalogueStamp>().copied(),
    };
    let outcome = match (spec.handler)(ctx, args).await {
        Ok(s) => Ok(ignored_notes(s, &ignored)),
        Err(Fail::Tool(e)) => Err(e),
        Err(Fail::Unavailable(detail)) => {
            gate::refund(&services, &metered).await;
            return Err(ToolFailure::Unavailable(detail));
        }
        Err(Fail::Internal(detail)) => {
            tracing::error!(%request_id, tool = spec.name, %detail, "tool failed");
            Err(internal_error())
        }
    };
    if let Err(e) = &outcome
        && e.code.refunded()
    {
        gate::refund(&services, &metered).await;
    }
    let replies = match &outcome {
        Ok(s) if s.has_delivered_replies() => Replies::Delivered,
        _ => Replies::AsAuthenticated,
    };
    let meta = meta(&services, &caller, request_id, &metered, replies).await;
    let rendered = render(
        outcome,
        &RenderContext {
            meta,
            default_docs: &spec.docs,
            too_large_hint: &spec.too_large_hint,
        },
    );
    let outcome = match rendered.error_code {
        Some(code) => CallOutcome::failed(code.as_str(), rendered.result),
        None => CallOutcome::new(rendered.result),
    };
    Ok(outcome.with_extension(Answer(rendered.text)))
}

/// One note per agent-only argument the person door dropped (SURFACE §1.4), within the cap.
fn ignored_notes(mut success: Success, ignored: &[String]) -> Success {
    for name in ignored {
        if success.note_count() >= MAX_NOTES {
            break;
        }
        success = success.note(ignored_note(name));
    }
    success
}

/// The note for an agent-only argument sent on the person door.
pub fn ignored_note(name: &str) -> String {
    format!("{name} was ignored: it applies only on agent and integration doors.")
}

/// A `bad_request` naming the offending argument.
pub fn bad_request(message: impl Into<String>, hint: impl Into<String>) -> Fail {
    Fail::Tool(ToolError::new(ErrorCode::BadRequest, message, hint))
}

/// The contract's semver (`serverInfo.version` is `<this>+tools.<fingerprint>`).
pub const CONTRACT_VERSION: &str = "1.1.0";
/// Results longer than this many characters of compact JSON are refused, never sliced.
pub const RESULT_CAP: usize = 48_000;
/// The fixed disclaimer of every response.
pub const DISCLAIMER: &str = "Unofficial: not affiliated with, endorsed or sponsored by Supercell. \
Answers come from Elixir's own record of the public Clash Royale API.";
/// The default `docs` pointer.
pub const DEFAULT_DOCS: &str = "choosing-a-tool";
/// Notes per response, and characters per note.
pub const MAX_NOTES: usize = 8;
pub const MAX_NOTE_CHARS: usize = 240;

/// The closed set of `meta` keys (SURFACE §3.2); anything else fails producer validation.
pub const META_KEYS: [&str; 13] = [
    "as_of",
    "request_id",
    "disclaimer",
    "contract_version",
    "quota",
    "timezone_applied",
    "freshness_seconds",
    "source_polls",
    "recorded_since",
    "recording_active_since",
    "completeness_note",
    "feedback_responses_pending",
    "timeline_pending",
];
/// The `meta` keys every response carries.
pub const META_REQUIRED: [&str; 4] = ["as_of", "request_id", "disclaimer", "contract_version"];

/// The closed set of tool error codes (SURFACE §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    InvalidTag,
    BadRequest,
    ResultTooLarge,
    NoSubject,
    NotRecorded,
    NotFound,
    NotEntitled,
    QuotaExceeded,
    LivePending,
    QueryTimeout,
    LiveUnavailable,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::InvalidTag,
        ErrorCode::BadRequest,
        ErrorCode::ResultTooLarge,
        ErrorCode::NoSubject,
        ErrorCode::NotRecorded,
        ErrorCode::NotFound,
        ErrorCode::NotEntitled,
        ErrorCode::QuotaExceeded,
        ErrorCode::LivePending,
        ErrorCode::QueryTimeout,
        ErrorCode::LiveUnavailable,
        ErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidTag => "invalid_tag",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::NoSubject => "no_subject",
            ErrorCode::NotRecorded => "not_recorded",
            ErrorCode::NotFound => "not_found",
            ErrorCode::NotEntitled => "not_entitled",
            ErrorCode::QuotaExceeded => "quota_exceeded",
            ErrorCode::LivePending => "live_pending",
            ErrorCode::QueryTimeout => "query_timeout",
            ErrorCode::LiveUnavailable => "live_unavailable",
            ErrorCode::Internal => "internal",
        }
    }

    /// What the caller should do: `input` fix the call, `subject` change or set up the
    /// subject, `budget` wait or free an allowance, `retry` repeat later, `server` not yours.
    pub fn class(self) -> &'static str {
        match self {
            ErrorCode::InvalidTag | ErrorCode::BadRequest | ErrorCode::ResultTooLarge => "input",
            ErrorCode::NoSubject
            | ErrorCode::NotRecorded
            | ErrorCode::NotFound
            | ErrorCode::NotEntitled => "subject",
            ErrorCode::QuotaExceeded => "budget",
            ErrorCode::LivePending | ErrorCode::QueryTimeout => "retry",
            ErrorCode::LiveUnavailable | ErrorCode::Internal => "server",
        }
    }

    /// Whether a call ending in this code is refunded from the daily quota (SURFACE §4.3).
    pub fn refunded(self) -> bool {
        matches!(self, ErrorCode::Internal | ErrorCode::QueryTimeout)
    }
}

/// A failed call, as the tool words it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    /// For a person.
    pub message: String,
    /// One executable next step (a tool and its arguments).
    pub hint: String,
    pub retry_after_s: Option<u64>,
    pub candidates: Option<Vec<Value>>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: hint.into(),
            retry_after_s: None,
            candidates: None,
        }
    }

    pub fn with_candidates(mut self, candidates: Vec<Value>) -> Self {
        self.candidates = Some(candidates);
        self
    }

    /// The `error` object of the body.
    pub fn to_json(&self) -> Value {
        let mut error = json!({
            "code": self.code.as_str(),
            "class": self.code.class(),
            "message": self.message,
            "hint": self.hint,
        });
        if let Some(s) = self.retry_after_s {
            error["retry_after_s"] = json!(s);
        }
        if let Some(c) = &self.candidates {
            error["candidates"] = Value::Array(c.clone());
        }
        error
    }
}

/// A successful answer being assembled: the tool's own top-level fields, then `applied`,
/// `notes` and `docs`, and the data keys of `meta` only the tool knows (`freshness_seconds`,
/// `source_polls`). The rest of `meta` is added by [`render`].
#[derive(Debug, Clone, Default)]
pub struct Success {
    fields: Map<String, Value>,
    applied: Map<String, Value>,
    notes: Vec<String>,
    docs: Option<String>,
    meta: Map<String, Value>,
    delivered_replies: bool,
}

impl Success {
    pub fn new() -> Self {
        Self::default()
    }

    /// A top-level field of the tool.
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.to_owned(), value);
        self
    }

    /// An `applied` key (what was used).
    pub fn applied(mut self, key: &str, value: Value) -> Self {
        self.applied.insert(key.to_owned(), value);
        self
    }

    /// A one-sentence caveat to repeat to the user.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// A `meta` key of the closed set the tool owns (`freshness_seconds`, `source_polls`).
    pub fn meta(mut self, key: &str, value: Value) -> Self {
        self.meta.insert(key.to_owned(), value);
        self
    }

    /// Several `meta` keys at once (a subject's [`crate::tools::subject::PlayerFacts::meta`]).
    pub fn metas(mut self, keys: Vec<(&'static str, Value)>) -> Self {
        for (key, value) in keys {
            self.meta.insert(key.to_owned(), value);
        }
        self
    }

    /// Says that this call delivered feedback replies, so `meta` counts the waiting ones
    /// again instead of using the count read when the caller was authenticated.
    pub fn delivered_replies(mut self) -> Self {
        self.delivered_replies = true;
        self
    }

    /// Whether this call delivered feedback replies ([`Success::delivered_replies`]).
    pub fn has_delivered_replies(&self) -> bool {
        self.delivered_replies
    }

    /// Notes added so far.
    pub fn note_count(&self) -> usize {
        self.notes.len()
    }

    /// The `docs` pointer (`slug` or `slug#section`).
    pub fn docs(mut self, pointer: impl Into<String>) -> Self {
        self.docs = Some(pointer.into());
        self
    }

    /// The body without `meta`; the tool's `docs` default fills a missing pointer.
    fn into_body(self, default_docs: &str) -> Map<String, Value> {
        let Success {
            fields: mut body,
            applied,
            notes,
            docs,
            meta: _,
            delivered_replies: _,
        } = self;
        body.insert("applied".into(), Value::Object(applied));
        body.insert(
            "notes".into(),
            Value::Array(notes.into_iter().map(Value::String).collect()),
        );
        body.insert(
            "docs".into(),
            Value::String(docs.unwrap_or_else(|| default_docs.to_owned())),
        );
        body
    }
}

/// The complete success body: the tool's fields, `applied`, `notes`, `docs`, and `meta` (the
/// given keys plus the tool's own), checked against the producer rules (closed `meta` set,
/// notes bounded). Tool results and the `elixir://cards` resource both come through here.
pub fn success_body(success: Success, meta: Value, default_docs: &str) -> Result<Value, String> {
    let mut meta = meta;
    if let Some(object) = meta.as_object_mut() {
        for (k, v) in &success.meta {
            object.insert(k.clone(), v.clone());
        }
    }
    validate_meta(&meta)?;
    let mut body = success.into_body(default_docs);
    validate_notes(&body)?;
    body.insert("meta".into(), meta);
    Ok(Value::Object(body))
}

/// Checks `meta` against the closed set: every key known, the four fixed keys present.
pub fn validate_meta(meta: &Value) -> Result<(), String> {
    let Some(object) = meta.as_object() else {
        return Err("meta is not an object".into());
    };
    if let Some(key) = object.keys().find(|k| !META_KEYS.contains(&k.as_str())) {
        return Err(format!("meta key {key:?} is outside the closed set"));
    }
    if let Some(key) = META_REQUIRED.iter().find(|k| !object.contains_key(**k)) {
        return Err(format!("meta lacks {key}"));
    }
    Ok(())
}

/// Checks the success-body rules the type cannot: notes count and length.
fn validate_notes(body: &Map<String, Value>) -> Result<(), String> {
    let notes = body.get("notes").and_then(Value::as_array);
    let notes = notes.map(Vec::as_slice).unwrap_or_default();
    if notes.len() > MAX_NOTES {
        return Err(format!("{} notes (at most {MAX_NOTES})", notes.len()));
    }
    match notes.iter().find(|n| {
        n.as_str()
            .is_none_or(|s| s.chars().count() > MAX_NOTE_CHARS)
    }) {
        Some(n) => Err(format!("note too long or not text: {n}")),
        None => Ok(()),
    }
}

/// What [`render`] needs besides the outcome.
#[derive(Debug, Clone)]
pub struct RenderContext<'a> {
    /// The complete `meta` (validated here).
    pub meta: Value,
    /// The tool's `docs` pointer when the answer names none.
    pub default_docs: &'a str,
    /// The `result_too_large` hint: the tool's narrowing arguments, or a request to report.
    pub too_large_hint: &'a str,
}

/// The rendered result and, for the audit, its text and error code.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub result: CallToolResult,
    pub text: String,
    pub error_code: Option<ErrorCode>,
}

/// Renders an outcome into the tool result the door sends: the success body as
/// `structuredContent` and compact JSON text, or the error body as text with `isError` and no
/// `structuredContent`. A body failing producer validation becomes `internal`; a body over
/// [`RESULT_CAP`] characters becomes `result_too_large` with the same `meta`.
pub fn render(outcome: Result<Success, ToolError>, ctx: &RenderContext<'_>) -> Rendered {
    if let Err(problem) = validate_meta(&ctx.meta) {
        tracing::error!(%problem, "meta failed producer validation");
        return error(&internal_error(), &scrub_meta(&ctx.meta));
    }
    let success = match outcome {
        Ok(s) => s,
        Err(e) => return error(&e, &ctx.meta),
    };
    let body = match success_body(success, ctx.meta.clone(), ctx.default_docs) {
        Ok(body) => body,
        Err(problem) => {
            tracing::error!(%problem, "body failed producer validation");
            return error(&internal_error(), &ctx.meta);
        }
    };
    let text = body.to_string();
    if text.chars().count() > RESULT_CAP {
        return error(
            &ToolError::new(
                ErrorCode::ResultTooLarge,
                format!("Result exceeds {RESULT_CAP} characters."),
                ctx.too_large_hint,
            ),
            &ctx.meta,
        );
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
    result.structured_content = Some(body);
    Rendered {
        result,
        text,
        error_code: None,
    }
}

/// The error result: `{error, meta}` as text, `isError`, no `structuredContent`.
pub fn error(e: &ToolError, meta: &Value) -> Rendered {
    let text = json!({"error": e.to_json(), "meta": meta}).to_string();
    Rendered {
        result: CallToolResult::error(vec![ContentBlock::text(text.clone())]),
        text,
        error_code: Some(e.code),
    }
}

/// The `internal` error: nothing of the cause leaks.
pub fn internal_error() -> ToolError {
    ToolError::new(
        ErrorCode::Internal,
        "Something went wrong on Elixir's side.",
        "Report meta.request_id with elixir_feedback({\"message\": \"internal error\", \"category\": \"bug\", \"request_id\": \"<meta.request_id>\"}).",
    )
}

/// `meta` with only the closed-set keys (used when a producer bug put another key in it).
fn scrub_meta(meta: &Value) -> Value {
    let mut clean = Map::new();
    if let Some(o) = meta.as_object() {
        for (k, v) in o {
            if META_KEYS.contains(&k.as_str()) {
                clean.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(clean)
}

/// Where `feedback_responses_pending` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replies {
    /// The count read with the caller's account ([`Caller::pending_responses`]): nothing in
    /// this call delivered a reply, so it is as exact as a count read now.
    AsAuthenticated,
    /// This call delivered replies: count the waiting ones again.
    Delivered,
}

/// `meta` for a finished call: the fixed four, `quota` (the gate's snapshot in the request's
/// `extensions`, or read now) and `feedback_responses_pending` when a reply waits.
pub async fn meta(
    services: &Services,
    caller: &Caller,
    request_id: Uuid,
    extensions: &Extensions,
    replies: Replies,
) -> Value {
    let mut meta = base_meta(services, request_id);
    let quota = match extensions.get::<QuotaSnapshot>() {
        Some(q) => Some(q.0.clone()),
        None => {
            let hour_used = hour_used(extensions);
            gate::quota(services, caller, hour_used, None).await.ok()
        }
    };
    if let Some(q) = quota {
        meta["quota"] = q;
    }
    let pending = match replies {
        Replies::AsAuthenticated => Ok(caller.pending_responses),
        Replies::Delivered => services.store.pending_responses(caller.ledger()).await,
    };
    match pending {
        Ok(n) if n > 0 => meta["feedback_responses_pending"] = json!(n),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "pending responses unavailable"),
    }
    meta
}

/// The four keys every `meta` carries.
pub fn base_meta(services: &Services, request_id: Uuid) -> Value {
    json!({
        "as_of": iso(services.now()),
        "request_id": request_id.to_string(),
        "disclaimer": DISCLAIMER,
        "contract_version": CONTRACT_VERSION,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Value {
        json!({
            "as_of": "2026-01-01T00:00:00Z",
            "request_id": "00000000-0000-4000-8000-000000000000",
            "disclaimer": DISCLAIMER,
            "contract_version": CONTRACT_VERSION,
        })
    }

    fn ctx() -> RenderContext<'static> {
        RenderContext {
            meta: meta(),
            default_docs: "tools-help",
            too_large_hint: "narrow it",
        }
    }

    /// A success whose compact JSON is exactly `len` characters.
    fn sized(len: usize) -> Success {
        let base = render(Ok(Success::new().field("pad", json!(""))), &ctx()).text;
        Success::new().field("pad", json!("é".repeat(len - base.chars().count())))
    }

    #[test]
    fn cap_holds_at_48000_and_refuses_one_past_without_slicing() {
        let at = render(Ok(sized(RESULT_CAP)), &ctx());
        assert_eq!(at.text.chars().count(), RESULT_CAP);
        assert_eq!(at.result.is_error, Some(false));
        assert!(at.result.structured_content.is_some());

        let past = render(Ok(sized(RESULT_CAP + 1)), &ctx());
        assert_eq!(past.result.is_error, Some(true));
        assert!(past.result.structured_content.is_none());
        let body: Value = serde_json::from_str(&past.text).unwrap();
        assert_eq!(body["error"]["code"], "result_too_large");
        assert_eq!(body["error"]["class"], "input");
        assert_eq!(body["error"]["message"], "Result exceeds 48000 characters.");
        assert_eq!(body["error"]["hint"], "narrow it");
        assert_eq!(body["meta"], meta());
    }

    #[test]
    fn meta_is_a_closed_set() {
        assert!(validate_meta(&meta()).is_ok());
        let mut extra = meta();
        extra["total"] = json!(1);
        assert!(validate_meta(&extra).unwrap_err().contains("total"));
        let mut missing = meta();
        missing.as_object_mut().unwrap().remove("disclaimer");
        assert!(validate_meta(&missing).is_err());
        // a producer bug is an internal error, and the bad key never leaves
        let r = render(
            Ok(Success::new()),
            &RenderContext {
                meta: extra,
                ..ctx()
            },
        );
        let body: Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(body["error"]["code"], "internal");
        assert!(body["meta"].get("total").is_none());
    }

    #[test]
    fn success_carries_the_envelope_and_notes_are_bounded() {
        let r = render(
            Ok(Success::new()
                .field("x", json!(1))
                .applied("limit", json!(2))
                .note("One.")),
            &ctx(),
        );
        let body = r.result.structured_content.unwrap();
        assert_eq!(body["x"], 1);
        assert_eq!(body["applied"], json!({"limit": 2}));
        assert_eq!(body["notes"], json!(["One."]));
        assert_eq!(body["docs"], "tools-help");
        assert_eq!(body["meta"], meta());
        let mut many = Success::new();
        for _ in 0..9 {
            many = many.note("n");
        }
        assert_eq!(
            render(Ok(many), &ctx()).error_code,
            Some(ErrorCode::Internal)
        );
    }

    #[test]
    fn a_tool_adds_its_data_keys_to_meta_within_the_closed_set() {
        let r = render(
            Ok(Success::new().meta("freshness_seconds", json!(90)).meta(
                "source_polls",
                json!({"cards": {"observed_at": null, "freshness_seconds": null}}),
            )),
            &ctx(),
        );
        let body = r.result.structured_content.unwrap();
        assert_eq!(body["meta"]["freshness_seconds"], 90);
        assert_eq!(
            body["meta"]["source_polls"]["cards"]["observed_at"],
            Value::Null
        );
        assert_eq!(body["meta"]["request_id"], meta()["request_id"]);
        // a key outside the set is a producer bug: internal, and it never leaves
        let r = render(Ok(Success::new().meta("freshness", json!(1))), &ctx());
        assert_eq!(r.error_code, Some(ErrorCode::Internal));
        assert!(!r.text.contains("freshness\""), "{}", r.text);
        assert!(success_body(Success::new().meta("x", json!(1)), meta(), "d").is_err());
    }

    #[test]
    fn every_code_has_its_class() {
        let classes: Vec<(&str, &str)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.as_str(), c.class()))
            .collect();
        assert_eq!(
            classes,
            [
                ("invalid_tag", "input"),
                ("bad_request", "input"),
                ("result_too_large", "input"),
                ("no_subject", "subject"),
                ("not_recorded", "subject"),
                ("not_found", "subject"),
                ("not_entitled", "subject"),
                ("quota_exceeded", "budget"),
                ("live_pending", "retry"),
                ("query_timeout", "retry"),
                ("live_unavailable", "server"),
                ("internal", "server"),
            ]
        );
    }
}
