//! Player and clan tags (SURFACE §6.1): the one normalization every argument, upstream
//! payload and stored row goes through, and the `%23` form upstream paths need.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The characters a tag body may hold, after upper-casing and folding `O` to zero.
pub const ALPHABET: &[u8] = b"0289PYLQGRJCUV";
/// The shortest tag body (without `#`).
pub const MIN_LEN: usize = 3;
/// The longest tag body (without `#`).
pub const MAX_LEN: usize = 12;

/// A normalized player or clan tag: `#` followed by 3 to 12 of [`ALPHABET`]. It can only be
/// built by [`Tag::parse`], so holding one means the rules have been applied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag(String);

/// Why a text is not a tag (the wire's `invalid_tag`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagError {
    /// The body (without `#`) is shorter than 3 or longer than 12 characters.
    #[error("a tag has 3 to 12 characters after '#', not {0}")]
    Length(usize),
    /// A character outside `0289PYLQGRJCUV` (after upper-casing and folding O to 0).
    #[error("a tag holds only 0289PYLQGRJCUV (O reads as 0), not {0:?}")]
    Character(char),
}

impl Tag {
    /// Normalizes `input`: trim, drop one leading `#` or `%23`, upper-case, fold the letter O
    /// to zero, then require 3 to 12 of `0289PYLQGRJCUV`.
    pub fn parse(input: &str) -> Result<Tag, TagError> {
        let trimmed = input.trim();
        let body = trimmed
            .strip_prefix('#')
            .or_else(|| trimmed.strip_prefix("%23"))
            .unwrap_or(trimmed);
        let body: String = body
            .chars()
            .map(|c| match c.to_ascii_uppercase() {
                'O' => '0',
                u => u,
            })
            .collect();
        if let Some(bad) = body
            .chars()
            .find(|c| !c.is_ascii() || !ALPHABET.contains(&(*c as u8)))
        {
            return Err(TagError::Character(bad));
        }
        if !(MIN_LEN..=MAX_LEN).contains(&body.len()) {
            return Err(TagError::Length(body.len()));
        }
        Ok(Tag(format!("#{body}")))
    }

    /// The tag with its `#`, as shown and stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The tag without its `#`.
    pub fn body(&self) -> &str {
        &self.0[1..]
    }

