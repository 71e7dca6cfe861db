//! Crash safety of the real binary: a stream of commits with known operation ids, `SIGKILL` in
//! the middle of it, a restart on the same database — and every acknowledged commit is there
//! exactly once, nothing is half-written, and the operation in flight at the kill is either
//! wholly present or wholly absent. On SQLite always; on PostgreSQL when configured.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidequest::store::{self, SharedStore};
use tokio::process::{Child, Command};
use uuid::Uuid;

/// The `sidequest` binary of this build.
pub const BIN: &str = env!("CARGO_BIN_EXE_sidequest");

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `sidequest --database-url URL demo --json --assignments 1`: the assignment id and token.
pub async fn demo(database_url: &str) -> (Uuid, String) {
    let out = Command::new(BIN)
        .args([
            "--database-url",
            database_url,
            "demo",
            "--json",
            "--assignments",
            "1",
        ])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run sidequest demo");
    assert!(
        out.status.success(),
        "sidequest demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let created: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "demo --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let a = &created["assignments"][0];
    (
        a["id"].as_str().unwrap().parse().unwrap(),
        a["token"].as_str().unwrap().to_owned(),
    )
}

/// A running `sidequest serve` child process, killed (SIGKILL) when dropped.
pub struct BinServer {
    pub child: Child,
    pub database_url: String,
    pub addr: SocketAddr,
    pub log: PathBuf,
}

impl BinServer {
    /// `sidequest --database-url URL serve --bind 127.0.0.1:<free port> ARGS…`, ready when
    /// `/healthz` answers; stderr goes to `<log_dir>/serve-<port>.log`.
    pub async fn start(database_url: &str, args: &[&str], log_dir: &Path) -> Self {
        Self::start_logging(database_url, args, log_dir, "text", "warn").await
    }

    /// [`BinServer::start`] with `--log-format log_format` and `RUST_LOG=rust_log`.
    pub async fn start_logging(
        database_url: &str,
        args: &[&str],
        log_dir: &Path,
        log_format: &str,
        rust_log: &str,
    ) -> Self {
        let mut last_log = String::new();
        // A port picked free can be taken before the child binds it: try a few.
        for _ in 0..3 {
            let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
            let log = log_dir.join(format!("serve-{}.log", addr.port()));
            let stderr = std::fs::File::create(&log).expect("log file");
            let bind = addr.to_string();
            let mut command = Command::new(BIN);
            command
                .args(["--database-url", database_url, "--log-format", log_format])
                .args(["serve", "--bind", &bind])
                .args(args)
                .env("RUST_LOG", rust_log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .kill_on_drop(true);
            let child = command.spawn().expect("spawn sidequest serve");
            let mut server = Self {
                child,
                database_url: database_url.to_owned(),
                addr,
                log,
            };
            if server.wait_ready().await {
                return server;
            }
            last_log = server.log_text();
        }
        panic!("sidequest serve did not start; last log:\n{last_log}");
    }

    /// Polls `/healthz` for up to 30 s; false if the child exits first.
    async fn wait_ready(&mut self) -> bool {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let url = format!("http://{}/healthz", self.addr);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while tokio::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(r) = http.get(&url).send().await
                && r.status() == 200
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    pub fn url(&self) -> String {
        format!("http://{}/play/mcp", self.addr)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, and wait for the process to be gone.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("kill");
    }
}

/// The operation id of the `i`-th commit of the stream.
pub(crate) fn op_id(i: usize) -> String {
    format!("30000000-0000-4000-8000-{i:012}")
}

/// Consequences per turn of the stream.
pub(crate) const PER_TURN: usize = 2;

/// The exact arguments of the `i`-th commit (it expects version `i + 1`, commits `i + 2`).
pub(crate) fn turn_args(i: usize) -> Value {
    json!({
        "operation_id": op_id(i),
        "expected_version": i + 1,
        "player_action": format!("act {i}"),
        "narration": format!("narrate {i}"),
        "memory_markdown": format!("# Current state\nmemory after turn {i}\n"),
        "current_scene": if i.is_multiple_of(2) { "harbor" } else { "lighthouse" },
        "consequences": (0..PER_TURN).map(|c| json!({
            "category": "discovery",
            "description": format!("turn {i} consequence {c}"),
        })).collect::<Vec<_>>(),
    })
}

/// One tool call that may fail at the transport (the server may be gone): `Err` then.
pub(crate) async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    arguments: Value,
) -> Result<(u16, Value), String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    let resp = http
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok((status, value))
}

/// The parsed result of a successful (non-`isError`) tool call, or `None`.
pub(crate) fn tool_ok(status: u16, body: &Value) -> Option<Value> {
    let result = body.get("result")?;
    if status != 200 || result["isError"] == json!(true) {
        return None;
    }
    serde_json::from_str(result["content"][0]["text"].as_str()?).ok()
}

/// What the stream saw before the server went away.
pub(crate) struct StreamEnd {
    /// Acknowledged commits: (index, result).
    pub acked: Vec<(usize, Value)>,
    /// The index it was sending when the transport failed.
    pub in_flight: usize,
}

/// Commits `from`, `from + 1`, … one after another until the transport fails; counts
/// acknowledgements in `progress`. Any answer other than a commit or a transport failure
/// panics.
pub(crate) async fn stream(
    url: String,
    token: String,
    from: usize,
    progress: tokio::sync::watch::Sender<usize>,
) -> StreamEnd {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut acked = Vec::new();
    for i in from..from + 100_000 {
        match call(&http, &url, &token, "commit_play_turn", turn_args(i)).await {
            Ok((status, body)) => {
                let result = tool_ok(status, &body)
                    .unwrap_or_else(|| panic!("commit {i} answered {status}: {body}"));
                acked.push((i, result));
                progress.send_replace(acked.len());
            }
            Err(_) => {
                return StreamEnd {
                    acked,
                    in_flight: i,
                };
            }
        }
    }
    panic!("the stream was never interrupted");
}

/// Reads the whole player journal through the tool, page by page.
pub(crate) async fn whole_journal(
    http: &reqwest::Client,
    url: &str,
    token: &str,
) -> (i64, Vec<Value>) {
    let mut entries = Vec::new();
    loop {
        let (status, body) = call(
            http,
            url,
            token,
            "read_play_journal",
            json!({"offset": entries.len(), "limit": 20}),
        )
        .await
        .expect("journal");
        let page = tool_ok(status, &body).unwrap_or_else(|| panic!("journal: {body}"));
        let got = page["entries"].as_array().unwrap().clone();
        let total = page["total"].as_i64().unwrap();
        let done = got.is_empty();
        entries.extend(got);
        if done || entries.len() as i64 >= total {
            return (total, entries);
        }
    }
}

/// Checks the state after a restart and settles the in-flight operation; answers its
/// acknowledgement (as a first commit would have read).
async fn verify(
    server: &BinServer,
    store: &SharedStore,
    assignment: Uuid,
    token: &str,
    acked: &[(usize, Value)],
    in_flight: usize,
) -> Value {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = server.url();
    let k = acked.len();
    // every commit before the one in flight was acknowledged, in order, at its own version
    for (n, (i, result)) in acked.iter().enumerate() {
        assert_eq!(*i, n, "acknowledgements out of order");
        assert_eq!(result["version"], json!(n + 2));
        assert_eq!(result["replayed"], false);
    }
    assert_eq!(in_flight, k);

    let (status, body) = call(&http, &url, token, "get_play_context", json!({}))
        .await
        .expect("context");
    let ctx = tool_ok(status, &body).unwrap_or_else(|| panic!("context: {body}"));
    let version = ctx["version"].as_i64().unwrap();
    let in_flight_committed = match usize::try_from(version).unwrap() {
        v if v == k + 1 => false,
        v if v == k + 2 => true,
        v => panic!("version {v} after {k} acknowledged commits"),
    };
    let commits = usize::try_from(version - 1).unwrap();

    // nothing half-written: journal, consequences, receipts and memory agree with the version
    let (total, entries) = whole_journal(&http, &url, token).await;
    assert_eq!(total, version - 1);
    let versions: Vec<i64> = entries
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, (2..=version).collect::<Vec<_>>());
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["kind"], "turn");
        assert_eq!(e["player_action"], format!("act {i}"));
        assert_eq!(e["narration"], format!("narrate {i}"));
    }
    let all_events = store.journal(assignment, false).await.unwrap();
    assert_eq!(all_events.len(), commits);
    let consequences = store
        .recent_consequences(assignment, 1_000_000)
        .await
        .unwrap();
    assert_eq!(consequences.len(), commits * PER_TURN);
    for v in 2..=version {
        assert_eq!(
            consequences.iter().filter(|c| c.version == v).count(),
            PER_TURN,
            "consequences of version {v}"
        );
    }
    for i in 0..commits {
        let receipt = store
            .receipt(assignment, op_id(i).parse().unwrap())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no receipt of commit {i}"));
        assert_eq!(receipt.version, i64::try_from(i).unwrap() + 2);
    }
    assert!(
        store
            .receipt(assignment, op_id(commits).parse().unwrap())
            .await
            .unwrap()
            .is_none()
    );
    if commits > 0 {
        let last = turn_args(commits - 1);
        assert_eq!(ctx["memory_markdown"], last["memory_markdown"]);
        assert_eq!(ctx["assignment"]["current_scene"], last["current_scene"]);
        assert_eq!(ctx["recap"], last["narration"]);
    }

    // every acknowledged commit is there exactly once: its replay is its original receipt
    for (i, result) in acked {
        let (status, body) = call(&http, &url, token, "commit_play_turn", turn_args(*i))
            .await
            .expect("replay");
        let replay = tool_ok(status, &body).unwrap_or_else(|| panic!("replay {i}: {body}"));
        let mut expected = result.clone();
        expected["replayed"] = json!(true);
        assert_eq!(replay, expected, "replay of acknowledged commit {i}");
    }

    // the operation in flight is all or nothing: replaying it either answers its receipt or
    // commits it now, at the next version
    let (status, body) = call(&http, &url, token, "commit_play_turn", turn_args(in_flight))
        .await
        .expect("in-flight retry");
    let retry = tool_ok(status, &body).unwrap_or_else(|| panic!("in-flight retry: {body}"));
    assert_eq!(retry["version"], json!(k + 2));
    assert_eq!(retry["replayed"], json!(in_flight_committed));
    assert_eq!(retry["consequences"].as_array().unwrap().len(), PER_TURN);
    let (total, _) = whole_journal(&http, &url, token).await;
    assert_eq!(total, i64::try_from(k + 1).unwrap());
    let backend = if server.database_url.starts_with("sqlite:") {
        "sqlite"
    } else {
        "postgres"
    };
    eprintln!(
        "crash ({backend}): {k} acknowledged; the operation in flight was {}",
        if in_flight_committed {
            "committed (replayed)"
        } else {
            "absent (committed on retry)"
        }
    );
    let mut first = retry;
    first["replayed"] = json!(false);
    first
}

