//! Every tool's answer validates against its own declared `outputSchema`, on every door kind
//! (the person's OAuth door `/mcp`, an agent's `/a/<id>/mcp`, an integration's `/i/<id>/mcp`):
//! on a recorded world, each tool the registry declares for a kind is called there with valid
//! arguments (two-size tools in both sizes), its `structuredContent` is checked with format
//! validation against the schema that kind's `tools/list` publishes, and a declared tool left
//! unexercised fails the test.

use std::collections::BTreeSet;

use elixir::access::kinds::Kind;
use elixir::model::{ClanRow, MemberSeen};
use elixir::tools;
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{spawn, success};

/// The arguments each tool is called with in the world below: the required ones, with
/// subjects that are recorded.
struct Subjects {
    player: Value,
    name_prefix: String,
    fought: String,
    recorded_tag: String,
}

impl Subjects {
    fn arguments(&self, kind: Kind, name: &str) -> Value {
        match name {
            "elixir_feedback" => json!({"message": "schema check"}),
            "elixir_nickname" => json!({"player_tag": "#20JJJ2CCRU", "nickname": "Nick"}),
            "elixir_track_player" => json!({"player_tag": "#20JJJ2CCRU"}),
            "elixir_track_clan" => json!({"clan_tag": "#9YJUPU9LY", "action": "remove"}),
            "elixir_identify" => {
                json!({"external_id": format!("schema-{kind}"), "player_tag": self.recorded_tag})
            }
            "players_profile" | "players_summary" | "players_timeline" | "players_collection"
            | "elixir_coverage" => self.player.clone(),
            "players_search" => json!({"query": self.name_prefix}),
            "battles_meta_decks" | "battles_meta_cards" => json!({"segment": "corpus"}),
            "battles_query" => json!({"player_tag": self.fought, "limit": 10}),
            battles if battles.starts_with("battles_") => json!({"player_tag": self.fought}),
            _ => json!({}),
        }
    }
}

/// Whether a published tool has a compact size (its `verbosity` says what compact drops).
fn two_sizes(tool: &Value) -> bool {
    tool["inputSchema"]["properties"]["verbosity"]["description"]
        .as_str()
        .is_some_and(|d| d.starts_with("Size of the answer; compact drops"))
}

async fn every_tool_answers_within_its_output_schema_on_every_door(url: &str) {
    let server = spawn(url).await;
    // Player tools need a recorded subject (`{}` is no_subject on every door).
    let recorded = crate::players_tools::record_world(&server.store).await;
    // the Battles tools answer about a player recorded from a world of their own
    let world = crate::battles_tools::world(2, 3);
    crate::battles_tools::record(&server.store, &world, &[0]).await;
    let subjects = Subjects {
        player: json!({"player_tag": recorded.tag}),
        name_prefix: recorded.name.chars().take(3).collect(),
        fought: crate::battles_tools::tag(&world, 0),
        recorded_tag: recorded.tag.clone(),
    };
    // elixir_identify binds a member of the door's clan: the recorded player is one, in the
    // clan of both doors that list the tool
    let clan = "#LQ2PRJ0";
    server
        .store
        .put_clan(
            &ClanRow {
                tag: clan.into(),
                name: "Schema".into(),
                profile: None,
                observed_at: Some(0),
                first_seen_at: 0,
            },
            &[MemberSeen {
                player_tag: recorded.tag.clone(),
                name: recorded.name.clone(),
                role: Some("member".into()),
                last_seen_at: None,
            }],
            0,
        )
        .await
        .unwrap();
    for door in [&server.agent, &server.integration] {
        server
            .store
            .set_agent_clan(door.agent.id, Some(clan))
            .await
            .unwrap();
    }
    let registry = tools::registry();
    let mut compact_checked = BTreeSet::new();
    for kind in Kind::ALL {
        let client = server.client(kind);
        let list = client.request("tools/list", json!({})).await.result()["tools"].clone();
        let mut exercised = BTreeSet::new();
        for t in list.as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            // with format validation on, so a declared `format` is checked, not only noted
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&t["outputSchema"])
                .unwrap_or_else(|e| panic!("{kind} {name}: outputSchema does not compile: {e}"));
            let mut sizes = vec![None];
            if two_sizes(t) {
                sizes.push(Some("compact"));
            }
            for size in sizes {
                let mut args = subjects.arguments(kind, name);
                if let Some(size) = size {
                    args["verbosity"] = json!(size);
                    compact_checked.insert(name.to_owned());
                }
                let reply = client.tool(name, args).await;
                let body = success(&reply);
                assert_eq!(reply.result()["structuredContent"], body, "{kind} {name}");
                let errors: Vec<String> = validator
                    .iter_errors(&body)
                    .map(|e| format!("{}: {e}", e.instance_path()))
                    .collect();
                assert!(errors.is_empty(), "{kind} {name} {size:?}: {errors:#?}");
            }
            exercised.insert(name.to_owned());
        }
        let declared: BTreeSet<String> = registry
            .iter()
            .filter(|s| s.kinds.contains(&kind))
            .map(|s| s.name.to_owned())
            .collect();
        assert_eq!(
            exercised, declared,
            "{kind}: the tools exercised are not the tools declared for this door"
        );
    }
    // the two-size tools were checked in their compact size too
    assert_eq!(
        compact_checked,
        BTreeSet::from(
            [
                "battles_levels",
                "battles_query",
                "cards_catalog",
                "players_collection"
            ]
            .map(str::to_owned)
        )
    );
}

on_both_backends!(every_tool_answers_within_its_output_schema_on_every_door);
