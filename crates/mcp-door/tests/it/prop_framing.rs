//! Property tests of the JSON-RPC framing scanner (`mcp_door::framing::parse`): random bytes,
//! generated JSON with depth and token counts on both sides of small limits, NUL (raw and
//! `\u0000`), lone and paired surrogate escapes, huge numbers, duplicate keys, deep arrays and
//! valid JSON-RPC objects. Properties: never a panic; the same input always the same answer;
//! an accepted input equals what `serde_json` parses; every refusal is one of the documented
//! `FramingError`s, and the one the input deserves.
//!
//! Cases and seed come from `testkit::prop` (64 cases, a fixed seed; `PROPTEST_CASES=5000
//! PROPTEST_RNG_SEED=7 cargo test -p mcp-door --test it prop_framing` for a longer or another
//! run; a failure prints the seed).

use mcp_door::framing::{FramingError, JsonLimits, Message, parse};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use testkit::prop::config;

/// What the scanner promises to refuse, computed from the value instead of the bytes.
#[derive(Debug, Default)]
struct Shape {
    depth: usize,
    tokens: usize,
    nul: bool,
}

fn shape(v: &Value) -> Shape {
    let mut s = Shape::default();
    walk(v, 1, &mut s);
    s
}

fn walk(v: &Value, level: usize, s: &mut Shape) {
    s.tokens += 1;
    match v {
        Value::Object(o) => {
            s.depth = s.depth.max(level);
            for (k, v) in o {
                s.tokens += 1;
                s.nul |= k.contains('\0');
                walk(v, level + 1, s);
            }
        }
        Value::Array(a) => {
            s.depth = s.depth.max(level);
            for v in a {
                walk(v, level + 1, s);
            }
        }
        Value::String(t) => s.nul |= t.contains('\0'),
        _ => {}
    }
}

/// What `parse` must answer for a body `serde_json` reads as `value` (within the limits).
fn classify(value: Value) -> Result<Message, &'static str> {
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Err("batch"),
        _ => return Err("request"),
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("request");
    }
    let id = obj.remove("id");
    if id
        .as_ref()
        .is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64()))
    {
        return Err("request");
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            return Ok(Message::Response);
        }
        _ => return Err("request"),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Err("request"),
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method },
    })
}

fn kind(e: &FramingError) -> &'static str {
    match e {
        FramingError::TooDeep(_) => "deep",
        FramingError::TooManyTokens(_) => "tokens",
        FramingError::InvalidText(_) => "text",
        FramingError::Malformed(_) => "malformed",
        FramingError::Batch => "batch",
        FramingError::InvalidRequest(_) => "request",
        other => panic!("an undocumented refusal: {other:?}"),
    }
}

/// Every refusal carries a JSON-RPC code of the two the door documents and a hint.
fn documented(e: &FramingError) -> Result<(), TestCaseError> {
    kind(e);
    prop_assert!(
        [
            mcp_door::jsonrpc::PARSE_ERROR,
            mcp_door::jsonrpc::INVALID_REQUEST
        ]
        .contains(&e.code())
    );
    prop_assert!(!e.hint().is_empty());
    prop_assert!(!e.to_string().is_empty());
    Ok(())
}

/// The whole contract for one body under `limits`.
fn check(body: &[u8], limits: JsonLimits) -> Result<(), TestCaseError> {
    let first = parse(body, limits);
    prop_assert_eq!(
        &first,
        &parse(body, limits),
        "the same input, another answer"
    );
    let serde = serde_json::from_slice::<Value>(body);
    match (&first, serde) {
        (Ok(message), Ok(value)) => {
            prop_assert_eq!(Ok(message.clone()), classify(value));
        }
        (Ok(message), Err(e)) => {
            prop_assert!(false, "accepted {message:?} that serde_json refuses: {e}");
        }
        (Err(e), Ok(value)) => {
            documented(e)?;
            let s = shape(&value);
            match kind(e) {
                "deep" => prop_assert!(s.depth > limits.max_depth),
                "tokens" => prop_assert!(s.tokens > limits.max_tokens),
                // serde decodes `\u0000` and lone surrogates leniently; raw NUL is refused
                "text" => {}
                "malformed" => prop_assert!(false, "serde_json reads it: {e:?}"),
                expected => prop_assert_eq!(classify(value).err(), Some(expected)),
            }
        }
        (Err(e), Err(_)) => documented(e)?,
    }
    Ok(())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{0,8}",
        1 => any::<String>(),
        1 => "[\u{0}-\u{7f}\u{5d0}-\u{5ea}\u{300}-\u{36f}\u{1F600}-\u{1F64F}]{0,12}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(10, 96, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn request() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            "[ -~]{0,12}".prop_map(Value::String)
        ],
        "[a-z/_]{1,20}",
        proptest::option::of(proptest::collection::btree_map(
            "[a-z_]{1,8}",
            json_value(),
            0..5,
        )),
    )
        .prop_map(|(id, method, params)| {
            let mut o = Map::new();
            o.insert("jsonrpc".into(), json!("2.0"));
            o.insert("id".into(), id);
            o.insert("method".into(), json!(method));
            if let Some(p) = params {
                o.insert("params".into(), Value::Object(p.into_iter().collect()));
            }
            Value::Object(o)
        })
}

