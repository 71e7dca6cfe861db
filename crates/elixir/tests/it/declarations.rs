//! SURFACE §9 over `tools/list`, per kind: order, titles, schemas, bounds, verbosity,
//! descriptions, output schemas, hints, `_meta`, per-kind arguments and lists.

use elixir::access::kinds::Kind;
use elixir::mcp::spec::Group;
use elixir::tools::{PLANNED_TOOLS, RETIRED_TOOLS};
use serde_json::Value;

use crate::on_both_backends;
use crate::support::spawn;

const FAMILIES: [&str; 6] = [
    "Player tool:",
    "Clan tool:",
    "Segment tool:",
    "Board tool:",
    "Account tool:",
    "Reference tool:",
];

/// Every object in a schema has type object and additionalProperties false; every property a
/// one-line description; bounds on counts, lengths and arrays.
fn check_object(tool: &str, path: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{tool}{path}");
    assert_eq!(schema["additionalProperties"], false, "{tool}{path}");
    for (name, prop) in schema["properties"].as_object().unwrap() {
        let at = format!("{path}/{name}");
        let description = prop["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}{at} has no description"));
        assert!(
            !description.is_empty() && !description.contains('\n'),
            "{tool}{at}"
        );
        if ["limit", "offset", "days", "weeks", "seasons"].contains(&name.as_str()) {
            assert!(
                prop["minimum"].is_number() && prop["maximum"].is_number(),
                "{tool}{at} bounds"
            );
        }
        match prop["type"].as_str() {
            Some("string") => {
                assert!(
                    prop["maxLength"].is_number() || prop["enum"].is_array(),
                    "{tool}{at} maxLength"
                );
                if name.ends_with("_tag")
                    || name == "page"
                    || name == "section"
                    || name == "example"
                {
                    assert!(prop["pattern"].is_string(), "{tool}{at} pattern");
                }
            }
            Some("array") => assert!(prop["maxItems"].is_number(), "{tool}{at} maxItems"),
            Some("object") => check_object(tool, &at, prop),
            _ => {}
        }
    }
}

