//! 2026-07-28 `Mcp-Param-{Name}` headers: a tool whose input schema marks a property with
//! `x-mcp-header` must receive that argument mirrored in the header (Base64 sentinel decoded),
//! present together and equal, or absent together; anything else is −32020 (HTTP 400).

use http::HeaderMap;
use serde_json::Value;

use super::era::decode_header;

/// One annotated property: its path through `properties`, the header's name part, its type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Annotated {
    path: Vec<String>,
    token: String,
    kind: String,
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The annotations of `schema`, following `properties` chains from the root. `None` when an
/// annotation is malformed (not a token, a duplicate, or not on a string, integer or boolean):
/// conforming clients drop such a tool, so nothing is checked for it.
fn annotations(schema: &Value) -> Option<Vec<Annotated>> {
    let mut out = Vec::new();
    let mut stack = vec![(Vec::<String>::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        let Some(Value::Object(props)) = node.get("properties") else {
            continue;
        };
        for (name, sub) in props {
            let mut here = path.clone();
            here.push(name.clone());
            if let Some(token) = sub.get("x-mcp-header") {
                let token = token.as_str().filter(|t| is_token(t))?;
                let kind = sub.get("type").and_then(Value::as_str)?;
                if !["string", "integer", "boolean"].contains(&kind)
                    || out
                        .iter()
                        .any(|a: &Annotated| a.token.eq_ignore_ascii_case(token))
                {
                    return None;
                }
                out.push(Annotated {
                    path: here.clone(),
                    token: token.to_owned(),
                    kind: kind.to_owned(),
                });
            }
            stack.push((here, sub));
        }
    }
    Some(out)
}

fn value_at<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut v = arguments;
    for key in path {
        v = v.get(key)?;
    }
    (!v.is_null()).then_some(v)
}

fn matches(kind: &str, value: &Value, header: &str) -> bool {
    match (kind, value) {
        ("string", Value::String(s)) => s == header,
        ("boolean", Value::Bool(b)) => header == if *b { "true" } else { "false" },
        ("integer", Value::Number(n)) => match (header.parse::<f64>(), n.as_f64()) {
            // numerically: `42.0` equals 42
            (Ok(h), Some(v)) => {
                header
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"-.".contains(&b))
                    && h == v
            }
            _ => false,
        },
        _ => false,
    }
}

/// Checks every `Mcp-Param-*` header `schema` designates against `arguments`; the message
/// of the first disagreement.
pub(super) fn check(schema: &Value, arguments: &Value, headers: &HeaderMap) -> Result<(), String> {
    let Some(annotated) = annotations(schema) else {
        return Ok(());
    };
    for a in annotated {
        let name = format!("mcp-param-{}", a.token.to_ascii_lowercase());
        let mut values = headers.get_all(name.as_str()).iter();
        let first = values.next();
        if values.next().is_some() {
            return Err(format!("the Mcp-Param-{} header is repeated", a.token));
        }
        let argument = a.path.join(".");
        match (first, value_at(arguments, &a.path)) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "the Mcp-Param-{} header is sent but argument {argument} is not",
                    a.token
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "argument {argument} is sent without its Mcp-Param-{} header",
                    a.token
                ));
            }
            (Some(raw), Some(value)) => {
                let decoded = raw.to_str().ok().and_then(decode_header);
                match decoded {
                    Some(h) if matches(&a.kind, value, &h) => {}
                    Some(_) => {
                        return Err(format!(
                            "the Mcp-Param-{} header does not match argument {argument}",
                            a.token
                        ));
                    }
                    None => {
                        return Err(format!(
                            "the Mcp-Param-{} header has invalid characters or Base64",
                            a.token
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "q": {"type": "string"}
        }})
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap_or_else(|_| unreachable!()));
        }
        h
    }

    #[test]
    fn present_together_and_equal_or_absent_together() {
        let s = schema();
        let both = headers(&[("mcp-param-region", "us-west1"), ("mcp-param-n", "42.0")]);
        assert_eq!(
            check(&s, &json!({"region": "us-west1", "n": 42}), &both),
            Ok(())
        );
        assert_eq!(check(&s, &json!({"q": "x"}), &HeaderMap::new()), Ok(()));
        assert_eq!(
            check(&s, &json!({"region": null}), &HeaderMap::new()),
            Ok(())
        );
        let b64 = headers(&[("mcp-param-region", "=?base64?SGVsbG8sIOS4lueVjA==?=")]);
        assert_eq!(check(&s, &json!({"region": "Hello, 世界"}), &b64), Ok(()));
        for (args, h) in [
            (json!({"region": "us-west1"}), HeaderMap::new()),
            (json!({}), headers(&[("mcp-param-region", "us-west1")])),
            (
                json!({"region": "eu"}),
                headers(&[("mcp-param-region", "us-west1")]),
            ),
            (
                json!({"region": "x"}),
                headers(&[("mcp-param-region", "=?base64?eA?=")]),
            ),
            (
                json!({"region": "x"}),
                headers(&[("mcp-param-region", "=?base64?e!A=?=")]),
            ),
            (
                json!({"region": "a"}),
                headers(&[("mcp-param-region", "a"), ("mcp-param-region", "a")]),
            ),
        ] {
            assert!(check(&s, &args, &h).is_err(), "{args} {h:?}");
        }
    }

    #[test]
    fn a_malformed_annotation_checks_nothing() {
        let bad = json!({"properties": {"x": {"type": "number", "x-mcp-header": "X"}}});
        assert_eq!(check(&bad, &json!({"x": 1.5}), &HeaderMap::new()), Ok(()));
        let bad = json!({"properties": {"x": {"type": "string", "x-mcp-header": "a b"}}});
        assert_eq!(check(&bad, &json!({"x": "v"}), &HeaderMap::new()), Ok(()));
    }
}
