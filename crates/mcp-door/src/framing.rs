//! JSON-RPC framing of one request body: structural limits (depth, token count), storage-safe
//! text (no NUL, no lone surrogates), a single object with `jsonrpc: "2.0"` — never a batch.
//! The scanner is hand-written because it must run before `serde_json` builds anything.

use serde_json::{Map, Value};

/// Structural limits on a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    pub max_depth: usize,
    pub max_tokens: usize,
}

impl Default for JsonLimits {
    fn default() -> Self {
        Self {
            max_depth: 32,
            max_tokens: 20_000,
        }
    }
}

/// Why a body is not an acceptable JSON-RPC message (all HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    #[error("JSON nesting deeper than {0}")]
    TooDeep(usize),
    #[error("more than {0} JSON tokens")]
    TooManyTokens(usize),
    #[error("invalid storage text: {0}")]
    InvalidText(&'static str),
    #[error("malformed JSON: {0}")]
    Malformed(String),
    #[error("batches are not supported")]
    Batch,
    #[error("invalid JSON-RPC request: {0}")]
    InvalidRequest(&'static str),
}

impl FramingError {
    /// The JSON-RPC error code of the 400 body.
    pub fn code(&self) -> i64 {
        match self {
            FramingError::Malformed(_) => crate::jsonrpc::PARSE_ERROR,
            _ => crate::jsonrpc::INVALID_REQUEST,
        }
    }

    /// A short, product-agnostic next step for the 400 body's `data.hint`.
    pub fn hint(&self) -> String {
        match self {
            FramingError::TooDeep(n) => {
                format!("Flatten the request: JSON may nest at most {n} levels deep.")
            }
            FramingError::TooManyTokens(n) => {
                format!("Shorten the request: at most {n} JSON tokens per request.")
            }
            FramingError::InvalidText(_) => {
                "Remove NUL characters and unpaired surrogates from every string.".to_owned()
            }
            FramingError::Malformed(_) => {
                "The body is not valid JSON; send one JSON-RPC 2.0 request object.".to_owned()
            }
            FramingError::Batch => {
                "Send one JSON-RPC 2.0 request object per POST; batches are not supported."
                    .to_owned()
            }
            FramingError::InvalidRequest(_) => "Send one JSON-RPC 2.0 request object per POST: \
                 jsonrpc \"2.0\", a string or integer id, a string method, object params."
                .to_owned(),
        }
    }
}

/// One parsed JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it has an id and expects a response.
    Request {
        id: Value,
        method: String,
        params: Option<Map<String, Value>>,
    },
    /// A notification (no id): answered with 202 and no body.
    Notification { method: String },
    /// A response from the client (to a server request we never send): 202.
    Response,
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let s = std::str::from_utf8(bytes.get(..4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// Checks depth, token count and text validity without building the value.
pub fn scan(body: &[u8], limits: JsonLimits) -> Result<(), FramingError> {
    let mut depth = 0usize;
    let mut tokens = 0usize;
    let mut i = 0usize;
    let mut in_scalar = false;
    let count = |tokens: &mut usize| {
        *tokens += 1;
        if *tokens > limits.max_tokens {
            Err(FramingError::TooManyTokens(limits.max_tokens))
        } else {
            Ok(())
        }
    };
    while i < body.len() {
        let b = body[i];
        match b {
            0 => return Err(FramingError::InvalidText("NUL byte")),
            b'"' => {
                in_scalar = false;
                count(&mut tokens)?;
                i += 1;
                let mut pending_high = false;
                loop {
                    // Plain text runs up to the next quote, backslash or NUL.
                    let rest = body.get(i..).unwrap_or_default();
                    let plain = memchr::memchr3(b'"', b'\\', 0, rest).unwrap_or(rest.len());
                    if plain > 0 && pending_high {
                        return Err(FramingError::InvalidText("lone surrogate"));
                    }
                    i += plain;
                    let Some(&c) = body.get(i) else { return Ok(()) }; // unterminated: serde reports it
                    match c {
                        0 => return Err(FramingError::InvalidText("NUL byte")),
                        b'"' => {
                            if pending_high {
                                return Err(FramingError::InvalidText("lone surrogate"));
                            }
                            break;
                        }
                        b'\\' => {
                            let esc = body.get(i + 1).copied();
                            if esc == Some(b'u') {
                                let Some(code) = hex4(&body[(i + 2).min(body.len())..]) else {
                                    return Err(FramingError::Malformed("bad \\u escape".into()));
                                };
                                if code == 0 {
                                    return Err(FramingError::InvalidText("NUL character"));
                                }
                                let high = (0xD800..0xDC00).contains(&code);
                                let low = (0xDC00..0xE000).contains(&code);
                                if pending_high && !low || !pending_high && low {
                                    return Err(FramingError::InvalidText("lone surrogate"));
                                }
                                pending_high = high;
                                i += 6;
                                continue;
                            }
                            if pending_high {
                                return Err(FramingError::InvalidText("lone surrogate"));
                            }
                            i += 2;
                            continue;
                        }
                        // Never reached: the run above stops only at those three.
                        _ => {
                            if pending_high {
                                return Err(FramingError::InvalidText("lone surrogate"));
                            }
                            i += 1;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                in_scalar = false;
                depth += 1;
                if depth > limits.max_depth {
                    return Err(FramingError::TooDeep(limits.max_depth));
                }
                count(&mut tokens)?;
            }
            b'}' | b']' => {
                in_scalar = false;
                depth = depth.saturating_sub(1);
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
            _ => {
                if !in_scalar {
                    in_scalar = true;
                    count(&mut tokens)?;
                }
            }
        }
        i += 1;
    }
    Ok(())
}

/// Scans, parses and classifies one body.
pub fn parse(body: &[u8], limits: JsonLimits) -> Result<Message, FramingError> {
    scan(body, limits)?;
    let value: Value =
        serde_json::from_slice(body).map_err(|e| FramingError::Malformed(e.to_string()))?;
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Err(FramingError::Batch),
        _ => {
            return Err(FramingError::InvalidRequest(
                "the message must be a JSON object",
            ));
        }
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(FramingError::InvalidRequest("jsonrpc must be \"2.0\""));
    }
    let id = obj.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return Err(FramingError::InvalidRequest(
            "id must be a string or an integer",
        ));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(FramingError::InvalidRequest("method must be a string")),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            return Ok(Message::Response);
        }
        None => return Err(FramingError::InvalidRequest("method is missing")),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Err(FramingError::InvalidRequest("params must be an object")),
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scanner before plain string text was skipped with `memchr3`: one byte at a time.
    fn scan_bytewise(body: &[u8], limits: JsonLimits) -> Result<(), FramingError> {
        let mut depth = 0usize;
        let mut tokens = 0usize;
        let mut i = 0usize;
        let mut in_scalar = false;
        let count = |tokens: &mut usize| {
            *tokens += 1;
            if *tokens > limits.max_tokens {
                Err(FramingError::TooManyTokens(limits.max_tokens))
            } else {
                Ok(())
            }
        };
        while i < body.len() {
            let b = body[i];
            match b {
                0 => return Err(FramingError::InvalidText("NUL byte")),
                b'"' => {
                    in_scalar = false;
                    count(&mut tokens)?;
                    i += 1;
                    let mut pending_high = false;
                    loop {
                        let Some(&c) = body.get(i) else { return Ok(()) }; // unterminated: serde reports it
                        match c {
                            0 => return Err(FramingError::InvalidText("NUL byte")),
                            b'"' => {
                                if pending_high {
                                    return Err(FramingError::InvalidText("lone surrogate"));
                                }
                                break;
                            }
                            b'\\' => {
                                let esc = body.get(i + 1).copied();
                                if esc == Some(b'u') {
                                    let Some(code) = hex4(&body[(i + 2).min(body.len())..]) else {
                                        return Err(FramingError::Malformed(
                                            "bad \\u escape".into(),
                                        ));
                                    };
                                    if code == 0 {
                                        return Err(FramingError::InvalidText("NUL character"));
                                    }
                                    let high = (0xD800..0xDC00).contains(&code);
                                    let low = (0xDC00..0xE000).contains(&code);
                                    if pending_high && !low || !pending_high && low {
                                        return Err(FramingError::InvalidText("lone surrogate"));
                                    }
                                    pending_high = high;
                                    i += 6;
                                    continue;
                                }
                                if pending_high {
                                    return Err(FramingError::InvalidText("lone surrogate"));
                                }
                                i += 2;
                                continue;
                            }
                            _ => {
                                if pending_high {
                                    return Err(FramingError::InvalidText("lone surrogate"));
                                }
                            }
                        }
                        i += 1;
                    }
                }
                b'{' | b'[' => {
                    in_scalar = false;
                    depth += 1;
                    if depth > limits.max_depth {
                        return Err(FramingError::TooDeep(limits.max_depth));
                    }
                    count(&mut tokens)?;
                }
                b'}' | b']' => {
                    in_scalar = false;
                    depth = depth.saturating_sub(1);
                }
                b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
                _ => {
                    if !in_scalar {
                        in_scalar = true;
                        count(&mut tokens)?;
                    }
                }
            }
            i += 1;
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn skipping_plain_text_changes_no_verdict(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", "\"", "\\", "\\\"", "\\n", "\\u0041", "\\u0000", "\\ud83d",
                "\\ude00", "\\udc00", "\\u12", "abc", "1", " ", ":", ",", "\u{0}", "\u{17c}",
            ]), 0..24),
            max_depth in 1usize..6,
            max_tokens in 1usize..12,
        ) {
            let limits = JsonLimits { max_depth, max_tokens };
            let body = pieces.concat().into_bytes();
            proptest::prop_assert_eq!(scan(&body, limits), scan_bytewise(&body, limits));
        }
    }

    fn nested(depth: usize) -> String {
        let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"#);
        // params object is depth 2; add arrays to reach `depth`
        for _ in 2..depth {
            s.push('[');
        }
        s.push('1');
        for _ in 2..depth {
            s.push(']');
        }
        s.push_str("}}");
        s
    }

    #[test]
    fn depth_bound_and_one_past() {
        assert!(parse(nested(32).as_bytes(), JsonLimits::default()).is_ok());
        assert_eq!(
            parse(nested(33).as_bytes(), JsonLimits::default()),
            Err(FramingError::TooDeep(32))
        );
    }

    #[test]
    fn token_bound_and_one_past() {
        // {"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1,1,...]}}
        // tokens: { jsonrpc "2.0" id 1 method ping params { a [ = 11, plus n items
        let body = |n: usize| {
            let items = vec!["1"; n].join(",");
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":[{items}]}}}}"#)
        };
        assert!(parse(body(20_000 - 11).as_bytes(), JsonLimits::default()).is_ok());
        assert_eq!(
            parse(body(20_000 - 10).as_bytes(), JsonLimits::default()),
            Err(FramingError::TooManyTokens(20_000))
        );
    }

    #[test]
    fn storage_text() {
        let l = JsonLimits::default();
        let with =
            |s: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"t":"{s}"}}}}"#);
        assert!(matches!(
            parse(with(r"a\u0000b").as_bytes(), l),
            Err(FramingError::InvalidText(_))
        ));
        assert!(matches!(
            parse(with(r"\ud800").as_bytes(), l),
            Err(FramingError::InvalidText(_))
        ));
        assert!(matches!(
            parse(with(r"\udc00x").as_bytes(), l),
            Err(FramingError::InvalidText(_))
        ));
        assert!(matches!(
            parse(with(r"\ud800\u0041").as_bytes(), l),
            Err(FramingError::InvalidText(_))
        ));
        assert!(parse(with(r"\ud83d\ude00 ok \\u0000 \u00e9").as_bytes(), l).is_ok());
        assert!(matches!(
            parse(b"{\"a\":\"\0\"}", l),
            Err(FramingError::InvalidText(_))
        ));
    }

    #[test]
    fn shapes() {
        let l = JsonLimits::default();
        assert_eq!(parse(b"[]", l), Err(FramingError::Batch));
        assert!(matches!(parse(b"{", l), Err(FramingError::Malformed(_))));
        assert!(matches!(
            parse(br#"{"id":1,"method":"x"}"#, l),
            Err(FramingError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, l),
            Err(FramingError::InvalidRequest(_))
        ));
        assert_eq!(
            parse(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                l
            ),
            Ok(Message::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#, l),
            Ok(Message::Response)
        );
    }
}