    /// The form upstream paths take: `%23` and the body (`/players/%232PP`).
    pub fn path(&self) -> String {
        format!("%23{}", self.body())
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Tag {
    type Err = TagError;

    fn from_str(s: &str) -> Result<Tag, TagError> {
        Tag::parse(s)
    }
}

impl AsRef<str> for Tag {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Serialize for Tag {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Reading a tag normalizes it, so a stored or upstream `#2pp` comes back as `#2PP`.
impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tag, D::Error> {
        let text = String::deserialize(deserializer)?;
        Tag::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// [`Tag::parse`] as the string form Elixir's handlers have always used: `None` is
/// `invalid_tag`.
pub fn normalize_tag(input: &str) -> Option<String> {
    Tag::parse(input).ok().map(|t| t.0)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn accepted_spellings_normalize_alike() {
        for input in ["#2PP", "%232PP", "2PP", "2pp", " #2pP\t", "%232pp"] {
            assert_eq!(Tag::parse(input).unwrap().as_str(), "#2PP", "{input:?}");
        }
        assert_eq!(Tag::parse("#o2P").unwrap().as_str(), "#02P");
        assert_eq!(Tag::parse("oOo").unwrap().as_str(), "#000");
        let tag = Tag::parse("#2QY8LRJC9").unwrap();
        assert_eq!(tag.to_string(), "#2QY8LRJC9");
        assert_eq!(tag.body(), "2QY8LRJC9");
        assert_eq!(tag.path(), "%232QY8LRJC9");
        assert_eq!("2qy8lrjc9".parse::<Tag>(), Ok(tag));
    }

    #[test]
    fn bad_tags_are_refused_with_the_reason() {
        assert_eq!(Tag::parse("#AB"), Err(TagError::Character('A')));
        assert_eq!(Tag::parse("#2P"), Err(TagError::Length(2)));
        assert_eq!(Tag::parse(""), Err(TagError::Length(0)));
        assert_eq!(Tag::parse("#"), Err(TagError::Length(0)));
        assert_eq!(Tag::parse("#XYZ9"), Err(TagError::Character('X')));
        assert_eq!(Tag::parse("#2222222222222"), Err(TagError::Length(13)));
        assert_eq!(Tag::parse("##2PP"), Err(TagError::Character('#')));
        assert_eq!(Tag::parse("%23%232PP"), Err(TagError::Character('%')));
        assert_eq!(Tag::parse("2P P"), Err(TagError::Character(' ')));
        assert_eq!(Tag::parse("2PPé"), Err(TagError::Character('é')));
        assert_eq!(Tag::parse("2PPı"), Err(TagError::Character('ı')));
    }

    #[test]
    fn the_string_form_keeps_elixirs_answers() {
        assert_eq!(
            normalize_tag(" 20jjj2ccru ").as_deref(),
            Some("#20JJJ2CCRU")
        );
        assert_eq!(normalize_tag("#2Pp").as_deref(), Some("#2PP"));
        assert_eq!(normalize_tag("#AB"), None);
    }

    #[test]
    fn serde_reads_normalize_and_writes_the_hash_form() {
        let tag: Tag = serde_json::from_str(r#""%232pp""#).unwrap();
        assert_eq!(serde_json::to_string(&tag).unwrap(), r##""#2PP""##);
        assert!(serde_json::from_str::<Tag>(r##""#XY""##).is_err());
    }

    fn body() -> impl Strategy<Value = String> {
        // the alphabet in either case, plus the letter O in either case
        proptest::collection::vec(
            proptest::sample::select(b"0289PYLQGRJCUVpylqgrjcuvOo".to_vec()),
            MIN_LEN..=MAX_LEN,
        )
        .prop_map(|bytes| bytes.into_iter().map(char::from).collect())
    }

    proptest! {
        #![proptest_config(crate::prop_settings::config())]
        #[test]
        fn normalization_is_idempotent(input in any::<String>()) {
            if let Ok(tag) = Tag::parse(&input) {
                prop_assert_eq!(Tag::parse(tag.as_str()), Ok(tag.clone()));
                prop_assert_eq!(Tag::parse(&tag.path()), Ok(tag.clone()));
                prop_assert_eq!(Tag::parse(tag.body()), Ok(tag.clone()));
            }
        }

        #[test]
        fn every_spelling_round_trips(
            body in body(),
            prefix in proptest::sample::select(vec!["", "#", "%23"]),
            pad in proptest::sample::select(vec!["", " ", "\t", " \n"]),
        ) {
            let tag = Tag::parse(&format!("{pad}{prefix}{body}{pad}")).unwrap();
            let expected = format!("#{}", body.to_ascii_uppercase().replace('O', "0"));
            prop_assert_eq!(tag.as_str(), expected.as_str());
            prop_assert_eq!(tag.to_string().parse::<Tag>(), Ok(tag.clone()));
            let json = serde_json::to_string(&tag).unwrap();
            prop_assert_eq!(serde_json::from_str::<Tag>(&json).unwrap(), tag);
        }

        #[test]
        fn a_character_outside_the_alphabet_is_refused(
            body in body(),
            at in any::<proptest::sample::Index>(),
            bad in any::<char>().prop_filter("outside the alphabet", |c| {
                let u = c.to_ascii_uppercase();
                !c.is_whitespace()
                    && *c != '#'
                    && u != 'O'
                    && !(u.is_ascii() && ALPHABET.contains(&(u as u8)))
            }),
        ) {
            let mut chars: Vec<char> = body.chars().collect();
            let i = at.index(chars.len());
            chars[i] = bad;
            let input: String = chars.into_iter().collect();
            prop_assert!(Tag::parse(&input).is_err(), "{input:?}");
        }
    }
}
