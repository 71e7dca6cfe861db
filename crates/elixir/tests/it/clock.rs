//! `game_clock` over the wire (SURFACE §2.6, §5.2): the game day turning at 10:00Z, training
//! days, war days and the Colosseum week, the season roll on the first Monday, the `next`
//! boundaries, `at` with and without an offset and `timezone`, the refusals, and that a call
//! reads nothing beyond the door's own statements. Every expected value is worked out by hand
//! from the calendar's rules: 2026-09-07 is the first Monday of September 2026 (war 136),
//! 2026-10-05 of October, 2026-11-02 of November, 2025-12-01 of December 2025 and 2026-01-05
//! of January 2026.

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use testkit::mcp::Client;

use crate::counting_store::CountingStore;
use crate::on_both_backends;
use crate::support::{Options, Server, spawn, spawn_with, success, tool_error};

/// The answer of `game_clock(args)` on `client`.
async fn clock(client: &Client, args: Value) -> Value {
    success(&client.tool("game_clock", args).await)
}

/// The game day's date of `game_clock(args)`.
async fn game_date(client: &Client, args: Value) -> String {
    clock(client, args).await["game_day"]["date"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn a_date_is_ten_utc_and_the_game_day_turns_there(url: &str) {
    let server = spawn(url).await;
    let agent = server.agent();
    // Thursday 2026-09-10: the first war day of war 136's first week
    let body = clock(&agent, json!({"at": "2026-09-10"})).await;
    assert_eq!(
        body["game_day"],
        json!({"date": "2026-09-10", "starts_at": "2026-09-10T10:00:00Z", "ends_at": "2026-09-11T10:00:00Z"})
    );
    assert_eq!(
        body["season"],
        json!({"id": 136, "month": "2026-09", "starts_at": "2026-09-07T10:00:00Z", "ends_at": "2026-10-05T10:00:00Z", "weeks": 4})
    );
    assert_eq!(
        body["war"],
        json!({"section_index": 0, "week": 1, "day_in_week": 3, "war_day": 1, "period_type": "war_day", "is_colosseum": false})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-09-11T10:00:00Z", "war_day_at": "2026-09-11T10:00:00Z", "season_at": "2026-10-05T10:00:00Z"})
    );
    assert_eq!(
        body["notes"],
        json!(["A date-only at means 10:00 UTC that day, when its game day starts, not midnight."])
    );
    assert_eq!(body["applied"], json!({"verbosity": "full"}));
    assert_eq!(body["docs"], "tools-war#game-clock");
    // the same instant written out is the same answer, without the note
    let instant = clock(&agent, json!({"at": "2026-09-10T10:00:00Z"})).await;
    for field in ["game_day", "season", "war", "next"] {
        assert_eq!(instant[field], body[field], "{field}");
    }
    assert_eq!(instant["notes"], json!([]));

    // one second earlier it is still Wednesday's game day: a training day
    let body = clock(&agent, json!({"at": "2026-09-10T09:59:59Z"})).await;
    assert_eq!(
        body["game_day"],
        json!({"date": "2026-09-09", "starts_at": "2026-09-09T10:00:00Z", "ends_at": "2026-09-10T10:00:00Z"})
    );
    assert_eq!(
        body["war"],
        json!({"section_index": 0, "week": 1, "day_in_week": 2, "war_day": null, "period_type": "training", "is_colosseum": false})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-09-10T10:00:00Z", "war_day_at": "2026-09-10T10:00:00Z", "season_at": "2026-10-05T10:00:00Z"})
    );
    // a date's midnight UTC still belongs to the day before
    assert_eq!(
        game_date(&agent, json!({"at": "2026-09-10T00:00:00Z"})).await,
        "2026-09-09"
    );
}

async fn colosseum_week_and_the_season_roll(url: &str) {
    let server = spawn(url).await;
    let agent = server.agent();
    // Saturday of war 136's fourth and last week: Colosseum war day 3
    let body = clock(&agent, json!({"at": "2026-10-03T12:00:00Z"})).await;
    assert_eq!(body["game_day"]["date"], "2026-10-03");
    assert_eq!(
        body["war"],
        json!({"section_index": 3, "week": 4, "day_in_week": 5, "war_day": 3, "period_type": "colosseum", "is_colosseum": true})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-10-04T10:00:00Z", "war_day_at": "2026-10-04T10:00:00Z", "season_at": "2026-10-05T10:00:00Z"})
    );
    // Monday 09:59:59Z is still Sunday's Colosseum war day 4 of war 136; the next war day is
    // Thursday of the new season's first week
    let body = clock(&agent, json!({"at": "2026-10-05T09:59:59Z"})).await;
    assert_eq!(body["game_day"]["date"], "2026-10-04");
    assert_eq!(body["season"]["id"], 136);
    assert_eq!(
        body["war"],
        json!({"section_index": 3, "week": 4, "day_in_week": 6, "war_day": 4, "period_type": "colosseum", "is_colosseum": true})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-10-05T10:00:00Z", "war_day_at": "2026-10-08T10:00:00Z", "season_at": "2026-10-05T10:00:00Z"})
    );
    // at 10:00Z on the first Monday the season rolls: war 137, week 1, training
    let body = clock(&agent, json!({"at": "2026-10-05"})).await;
    assert_eq!(
        body["season"],
        json!({"id": 137, "month": "2026-10", "starts_at": "2026-10-05T10:00:00Z", "ends_at": "2026-11-02T10:00:00Z", "weeks": 4})
    );
    assert_eq!(
        body["war"],
        json!({"section_index": 0, "week": 1, "day_in_week": 0, "war_day": null, "period_type": "training", "is_colosseum": false})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-10-06T10:00:00Z", "war_day_at": "2026-10-08T10:00:00Z", "season_at": "2026-11-02T10:00:00Z"})
    );
    // a five-week season (June 2026 starts on Monday the 1st): week 5 is the Colosseum, and
    // its Monday is still a training day
    let body = clock(&agent, json!({"at": "2026-06-29"})).await;
    assert_eq!(
        body["season"],
        json!({"id": 133, "month": "2026-06", "starts_at": "2026-06-01T10:00:00Z", "ends_at": "2026-07-06T10:00:00Z", "weeks": 5})
    );
    assert_eq!(
        body["war"],
        json!({"section_index": 4, "week": 5, "day_in_week": 0, "war_day": null, "period_type": "training", "is_colosseum": true})
    );
}

async fn now_is_the_injected_clock(url: &str) {
    let server = spawn(url).await;
    // the test clock reads 2026-01-01T00:00:00Z, a Thursday before 10:00Z: Wednesday's game
    // day, in the fifth and last week of the season that started on 2025-12-01 (war 127)
    let body = clock(&server.person(), json!({})).await;
    assert_eq!(
        body["game_day"],
        json!({"date": "2025-12-31", "starts_at": "2025-12-31T10:00:00Z", "ends_at": "2026-01-01T10:00:00Z"})
    );
    assert_eq!(
        body["season"],
        json!({"id": 127, "month": "2025-12", "starts_at": "2025-12-01T10:00:00Z", "ends_at": "2026-01-05T10:00:00Z", "weeks": 5})
    );
    assert_eq!(
        body["war"],
        json!({"section_index": 4, "week": 5, "day_in_week": 2, "war_day": null, "period_type": "training", "is_colosseum": true})
    );
    assert_eq!(
        body["next"],
        json!({"game_day_at": "2026-01-01T10:00:00Z", "war_day_at": "2026-01-01T10:00:00Z", "season_at": "2026-01-05T10:00:00Z"})
    );
    assert_eq!(body["meta"]["as_of"], "2026-01-01T00:00:00Z");
    // moving the clock moves the answer
    server.clock.set_millis(crate::support::T0 + 10 * 3_600_000);
    let body = clock(&server.integration(), json!({})).await;
    assert_eq!(body["game_day"]["date"], "2026-01-01");
    assert_eq!(body["war"]["war_day"], 1);
    assert_eq!(body["war"]["period_type"], "colosseum");
    assert_eq!(body["next"]["war_day_at"], "2026-01-02T10:00:00Z");
}

async fn at_with_and_without_an_offset(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    // with an offset the instant is itself: 11:59:59+02:00 is 09:59:59Z, the day before
    assert_eq!(
        game_date(&person, json!({"at": "2026-09-10T11:59:59+02:00"})).await,
        "2026-09-09"
    );
    // and a timezone does not move it
    assert_eq!(
        game_date(
            &person,
            json!({"at": "2026-09-10T10:00:00Z", "timezone": "Asia/Tokyo"})
        )
        .await,
        "2026-09-10"
    );
    // without one it is read in the caller's zone: UTC for this new account
    assert_eq!(
        game_date(&person, json!({"at": "2026-09-10T11:59:59"})).await,
        "2026-09-10"
    );
    // or in timezone: Warsaw is UTC+2 in September, so this is 09:59:59Z
    assert_eq!(
        game_date(
            &person,
            json!({"at": "2026-09-10T11:59:59", "timezone": "Europe/Warsaw"})
        )
        .await,
        "2026-09-09"
    );
    // a date is 10:00Z whatever the zone
    assert_eq!(
        clock(
            &person,
            json!({"at": "2026-09-10", "timezone": "Pacific/Kiritimati"})
        )
        .await["game_day"]["starts_at"],
        "2026-09-10T10:00:00Z"
    );
    // the caller's own zone, once set: Tokyo is UTC+9, so 19:00 there is the 10:00Z turn
    success(
        &person
            .tool("elixir_settings", json!({"timezone": "Asia/Tokyo"}))
            .await,
    );
    assert_eq!(
        game_date(&person, json!({"at": "2026-09-10T18:59:59"})).await,
        "2026-09-09"
    );
    assert_eq!(
        game_date(&person, json!({"at": "2026-09-10T19:00"})).await,
        "2026-09-10"
    );
    // the argument wins over the caller's zone
    assert_eq!(
        game_date(
            &person,
            json!({"at": "2026-09-10T18:59:59", "timezone": "UTC"})
        )
        .await,
        "2026-09-10"
    );
    // an agent's zone is its own (UTC until set), not its owner's
    assert_eq!(
        game_date(&server.agent(), json!({"at": "2026-09-10T18:59:59"})).await,
        "2026-09-10"
    );
}

/// The `bad_request` body of `game_clock(args)`.
async fn refused(server: &Server, args: Value) -> Value {
    let body = tool_error(&server.agent().tool("game_clock", args.clone()).await);
    assert_eq!(body["error"]["code"], "bad_request", "{args}: {body}");
    assert_eq!(body["error"]["class"], "input", "{args}: {body}");
    body
}

async fn bad_arguments_are_bad_requests(url: &str) {
    let server = spawn(url).await;
    // not a date or an instant at all: the schema refuses it, naming the argument
    for at in [
        "soon",
        "2026-09-10 10:00",
        "20260910",
        "2026-09-10T10:00:00+2",
    ] {
        let body = refused(&server, json!({"at": at})).await;
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("/at"), "{at}: {body}");
    }
    // shaped like one but no such day, or outside the calendar: the handler refuses it
    for at in [
        "2026-13-10",
        "2026-02-30",
        "2026-09-10T25:00:00Z",
        "9999-12-20",
    ] {
        let body = refused(&server, json!({"at": at})).await;
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("at "), "{at}: {body}");
        assert!(message.contains(at), "{at}: {body}");
        assert!(
            body["error"]["hint"]
                .as_str()
                .unwrap()
                .starts_with("game_clock({\"at\": \"2026-09-18\"})"),
            "{body}"
        );
    }
    // an unknown zone is refused, never read as UTC
    let body = refused(&server, json!({"timezone": "Mars/Olympus_Mons"})).await;
    assert_eq!(
        body["error"]["message"],
        "timezone \"Mars/Olympus_Mons\" is not an IANA time zone."
    );
    assert!(
        body["error"]["hint"]
            .as_str()
            .unwrap()
            .starts_with("game_clock({\"timezone\": \"Europe/Warsaw\"})")
    );
    let body = refused(
        &server,
        json!({"at": "2026-09-10T12:00:00", "timezone": "x".repeat(65)}),
    )
    .await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/timezone"),
        "{body}"
    );
    // an unknown argument, even a plausible one
    for args in [
        json!({"when": "2026-09-10"}),
        json!({"at": "2026-09-10", "season": "current"}),
    ] {
        let body = refused(&server, args).await;
        assert!(
            body["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("remove the others"),
            "{body}"
        );
    }
    // the wrong type
    refused(&server, json!({"at": 1_788_000_000})).await;
}

