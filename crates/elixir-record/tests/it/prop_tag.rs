//! Property tests of tag normalization beyond the unit properties beside `Tag::parse`
//! (idempotence, every spelling, a foreign character): any text at all gets an answer — a tag
//! of `#` and 3 to 12 alphabet characters, or the reason — the same answer every time; the
//! length bound holds at 3 and 12 and one past either; an accepted tag round-trips through its
//! display, path (`%23…`) and JSON forms.
//!
//! Cases and seed: the workspace's property settings (`PROPTEST_CASES`, `PROPTEST_RNG_SEED`;
//! a failure prints both).

use elixir_record::tag::{ALPHABET, MAX_LEN, MIN_LEN};
use elixir_record::{Tag, TagError};
use proptest::prelude::*;

use crate::prop_settings::config;

fn alphabet_body(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ALPHABET.to_vec()), len)
        .prop_map(|b| b.into_iter().map(char::from).collect())
}

/// Text near tags: prefixes, percent signs, whitespace of every kind, letters and marks.
fn tagish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("#".to_owned()),
        Just("%23".to_owned()),
        Just("%2".to_owned()),
        Just("%".to_owned()),
        Just(" ".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\u{feff}".to_owned()),
        Just("o".to_owned()),
        Just("O".to_owned()),
        Just("\u{301}".to_owned()),
        Just("ı".to_owned()),
        "[0289PYLQGRJCUVpylqgrjcuv]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_is_a_tag_or_a_reason_and_always_the_same(input in prop_oneof![tagish(), any::<String>()]) {
        let first = Tag::parse(&input);
        prop_assert_eq!(&first, &Tag::parse(&input));
        match first {
            Ok(tag) => {
                let body = tag.body();
                prop_assert_eq!(tag.as_str(), format!("#{body}"));
                prop_assert!((MIN_LEN..=MAX_LEN).contains(&body.len()));
                prop_assert!(body.bytes().all(|b| ALPHABET.contains(&b)), "{body}");
                prop_assert_eq!(tag.path(), format!("%23{body}"));
                let shown = format!("{tag}");
                prop_assert_eq!(Tag::parse(&shown), Ok(tag.clone()));
                prop_assert_eq!(Tag::parse(&tag.path()), Ok(tag.clone()));
                let json = serde_json::to_string(&tag).unwrap();
                prop_assert_eq!(serde_json::from_str::<Tag>(&json).unwrap(), tag);
            }
            Err(TagError::Length(n)) => prop_assert!(!(MIN_LEN..=MAX_LEN).contains(&n), "{n}"),
            Err(TagError::Character(c)) => {
                // the reported character is the input's, upper-cased (O folded to 0)
                let seen = input.chars().any(|i| {
                    let u = i.to_ascii_uppercase();
                    u == c || (u == 'O' && c == '0')
                });
                prop_assert!(seen, "{c:?} is not in {input:?}");
            }
            Err(other) => prop_assert!(false, "an undocumented refusal: {other:?}"),
        }
    }

    #[test]
    fn the_length_bound_holds_at_three_and_twelve_and_one_past(
        short in alphabet_body(MIN_LEN - 1..=MIN_LEN - 1),
        long in alphabet_body(MAX_LEN + 1..=MAX_LEN + 1),
        prefix in proptest::sample::select(vec!["", "#", "%23"]),
    ) {
        let at_min = format!("{short}2");
        let at_max = &long[..MAX_LEN];
        prop_assert_eq!(Tag::parse(&format!("{prefix}{short}")), Err(TagError::Length(MIN_LEN - 1)));
        prop_assert_eq!(Tag::parse(&format!("{prefix}{at_min}")).map(|t| t.body().len()), Ok(MIN_LEN));
        prop_assert_eq!(Tag::parse(&format!("{prefix}{at_max}")).map(|t| t.body().len()), Ok(MAX_LEN));
        prop_assert_eq!(Tag::parse(&format!("{prefix}{long}")), Err(TagError::Length(MAX_LEN + 1)));
    }
}
