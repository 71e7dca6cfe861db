//! The real binary's audit lines on standard error: one JSON line per request in
//! tracing-subscriber's JSON shape with `--log-format json` (written directly, without
//! tracing's dispatch), and none when `RUST_LOG` turns the audit target away.

use std::time::Duration;

use serde_json::{Value, json};

use crate::crash::{BinServer, call, demo};

/// The audit lines (`"mcp request"`) in `log`, parsed.
fn audit_lines(log: &str) -> Vec<Value> {
    log.lines()
        .filter(|l| l.contains("\"mcp request\""))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Three `get_play_context` calls on a fresh server with these log settings; the server's
/// log once it shows `wait_for` audit lines (or 10 s passed), and 300 ms more (lines are
/// written every 25 ms).
async fn three_reads(rust_log: &str, wait_for: usize) -> String {
    let dir = testkit::db::TempDir::new("sq-audit-");
    let url = format!("sqlite://{}", dir.path().join("a.db").display());
    let (_, token) = demo(&url).await;
    let server = BinServer::start_logging(&url, &[], dir.path(), "json", rust_log).await;
    let http = reqwest::Client::new();
    for _ in 0..3 {
        let (status, body) = call(&http, &server.url(), &token, "get_play_context", json!({}))
            .await
            .expect("call");
        assert_eq!(status, 200, "{body}");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.log_text();
        let seen = audit_lines(&log).len();
        if seen >= wait_for || tokio::time::Instant::now() > deadline {
            // Long enough for any further line to be written too (flushed every 25 ms).
            tokio::time::sleep(Duration::from_millis(300)).await;
            return server.log_text();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_writes_one_json_audit_line() {
    let log = three_reads("info", 3).await;
    // The line's own bytes: the library's key order, the message first among the fields.
    assert!(
        log.lines()
            .filter(|l| l.starts_with("{\"timestamp\":\"")
                && l.contains(
                    ",\"level\":\"INFO\",\"fields\":{\"message\":\"mcp request\",\"request_id\":\""
                )
                && l.ends_with("},\"target\":\"mcp_door::audit\"}"))
            .count()
            >= 3,
        "{log}"
    );
    let lines = audit_lines(&log);
    let reads: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["tool"] == "get_play_context")
        .collect();
    assert_eq!(reads.len(), 3, "{log}");
    for line in reads {
        let object = line.as_object().expect("an object");
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(keys, ["fields", "level", "target", "timestamp"], "{line}");
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["target"], "mcp_door::audit");
        let f = &line["fields"];
        assert_eq!(f["message"], "mcp request");
        assert_eq!(f["door"], "/play/mcp");
        assert_eq!(f["kind"], "player");
        assert_eq!(f["method"], "tools/call");
        assert_eq!(f["status"], 200);
        assert_eq!(f["error"], "-");
        assert!(f["bytes"].as_u64().is_some_and(|b| b > 0), "{line}");
        assert!(f["duration_ms"].as_u64().is_some(), "{line}");
        assert!(
            f["request_id"]
                .as_str()
                .is_some_and(|id| id.parse::<uuid::Uuid>().is_ok()),
            "{line}"
        );
        let stamp = line["timestamp"].as_str().expect("a timestamp");
        assert!(
            stamp.len() == "2026-12-07T03:11:00.850960Z".len() && stamp.ends_with('Z'),
            "{stamp}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_log_turns_the_audit_line_away() {
    let log = three_reads("info,mcp_door::audit=warn", 0).await;
    assert!(audit_lines(&log).is_empty(), "{log}");
    // The server did log at info (its start), so the filter is what kept the lines out.
    assert!(log.contains("\"level\":\"INFO\""), "{log}");
}
