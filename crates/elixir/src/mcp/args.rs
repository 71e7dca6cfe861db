//! Reading validated arguments. The door has already checked them against the published
//! schema, so these only pick values out; cross-argument rules live in the handlers.

use serde_json::{Map, Value, json};

/// A string argument.
pub fn text<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// An integer argument, or `default`.
pub fn int(args: &Map<String, Value>, name: &str, default: i64) -> i64 {
    args.get(name).and_then(Value::as_i64).unwrap_or(default)
}

/// An array-of-integers argument (non-integers, which the schema refuses, are skipped).
pub fn ints(args: &Map<String, Value>, name: &str) -> Option<Vec<i64>> {
    args.get(name)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_i64).collect())
}

/// The `verbosity` used.
pub fn verbosity(args: &Map<String, Value>) -> &str {
    text(args, "verbosity").unwrap_or("full")
}

/// A string schema with a one-line description and bounds.
pub fn string(description: &str, min: u64, max: u64) -> Value {
    json!({"type": "string", "minLength": min, "maxLength": max, "description": description})
}

/// A string schema constrained by `pattern`.
pub fn pattern(description: &str, pattern: &str, max: u64) -> Value {
    json!({"type": "string", "pattern": pattern, "maxLength": max, "description": description})
}

/// An enum of strings with its default.
pub fn choice(description: &str, values: &[&str], default: Option<&str>) -> Value {
    let mut v = json!({"type": "string", "enum": values, "description": description});
    if let Some(d) = default {
        v["default"] = json!(d);
    }
    v
}

/// An array of bounded integers, with bounds on its length.
pub fn int_array(
    description: &str,
    min_items: u64,
    max_items: u64,
    minimum: i64,
    maximum: i64,
) -> Value {
    json!({
        "type": "array",
        "items": {"type": "integer", "minimum": minimum, "maximum": maximum},
        "minItems": min_items,
        "maxItems": max_items,
        "description": description,
    })
}

/// A bounded integer with its default.
pub fn integer(description: &str, min: i64, max: i64, default: i64) -> Value {
    json!({"type": "integer", "minimum": min, "maximum": max, "default": default, "description": description})
}

/// Section and page slugs.
pub const SLUG_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,79}$";
/// `MAJOR.MINOR.PATCH`.
pub const SEMVER_PATTERN: &str = "^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$";
/// `YYYY-MM-DD`.
pub const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
/// `YYYY-MM-DD` or an ISO instant with its offset.
pub const DATE_OR_INSTANT_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?$";
/// A UUID.
pub const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
/// What a tag may look like before normalization (anything else is refused by the schema;
/// characters outside the tag alphabet are `invalid_tag`).
pub const TAG_INPUT_PATTERN: &str = "^\\s*#?[0-9A-Za-z]{1,14}\\s*$";
