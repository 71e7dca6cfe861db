//! 2026-07-28 multi round-trip requests (SEP-2322): a `tools/call`, `prompts/get` or
//! `resources/read` may answer `resultType: "input_required"` with requests for the client to
//! fulfil; the retry carries `inputResponses` and the `requestState` the door sealed with
//! HMAC-SHA256, bound to the method and the tool, prompt or resource it was issued for. A
//! tampered, foreign or unsealable state is −32602; nothing reaches the handler unverified.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;

use super::version::Version;
use super::{Inner, Reply};
use crate::jsonrpc;
use crate::outcome::InputRequired;

/// The methods that may answer `input_required`.
pub(super) const INTERACTIVE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// What a retry brought back, verified.
#[derive(Debug, Default)]
pub(super) struct Retry {
    pub(super) input_responses: Option<Map<String, Value>>,
    pub(super) request_state: Option<Value>,
}

fn mac(key: &[u8]) -> Option<Hmac<Sha256>> {
    <Hmac<Sha256> as Mac>::new_from_slice(key).ok()
}

fn subject<'a>(method: &str, params: &'a Map<String, Value>) -> &'a str {
    let key = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    params.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `state` sealed for `method` on `subject`: base64url(payload) "." base64url(HMAC).
pub(super) fn seal(key: &[u8], method: &str, subject: &str, state: &Value) -> Option<String> {
    let payload = json!({"m": method, "n": subject, "s": state}).to_string();
    let mut m = mac(key)?;
    m.update(payload.as_bytes());
    let tag = m.finalize().into_bytes();
    Some(format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload.as_bytes()),
        URL_SAFE_NO_PAD.encode(tag)
    ))
}

/// The state inside `sealed`, if the door sealed it for this `method` and `subject`.
pub(super) fn open(key: &[u8], method: &str, subject: &str, sealed: &str) -> Option<Value> {
    let (payload, tag) = sealed.split_once('.')?;
    let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    let mut m = mac(key)?;
    m.update(&payload);
    m.verify_slice(&tag).ok()?;
    let value: Value = serde_json::from_slice(&payload).ok()?;
    (value["m"] == method && value["n"] == subject).then(|| value["s"].clone())
}

fn invalid(id: &Value, message: &str) -> Reply {
    Reply::rpc_error(id, jsonrpc::INVALID_PARAMS, message, None)
}

/// `inputResponses` and the verified `requestState` of a 2026-07-28 retry; nothing on a
/// handshake-era request (the fields do not exist there).
pub(super) fn retry(
    inner: &Inner,
    version: Version,
    id: &Value,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Retry, Reply> {
    if !version.is_stateless() || !INTERACTIVE.contains(&method) {
        return Ok(Retry::default());
    }
    let input_responses = match params.get("inputResponses") {
        None => None,
        Some(Value::Object(o)) => Some(o.clone()),
        Some(_) => return Err(invalid(id, "params.inputResponses must be an object")),
    };
    let request_state = match params.get("requestState") {
        None => None,
        Some(Value::String(sealed)) => {
            let opened = inner
                .request_state_key
                .as_deref()
                .and_then(|key| open(key, method, subject(method, params), sealed));
            match opened {
                Some(state) => Some(state),
                None => {
                    return Err(invalid(
                        id,
                        "params.requestState failed its integrity check: send back the requestState of the last input_required answer to this same request, unchanged",
                    ));
                }
            }
        }
        Some(_) => return Err(invalid(id, "params.requestState must be a string")),
    };
    Ok(Retry {
        input_responses,
        request_state,
    })
}

/// The answer for an `input_required` outcome: the interim result on 2026-07-28, a refusal
/// on the handshake revisions (which cannot ask the client mid-request without a session).
pub(super) fn answer(
    inner: &Inner,
    version: Version,
    id: &Value,
    request_id: uuid::Uuid,
    method: &str,
    params: &Map<String, Value>,
    asked: InputRequired,
) -> Reply {
    if !version.is_stateless() {
        let wanted: Vec<&str> = asked
            .input_requests
            .values()
            .filter_map(|r| r["method"].as_str())
            .collect();
        return Reply::rpc_error(
            id,
            jsonrpc::INVALID_REQUEST,
            &format!(
                "This request needs input from the client ({}), which only protocol version 2026-07-28 can ask for on this stateless server",
                wanted.join(", ")
            ),
            None,
        );
    }
    let mut result = json!({
        "resultType": "input_required",
        "inputRequests": Value::Object(asked.input_requests),
    });
    if let Some(state) = asked.state {
        let sealed = inner
            .request_state_key
            .as_deref()
            .and_then(|key| seal(key, method, subject(method, params), &state));
        match sealed {
            Some(s) => result["requestState"] = Value::String(s),
            None => {
                tracing::error!(%method, "input_required with state but the door has no request-state key");
                return Reply::internal(inner.presenter.internal_error_status(), id, request_id);
            }
        }
    }
    Reply::json(jsonrpc::result(id, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_only_unchanged_and_where_it_was_issued() {
        let key = [7u8; 32];
        let state = json!({"round": 2});
        let sealed = seal(&key, "tools/call", "t", &state).unwrap_or_default();
        assert_eq!(open(&key, "tools/call", "t", &sealed), Some(state));
        assert_eq!(open(&key, "tools/call", "other", &sealed), None);
        assert_eq!(open(&key, "prompts/get", "t", &sealed), None);
        assert_eq!(open(&[8u8; 32], "tools/call", "t", &sealed), None);
        let mut tampered = sealed.clone().into_bytes();
        tampered[3] ^= 1;
        let tampered = String::from_utf8(tampered).unwrap_or_default();
        assert_eq!(open(&key, "tools/call", "t", &tampered), None);
        assert_eq!(open(&key, "tools/call", "t", "garbage"), None);
    }
}
