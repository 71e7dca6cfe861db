//! battles_query: defaults, orientation, every filter, bounds, refusals, sizes, the result
//! cap and signed cursors, on a recorded cr-fake world.

use std::collections::HashMap;

use elixir::access::kinds::Kind;
use serde_json::{Value, json};

use super::{battles_of, catalogue, outcome_name, record, tag, world};
use crate::support::{T0, spawn, success, tool_error};

/// The expected outcome of each of player `p`'s battles, by battle id.
fn expected(world: &cr_fake_world::World, p: u32) -> HashMap<String, &'static str> {
    let ours = battles_of(world, p);
    world
        .battles_of(p)
        .iter()
        .zip(ours)
        .map(|(&b, normalized)| {
            let o = world.battles()[b as usize].outcome_for(p).unwrap();
            (normalized.battle_id, outcome_name(o))
        })
        .collect()
}

mod cr_fake_world {
    pub use testkit::cr_api::World;
}

/// Every page of battles_query with `args`, following next_cursor.
async fn all_pages(client: &testkit::mcp::Client, args: Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let mut a = args.clone();
        if let Some(c) = &next {
            a["cursor"] = json!(c);
        }
        let body = success(&client.tool("battles_query", a).await);
        out.extend(body["battles"].as_array().unwrap().iter().cloned());
        match body["next_cursor"].as_str() {
            Some(c) => next = Some(c.to_owned()),
            None => return out,
        }
    }
}

