//! Which era a request speaks, decided per request: a handshake revision (named by the
//! `MCP-Protocol-Version` header, or none) or the stateless revision, whose `_meta` envelope
//! and mirrored headers are checked in the order the 2026-07-28 transport gives — envelope
//! shape (−32602), header agreement (−32020), a version the door speaks (−32022), all HTTP 400.

use base64::Engine;
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::Reply;
use super::version::{self, NEWEST_HANDSHAKE, Version};
use crate::jsonrpc;

pub(super) const PROTOCOL_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// `_meta` key of the request's protocol version (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities (2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's identity (2026-07-28, optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server's identity in `server/discover` (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Methods the stateless revision removed: 404 with −32601 there.
pub(super) const REMOVED_IN_STATELESS: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// What a stateless request declared about itself.
#[derive(Debug, Clone)]
pub(super) struct Envelope {
    pub(super) version: Version,
    pub(super) client_capabilities: Value,
}

/// The era of one request.
#[derive(Debug, Clone)]
pub(super) enum Route {
    /// A handshake-era request at this revision (`initialize` negotiates its own).
    Handshake(Version),
    Stateless(Envelope),
}

impl Route {
    pub(super) fn version(&self) -> Version {
        match self {
            Route::Handshake(v) => *v,
            Route::Stateless(e) => e.version,
        }
    }
}

fn refuse(id: &Value, code: i64, message: &str, data: Option<Value>) -> Reply {
    let mut reply = Reply::rpc_error(id, code, message, data);
    reply.status = StatusCode::BAD_REQUEST;
    reply
}

/// The −32022 answer naming what the door speaks.
fn unsupported(id: &Value, requested: &Value) -> Reply {
    refuse(
        id,
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        Some(json!({"supported": version::supported(), "requested": requested})),
    )
}

/// `=?base64?…?=` decoded; any other value as it is.
pub(super) fn decode_header(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(payload) => base64::engine::general_purpose::STANDARD
            .decode(payload)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(raw.to_owned()),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<Result<&'a str, ()>> {
    headers.get(name).map(|v| v.to_str().map_err(|_| ()))
}

/// Decides the era of a request and, for the stateless one, checks its envelope.
pub(super) fn route(
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Route, Reply> {
    let meta = params.get("_meta");
    let meta_version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
    match header(headers, PROTOCOL_HEADER) {
        Some(Ok(h)) => {
            if let Some(v) = Version::parse(h).filter(|v| !v.is_stateless()) {
                return Ok(Route::Handshake(v));
            }
            if Version::parse(h).is_none() && meta_version.is_none() {
                return Err(unsupported(id, &Value::String(h.to_owned())));
            }
        }
        Some(Err(())) if meta_version.is_none() => {
            return Err(unsupported(id, &Value::String("(not ASCII)".into())));
        }
        Some(Err(())) => {}
        None if meta_version.is_none() => return Ok(Route::Handshake(NEWEST_HANDSHAKE)),
        None => {}
    }

    // The stateless ladder; the first failure wins.
    let Some(Value::Object(meta)) = meta else {
        return Err(refuse(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!(
                "params._meta must be an object carrying {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
            ),
            None,
        ));
    };
    let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|k| !meta.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!(
                "params._meta is missing the required key(s): {}",
                missing.join(", ")
            ),
            None,
        ));
    }
    let requested = &meta[META_PROTOCOL_VERSION];
    let mismatch = |what: &str| {
        Err(refuse(
            id,
            jsonrpc::HEADER_MISMATCH,
            &format!("Header mismatch: {what}"),
            None,
        ))
    };
    match header(headers, PROTOCOL_HEADER) {
        Some(Ok(h)) if requested.as_str() == Some(h) => {}
        Some(_) => {
            return mismatch(
                "the MCP-Protocol-Version header does not match params._meta's protocol version",
            );
        }
        None => return mismatch("the MCP-Protocol-Version header is missing"),
    }
    match header(headers, METHOD_HEADER) {
        Some(Ok(h)) if h == method => {}
        Some(_) => {
            return mismatch(&format!(
                "the Mcp-Method header does not match the body's method {method}"
            ));
        }
        None => return mismatch("the Mcp-Method header is missing"),
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key
        && let Some(body_value) = params.get(key).filter(|v| !v.is_null())
    {
        let decoded = header(headers, NAME_HEADER)
            .and_then(Result::ok)
            .and_then(decode_header);
        match decoded {
            Some(d) if body_value.as_str() == Some(d.as_str()) => {}
            Some(_) => {
                return mismatch(&format!(
                    "the Mcp-Name header does not match the body's params.{key}"
                ));
            }
            None => return mismatch("the Mcp-Name header is missing or malformed"),
        }
    }
    let Some(requested_str) = requested.as_str() else {
        return Err(refuse(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!("params._meta.{META_PROTOCOL_VERSION} must be a string"),
            None,
        ));
    };
    let version = match Version::parse(requested_str) {
        Some(v) if v.is_stateless() => v,
        _ => return Err(unsupported(id, requested)),
    };
    let client_capabilities = meta[META_CLIENT_CAPABILITIES].clone();
    if !client_capabilities.is_object() {
        return Err(refuse(
            id,
            jsonrpc::INVALID_PARAMS,
            &format!("params._meta.{META_CLIENT_CAPABILITIES} must be an object"),
            None,
        ));
    }
    Ok(Route::Stateless(Envelope {
        version,
        client_capabilities,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sentinel_is_decoded() {
        assert_eq!(
            decode_header("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode_header("plain").as_deref(), Some("plain"));
        assert_eq!(decode_header("=?base64?!!?="), None);
    }
}
