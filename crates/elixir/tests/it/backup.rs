//! `elixir backup --to FILE`, the real binary, while `elixir serve` files feedback on the same
//! SQLite file: the copy holds every report acknowledged before the backup began exactly once,
//! only reports that were sent, and a server runs on it. An existing target and PostgreSQL are
//! refused and write nothing.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use tokio::sync::watch;

fn elixir(db: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_elixir"));
    c.arg("--database-url").arg(db).env("RUST_LOG", "warn");
    c
}

/// `elixir serve` on `db` at a free port, killed when dropped: the child and its base URL.
async fn serve(db: &str, dir: &std::path::Path) -> (tokio::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let child = elixir(db)
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--public-url",
            &base,
        ])
        .arg("--mail-outbox")
        .arg(dir.join("outbox"))
        .env(
            "ELIXIR_OAUTH_SECRET",
            "backup-test-secret-backup-test-secret",
        )
        .env_remove("ELIXIR_CR_API_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    for _ in 0..300 {
        if http
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("elixir serve did not start");
}

/// Files "backup probe N" reports one after another until the transport fails: the
/// acknowledged numbers with their feedback ids.
async fn stream(door: String, key: String, progress: watch::Sender<usize>) -> Vec<(usize, i64)> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut acked = Vec::new();
    for i in 0.. {
        let sent = http
            .post(&door)
            .bearer_auth(&key)
            .header("Accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "elixir_feedback",
                           "arguments": {"message": format!("backup probe {i}")}}}))
            .send()
            .await;
        let Ok(response) = sent else { return acked };
        let Ok(body) = response.json::<Value>().await else {
            return acked;
        };
        let id = body["result"]["structuredContent"]["feedback"]["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("feedback {i}: {body}"));
        acked.push((i, id));
        progress.send_replace(acked.len());
        // under the door's per-credential rate
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    acked
}

async fn backup(db: &str, to: &std::path::Path) -> std::process::Output {
    elixir(db)
        .args(["backup", "--to"])
        .arg(to)
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_serving_holds_every_acknowledged_report_once() {
    let dir = testkit::db::TempDir::new("elixir-backup-");
    let db = format!("sqlite://{}", dir.path().join("live.db").display());
    let copy = dir.path().join("copy.db");
    let out = elixir(&db)
        .args(["account", "create", "--email", "backup@example.com"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = elixir(&db)
        .args([
            "agent",
            "create",
            "--owner",
            "backup@example.com",
            "--name",
            "Backup",
            "--json",
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let issued: Value = serde_json::from_slice(&out.stdout).unwrap();
    let key = issued["service_key"].as_str().unwrap().to_owned();
    let public_id = issued["public_id"].as_str().unwrap().to_owned();
    let (server, base) = serve(&db, dir.path()).await;
    let door = format!("{base}/a/{public_id}/mcp");

    let (progress, acks) = watch::channel(0usize);
    let task = tokio::spawn(stream(door, key.clone(), progress));
    let wait = |n: usize| {
        let mut acks = acks.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(60), acks.wait_for(|a| *a >= n))
                .await
                .is_ok_and(|r| r.is_ok())
        }
    };
    assert!(wait(12).await, "the stream did not start");
    let before = *acks.borrow();
    let out = backup(&db, &copy).await;
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("backed up to "));
    let after = *acks.borrow();
    assert!(
        wait(after + 6).await,
        "the server stopped answering after the backup"
    );
    drop(server);
    let acked = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("the stream stops when the server dies")
        .unwrap();

    // the copy: every report acknowledged before the backup began, once; nothing unsent
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", copy.display()))
        .await
        .unwrap();
    let rows: Vec<(i64, String)> = sqlx::query_as("SELECT id, message FROM feedback")
        .fetch_all(&pool)
        .await
        .unwrap();
    let integrity: (String,) = sqlx::query_as("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(integrity.0, "ok");
    pool.close().await;
    let mut seen: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (id, message) in rows {
        seen.entry(message).or_default().push(id);
    }
    for (i, id) in &acked[..before] {
        assert_eq!(
            seen.get(&format!("backup probe {i}")),
            Some(&vec![*id]),
            "report {i} in the copy exactly once, under its id"
        );
    }
    assert!(
        (before..=after + 1).contains(&seen.len()),
        "{} reports",
        seen.len()
    );
    for message in seen.keys() {
        let n: usize = message
            .strip_prefix("backup probe ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a report nobody sent: {message}"));
        assert!(n < acked.len() + 1);
    }

    // a server runs on the copy, and the agent's key works there
    let restored = format!("sqlite://{}", copy.display());
    let (_restored, base) = serve(&restored, dir.path()).await;
    let body: Value = reqwest::Client::new()
        .post(format!("{base}/a/{public_id}/mcp"))
        .bearer_auth(&key)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "elixir_my_feedback", "arguments": {"limit": 50}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let items = body["result"]["structuredContent"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(items.len(), seen.len());

    // refused: an existing target (unchanged), and PostgreSQL (pg_dump is the way)
    let taken = std::fs::read(&copy).unwrap();
    let out = backup(&db, &copy).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists already"));
    assert_eq!(std::fs::read(&copy).unwrap(), taken);
    let to = dir.path().join("never.db");
    let out = backup("postgres://postgres@127.0.0.1:1/none", &to).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("pg_dump"));
    assert!(!to.exists());
}