async fn kill_mid_stream_and_restart(database_url: &str, dir: &Path) {
    let (assignment, token) = demo(database_url).await;
    let args = [
        "--token-rate-per-minute",
        "100000",
        "--token-concurrency",
        "8",
    ];
    let mut server = BinServer::start(database_url, &args, dir).await;
    let store = store::connect(database_url, &mcp_door::DEFAULT_POOL)
        .await
        .expect("connect");
    let mut acked: Vec<(usize, Value)> = Vec::new();
    let mut next = 0;
    // Rounds of: stream, SIGKILL after some acknowledgements plus a fraction of one commit's
    // time (so the kill lands at different points of a request), restart, verify.
    for round in 0..12 {
        let fraction = f64::from(round) / 10.0;
        let (progress, mut acks) = tokio::sync::watch::channel(0usize);
        let started = Instant::now();
        let task = tokio::spawn(stream(server.url(), token.clone(), next, progress));
        let target = 5;
        // (the watch's `Ref` is dropped at once: holding it would block the stream's sender)
        let reached = matches!(
            tokio::time::timeout(Duration::from_secs(20), acks.wait_for(|n| *n >= target)).await,
            Ok(Ok(_))
        );
        assert!(
            reached,
            "the stream did not reach {target} commits in 20 s; server log:\n{}",
            server.log_text()
        );
        let per_commit = started.elapsed().div_f64(target as f64);
        tokio::time::sleep(per_commit.mul_f64(fraction)).await;
        server.kill().await;
        let end = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("the stream stops when the server dies")
            .expect("stream task");
        assert!(end.acked.len() >= target);
        acked.extend(end.acked);
        server = BinServer::start(database_url, &args, dir).await;
        // the retried in-flight commit is acknowledged now
        let settled = verify(&server, &store, assignment, &token, &acked, end.in_flight).await;
        acked.push((end.in_flight, settled));
        next = end.in_flight + 1;
    }
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_survives_sigkill_mid_stream() {
    let dir = testkit::db::TempDir::new("sq-crash-");
    let url = format!("sqlite://{}", dir.path().join("c.db").display());
    kill_mid_stream_and_restart(&url, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_survives_sigkill_mid_stream() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let dir = testkit::db::TempDir::new("sq-crash-pg-");
    kill_mid_stream_and_restart(&url, dir.path()).await;
}