async fn defaults_orientation_and_paging(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 12);
    // player 1's log first: battles between 0 and 1 are stored from 1's side
    record(&server.store, &w, &[1, 0]).await;
    let me = tag(&w, 0);
    let person = server.person();
    // the default page: 25 full battles of about 2,200 characters each would pass the cap, so
    // the page ends where the next battle would not fit, says so, and its cursor continues
    // exactly where it stopped
    let default = success(
        &person
            .tool("battles_query", json!({"player_tag": me}))
            .await,
    );
    let held = default["battles"].as_array().unwrap().len();
    assert!((1..25).contains(&held), "a shortened page: {held}");
    assert_eq!(default["applied"]["limit"], 25);
    assert!(default["notes"].as_array().unwrap().iter().any(|n| {
        n.as_str().unwrap().starts_with(&format!(
            "This page holds {held} of the 25 battles asked for"
        ))
    }));
    let rest = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "cursor": default["next_cursor"]}),
            )
            .await,
    );
    let every = all_pages(
        &person,
        json!({"player_tag": me, "verbosity": "compact", "limit": 50}),
    )
    .await;
    let ids = |v: &Value| -> Vec<Value> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|b| b["battle_id"].clone())
            .collect()
    };
    let mut two_pages = ids(&default["battles"]);
    two_pages.extend(ids(&rest["battles"]));
    assert_eq!(two_pages, ids(&json!(every))[..two_pages.len()].to_vec());
    let first = success(
        &person
            .tool("battles_query", json!({"player_tag": me, "limit": 15}))
            .await,
    );
    let battles = first["battles"].as_array().unwrap();
    assert_eq!(battles.len(), 15);
    let times: Vec<&str> = battles
        .iter()
        .map(|b| b["battle_time"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted, "newest first");
    let ours = battles_of(&w, 0);
    let oldest = ours.first().unwrap();
    assert_eq!(
        first["applied"],
        json!({
            "window": {
                "from": elixir_record::time::iso(oldest.battle_time),
                "to": "2026-01-01T00:00:00Z",
                "source": "unbounded",
                "timezone": "UTC",
                "crosses": first["applied"]["window"]["crosses"],
                "season_age_days": first["applied"]["window"]["season_age_days"],
            },
            "mode": "all",
            "limit": 15,
            "verbosity": "full",
        })
    );
    assert!(first["next_cursor"].is_string());
    assert!(first.get("total").is_none());
    assert_eq!(first["docs"], "tools-battles#battles-query");
    assert_eq!(first["meta"]["timezone_applied"], "UTC");
    assert!(first["meta"]["recorded_since"].is_string());
    // a full battle: every field, the subject on team with their outcome
    let b = &battles[0];
    for key in [
        "battle_id",
        "battle_time",
        "battle_time_local",
        "type",
        "mode",
        "game_mode",
        "deck_selection",
        "arena",
        "league_number",
        "outcome",
        "team",
        "opponent",
    ] {
        assert!(b.get(key).is_some(), "{key} in {b}");
    }
    assert_eq!(b["battle_time_local"].as_str().unwrap().len(), 25);
    // every page: all battles once, each turned to the subject with the world's outcome
    let all = all_pages(&person, json!({"player_tag": me, "limit": 15})).await;
    let want = expected(&w, 0);
    assert_eq!(all.len(), want.len());
    let mut shared_with_1 = 0;
    for b in &all {
        assert_eq!(b["team"][0]["tag"], me, "{b}");
        assert_eq!(b["outcome"], want[b["battle_id"].as_str().unwrap()], "{b}");
        if b["opponent"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["tag"] == tag(&w, 1))
        {
            shared_with_1 += 1;
        }
        if b["mode"] == "war_duel" {
            let rounds = b["rounds"].as_array().unwrap();
            assert!(!rounds.is_empty());
            assert!(rounds[0]["team"]["cards"][0].get("used").is_some());
        } else {
            assert!(b.get("rounds").is_none());
        }
        assert_eq!(b.get("boat").is_some(), b["mode"] == "boat", "{b}");
    }
    assert!(shared_with_1 > 0, "the world pits 0 against 1");
    let mut ids: Vec<&str> = all
        .iter()
        .map(|b| b["battle_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "no battle twice across pages");
    // the person's primary is the default subject; none is no_subject
    let none = tool_error(&person.tool("battles_query", json!({})).await);
    assert_eq!(none["error"]["code"], "no_subject");
    assert!(
        none["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("elixir_track_player")
    );
    for kind in [Kind::Agent, Kind::Integration] {
        let e = tool_error(&server.client(kind).tool("battles_query", json!({})).await);
        assert_eq!(e["error"]["code"], "no_subject", "{kind}");
        assert!(
            e["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("elixir_identify")
        );
        let ok = success(
            &server
                .client(kind)
                .tool("battles_query", json!({"player_tag": me, "limit": 1}))
                .await,
        );
        assert_eq!(ok["battles"].as_array().unwrap().len(), 1);
    }
    // a valid tag nothing is recorded for
    let e = tool_error(
        &person
            .tool("battles_query", json!({"player_tag": "#2PP"}))
            .await,
    );
    assert_eq!(e["error"]["code"], "not_recorded");
    assert!(
        e["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("elixir_track_player")
    );
}

async fn filters_narrow_exactly(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 12);
    record(&server.store, &w, &[0, 1]).await;
    catalogue(&server.store, &w).await;
    let me = tag(&w, 0);
    let person = server.person();
    let ours = battles_of(&w, 0);
    let want = expected(&w, 0);
    let q = |extra: Value| {
        let mut a = json!({"player_tag": me, "limit": 50, "verbosity": "compact"});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    // outcome
    for outcome in ["win", "loss", "draw"] {
        let got = all_pages(&person, q(json!({"outcome": outcome}))).await;
        let n = want.values().filter(|o| **o == outcome).count();
        assert_eq!(got.len(), n, "{outcome}");
        assert!(got.iter().all(|b| b["outcome"] == outcome));
    }
    // mode and family
    let ladder = ours.iter().filter(|b| b.mode.as_str() == "ladder").count();
    let got = all_pages(&person, q(json!({"mode": "ladder"}))).await;
    assert_eq!(got.len(), ladder);
    let river = ours
        .iter()
        .filter(|b| ["war", "war_duel", "boat"].contains(&b.mode.as_str()))
        .count();
    assert_eq!(
        all_pages(&person, q(json!({"mode": "river_race"})))
            .await
            .len(),
        river
    );
    // game_mode_id
    let gm = ours[0].game_mode.as_ref().unwrap().id;
    let n = ours
        .iter()
        .filter(|b| b.game_mode.as_ref().map(|g| g.id) == Some(gm))
        .count();
    assert_eq!(
        all_pages(&person, q(json!({"game_mode_id": gm})))
            .await
            .len(),
        n
    );
    // opponent_tag, in any case and without #
    let rival = tag(&w, 1);
    let n = ours
        .iter()
        .filter(|b| {
            b.opponent
                .iter()
                .any(|p| p.tag.as_ref().map(|t| t.to_string()) == Some(rival.clone()))
        })
        .count();
    assert!(n > 0);
    let loose = rival.trim_start_matches('#').to_lowercase();
    assert_eq!(
        all_pages(&person, q(json!({"opponent_tag": loose})))
            .await
            .len(),
        n
    );
    // battle_id, upper-cased
    let one = &ours[3];
    let got = all_pages(
        &person,
        q(json!({"battle_id": one.battle_id.to_uppercase()})),
    )
    .await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["battle_id"], one.battle_id);
    // deck_hash: the battles played with it (a duel matches a round)
    let hash = ours
        .iter()
        .rev()
        .find_map(|b| b.team[0].deck_hash.clone())
        .unwrap();
    let n = ours
        .iter()
        .filter(|b| {
            b.team[0].deck_hash.as_deref() == Some(&hash)
                || b.team[0]
                    .rounds
                    .iter()
                    .any(|r| r.deck_hash.as_deref() == Some(&hash))
        })
        .count();
    let got = all_pages(&person, q(json!({"deck_hash": hash}))).await;
    assert_eq!(got.len(), n);
    // with_card by id and by name, with_cards all present, against_card
    let card = ours.last().unwrap().team[0].cards[0].clone();
    let with = ours
        .iter()
        .filter(|b| b.team[0].cards.iter().any(|c| c.id == card.id))
        .count();
    assert_eq!(
        all_pages(&person, q(json!({"with_card": card.id})))
            .await
            .len(),
        with
    );
    assert_eq!(
        all_pages(&person, q(json!({"with_card": card.name.to_uppercase()})))
            .await
            .len(),
        with
    );
    let second = ours.last().unwrap().team[0].cards[1].clone();
    let both = ours
        .iter()
        .filter(|b| {
            b.team[0].cards.iter().any(|c| c.id == card.id)
                && b.team[0].cards.iter().any(|c| c.id == second.id)
        })
        .count();
    assert_eq!(
        all_pages(&person, q(json!({"with_cards": [card.id, second.name]})))
            .await
            .len(),
        both
    );
    // eight cards, the most with_cards takes: a whole deck
    let deck: Vec<i64> = ours
        .iter()
        .rev()
        .find(|b| b.team[0].cards.len() == 8)
        .unwrap()
        .team[0]
        .cards
        .iter()
        .map(|c| c.id)
        .collect();
    let all8 = ours
        .iter()
        .filter(|b| {
            deck.iter()
                .all(|id| b.team[0].cards.iter().any(|c| c.id == *id))
        })
        .count();
    assert!(all8 >= 1);
    assert_eq!(
        all_pages(&person, q(json!({"with_cards": deck})))
            .await
            .len(),
        all8
    );
    let against = ours
        .iter()
        .filter(|b| {
            b.opponent
                .iter()
                .any(|p| p.cards.iter().any(|c| c.id == card.id))
        })
        .count();
    assert_eq!(
        all_pages(&person, q(json!({"against_card": card.id})))
            .await
            .len(),
        against
    );
    // an unknown card is not_found with candidates
    let e = tool_error(
        &person
            .tool("battles_query", q(json!({"against_card": "Knig"})))
            .await,
    );
    assert_eq!(e["error"]["code"], "not_found");
    assert!(e["error"]["candidates"].as_array().is_some());
    // include_total counts every match, with SQL filters and with in-process ones
    let body = success(
        &person
            .tool(
                "battles_query",
                q(json!({"include_total": true, "limit": 1})),
            )
            .await,
    );
    assert_eq!(body["total"], want.len());
    let body = success(
        &person
            .tool(
                "battles_query",
                q(json!({"include_total": true, "limit": 1, "with_card": card.id})),
            )
            .await,
    );
    assert_eq!(body["total"], with);
    // a window: days before now, dates in a zone, a season
    let day = 86_400_000;
    let n = ours
        .iter()
        .filter(|b| b.battle_time.as_millisecond() >= T0 - 3 * day)
        .count();
    let got = all_pages(&person, q(json!({"days": 3}))).await;
    assert_eq!(got.len(), n);
    let body = success(&person.tool("battles_query", q(json!({"days": 3}))).await);
    assert_eq!(body["applied"]["window"]["source"], "argument");
    assert_eq!(body["applied"]["window"]["from"], "2025-12-29T00:00:00Z");
    let body = success(
        &person
            .tool(
                "battles_query",
                q(json!({"from": "2025-12-30", "timezone": "Asia/Tokyo", "limit": 1})),
            )
            .await,
    );
    assert_eq!(body["applied"]["window"]["from"], "2025-12-29T15:00:00Z");
    assert!(body["meta"]["timezone_applied"] == "Asia/Tokyo");
    let local = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "timezone": "Asia/Tokyo", "limit": 1}),
            )
            .await,
    );
    assert!(
        local["battles"][0]["battle_time_local"]
            .as_str()
            .unwrap()
            .ends_with("+09:00")
    );
    let season = success(
        &person
            .tool(
                "battles_query",
                q(json!({"season": "previous", "limit": 1})),
            )
            .await,
    );
    assert_eq!(season["applied"]["window"]["source"], "season");
    assert_eq!(season["applied"]["window"]["season"]["month"], "2025-11");
    assert_eq!(season["applied"]["window"]["partial"], true);
    assert!(season["meta"]["completeness_note"].is_string());
}

