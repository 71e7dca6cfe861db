//! The Account tools over the doors, on both backends: tracking a player (slots, the first
//! read queued, re-adding unchanged, a new primary demoting the old one, settings' primary),
//! tracking a clan within its scope's allowance, nicknames, my_players, the agent door's
//! watching-only rule, and identities bound to door-clan members, write-once, with
//! `on_behalf_of` resolving to them and `no_subject` naming candidates.

use elixir::model::{ClanRow, MemberSeen};
use serde_json::json;

use crate::on_both_backends;
use crate::support::{spawn, success, tool_error};

const P1: &str = "#20JJJ2CCRU";
const P2: &str = "#2PP";
const CLAN: &str = "#9YJUPU9LY";

async fn tracking_players_and_the_primary(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let body = success(
        &person
            .tool("elixir_track_player", json!({"player_tag": "20jjj2ccru"}))
            .await,
    );
    assert_eq!(body["player"]["tag"], P1);
    assert_eq!(body["player"]["relationship"], "watching");
    assert_eq!(body["changed"], true);
    assert_eq!(body["recording"]["state"], "active");
    assert_eq!(body["first_read"]["state"], "pending");
    assert_eq!(body["slots"]["players"], json!({"used": 1, "max": 50}));
    assert_eq!(
        body["slots"]["clans"]["comprehensive"],
        json!({"used": 0, "max": 0})
    );
    let again = success(
        &person
            .tool("elixir_track_player", json!({"player_tag": P1}))
            .await,
    );
    assert_eq!(again["changed"], false);
    // settings: the primary must be tracked.
    let refused = tool_error(
        &person
            .tool("elixir_settings", json!({"primary_player_tag": P2}))
            .await,
    );
    assert_eq!(refused["error"]["code"], "not_recorded");
    let set = success(
        &person
            .tool("elixir_settings", json!({"primary_player_tag": P1}))
            .await,
    );
    assert_eq!(set["settings"]["primary_player"]["tag"], P1);
    assert_eq!(set["changed"], json!(["primary_player"]));
    // A new primary demotes the old one.
    success(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": P2, "relationship": "primary"}),
            )
            .await,
    );
    let mine = success(&person.tool("elixir_my_players", json!({})).await);
    let rels: Vec<(&str, &str)> = mine["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["tag"].as_str().unwrap(),
                p["relationship"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(rels, vec![(P2, "primary"), (P1, "alt")]);
    // notify and remove
    let off = success(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": P1, "action": "notify_off"}),
            )
            .await,
    );
    assert_eq!(
        (off["changed"].clone(), off["player"]["notify"].clone()),
        (json!(true), json!(false))
    );
    let gone = success(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": P1, "action": "remove"}),
            )
            .await,
    );
    assert_eq!(gone["recording"], json!(null));
    assert_eq!(gone["slots"]["players"]["used"], 1);
    let missing = tool_error(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": P1, "action": "notify_on"}),
            )
            .await,
    );
    assert_eq!(missing["error"]["code"], "not_recorded");
    let bad = tool_error(
        &person
            .tool("elixir_track_player", json!({"player_tag": "#ABC"}))
            .await,
    );
    assert_eq!(bad["error"]["code"], "invalid_tag");
    let bad = tool_error(
        &person
            .tool(
                "elixir_track_player",
                json!({"player_tag": P1, "relationship": "rival"}),
            )
            .await,
    );
    assert_eq!(bad["error"]["code"], "bad_request");
    // Agents track only as watching, and never see the person's list.
    let agent = server.agent();
    let refused = tool_error(
        &agent
            .tool(
                "elixir_track_player",
                json!({"player_tag": P1, "relationship": "friend"}),
            )
            .await,
    );
    assert_eq!(refused["error"]["code"], "not_entitled");
    let watched = success(
        &agent
            .tool("elixir_track_player", json!({"player_tag": P1}))
            .await,
    );
    assert_eq!(watched["slots"]["players"]["used"], 2, "the owner's slots");
}

