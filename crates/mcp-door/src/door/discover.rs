//! What the door says about itself: `initialize` (handshake revisions) and `server/discover`
//! (2026-07-28) from the same presenter facts, and the decoration every stateless result
//! carries — `resultType`, and the caching hints of the cacheable methods.

use serde_json::{Value, json};

use super::Inner;
use super::era::META_SERVER_INFO;
use super::version::{self, Version};
use crate::auth::Principal;

/// Caching hints of a cacheable 2026-07-28 result (`ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the client may consider the result fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Whether shared intermediaries may cache it (`"public"`); else `"private"`.
    pub public: bool,
}

impl Default for CacheHint {
    /// Immediately stale and private: an authenticated door's answers are per credential.
    fn default() -> Self {
        Self {
            ttl_ms: 0,
            public: false,
        }
    }
}

/// The methods whose 2026-07-28 results carry caching hints.
pub(super) const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The server's capabilities as the presenter words them.
fn capabilities(inner: &Inner, principal: &Principal) -> Value {
    let mut capabilities = json!({"tools": {"listChanged": false}});
    if inner.resources.is_some() {
        capabilities["resources"] = json!({"listChanged": false, "subscribe": false});
    }
    if inner.prompts.is_some() {
        capabilities["prompts"] = json!({"listChanged": false});
    }
    if inner.completions.is_some() {
        capabilities["completions"] = json!({});
    }
    inner
        .presenter
        .initialize_capabilities(principal, capabilities)
}

/// `serverInfo` for this principal, as `version` defines `Implementation`.
fn server_info(inner: &Inner, principal: &Principal, version: Version) -> Value {
    let fingerprint = inner.catalog.fingerprint(&principal.kind);
    let info = inner.presenter.server_info(principal, &fingerprint);
    version.implementation(serde_json::to_value(info).unwrap_or(Value::Null))
}

/// The `initialize` result at the negotiated handshake revision.
pub(super) fn initialize(inner: &Inner, principal: &Principal, version: Version) -> Value {
    let mut result = json!({
        "protocolVersion": version.as_str(),
        "capabilities": capabilities(inner, principal),
        "serverInfo": server_info(inner, principal, version),
    });
    if let Some(text) = inner.presenter.instructions(principal) {
        result["instructions"] = Value::String(text);
    }
    if let Some(meta) = inner.presenter.server_meta(principal) {
        result["_meta"] = Value::Object(meta);
    }
    result
}

/// The `server/discover` result (2026-07-28): the same facts as `initialize`, identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]` beside the presenter's own `_meta` keys.
pub(super) fn discover(inner: &Inner, principal: &Principal, version: Version) -> Value {
    let mut meta = inner.presenter.server_meta(principal).unwrap_or_default();
    meta.insert(
        META_SERVER_INFO.into(),
        server_info(inner, principal, version),
    );
    let mut result = json!({
        "supportedVersions": version::supported(),
        "capabilities": capabilities(inner, principal),
        "_meta": Value::Object(meta),
    });
    if let Some(text) = inner.presenter.instructions(principal) {
        result["instructions"] = Value::String(text);
    }
    result
}

/// A 2026-07-28 result: `resultType: "complete"` and, for a cacheable method, its hints.
pub(super) fn stateless_result(
    inner: &Inner,
    principal: &Principal,
    method: &str,
    mut result: Value,
) -> Value {
    if let Value::Object(o) = &mut result {
        o.insert("resultType".into(), Value::String("complete".into()));
        if CACHEABLE.contains(&method) {
            let hint = inner.presenter.cache_hint(principal, method);
            o.insert("ttlMs".into(), Value::from(hint.ttl_ms));
            o.insert(
                "cacheScope".into(),
                Value::String(if hint.public { "public" } else { "private" }.into()),
            );
        }
    }
    result
}