async fn bounds_refusals_sizes_and_the_cap(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 12);
    record(&server.store, &w, &[0]).await;
    let me = tag(&w, 0);
    let person = server.person();
    let call = |a: Value| person.tool("battles_query", a);
    // limit bounds: 1 and 50 (compact) answer; 0 and 51 are bad_request
    let one = success(&call(json!({"player_tag": me, "limit": 1})).await);
    assert_eq!(one["battles"].as_array().unwrap().len(), 1);
    let fifty =
        success(&call(json!({"player_tag": me, "limit": 50, "verbosity": "compact"})).await);
    assert_eq!(fifty["battles"].as_array().unwrap().len(), 50);
    assert_eq!(fifty["applied"]["verbosity"], "compact");
    // compact keeps exactly its fields
    let b = &fifty["battles"][0];
    let mut keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    keys.retain(|k| *k != "rounds");
    keys.sort();
    assert_eq!(
        keys,
        [
            "battle_id",
            "battle_time",
            "mode",
            "opponent",
            "outcome",
            "team"
        ]
    );
    let mut pkeys: Vec<&String> = b["team"][0].as_object().unwrap().keys().collect();
    pkeys.sort();
    assert_eq!(
        pkeys,
        [
            "card_keys",
            "crowns",
            "deck_hash",
            "name",
            "tag",
            "tower_troop_id",
            "trophy_change"
        ]
    );
    assert!(b["team"][0]["card_keys"][0].as_str().unwrap().contains(':'));
    // window bounds: 730 days and 104 weeks answer, one more is refused
    for ok in [
        json!({"days": 730}),
        json!({"weeks": 104}),
        json!({"days": 1}),
        json!({"weeks": 1}),
    ] {
        let mut a = ok.clone();
        a["player_tag"] = json!(me);
        a["limit"] = json!(1);
        let body = success(&call(a).await);
        assert_eq!(body["applied"]["window"]["source"], "argument", "{ok}");
    }
    // on the person door, on_behalf_of is ignored with a note
    let ignored = success(&call(json!({"player_tag": me, "limit": 1, "on_behalf_of": "u1"})).await);
    assert!(
        ignored["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("on_behalf_of was ignored")),
        "{ignored}"
    );
    for refused in [
        json!({"player_tag": me, "from": "2025-12-10T00:00:00Z", "to": "2025-12-10T00:00:00Z"}),
        json!({"player_tag": me, "limit": 0}),
        json!({"player_tag": me, "limit": 51, "verbosity": "compact"}),
        json!({"player_tag": me, "days": 0}),
        json!({"player_tag": me, "days": 731}),
        json!({"player_tag": me, "weeks": 105}),
        json!({"player_tag": me, "from": "2025-12-01", "days": 3}),
        json!({"player_tag": me, "days": 3, "weeks": 1}),
        json!({"player_tag": me, "season": "current", "days": 3}),
        json!({"player_tag": me, "from": "2025-12-10", "to": "2025-12-01"}),
        json!({"player_tag": me, "timezone": "Mars/Olympus"}),
        json!({"player_tag": me, "mode": "ranked"}),
        json!({"player_tag": me, "outcome": "won"}),
        json!({"player_tag": me, "deck_hash": "abc"}),
        json!({"player_tag": me, "battle_id": "g".repeat(64)}),
        json!({"player_tag": me, "with_cards": []}),
        json!({"player_tag": me, "with_cards": [1, 2, 3, 4, 5, 6, 7, 8, 9]}),
        json!({"player_tag": me, "include_total": "yes"}),
        json!({"player_tag": me, "live": "yes"}),
        json!({"player_tag": me, "colour": "red"}),
        json!({"player_tag": ""}),
        json!({"player_tag": me, "opponent_tag": ""}),
    ] {
        let e = tool_error(&call(refused.clone()).await);
        assert_eq!(e["error"]["code"], "bad_request", "{refused}: {e}");
    }
    let e = tool_error(&call(json!({"player_tag": "#XYZ"})).await);
    assert_eq!(e["error"]["code"], "invalid_tag");
    let e = tool_error(&call(json!({"player_tag": me, "opponent_tag": "#ABC"})).await);
    assert_eq!(e["error"]["code"], "invalid_tag");
    // above 25 without compact: refused up front, and the hint says how
    let e = tool_error(&call(json!({"player_tag": me, "limit": 26})).await);
    assert_eq!(e["error"]["code"], "result_too_large");
    assert!(
        e["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("\"verbosity\": \"compact\"")
    );
    // full at 25 always fits the 48,000-character cap: the page holds what fits
    let reply = call(json!({"player_tag": me, "limit": 25})).await;
    let full = success(&reply);
    let text = reply.result()["content"][0]["text"].as_str().unwrap();
    assert!(text.chars().count() <= 48_000);
    let held = full["battles"].as_array().unwrap().len();
    assert!((1..=25).contains(&held));
    assert!(full["next_cursor"].is_string(), "more battles follow");
    // 2v2 battles fill the cap fastest: four full participants each
    let twos = success(&call(json!({"player_tag": me, "mode": "2v2", "limit": 1})).await);
    if let Some(b) = twos["battles"].as_array().unwrap().first() {
        assert_eq!(b["team"].as_array().unwrap().len(), 2);
    }
    let compact = call(json!({"player_tag": me, "limit": 50, "verbosity": "compact"})).await;
    let len = compact.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .chars()
        .count();
    assert!(len <= 48_000, "compact pages of 50 fit the cap: {len}");
}

