//! Property tests of Sidequest's character-counted limits. The contract says "characters"; the
//! unit Sidequest counts is the Unicode scalar value (what Rust's `chars()` and JSON Schema's
//! `maxLength` count), so a limit holds the same at the door's schema and in the domain, on
//! every client. Generated text mixes combining marks, multi-scalar grapheme clusters (ZWJ
//! families, flags), astral characters (two UTF-16 units each) and right-to-left letters, so
//! a counter of graphemes, UTF-16 units or bytes would answer differently at the bound.
//! Properties: text of exactly the limit is accepted and one scalar value more is refused, for
//! every counted field of a turn, a finish, a review note, a wiki page and an assignment; the
//! published schema's `maxLength` is the domain's limit; search excerpts hold at most 240
//! characters of the text, around the match; over HTTP (both backends) a turn at the bound is
//! committed and one past is refused (`422: Invalid arguments`) and changes nothing.
//!
//! Cases and seed come from `testkit::prop` (`PROPTEST_CASES`, `PROPTEST_RNG_SEED`; a failure
//! prints both).

use proptest::prelude::*;
use serde_json::{Value, json};
use sidequest::domain::assignment::bounds;
use sidequest::domain::fields::FieldErrors;
use sidequest::domain::play::{FinishArgs, TurnArgs, limits};
use sidequest::domain::review::{NOTE_CHARS, ReviewArgs};
use sidequest::domain::text::excerpt;
use sidequest::domain::wiki::{BODY_CHARS, TITLE_CHARS, WikiWrite};
use testkit::prop::{config, config_with_cases, sample};

use crate::support;

/// Scalar values whose count differs from their graphemes, UTF-16 units or bytes.
const POOL: &[char] = &[
    'a',
    'Z',
    'ą',
    'ß', // Latin, one scalar each
    'e',
    '\u{301}',
    '\u{308}',
    '\u{20DD}', // combining marks: one grapheme, several scalars
    '\u{1F469}',
    '\u{200D}',
    '\u{1F467}',
    '\u{FE0F}', // ZWJ sequence parts, variation selector
    '\u{1F1F5}',
    '\u{1F1F1}', // regional indicators (a flag is two)
    '\u{1F600}',
    '\u{1D11E}',
    '\u{20000}', // astral: two UTF-16 units each
    'ש',
    'ל',
    'ו',
    'ם',
    'م',
    'ر',
    'ح',
    '\u{200F}',
    '\u{202E}', // right-to-left
    '中',
    '한',
    '\u{FDFA}', // wide and long-expanding
];

/// A text of exactly `n` scalar values, cycling a generated pattern (never blank).
fn text_of(pattern: &[char], n: usize) -> String {
    pattern.iter().cycle().take(n).collect()
}

fn pattern() -> impl Strategy<Value = Vec<char>> {
    proptest::collection::vec(proptest::sample::select(POOL), 1..24)
        .prop_filter("starts with a letter", |p| p[0].is_alphabetic())
}

fn turn(field: &str, text: &str) -> Value {
    let mut args = json!({
        "operation_id": "4f6bb1a7-1f1b-4e43-9e9b-9c1b8f5d2a10",
        "expected_version": 1,
        "player_action": "act",
        "narration": "narrate",
        "memory_markdown": "memory",
        "current_scene": "harbor",
        "consequences": [{"category": "resource", "description": "a rope"}],
    });
    if field == "description" {
        args["consequences"][0]["description"] = json!(text);
    } else {
        args[field] = json!(text);
    }
    args
}

