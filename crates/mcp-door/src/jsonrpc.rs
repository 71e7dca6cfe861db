//! JSON-RPC 2.0 envelopes and the error codes the doors use.

use serde_json::{Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Transport-level refusals (401/408/413/429/503/504) carry this code in their body.
pub const SERVER_ERROR: i64 = -32000;
/// A missing scope (HTTP 403).
pub const INSUFFICIENT_SCOPE: i64 = -32003;
/// A resource that does not exist (handshake revisions; 2026-07-28 answers −32602).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// 2026-07-28: the HTTP headers disagree with the body, or a required one is missing (HTTP 400).
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability its `_meta` did not declare (HTTP 400).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28 (and every revision's `MCP-Protocol-Version` header): a protocol version the
/// door does not speak; `data.supported` lists the ones it does (HTTP 400).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A successful response.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A success response over a borrowed result, serialized without an intermediate `Value`
/// (the same JSON as [`result`], keys in this order).
#[derive(Debug, serde::Serialize)]
pub struct Response<'a, T: serde::Serialize> {
    pub jsonrpc: &'static str,
    pub id: &'a Value,
    pub result: &'a T,
}

/// An error response; `data` is omitted when `None`.
pub fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = json!({"code": code, "message": message});
    if let (Some(data), Some(obj)) = (data, err.as_object_mut()) {
        obj.insert("data".into(), data);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}
