//! Tool arguments generated from a published `inputSchema` (the JSON Schema subset the
//! workspace's catalogs use: `type` (one or several), `properties`, `required`,
//! `additionalProperties`, `enum`, `anyOf`, `minLength`/`maxLength`/`pattern`,
//! `minimum`/`maximum`, `items`/`minItems`/`maxItems`), and one-step mutations of valid
//! arguments that the schema refuses: a wrong type, a number out of range, a string one past
//! `maxLength`, an extra or a missing property, a value outside an `enum`.
//!
//! Strings are counted in Unicode scalar values, as JSON Schema counts them; generated text
//! mixes ASCII with combining marks, astral characters and right-to-left letters, and never
//! holds NUL (the MCP framing refuses it before any schema is consulted).

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Characters for free text: mostly ASCII, with the kinds of text that count differently.
pub fn text_char() -> BoxedStrategy<char> {
    prop_oneof![
        6 => proptest::char::range(' ', '~'),
        1 => proptest::sample::select(vec![
            '\u{301}', '\u{308}', '\u{200d}', '\u{fe0f}', // combining marks, ZWJ, VS-16
            '\u{1F600}', '\u{1F469}', '\u{1D11E}', '\u{10348}', // astral
            '\u{5D0}', '\u{627}', '\u{644}', '\u{200f}', // Hebrew, Arabic, RLM
            'é', 'ß', 'ł', '中', '\n', '\t',
        ]),
        1 => any::<char>().prop_filter("no NUL", |c| *c != '\0'),
    ]
    .boxed()
}

/// ECMA-262's `\s`: WhiteSpace and LineTerminator.
const ECMA_SPACE: &str = r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

fn as_u64(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

/// The JSON types a schema allows; `None` when it does not say (anything goes).
pub fn allowed_types(schema: &Value) -> Option<Vec<String>> {
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let mut all = Vec::new();
        for b in branches {
            all.extend(allowed_types(b)?);
        }
        return Some(all);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().map(|v| type_of(v).to_owned()).collect());
    }
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    }
}

/// The JSON Schema type name of a value (integers as `integer`).
pub fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn string(schema: &Value) -> BoxedStrategy<Value> {
    let min = as_u64(schema.get("minLength")).unwrap_or(0) as usize;
    let max = as_u64(schema.get("maxLength")).map(|m| m as usize);
    let within = move |s: &String| {
        let n = s.chars().count();
        n >= min && max.is_none_or(|m| n <= m)
    };
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        // Every published pattern is anchored; the generator matches the whole string anyway.
        // JSON Schema patterns are ECMA-262: its `\s` is not Rust's (no U+0085, but U+FEFF).
        let bare = pattern
            .trim_start_matches('^')
            .trim_end_matches('$')
            .replace(r"\s", ECMA_SPACE);
        let strategy = proptest::string::string_regex(&bare)
            .unwrap_or_else(|e| panic!("pattern {pattern} cannot be generated: {e}"));
        return strategy
            .prop_filter("length within the schema's bounds", within)
            .prop_map(Value::String)
            .boxed();
    }
    // Lengths near both bounds are where counting mistakes show.
    let upper = max.unwrap_or(min + 64);
    let lengths = prop_oneof![
        Just(min),
        Just(upper),
        min..=upper.min(min + 64),
        upper.saturating_sub(3).max(min)..=upper,
    ];
    // A generated piece cycled to the length: cheap at the 16,000-character bounds.
    (lengths, proptest::collection::vec(text_char(), 1..=16))
        .prop_map(|(n, piece)| piece.into_iter().cycle().take(n).collect::<String>())
        .prop_filter("length within the schema's bounds", within)
        .prop_map(Value::String)
        .boxed()
}

fn integer(schema: &Value) -> BoxedStrategy<Value> {
    let min = schema
        .get("minimum")
        .and_then(Value::as_i64)
        .unwrap_or(-1_000_000);
    let max = schema
        .get("maximum")
        .and_then(Value::as_i64)
        .unwrap_or(min.saturating_add(2_000_000));
    prop_oneof![Just(min), Just(max), min..=max]
        .prop_map(|n| json!(n))
        .boxed()
}

fn number(schema: &Value) -> BoxedStrategy<Value> {
    let min = schema
        .get("minimum")
        .and_then(Value::as_f64)
        .unwrap_or(-1e6);
    let max = schema.get("maximum").and_then(Value::as_f64).unwrap_or(1e6);
    prop_oneof![Just(min), Just(max), min..=max]
        .prop_map(|n| json!(n))
        .boxed()
}

fn array(schema: &Value) -> BoxedStrategy<Value> {
    let min = as_u64(schema.get("minItems")).unwrap_or(0) as usize;
    let max = as_u64(schema.get("maxItems"))
        .map(|m| m as usize)
        .unwrap_or(min + 4)
        .min(min + 8);
    let item = schema
        .get("items")
        .map_or_else(|| Just(json!(1)).boxed(), valid);
    proptest::collection::vec(item, min..=max)
        .prop_map(Value::Array)
        .boxed()
}

fn object(schema: &Value) -> BoxedStrategy<Value> {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (name, sub) in props {
        let name = name.clone();
        let value = valid(sub);
        if required.contains(&name.as_str()) {
            fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
        } else {
            fields.push(
                proptest::option::of(value)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed(),
            );
        }
    }
    fields
        .prop_map(|fs| Value::Object(fs.into_iter().flatten().collect()))
        .boxed()
}

