//! Compact output-schema entries for the tools' top-level fields: an object, or a list of
//! objects, whose main keys (the ones every answer carries, null or not) are `required`, their
//! details left to the description. Small on purpose: clients compile every `tools/list`
//! schema (the TypeScript SDK with Ajv), and a large strict one made that slow.

use serde_json::{Value, json};

/// An object carrying `keys`.
pub fn object(description: &str, keys: &[&str]) -> Value {
    json!({"type": "object", "description": description, "required": keys})
}

/// An object carrying `keys`, or null.
pub fn object_or_null(description: &str, keys: &[&str]) -> Value {
    json!({"type": ["object", "null"], "description": description, "required": keys})
}

/// A list of objects, each carrying `keys`.
pub fn list(description: &str, keys: &[&str]) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "object", "required": keys}})
}

/// A list of strings.
pub fn strings(description: &str) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string"}})
}

/// A `live_status` block: its `state` and what that state carries.
pub fn live_status(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": ["state"],
        "properties": {"state": {"enum": ["fresh", "pending", "unavailable"]}}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_require_their_keys() {
        let validator = |schema: &Value| jsonschema::validator_for(schema).unwrap();
        let o = validator(&object("d", &["tag", "name"]));
        assert!(o.is_valid(&json!({"tag": "#A", "name": null, "more": 1})));
        assert!(!o.is_valid(&json!({"tag": "#A"})));
        assert!(!o.is_valid(&json!(null)));
        assert!(validator(&object_or_null("d", &["tag"])).is_valid(&json!(null)));
        let l = validator(&list("d", &["id"]));
        assert!(l.is_valid(&json!([{"id": 1}, {"id": 2, "x": 0}])));
        assert!(!l.is_valid(&json!([{"id": 1}, {}])));
        assert!(!validator(&strings("d")).is_valid(&json!(["a", 1])));
        let live = validator(&live_status("d"));
        assert!(live.is_valid(&json!({"state": "pending", "retry_after_s": 3})));
        assert!(!live.is_valid(&json!({"state": "stale"})));
    }
}
