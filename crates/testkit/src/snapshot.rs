//! Redaction for JSON snapshots: what varies between runs or machines (the port-0 address,
//! generated ids, UUIDs) is replaced by a label before a value is snapshotted, so a
//! snapshot says the same on every clone.

use serde_json::Value;

/// `value` with every `(needle, label)` replaced inside its strings (in order), then every
/// UUID replaced by `[uuid]`.
pub fn redact(value: Value, replacements: &[(&str, &str)]) -> Value {
    match value {
        Value::String(s) => {
            let replaced = replacements
                .iter()
                .filter(|(needle, _)| !needle.is_empty())
                .fold(s, |text, (needle, label)| text.replace(needle, label));
            Value::String(without_uuids(&replaced))
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| redact(v, replacements)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, redact(v, replacements)))
                .collect(),
        ),
        other => other,
    }
}

/// `s` with every UUID (8-4-4-4-12 hex digits) replaced by `[uuid]`.
pub fn without_uuids(s: &str) -> String {
    let bytes = s.as_bytes();
    let is_uuid_at = |at: usize| {
        bytes.len() >= at + 36
            && (0..36).all(|j| match j {
                8 | 13 | 18 | 23 => bytes[at + j] == b'-',
                _ => bytes[at + j].is_ascii_hexdigit(),
            })
    };
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while let Some(ch) = s[at..].chars().next() {
        if is_uuid_at(at) {
            out.push_str("[uuid]");
            at += 36;
        } else {
            out.push(ch);
            at += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn labels_replace_what_varies() {
        let value = json!({
            "url": "http://127.0.0.1:4242/mcp",
            "ids": ["6f1c1f0e-3b59-4c8e-9a55-0d7a2b9f4e11 and agent abc123"],
            "n": 7
        });
        assert_eq!(
            redact(
                value,
                &[("127.0.0.1:4242", "[addr]"), ("abc123", "[agent_id]")]
            ),
            json!({"url": "http://[addr]/mcp", "ids": ["[uuid] and agent [agent_id]"], "n": 7})
        );
        assert_eq!(
            without_uuids("x-6f1c1f0e-3b59-4c8e-9a55-0d7a2b9f4e1"),
            "x-6f1c1f0e-3b59-4c8e-9a55-0d7a2b9f4e1"
        );
    }
}