async fn tracking_clans_within_the_allowance(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let body = success(
        &person
            .tool("elixir_track_clan", json!({"clan_tag": CLAN}))
            .await,
    );
    assert_eq!(body["tracking"]["scope"], "activity");
    assert_eq!(
        body["slots"]["clans"]["activity"],
        json!({"used": 1, "max": 1})
    );
    // One past the member tier's single activity slot.
    let full = tool_error(
        &person
            .tool("elixir_track_clan", json!({"clan_tag": "#9YJUPU9L2"}))
            .await,
    );
    assert_eq!(full["error"]["code"], "quota_exceeded");
    // A member has no comprehensive slot at all.
    let none = tool_error(
        &person
            .tool(
                "elixir_track_clan",
                json!({"clan_tag": "#9YJUPU9L2", "scope": "comprehensive"}),
            )
            .await,
    );
    assert_eq!(none["error"]["code"], "quota_exceeded");
    let removed = success(
        &person
            .tool(
                "elixir_track_clan",
                json!({"clan_tag": CLAN, "action": "remove"}),
            )
            .await,
    );
    assert_eq!(removed["changed"], true);
    assert!(removed.get("tracking").is_none());
}

async fn nicknames(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let set = success(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": P1, "nickname": "Bob"}),
            )
            .await,
    );
    assert_eq!(
        (set["nickname"].clone(), set["previous_nickname"].clone()),
        (json!("Bob"), json!(null))
    );
    let cleared = success(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": P1, "nickname": null}),
            )
            .await,
    );
    assert_eq!(
        (
            cleared["nickname"].clone(),
            cleared["previous_nickname"].clone()
        ),
        (json!(null), json!("Bob"))
    );
    let long = "x".repeat(41);
    let refused = tool_error(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": P1, "nickname": long}),
            )
            .await,
    );
    assert_eq!(refused["error"]["code"], "bad_request");
    let at_bound = "x".repeat(40);
    success(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": P1, "nickname": at_bound}),
            )
            .await,
    );
    let blank = tool_error(
        &person
            .tool(
                "elixir_nickname",
                json!({"player_tag": P1, "nickname": "  "}),
            )
            .await,
    );
    assert_eq!(blank["error"]["code"], "bad_request");
}

async fn identities_bind_door_clan_members(url: &str) {
    let server = spawn(url).await;
    let agent = server.agent();
    let no_clan = tool_error(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": P1}),
            )
            .await,
    );
    assert_eq!(no_clan["error"]["code"], "not_entitled");
    server
        .store
        .set_agent_clan(server.agent.agent.id, Some(CLAN))
        .await
        .unwrap();
    server
        .store
        .put_clan(
            &ClanRow {
                tag: CLAN.into(),
                name: "Kings".into(),
                profile: None,
                observed_at: Some(0),
                first_seen_at: 0,
            },
            &[MemberSeen {
                player_tag: P1.into(),
                name: "Ånne".into(),
                role: Some("elder".into()),
                last_seen_at: None,
            }],
            0,
        )
        .await
        .unwrap();
    let outsider = tool_error(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": P2}),
            )
            .await,
    );
    assert_eq!(outsider["error"]["code"], "not_entitled");
    let bound = success(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": P1, "display_name": "Ånne"}),
            )
            .await,
    );
    assert_eq!(bound["created"], true);
    assert_eq!(
        bound["identity"]["player"],
        json!({"tag": P1, "name": "Ånne"})
    );
    let again = success(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": P1}),
            )
            .await,
    );
    assert_eq!(again["created"], false);
    let moved = tool_error(
        &agent
            .tool(
                "elixir_identify",
                json!({"external_id": "u1", "player_tag": P2}),
            )
            .await,
    );
    assert_eq!(moved["error"]["code"], "bad_request");
    let page = success(
        &agent
            .tool("elixir_my_identities", json!({"limit": 1}))
            .await,
    );
    assert_eq!(page["total"], 1);
    assert_eq!(page["next_offset"], json!(null));
    assert_eq!(page["identities"][0]["player"]["in_clan_now"], true);
    let over = tool_error(
        &agent
            .tool("elixir_my_identities", json!({"limit": 201}))
            .await,
    );
    assert_eq!(over["error"]["code"], "bad_request");
}

on_both_backends!(
    tracking_players_and_the_primary,
    tracking_clans_within_the_allowance,
    nicknames,
    identities_bind_door_clan_members,
);