proptest! {
    #![proptest_config(config_with_cases(32))]

    #[test]
    fn turn_and_finish_limits_count_scalar_values(
        p in pattern(),
        field in proptest::sample::select(vec![
            ("player_action", limits::ACTION_CHARS),
            ("narration", limits::NARRATION_CHARS),
            ("memory_markdown", limits::MEMORY_CHARS),
            ("description", limits::DESCRIPTION_CHARS),
            ("summary", limits::SUMMARY_CHARS),
        ]),
        n in prop_oneof![Just(0usize), Just(1), Just(usize::MAX)],
    ) {
        let (name, limit) = field;
        for n in [limit, limit + 1, n.min(limit + 1)] {
            let text = text_of(&p, n);
            prop_assert_eq!(text.chars().count(), n);
            let result = if name == "summary" {
                let args: FinishArgs = serde_json::from_value(json!({
                    "operation_id": "4f6bb1a7-1f1b-4e43-9e9b-9c1b8f5d2a10",
                    "expected_version": 1,
                    "summary": text,
                })).unwrap();
                args.validate()
            } else {
                let args: TurnArgs = serde_json::from_value(turn(name, &text)).unwrap();
                args.validate()
            };
            let min = usize::from(name != "memory_markdown");
            if (min..=limit).contains(&n) {
                prop_assert!(result.is_ok(), "{name} with {n} of {limit}: {result:?}");
            } else {
                let message = format!("{:?}", result.expect_err("past the limit"));
                prop_assert!(message.contains(name), "{message}");
                if n > limit {
                    prop_assert!(message.contains(&format!("{n} characters")), "{message}");
                }
            }
        }
    }

    #[test]
    fn review_notes_wiki_pages_and_assignments_count_scalar_values(p in pattern(), extra in 0usize..2) {
        let note = |n: usize| -> ReviewArgs {
            serde_json::from_value(json!({
                "operation_id": "4f6bb1a7-1f1b-4e43-9e9b-9c1b8f5d2a10",
                "expected_version": 1,
                "decisions": [{"id": "1d7d2f0e-5a8e-4b7b-8f8e-1f2f3f4f5f6f", "decision": "approved", "note": text_of(&p, n)}],
            })).unwrap()
        };
        prop_assert_eq!(note(NOTE_CHARS + extra).validate().is_ok(), extra == 0);
        let wiki = |title: usize, body: usize| WikiWrite {
            slug: "harbor".into(),
            title: text_of(&p, title),
            body: text_of(&p, body),
            expected_version: 0,
        };
        prop_assert_eq!(wiki(TITLE_CHARS + extra, 10).validate().is_ok(), extra == 0);
        prop_assert_eq!(wiki(10, BODY_CHARS + extra).validate().is_ok(), extra == 0);
        for (field, limit, min) in [
            ("character", bounds::CHARACTER, 1),
            ("brief", bounds::BRIEF, 1),
            ("instructions", bounds::INSTRUCTIONS, 0),
            ("boundaries", bounds::BOUNDARIES, 1),
            ("return_condition", bounds::RETURN_CONDITION, 1),
            ("gm_notes", bounds::GM_NOTES, 0),
        ] {
            // the assignment's fields share FieldErrors::text, checked here with their bounds
            let mut e = FieldErrors::new();
            e.text(field, &text_of(&p, limit + extra), min, limit);
            prop_assert_eq!(e.is_empty(), extra == 0, "{} {:?}", field, e);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn excerpts_hold_at_most_240_characters_around_the_match(
        p in pattern(),
        len in 0usize..900,
        at in any::<proptest::sample::Index>(),
        qlen in 0usize..12,
    ) {
        let text = text_of(&p, len);
        let chars: Vec<char> = text.chars().collect();
        let start = if chars.is_empty() { 0 } else { at.index(chars.len()) };
        let query: String = chars[start..(start + qlen).min(chars.len())].iter().collect();
        let (ex, hit) = excerpt(&text, &query, limits::EXCERPT_CHARS);
        prop_assert!(ex.chars().count() <= limits::EXCERPT_CHARS);
        prop_assert!(text.contains(&ex), "an excerpt is a piece of the text");
        prop_assert_eq!(excerpt(&text, &query, limits::EXCERPT_CHARS), (ex.clone(), hit));
        if !query.is_empty() {
            prop_assert!(hit, "{query:?} is in the text");
            let fold = |s: &str| s.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect::<String>();
            prop_assert!(fold(&ex).contains(&fold(&query)), "{ex:?} misses {query:?}");
        }
    }
}

/// The published `maxLength` of the player door's text fields is the domain's limit.
fn assert_schema_bounds(tools: &[Value]) {
    let field = |tool: &str, pointer: &str| -> u64 {
        let t = tools.iter().find(|t| t["name"] == tool).expect(tool);
        t["inputSchema"]
            .pointer(pointer)
            .and_then(|s| s["maxLength"].as_u64())
            .unwrap_or_else(|| panic!("{tool} {pointer}"))
    };
    let commit = "commit_play_turn";
    assert_eq!(
        field(commit, "/properties/player_action"),
        limits::ACTION_CHARS as u64
    );
    assert_eq!(
        field(commit, "/properties/narration"),
        limits::NARRATION_CHARS as u64
    );
    assert_eq!(
        field(commit, "/properties/memory_markdown"),
        limits::MEMORY_CHARS as u64
    );
    assert_eq!(
        field(
            commit,
            "/properties/consequences/items/properties/description"
        ),
        limits::DESCRIPTION_CHARS as u64
    );
    assert_eq!(
        field("finish_play_session", "/properties/summary"),
        limits::SUMMARY_CHARS as u64
    );
}

async fn a_turn_at_the_bound_commits_and_one_past_changes_nothing(url: &str) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    let tools = client.request("tools/list", json!({})).await.result()["tools"]
        .as_array()
        .unwrap()
        .clone();
    assert_schema_bounds(&tools);
    let version = |ctx: &Value| ctx["version"].as_i64().unwrap();
    for (i, p) in sample(&pattern(), 3).into_iter().enumerate() {
        let before = client.tool("get_play_context", json!({})).await.json();
        for (field, limit) in [
            ("player_action", limits::ACTION_CHARS),
            ("description", limits::DESCRIPTION_CHARS),
        ] {
            let mut past = turn(field, &text_of(&p, limit + 1));
            past["expected_version"] = json!(version(&before));
            past["operation_id"] = json!(format!("4f6bb1a7-1f1b-4e43-9e9b-9c1b8f5d2a{i:02}"));
            let reply = client.tool("commit_play_turn", past).await;
            assert!(reply.is_error(), "{}", reply.body);
            assert!(
                reply.text().starts_with("422: Invalid arguments: /"),
                "{}",
                reply.text()
            );
        }
        assert_eq!(
            client.tool("get_play_context", json!({})).await.json(),
            before
        );
        let mut at = turn("player_action", &text_of(&p, limits::ACTION_CHARS));
        at["consequences"][0]["description"] = json!(text_of(&p, limits::DESCRIPTION_CHARS));
        at["expected_version"] = json!(version(&before));
        at["operation_id"] = json!(format!("5f6bb1a7-1f1b-4e43-9e9b-9c1b8f5d2a{i:02}"));
        let reply = client.tool("commit_play_turn", at).await;
        assert!(!reply.is_error(), "{}", reply.text());
        let after = client.tool("get_play_context", json!({})).await.json();
        assert_eq!(version(&after), version(&before) + 1);
    }
}

crate::on_both_backends!(a_turn_at_the_bound_commits_and_one_past_changes_nothing);