fn limits() -> impl Strategy<Value = JsonLimits> {
    prop_oneof![
        Just(JsonLimits::default()),
        (1usize..12, 1usize..80).prop_map(|(max_depth, max_tokens)| JsonLimits {
            max_depth,
            max_tokens
        }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_get_a_documented_answer(body in proptest::collection::vec(any::<u8>(), 0..256), l in limits()) {
        check(&body, l)?;
    }

    #[test]
    fn json_text_with_any_shape_is_refused_exactly_past_a_limit(value in json_value(), l in limits()) {
        let body = serde_json::to_vec(&value).unwrap();
        check(&body, l)?;
        let s = shape(&value);
        let result = parse(&body, l);
        if s.depth <= l.max_depth && s.tokens <= l.max_tokens && !s.nul {
            prop_assert_eq!(result.map_err(|e| kind(&e)), classify(value));
        } else {
            let e = result.expect_err("past a limit");
            let k = kind(&e);
            prop_assert!(
                (k == "deep" && s.depth > l.max_depth)
                    || (k == "tokens" && s.tokens > l.max_tokens)
                    || (k == "text" && s.nul),
                "{e:?} for {s:?}"
            );
        }
    }

    #[test]
    fn valid_requests_round_trip(value in request()) {
        let body = serde_json::to_vec(&value).unwrap();
        let s = shape(&value);
        let limits = JsonLimits::default();
        prop_assume!(s.depth <= limits.max_depth && !s.nul);
        let Value::Object(mut o) = value else { unreachable!() };
        let expected = Message::Request {
            id: o.remove("id").unwrap(),
            method: o["method"].as_str().unwrap().to_owned(),
            params: o.remove("params").and_then(|p| p.as_object().cloned()),
        };
        prop_assert_eq!(parse(&body, limits), Ok(expected));
        // the same message with whitespace between every token reads the same
        let pretty = serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(&body).unwrap()).unwrap();
        prop_assert_eq!(parse(&pretty, limits), parse(&body, limits));
    }

    #[test]
    fn nul_anywhere_is_refused_as_text(value in request(), at in any::<proptest::sample::Index>(), escaped in any::<bool>()) {
        let body = serde_json::to_string(&value).unwrap();
        // put NUL inside the method string: raw or as an escape
        let method = value["method"].as_str().unwrap();
        let cut = at.index(method.len() + 1);
        let nul = if escaped { "\\u0000" } else { "\0" };
        let poisoned = format!("{}{nul}{}", &method[..cut], &method[cut..]);
        let body = body.replacen(&format!("\"method\":\"{method}\""), &format!("\"method\":\"{poisoned}\""), 1);
        prop_assert!(matches!(parse(body.as_bytes(), JsonLimits::default()), Err(FramingError::InvalidText(_))), "{body:?}");
        check(body.as_bytes(), JsonLimits::default())?;
        // a raw NUL byte between tokens is refused the same way
        let raw = format!("{{\0{}", &serde_json::to_string(&value).unwrap()[1..]);
        prop_assert!(matches!(parse(raw.as_bytes(), JsonLimits::default()), Err(FramingError::InvalidText(_))));
    }

    #[test]
    fn surrogate_escapes_pair_or_are_refused(
        unit in 0xD800u32..0xE000,
        next in prop_oneof![Just(None), (0u32..0x10000).prop_map(Some)],
        before in "[a-z]{0,3}",
        after in "[a-z\"]{0,1}",
    ) {
        let mut s = format!("{before}\\u{unit:04x}");
        if let Some(n) = next {
            s.push_str(&format!("\\u{n:04x}"));
        }
        let after = if after == "\"" { "\\\"".to_owned() } else { after };
        s.push_str(&after);
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"t":"{s}"}}}}"#);
        let high = (0xD800..0xDC00).contains(&unit);
        let paired = high && next.is_some_and(|n| (0xDC00..0xE000).contains(&n));
        let result = parse(body.as_bytes(), JsonLimits::default());
        if paired {
            // the pair decodes to one astral character, as serde_json decodes it
            let Ok(Message::Request { params: Some(p), .. }) = &result else {
                return Err(TestCaseError::fail(format!("{result:?}")));
            };
            let t = p["t"].as_str().unwrap();
            prop_assert!(t.chars().any(|c| c as u32 >= 0x10000), "{t:?}");
            check(body.as_bytes(), JsonLimits::default())?;
        } else {
            prop_assert!(matches!(result, Err(FramingError::InvalidText(_))), "{body}: {result:?}");
        }
    }

    #[test]
    fn huge_numbers_never_panic_and_are_never_an_id(digits in "[1-9][0-9]{19,400}", exp in 0u32..2000, neg in any::<bool>()) {
        let sign = if neg { "-" } else { "" };
        for number in [format!("{sign}{digits}"), format!("{sign}1e{exp}"), format!("{sign}{digits}.5e-{exp}")] {
            let in_params = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"n":{number}}}}}"#);
            check(in_params.as_bytes(), JsonLimits::default())?;
            let as_id = format!(r#"{{"jsonrpc":"2.0","id":{number},"method":"m"}}"#);
            check(as_id.as_bytes(), JsonLimits::default())?;
            if let Ok(Message::Request { id, .. }) = parse(as_id.as_bytes(), JsonLimits::default()) {
                // only integers that fit 64 bits are ids
                prop_assert!(id.is_i64() || id.is_u64(), "{id}");
            }
        }
    }

    #[test]
    fn duplicate_keys_read_as_serde_json_reads_them(
        first in prop_oneof![Just(json!("2.0")), Just(json!("1.0")), Just(json!(2))],
        second in prop_oneof![Just(json!("2.0")), Just(json!("1.0")), Just(json!(2))],
        method_a in "[a-z]{1,6}",
        method_b in "[a-z]{1,6}",
        id_a in any::<i32>(),
        id_b in "[a-z]{0,4}",
    ) {
        let body = format!(
            r#"{{"jsonrpc":{first},"id":{id_a},"method":"{method_a}","jsonrpc":{second},"method":"{method_b}","id":"{id_b}","params":{{"k":1,"k":2}}}}"#
        );
        check(body.as_bytes(), JsonLimits::default())?;
        if let Ok(Message::Request { id, method, params }) = parse(body.as_bytes(), JsonLimits::default()) {
            // the last occurrence wins, as in serde_json
            prop_assert_eq!(second, json!("2.0"));
            prop_assert_eq!(id, json!(id_b));
            prop_assert_eq!(method, method_b);
            prop_assert_eq!(params.unwrap()["k"].clone(), json!(2));
        }
    }

    #[test]
    fn deep_arrays_are_refused_exactly_past_the_depth(depth in 1usize..80, in_params in any::<bool>()) {
        let l = JsonLimits::default();
        let (body, total) = if in_params {
            // the message object and params are two levels
            let arrays = depth;
            (format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}1{}}}}}"#, "[".repeat(arrays), "]".repeat(arrays)), arrays + 2)
        } else {
            (format!("{}{}", "[".repeat(depth), "]".repeat(depth)), depth)
        };
        check(body.as_bytes(), l)?;
        let result = parse(body.as_bytes(), l);
        if total > l.max_depth {
            prop_assert_eq!(result, Err(FramingError::TooDeep(l.max_depth)));
        } else if in_params {
            prop_assert!(result.is_ok(), "{result:?}");
        } else {
            prop_assert_eq!(result, Err(FramingError::Batch));
        }
        // unclosed, the same depth is refused for depth alone or read as malformed, never accepted
        let open = "[".repeat(depth);
        let r = parse(open.as_bytes(), l);
        prop_assert!(matches!(r, Err(FramingError::TooDeep(_)) | Err(FramingError::Malformed(_))), "{r:?}");
    }
}
