//! The Service tools over the doors, on both backends: elixir_coverage of a recorded player
//! (measured hours recomputed from the reads, the coverage gap and the record's start as
//! unknown intervals, the window's bounds), of a clan (members and their completeness), its
//! refusals (both subjects, no subject, unrecorded), and elixir_data_insights' corpus,
//! upstream receipts (requests and 429s of the last day) and recorded clans.

use elixir::model::{ClanRow, MemberSeen, Receipt};
use serde_json::json;

use crate::on_both_backends;
use crate::players_tools::record_world;
use crate::support::{T0, spawn, success, tool_error};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
const CLAN: &str = "#9YJUPU9LY";

async fn coverage_measures_reads_and_shows_gaps(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let person = server.person();
    let body = success(
        &person
            .tool("elixir_coverage", json!({"player_tag": r.tag}))
            .await,
    );
    assert_eq!(
        body["subject"],
        json!({"type": "player", "tag": r.tag, "name": r.name})
    );
    assert_eq!(body["applied"]["window"]["source"], "default");
    let from = T0 - 30 * DAY;
    assert_eq!(
        body["applied"]["window"]["from"],
        elixir::domain::iso(from).as_str()
    );
    // measured: from the first read's oldest battle to the last read, less the gap
    let last = *r.reads.last().unwrap();
    let measured_ms = (last - r.first_oldest) - (r.gap.1 - r.gap.0);
    let hours = ((measured_ms as f64 / HOUR as f64) * 100.0).round() / 100.0;
    assert_eq!(body["coverage"]["measured_hours"], hours);
    let measured = body["coverage"]["measured_intervals"].as_array().unwrap();
    assert_eq!(measured.len(), 2);
    assert_eq!(
        measured[0]["from"],
        elixir::domain::iso(r.first_oldest).as_str()
    );
    assert_eq!(measured[0]["to"], elixir::domain::iso(r.gap.0).as_str());
    assert_eq!(measured[1]["from"], elixir::domain::iso(r.gap.1).as_str());
    assert_eq!(measured[1]["to"], elixir::domain::iso(T0).as_str());
    let unknown = body["coverage"]["unknown_intervals"].as_array().unwrap();
    assert_eq!(
        unknown
            .iter()
            .map(|u| u["reason"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["before_recording", "battle_count"]
    );
    assert_eq!(unknown[0]["from"], elixir::domain::iso(from).as_str());
    assert_eq!(unknown[1]["from"], elixir::domain::iso(r.gap.0).as_str());
    assert_eq!(unknown[1]["to"], elixir::domain::iso(r.gap.1).as_str());
    let kept = r.kept(from, T0);
    assert_eq!(body["battles"]["recorded"], kept.len());
    let first = r.world.battles()[kept[0] as usize].time_millis();
    assert_eq!(
        body["battles"]["first_at"],
        elixir::domain::iso(first).as_str()
    );
    assert_eq!(body["recording"]["state"], "paused");
    assert!(body["meta"]["completeness_note"].is_string());
    assert!(body.get("members").is_none());
    // a window inside the record, after the gap: wholly measured, no note
    let inside = success(
        &person
            .tool(
                "elixir_coverage",
                json!({"player_tag": r.tag, "from": elixir::domain::iso(r.gap.1 + DAY),
                    "to": elixir::domain::iso(r.gap.1 + 3 * DAY)}),
            )
            .await,
    );
    assert_eq!(inside["applied"]["window"]["source"], "argument");
    assert_eq!(inside["coverage"]["measured_hours"], 48.0);
    assert_eq!(inside["coverage"]["unknown_intervals"], json!([]));
    assert!(inside["meta"].get("completeness_note").is_none());
    // tracked: the schedule shows
    success(
        &person
            .tool("elixir_track_player", json!({"player_tag": r.tag}))
            .await,
    );
    let tracked = success(
        &person
            .tool("elixir_coverage", json!({"player_tag": r.tag}))
            .await,
    );
    assert_eq!(tracked["recording"]["state"], "active");
    assert_eq!(tracked["recording"]["scope"], "player");
    assert!(tracked["recording"]["next_poll_at"].is_string());
    assert!(tracked["recording"]["cadence_reason"].is_string());
    for (args, code) in [
        (
            json!({"player_tag": r.tag, "clan_tag": CLAN}),
            "bad_request",
        ),
        (json!({"player_tag": r.tag, "days": 731}), "bad_request"),
        (
            json!({"player_tag": r.tag, "from": "2026-01-01", "days": 2}),
            "bad_request",
        ),
        (json!({}), "no_subject"),
        (json!({"player_tag": "#2PP"}), "not_recorded"),
        (json!({"clan_tag": "#2PP"}), "not_recorded"),
        (json!({"clan_tag": "#AB"}), "invalid_tag"),
    ] {
        let e = tool_error(&person.tool("elixir_coverage", args.clone()).await);
        assert_eq!(e["error"]["code"], code, "{args}");
    }
    let refused = tool_error(
        &server
            .agent()
            .tool(
                "elixir_coverage",
                json!({"clan_tag": CLAN, "on_behalf_of": "u1"}),
            )
            .await,
    );
    assert_eq!(refused["error"]["code"], "bad_request");
}

async fn clan_coverage_lists_members(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let clan = ClanRow {
        tag: CLAN.into(),
        name: "Poap Kings".into(),
        profile: None,
        observed_at: Some(T0 - HOUR),
        first_seen_at: T0 - 20 * DAY,
    };
    let members = vec![
        MemberSeen {
            player_tag: r.tag.clone(),
            name: r.name.clone(),
            role: Some("member".into()),
            last_seen_at: None,
        },
        MemberSeen {
            player_tag: "#2PP".into(),
            name: "Unread".into(),
            role: Some("elder".into()),
            last_seen_at: None,
        },
    ];
    server
        .store
        .put_clan(&clan, &members, T0 - 20 * DAY)
        .await
        .unwrap();
    let person = server.person();
    let body = success(
        &person
            .tool("elixir_coverage", json!({"clan_tag": CLAN, "days": 3}))
            .await,
    );
    assert_eq!(body["subject"]["type"], "clan");
    assert_eq!(body["subject"]["name"], "Poap Kings");
    let rows = body["members"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let complete: Vec<(&str, bool)> = rows
        .iter()
        .map(|m| {
            (
                m["tag"].as_str().unwrap(),
                m["coverage_complete"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(complete.contains(&(r.tag.as_str(), true)));
    assert!(complete.contains(&("#2PP", false)));
    // a member never read leaves the clan's window unmeasured
    assert_eq!(body["coverage"]["measured_hours"], 0.0);
    assert_eq!(
        body["coverage"]["unknown_intervals"][0]["reason"],
        "member_not_measured"
    );
    assert_eq!(body["recording"]["state"], "paused");
    assert!(body["meta"]["completeness_note"].is_string());
}

async fn data_insights_counts_the_corpus_and_receipts(url: &str) {
    let server = spawn(url).await;
    let r = record_world(&server.store).await;
    let person = server.person();
    let empty = success(&person.tool("elixir_data_insights", json!({})).await);
    assert_eq!(empty["recorder"]["requests_24h"], 0);
    assert_eq!(empty["recorder"]["upstream_rate_per_s"], 0.0);
    let battles = r.kept(0, T0).len();
    assert_eq!(empty["corpus"]["battles"], battles);
    assert_eq!(empty["corpus"]["players"], 1);
    assert_eq!(empty["corpus"]["players_recorded"], 1);
    assert_eq!(empty["clans"], json!([]));
    let day_battles = r.kept(T0 - DAY, T0).len();
    assert_eq!(empty["corpus"]["battles_last_24h"], day_battles);
    // receipts: 36 in the last hour (one a 429), one two hours ago, one two days ago
    let receipt = |at: i64, status: i64| Receipt {
        endpoint: "/players/{tag}/battlelog".into(),
        subject: Some(r.tag.clone()),
        fetched_at: at,
        status: Some(status),
        payload_sha256: None,
        admission: "recorder".into(),
    };
    for i in 0..36 {
        let status = if i == 0 { 429 } else { 200 };
        server
            .store
            .record_fetch(&receipt(T0 - 1000 * (i + 1), status), None)
            .await
            .unwrap();
    }
    for at in [T0 - 2 * HOUR, T0 - 2 * DAY] {
        server
            .store
            .record_fetch(&receipt(at, 200), None)
            .await
            .unwrap();
    }
    success(
        &person
            .tool("elixir_track_clan", json!({"clan_tag": CLAN}))
            .await,
    );
    let body = success(&person.tool("elixir_data_insights", json!({})).await);
    assert_eq!(body["recorder"]["requests_24h"], 37);
    assert_eq!(body["recorder"]["throttled_24h"], 1);
    assert_eq!(body["recorder"]["upstream_rate_per_s"], 0.01);
    assert_eq!(body["recorder"]["due_polls"], 1);
    assert_eq!(body["recorder"]["oldest_due_s"], 0);
    assert_eq!(
        body["clans"],
        json!([{"tag": CLAN, "name": null, "scope": "activity"}])
    );
    assert_eq!(body["corpus"]["clans_recorded"], 1);
    assert_eq!(body["corpus"]["recordings_active"], 1);
    server.clock.advance_millis(90_000);
    let later = success(&person.tool("elixir_data_insights", json!({})).await);
    assert_eq!(later["recorder"]["oldest_due_s"], 90);
    let unknown = tool_error(
        &person
            .tool("elixir_data_insights", json!({"player_tag": r.tag}))
            .await,
    );
    assert_eq!(unknown["error"]["code"], "bad_request");
}

on_both_backends!(
    coverage_measures_reads_and_shows_gaps,
    clan_coverage_lists_members,
    data_insights_counts_the_corpus_and_receipts,
);