/// The door's own statements on a service-key door: the agent read with its owner and
/// waiting replies, the hourly rate and daily quota in one statement, the audit row
/// (`cards::statements`).
const KEY_DOOR: [&str; 3] = ["door_agent_by_key_digest", "meter", "insert_audits"];

async fn a_game_clock_call_reads_no_storage(url: &str) {
    let counting: Arc<OnceLock<Arc<CountingStore>>> = Arc::default();
    let held = Arc::clone(&counting);
    let server = spawn_with(
        url,
        Options {
            wrap_store: Some(Box::new(move |store| {
                let wrapped = CountingStore::wrap(store);
                let _ = held.set(Arc::clone(&wrapped));
                wrapped
            })),
            ..Options::default()
        },
    )
    .await;
    let counting = counting.get().expect("wrapped");
    for (client, expected, door) in [
        (server.agent(), KEY_DOOR, "agent"),
        (server.integration(), KEY_DOOR, "integration"),
        (
            server.person(),
            ["door_account", "meter", "insert_audits"],
            "person",
        ),
    ] {
        for args in [json!({}), json!({"at": "2026-09-10T12:00:00"})] {
            server.state.services.audit.flush().await;
            counting.take();
            clock(&client, args.clone()).await;
            server.state.services.audit.flush().await;
            assert_eq!(counting.take(), expected, "{door} {args}");
        }
    }
}

on_both_backends!(
    a_date_is_ten_utc_and_the_game_day_turns_there,
    colosseum_week_and_the_season_roll,
    now_is_the_injected_clock,
    at_with_and_without_an_offset,
    bad_arguments_are_bad_requests,
    a_game_clock_call_reads_no_storage
);