async fn cursors_are_signed_bound_and_expire(url: &str) {
    let server = spawn(url).await;
    let w = world(4, 12);
    record(&server.store, &w, &[0]).await;
    let me = tag(&w, 0);
    let person = server.person();
    let total = battles_of(&w, 0).len();
    let first = success(
        &person
            .tool("battles_query", json!({"player_tag": me, "limit": 5}))
            .await,
    );
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let second = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "limit": 5, "cursor": cursor}),
            )
            .await,
    );
    assert!(
        second["battles"][0]["battle_time"].as_str() <= first["battles"][4]["battle_time"].as_str()
    );
    assert_ne!(
        second["battles"][0]["battle_id"],
        first["battles"][4]["battle_id"]
    );
    // another limit or verbosity keeps the cursor good; other filters do not
    success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "limit": 3, "verbosity": "compact", "cursor": cursor}),
            )
            .await,
    );
    for other in [
        json!({"player_tag": me, "mode": "ladder", "cursor": cursor}),
        json!({"player_tag": me, "outcome": "win", "cursor": cursor}),
        json!({"player_tag": me, "days": 5, "cursor": cursor}),
        json!({"player_tag": tag(&w, 1), "cursor": cursor}),
    ] {
        let e = tool_error(&person.tool("battles_query", other.clone()).await);
        let code = e["error"]["code"].as_str().unwrap();
        // another subject may not be recorded at all; any other call is a refused cursor
        if code != "not_recorded" {
            assert_eq!(code, "bad_request", "{other}");
            assert!(
                e["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("other filters"),
                "{e}"
            );
        }
    }
    // forged: garbage, a flipped character, a cursor of another key
    let mut flipped = cursor.clone().into_bytes();
    flipped[20] = if flipped[20] == b'A' { b'B' } else { b'A' };
    for forged in ["AAAA".to_owned(), String::from_utf8(flipped).unwrap()] {
        let e = tool_error(
            &person
                .tool("battles_query", json!({"player_tag": me, "cursor": forged}))
                .await,
        );
        assert_eq!(e["error"]["code"], "bad_request");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not one Elixir issued"),
            "{e}"
        );
    }
    // an exactly full page has no cursor; one battle fewer leaves exactly one for page two
    let day = 86_400_000;
    let recent = battles_of(&w, 0)
        .iter()
        .filter(|b| b.battle_time.as_millisecond() >= T0 - day)
        .count();
    assert!((2..=50).contains(&recent), "{recent}");
    let exact = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "days": 1, "limit": recent, "verbosity": "compact"}),
            )
            .await,
    );
    assert_eq!(exact["battles"].as_array().unwrap().len(), recent);
    assert_eq!(exact["next_cursor"], Value::Null);
    let short = success(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "days": 1, "limit": recent - 1, "verbosity": "compact"}),
            )
            .await,
    );
    let rest = success(
        &person
            .tool("battles_query", json!({"player_tag": me, "days": 1, "limit": recent - 1, "verbosity": "compact", "cursor": short["next_cursor"]}))
            .await,
    );
    assert_eq!(rest["battles"].as_array().unwrap().len(), 1);
    assert_eq!(rest["next_cursor"], Value::Null);
    assert_eq!(
        rest["battles"][0]["battle_id"],
        exact["battles"][recent - 1]["battle_id"]
    );
    // the last page of a walk ends on null exactly when the battles run out
    let mut seen = 0;
    let mut next = None::<String>;
    loop {
        let mut a = json!({"player_tag": me, "limit": 10, "verbosity": "compact"});
        if let Some(c) = &next {
            a["cursor"] = json!(c);
        }
        let page = success(&person.tool("battles_query", a).await);
        let n = page["battles"].as_array().unwrap().len();
        assert!(n > 0, "never a cursor to an empty page");
        seen += n;
        match page["next_cursor"].as_str() {
            Some(c) => next = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, total);
    // over 24 hours old
    server.clock.advance_millis(24 * 3_600_000 + 1_000);
    let e = tool_error(
        &person
            .tool(
                "battles_query",
                json!({"player_tag": me, "limit": 5, "cursor": cursor}),
            )
            .await,
    );
    assert_eq!(e["error"]["code"], "bad_request");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("24 hours"),
        "{e}"
    );
}

crate::on_both_backends!(
    defaults_orientation_and_paging,
    filters_narrow_exactly,
    bounds_refusals_sizes_and_the_cap,
    cursors_are_signed_bound_and_expire,
);
