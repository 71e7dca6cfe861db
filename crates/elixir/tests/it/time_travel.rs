//! The real `elixir serve` binary (built by the tests with the `test-clock` feature) under
//! `ELIXIR_TEST_CLOCK_FILE`: its clock is the real clock plus the file's seconds, so a test
//! outside the process moves the server's time, and it never moves backwards.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

fn elixir(db: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_elixir"));
    c.arg("--database-url").arg(db);
    c
}

async fn as_of(http: &reqwest::Client, door: &str, key: &str) -> i64 {
    let body: Value = http
        .post(door)
        .bearer_auth(key)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "game_clock", "arguments": {}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let at = body["result"]["structuredContent"]["meta"]["as_of"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"));
    at.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_clock_file_moves_the_servers_time() {
    let dir = testkit::db::TempDir::new("elixir-clock-");
    let db = format!("sqlite://{}", dir.path().join("e.db").display());
    let offset = dir.path().join("offset");
    std::fs::write(&offset, "172800").unwrap();
    let out = elixir(&db)
        .args(["account", "create", "--email", "clock@example.com"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = elixir(&db)
        .args([
            "agent",
            "create",
            "--owner",
            "clock@example.com",
            "--name",
            "Clock",
            "--json",
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let issued: Value = serde_json::from_slice(&out.stdout).unwrap();
    let key = issued["service_key"].as_str().unwrap().to_owned();
    let public_id = issued["public_id"].as_str().unwrap().to_owned();

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let _server = elixir(&db)
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--public-url",
            &base,
        ])
        .arg("--mail-outbox")
        .arg(dir.path().join("outbox"))
        .env("ELIXIR_TEST_CLOCK_FILE", &offset)
        .env(
            "ELIXIR_OAUTH_SECRET",
            "time-travel-secret-time-travel-secret",
        )
        .env_remove("ELIXIR_CR_API_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    for _ in 0..100 {
        if http
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let door = format!("{base}/a/{public_id}/mcp");
    let real = jiff::Timestamp::now().as_millisecond();
    let shifted = as_of(&http, &door, &key).await;
    let two_days = 172_800_000;
    assert!(
        (shifted - real - two_days).abs() < 60_000,
        "two days ahead: {shifted} vs {real}"
    );
    // A day more, seen within the re-read interval.
    std::fs::write(&offset, "259200").unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    let later = as_of(&http, &door, &key).await;
    assert!(
        later - shifted >= 86_400_000 - 1_000,
        "{later} vs {shifted}"
    );
    // Never backwards.
    std::fs::write(&offset, "0").unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(as_of(&http, &door, &key).await >= later);
}
