//! `sidequest backup --to FILE`, the real binary, while `sidequest serve` commits a stream of
//! turns to the same SQLite file: the copy restores (a server runs on it) with every commit
//! acknowledged before the backup began exactly once, nothing half-written, and the server
//! kept committing throughout. Refusals (an existing target, PostgreSQL, an in-memory
//! database, a missing file) write nothing.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sidequest::store;
use tokio::process::Command;

use crate::crash::{
    BIN, BinServer, PER_TURN, call, demo, op_id, stream, tool_ok, turn_args, whole_journal,
};

const ARGS: [&str; 4] = [
    "--token-rate-per-minute",
    "100000",
    "--token-concurrency",
    "8",
];

/// `sidequest --database-url URL backup --to TO`: (success, stdout, stderr).
async fn backup(url: &str, to: &Path) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(["--database-url", url, "backup", "--to"])
        .arg(to)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("run sidequest backup");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_mid_stream_restores_every_acknowledged_commit_once() {
    let dir = testkit::db::TempDir::new("sq-backup-");
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    let copy = dir.path().join("copy.db");
    let (assignment, token) = demo(&url).await;
    let server = BinServer::start(&url, &ARGS, dir.path()).await;

    let (progress, mut acks) = tokio::sync::watch::channel(0usize);
    let task = tokio::spawn(stream(server.url(), token.clone(), 0, progress));
    let wait = |n: usize, acks: &mut tokio::sync::watch::Receiver<usize>| {
        let mut acks = acks.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(30), acks.wait_for(|a| *a >= n))
                .await
                .is_ok_and(|r| r.is_ok())
        }
    };
    assert!(wait(20, &mut acks).await, "{}", server.log_text());
    let before = *acks.borrow();
    let (ok, stdout, stderr) = backup(&url, &copy).await;
    assert!(ok, "backup failed: {stderr}");
    assert!(stdout.starts_with("backed up to "), "{stdout}");
    let after = *acks.borrow();
    // the server went on committing during and after the copy
    assert!(wait(after + 10, &mut acks).await, "{}", server.log_text());
    server.kill().await;
    let end = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("the stream stops when the server dies")
        .expect("stream task");
    assert!(end.acked.len() >= after + 10);

    // a second backup to the same file is refused and leaves the copy as it was
    let taken = std::fs::read(&copy).unwrap();
    let (ok, _, stderr) = backup(&url, &copy).await;
    assert!(!ok);
    assert!(stderr.contains("exists already"), "{stderr}");
    assert_eq!(std::fs::read(&copy).unwrap(), taken);
    assert!(!dir.path().join("copy.db.partial").exists());

    // restore: a server on the copy
    let restored_url = format!("sqlite://{}", copy.display());
    let restored = BinServer::start(&restored_url, &ARGS, dir.path()).await;
    let http = reqwest::Client::new();
    let (status, body) = call(
        &http,
        &restored.url(),
        &token,
        "get_play_context",
        json!({}),
    )
    .await
    .expect("context");
    let ctx = tool_ok(status, &body).unwrap_or_else(|| panic!("context: {body}"));
    let version = ctx["version"].as_i64().unwrap();
    let commits = usize::try_from(version - 1).unwrap();
    assert!(
        (before..=after + 1).contains(&commits),
        "the copy holds {commits} commits; {before} were acknowledged when it began, {after} when it ended"
    );
    // nothing half-written: journal, consequences and receipts agree with the version
    let (total, entries) = whole_journal(&http, &restored.url(), &token).await;
    assert_eq!(total, version - 1);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["version"], json!(i + 2));
        assert_eq!(e["player_action"], format!("act {i}"));
    }
    let store = store::connect(&restored_url, &mcp_door::DEFAULT_POOL)
        .await
        .expect("open the copy");
    assert_eq!(
        store
            .recent_consequences(assignment, 1_000_000)
            .await
            .unwrap()
            .len(),
        commits * PER_TURN
    );
    for i in 0..commits {
        let receipt = store
            .receipt(assignment, op_id(i).parse().unwrap())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no receipt of commit {i}"));
        assert_eq!(receipt.version, i64::try_from(i).unwrap() + 2);
    }
    // every commit acknowledged before the backup began is there exactly once: its replay on
    // the copy answers its original receipt
    for (i, result) in &end.acked[..before] {
        let (status, body) = call(
            &http,
            &restored.url(),
            &token,
            "commit_play_turn",
            turn_args(*i),
        )
        .await
        .expect("replay");
        let replay: Value = tool_ok(status, &body).unwrap_or_else(|| panic!("replay {i}: {body}"));
        let mut expected = result.clone();
        expected["replayed"] = json!(true);
        assert_eq!(replay, expected, "replay of commit {i} on the copy");
    }
    // and the copy goes on: the next commit lands at the next version
    let (status, body) = call(
        &http,
        &restored.url(),
        &token,
        "commit_play_turn",
        turn_args(commits),
    )
    .await
    .expect("next commit");
    let next = tool_ok(status, &body).unwrap_or_else(|| panic!("next commit: {body}"));
    assert_eq!(next["version"], json!(version + 1));
    assert_eq!(next["replayed"], json!(false));
    restored.kill().await;
    eprintln!(
        "backup: {before} acknowledged at its start, {after} at its end; the copy holds {commits}"
    );
}

#[tokio::test]
async fn backups_that_cannot_be_taken_write_nothing() {
    let dir = testkit::db::TempDir::new("sq-backup-refused-");
    let to = dir.path().join("never.db");
    for (url, says) in [
        ("postgres://postgres@127.0.0.1:1/none", "pg_dump"),
        ("sqlite::memory:", "in-memory"),
        (
            &*format!("sqlite://{}", dir.path().join("missing.db").display()),
            "no database at",
        ),
    ] {
        let (ok, _, stderr) = backup(url, &to).await;
        assert!(!ok, "{url}");
        assert!(stderr.contains(says), "{url}: {stderr}");
        assert!(!to.exists(), "{url}");
        assert!(!dir.path().join("never.db.partial").exists(), "{url}");
    }
    // a folder that does not exist
    let url = format!("sqlite://{}", dir.path().join("live.db").display());
    demo(&url).await;
    let (ok, _, stderr) = backup(&url, &dir.path().join("no/such/folder/x.db")).await;
    assert!(!ok);
    assert!(stderr.contains("cannot write"), "{stderr}");
}
