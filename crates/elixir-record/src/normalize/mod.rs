//! Upstream payloads read into the record's types (SURFACE §6.5), one file per Clash Royale
//! API endpoint, each owning its serde DTOs: `battlelog` (`/players/{tag}/battlelog`),
//! `player` (`/players/{tag}`) and `clan` (`/clans/{tag}`, `/clans/{tag}/members`). The
//! readers tolerate absent fields (they become `None`), keep unknown enum strings verbatim,
//! and reject one odd entry of a list beside the good ones rather than the whole payload.
//! This module holds what they share: the rejected-entry record, reading a list entry by
//! entry ([`read_each`]) and serde helpers.

use serde::{Deserialize, Deserializer};

pub mod battlelog;
pub mod clan;
pub mod player;

/// One entry of an upstream list that could not be read, kept beside the entries that could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected<E> {
    /// The entry's 0-based position in the upstream list.
    pub index: usize,
    /// Why it was refused.
    pub error: E,
}

/// Reads each entry of an upstream list with `read`, keeping the ones it reads in order and
/// setting aside, by position, the ones it refuses.
pub(crate) fn read_each<V, T, E>(
    list: impl IntoIterator<Item = V>,
    mut read: impl FnMut(V) -> Result<T, E>,
) -> (Vec<T>, Vec<Rejected<E>>) {
    let mut good = Vec::new();
    let mut rejected = Vec::new();
    for (index, entry) in list.into_iter().enumerate() {
        match read(entry) {
            Ok(item) => good.push(item),
            Err(error) => rejected.push(Rejected { index, error }),
        }
    }
    (good, rejected)
}

/// Reads a field that upstream may send as `null` or leave out as its default (an empty list,
/// an empty string): for `#[serde(default, deserialize_with = "or_default")]`.
pub(crate) fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`, with
/// `#[serde(default, deserialize_with = "present")]`), where upstream gives `null` a meaning.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Reads a JSON list whose entries are read one by one, so one odd entry does not sink the
/// rest: the payload must be an array (or, with `key`, an object holding one under `key`).
pub(crate) fn entries(
    value: serde_json::Value,
    key: Option<&str>,
) -> Result<Vec<serde_json::Value>, String> {
    let list = match (value, key) {
        (serde_json::Value::Array(list), None) => list,
        (serde_json::Value::Object(mut object), Some(key)) => match object.remove(key) {
            Some(serde_json::Value::Array(list)) => list,
            Some(serde_json::Value::Null) | None => Vec::new(),
            Some(other) => return Err(format!("`{key}` is {}, not a list", kind(&other))),
        },
        (other, None) => return Err(format!("expected a list, got {}", kind(&other))),
        (other, Some(key)) => {
            return Err(format!(
                "expected an object with `{key}`, got {}",
                kind(&other)
            ));
        }
    };
    Ok(list)
}

/// The JSON kind of a value, for error messages.
pub(crate) fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_are_found_or_refused_by_name() {
        assert_eq!(entries(json!([1, 2]), None).unwrap().len(), 2);
        assert_eq!(
            entries(json!({"items": [1]}), Some("items")).unwrap(),
            [json!(1)]
        );
        assert!(
            entries(json!({"items": null}), Some("items"))
                .unwrap()
                .is_empty()
        );
        assert!(entries(json!({}), Some("items")).unwrap().is_empty());
        assert_eq!(
            entries(json!({"items": 3}), Some("items")),
            Err("`items` is a number, not a list".into())
        );
        assert_eq!(
            entries(json!({}), None),
            Err("expected a list, got an object".into())
        );
        assert_eq!(
            entries(json!("x"), Some("items")),
            Err("expected an object with `items`, got a string".into())
        );
    }

    #[test]
    fn null_and_absent_are_told_apart() {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default, deserialize_with = "present")]
            towers: Option<Option<Vec<i64>>>,
            #[serde(default, deserialize_with = "or_default")]
            cards: Vec<i64>,
        }
        let read = |v| serde_json::from_value::<Probe>(v).unwrap();
        let p = read(json!({}));
        assert_eq!((p.towers, p.cards), (None, vec![]));
        let p = read(json!({"towers": null, "cards": null}));
        assert_eq!((p.towers, p.cards), (Some(None), vec![]));
        let p = read(json!({"towers": [1], "cards": [2]}));
        assert_eq!((p.towers, p.cards), (Some(Some(vec![1])), vec![2]));
    }
}