/// Values the schema accepts.
pub fn valid(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(values.clone()).boxed();
    }
    if let Some(c) = schema.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let all: Vec<BoxedStrategy<Value>> = branches.iter().map(valid).collect();
        return proptest::strategy::Union::new(all).boxed();
    }
    let types = allowed_types(schema).unwrap_or_else(|| vec!["string".to_owned()]);
    let each: Vec<BoxedStrategy<Value>> = types
        .iter()
        .map(|t| match t.as_str() {
            "string" => string(schema),
            "integer" => integer(schema),
            "number" => number(schema),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "null" => Just(Value::Null).boxed(),
            "array" => array(schema),
            "object" => object(schema),
            other => panic!("schema type {other} has no generator"),
        })
        .collect();
    proptest::strategy::Union::new(each).boxed()
}

/// A value of a type the schema does not allow, if there is one.
fn wrong_type(schema: &Value) -> Option<Value> {
    let allowed = allowed_types(schema)?;
    let has = |t: &str| {
        allowed
            .iter()
            .any(|a| a == t || (t == "integer" && a == "number"))
    };
    [
        json!("not the right type"),
        json!(7),
        json!(true),
        json!({"unexpected": 1}),
        json!([1, 2]),
        Value::Null,
    ]
    .into_iter()
    .find(|v| !has(type_of(v)))
}

/// Values a schema refuses, derived from one property schema (empty when none is known).
fn refused_values(schema: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(v) = wrong_type(schema) {
        out.push(("a value of the wrong type".to_owned(), v));
    }
    // Bounds matter only where the schema has one branch (anyOf branches may accept the value).
    if schema.get("anyOf").is_some() {
        return out;
    }
    let types = allowed_types(schema).unwrap_or_default();
    let only = |t: &str| types.len() == 1 && types[0] == t;
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && values.iter().all(Value::is_string)
    {
        out.push((
            "a string outside the enum".to_owned(),
            json!("zz-not-a-listed-value"),
        ));
    }
    if only("integer") || only("number") {
        if let Some(max) = schema.get("maximum").and_then(Value::as_i64) {
            out.push(("one past the maximum".to_owned(), json!(max + 1)));
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_i64) {
            out.push(("one below the minimum".to_owned(), json!(min - 1)));
        }
    }
    if types.iter().any(|t| t == "string") && schema.get("enum").is_none() {
        if let Some(max) = as_u64(schema.get("maxLength")) {
            // One past the bound in scalar values, with an astral character in it: a counter
            // of UTF-16 units or bytes would give another answer.
            let mut s = "7".repeat(max as usize);
            s.push('\u{1F600}');
            out.push(("a string one past maxLength".to_owned(), json!(s)));
        }
        if let Some(min) = as_u64(schema.get("minLength"))
            && min > 0
        {
            out.push((
                "a string one under minLength".to_owned(),
                json!("7".repeat(min as usize - 1)),
            ));
        }
    }
    out
}

/// How one property of valid arguments is changed.
#[derive(Debug, Clone)]
enum Change {
    Remove,
    Set(Value),
    /// `n` copies of a valid item (one past `maxItems`).
    Repeat(usize),
}

/// One mutation of valid object arguments that the schema must refuse: (what, arguments).
pub fn mutated(schema: &Value) -> BoxedStrategy<(String, Value)> {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty)
        .clone();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut plans: Vec<(String, String, Change)> = Vec::new();
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        plans.push((
            "an extra property".to_owned(),
            "zz_unexpected".to_owned(),
            Change::Set(json!(1)),
        ));
    }
    for name in &required {
        plans.push((format!("{name} missing"), name.clone(), Change::Remove));
    }
    for (name, sub) in &props {
        for (what, v) in refused_values(sub) {
            plans.push((format!("{name}: {what}"), name.clone(), Change::Set(v)));
        }
        if allowed_types(sub).as_deref() == Some(&["array".to_owned()][..])
            && let Some(max) = as_u64(sub.get("maxItems"))
        {
            plans.push((
                format!("{name}: one item past maxItems"),
                name.clone(),
                Change::Repeat(max as usize + 1),
            ));
        }
    }
    assert!(!plans.is_empty(), "no mutation is known for {schema}");
    (valid(schema), proptest::sample::select(plans))
        .prop_flat_map(move |(args, (what, name, change))| {
            let item = props
                .get(&name)
                .and_then(|s| s.get("items"))
                .map_or_else(|| Just(json!(1)).boxed(), valid);
            (Just(args), Just((what, name, change)), item)
        })
        .prop_map(|(mut args, (what, name, change), item)| {
            if let Value::Object(map) = &mut args {
                match change {
                    Change::Remove => {
                        map.remove(&name);
                    }
                    Change::Set(v) => {
                        map.insert(name, v);
                    }
                    Change::Repeat(n) => {
                        map.insert(name, Value::Array(vec![item; n]));
                    }
                }
            }
            (what, args)
        })
        .boxed()
}

/// Arguments that are not an object at all (every tool's schema is `type: object`).
pub fn not_an_object() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(json!([])),
        Just(json!("arguments")),
        Just(json!(42)),
        Just(json!(true)),
    ]
    .boxed()
}