async fn declarations_follow_the_conventions(url: &str) {
    let server = spawn(url).await;
    for kind in Kind::ALL {
        let list = server
            .client(kind)
            .request("tools/list", serde_json::json!({}))
            .await
            .result()["tools"]
            .clone();
        let tools = list.as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        let expected: &[&str] = match kind {
            Kind::Integration => &[
                "elixir_my_identities",
                "elixir_identify",
                "players_collection",
                "players_timeline",
                "players_search",
                "players_profile",
                "players_summary",
                "battles_query",
                "battles_cards",
                "battles_decks",
                "battles_levels",
                "battles_meta_cards",
                "battles_meta_decks",
                "battles_opponents",
                "battles_performance",
                "cards_catalog",
                "game_clock",
                "elixir_coverage",
                "elixir_data_insights",
                "elixir_changelog",
                "elixir_docs",
                "elixir_examples",
                "elixir_my_feedback",
                "elixir_feedback",
                "elixir_updates",
            ],
            Kind::Agent => &[
                "elixir_nickname",
                "elixir_my_identities",
                "elixir_settings",
                "elixir_track_clan",
                "elixir_track_player",
                "elixir_identify",
                "players_collection",
                "players_timeline",
                "players_search",
                "players_profile",
                "players_summary",
                "battles_query",
                "battles_cards",
                "battles_decks",
                "battles_levels",
                "battles_meta_cards",
                "battles_meta_decks",
                "battles_opponents",
                "battles_performance",
                "cards_catalog",
                "game_clock",
                "elixir_coverage",
                "elixir_data_insights",
                "elixir_changelog",
                "elixir_docs",
                "elixir_examples",
                "elixir_my_feedback",
                "elixir_feedback",
                "elixir_updates",
            ],
            Kind::Person => &[
                "elixir_my_players",
                "elixir_nickname",
                "elixir_settings",
                "elixir_track_clan",
                "elixir_track_player",
                "players_collection",
                "players_timeline",
                "players_search",
                "players_profile",
                "players_summary",
                "battles_query",
                "battles_cards",
                "battles_decks",
                "battles_levels",
                "battles_meta_cards",
                "battles_meta_decks",
                "battles_opponents",
                "battles_performance",
                "cards_catalog",
                "game_clock",
                "elixir_coverage",
                "elixir_data_insights",
                "elixir_changelog",
                "elixir_docs",
                "elixir_examples",
                "elixir_my_feedback",
                "elixir_feedback",
                "elixir_updates",
            ],
        };
        assert_eq!(names, expected, "{kind}");
        // rule 1, for the groups built so far: each is used, in order
        let groups: Vec<&str> = tools
            .iter()
            .map(|t| {
                t["_meta"]["elixir.poapkings.com/tool"]["group"]
                    .as_str()
                    .unwrap()
            })
            .fold(Vec::new(), |mut seen, g| {
                if seen.last() != Some(&g) {
                    seen.push(g);
                }
                seen
            });
        let built: &[&str] = &[
            "Account", "Players", "Battles", "Cards", "War", "Service", "Help",
        ];
        assert_eq!(groups, built, "{kind}");
        let mut last: Option<(usize, String)> = None;
        for t in tools {
            let name = t["name"].as_str().unwrap();
            assert!(
                PLANNED_TOOLS.contains(&name) && !RETIRED_TOOLS.contains(&name),
                "{name}"
            );
            // rule 1 and 2: group order then title; "<Group> · <Title>"
            let title = t["annotations"]["title"].as_str().unwrap();
            assert_eq!(t["title"], title);
            let (group, short) = title
                .split_once(" · ")
                .unwrap_or_else(|| panic!("{name}: {title}"));
            let gi = Group::ALL
                .iter()
                .position(|g| g.label() == group)
                .unwrap_or_else(|| panic!("{group}"));
            if let Some(prev) = &last {
                assert!(prev <= &(gi, short.to_owned()), "{name} out of order");
            }
            last = Some((gi, short.to_owned()));
            // the title after the group never repeats it ("Cards · Card catalogue", not
            // "Cards · Cards catalogue"); tool names do carry their family prefix
            // (players_…, cards_…) as SURFACE §2 names them
            assert!(
                !short.to_lowercase().starts_with(&group.to_lowercase()),
                "{name}: {title}"
            );
            // rule 3, 4
            check_object(name, "", &t["inputSchema"]);
            // rule 6: V tools say what compact drops, the others that they have one size
            let verbosity = &t["inputSchema"]["properties"]["verbosity"];
            assert_eq!(
                verbosity["enum"],
                serde_json::json!(["full", "compact"]),
                "{name}"
            );
            assert_eq!(verbosity["default"], "full");
            let two_sizes = t["_meta"]["elixir.poapkings.com/tool"]["flags"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("V"));
            let said = verbosity["description"].as_str().unwrap();
            if two_sizes {
                assert!(said.contains("compact drops "), "{name}: {said}");
            } else {
                assert!(
                    said.to_lowercase()
                        .contains("one size; accepted and ignored"),
                    "{name}: {said}"
                );
            }
            // rule 7
            let description = t["description"].as_str().unwrap();
            assert!(
                (40..=600).contains(&description.chars().count()),
                "{name}: {} chars",
                description.len()
            );
            assert!(
                FAMILIES.iter().any(|f| description.starts_with(f)),
                "{name}: {description}"
            );
            // rule 8
            let required: Vec<&str> = t["outputSchema"]["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            for k in ["applied", "notes", "docs", "meta"] {
                assert!(required.contains(&k), "{name} outputSchema requires {k}");
            }
            // rules 9-12
            let meta = &t["_meta"]["elixir.poapkings.com/tool"];
            assert_eq!(meta["group"], group);
            let scope = meta["scope"].as_str().unwrap();
            let flags: Vec<&str> = meta["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            assert_eq!(
                t["annotations"]["readOnlyHint"],
                scope == "cr:read",
                "{name}"
            );
            assert_eq!(
                t["annotations"]["destructiveHint"],
                flags.contains(&"D"),
                "{name}"
            );
            assert_eq!(
                t["annotations"]["openWorldHint"],
                flags.contains(&"O"),
                "{name}"
            );
            if group == "Help" {
                assert!(flags.contains(&"U"), "{name} is free");
            }
            // rule 13
            let props = t["inputSchema"]["properties"].as_object().unwrap();
            for agent_only in ["on_behalf_of", "display_name"] {
                if kind == Kind::Person {
                    assert!(
                        !props.contains_key(agent_only),
                        "{name} declares {agent_only} to a person"
                    );
                }
            }
            if kind != Kind::Person {
                assert!(!props.contains_key("primary_player_tag"), "{name}");
            }
        }
        // on_behalf_of rides elixir_feedback on agent doors
        let feedback = tools
            .iter()
            .find(|t| t["name"] == "elixir_feedback")
            .unwrap();
        assert_eq!(
            feedback["inputSchema"]["properties"]
                .get("on_behalf_of")
                .is_some(),
            kind != Kind::Person
        );
        // the Cards group: cards_catalog as SURFACE §2.5 declares it, the same on every door
        let cards = tools.iter().find(|t| t["name"] == "cards_catalog").unwrap();
        assert_eq!(cards["title"], "Cards · Card catalogue");
        assert_eq!(
            cards["_meta"]["elixir.poapkings.com/tool"],
            serde_json::json!({"group": "Cards", "scope": "cr:read", "flags": ["V"]})
        );
        assert!(
            cards["description"]
                .as_str()
                .unwrap()
                .starts_with("Reference tool:")
        );
        let props = &cards["inputSchema"]["properties"];
        let keys: std::collections::BTreeSet<&str> = props
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["ids", "kind", "query", "rarity", "verbosity"].into(),
            "{kind}"
        );
        assert_eq!(
            (
                props["ids"]["minItems"].clone(),
                props["ids"]["maxItems"].clone()
            ),
            (serde_json::json!(1), serde_json::json!(120))
        );
        assert_eq!(props["ids"]["items"]["type"], "integer");
        assert_eq!(
            (
                props["query"]["minLength"].clone(),
                props["query"]["maxLength"].clone()
            ),
            (serde_json::json!(1), serde_json::json!(40))
        );
        assert_eq!(
            props["rarity"]["enum"],
            serde_json::json!(["common", "rare", "epic", "legendary", "champion"])
        );
        assert_eq!(
            props["kind"]["enum"],
            serde_json::json!(["troop", "building", "spell", "tower_troop"])
        );
        assert_eq!(
            props["verbosity"]["description"],
            "Size of the answer; compact drops icon_urls and max_level."
        );
        let required: Vec<&str> = cards["outputSchema"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for field in ["cards", "tower_troops", "total", "observed_at"] {
            assert!(required.contains(&field), "{field}");
        }
        // the War group: game_clock as SURFACE §2.6 declares it, the same on every door
        let clock = tools.iter().find(|t| t["name"] == "game_clock").unwrap();
        assert_eq!(clock["title"], "War · Game clock");
        assert_eq!(
            clock["_meta"]["elixir.poapkings.com/tool"],
            serde_json::json!({"group": "War", "scope": "cr:read", "flags": []})
        );
        assert_eq!(clock["annotations"]["readOnlyHint"], true);
        assert_eq!(clock["annotations"]["destructiveHint"], false);
        assert_eq!(clock["annotations"]["openWorldHint"], false);
        assert!(
            clock["description"]
                .as_str()
                .unwrap()
                .starts_with("Reference tool:")
        );
        let props = &clock["inputSchema"]["properties"];
        let keys: std::collections::BTreeSet<&str> = props
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["at", "timezone", "verbosity"].into(), "{kind}");
        assert!(clock["inputSchema"].get("required").is_none());
        assert_eq!(props["at"]["maxLength"], 40);
        assert_eq!(
            (
                props["timezone"]["minLength"].clone(),
                props["timezone"]["maxLength"].clone()
            ),
            (serde_json::json!(1), serde_json::json!(64))
        );
        assert_eq!(
            props["verbosity"]["description"],
            "One size; accepted and ignored."
        );
        let required: Vec<&str> = clock["outputSchema"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for field in ["game_day", "season", "war", "next"] {
            assert!(required.contains(&field), "{field}");
        }
    }
}

on_both_backends!(declarations_follow_the_conventions);
