//! Dependencies going away and coming back, without a restart: PostgreSQL stopped and
//! started, PostgreSQL behind a network black hole, Redis likewise, SQLite locked by another
//! connection and its disk full. While the fault lasts requests get a prompt 503 with
//! `Retry-After`; once it ends service resumes by itself within seconds; and under a commit
//! stream every acknowledged commit is there exactly once, nothing half-written (the checks
//! of `crash.rs`, on the in-process server).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sidequest::app::ServeConfig;
use testkit::proxy::Proxy;
use uuid::Uuid;

use crate::crash::{PER_TURN, call, op_id, tool_ok, turn_args, whole_journal};
use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_unavailable_is_503() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&url, 5432).await;
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.db.acquire_timeout = Duration::from_millis(500);
    let server = support::spawn_with(&via, config, 11).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    assert_eq!(
        client.tool("get_play_context", json!({})).await.json()["version"],
        1
    );

    proxy.cut().await;
    for method in ["initialize", "tools/list"] {
        let r = client
            .request(method, json!({"protocolVersion": "2025-11-25"}))
            .await;
        assert_eq!(r.status, 503, "{method}: {}", r.body);
        assert_eq!(r.header("retry-after"), "1");
        assert!(
            !r.body.to_string().contains("127.0.0.1"),
            "a 5xx must not carry internals: {}",
            r.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_unavailable_is_503() {
    let Some(redis) = testkit::db::redis_url().await else {
        eprintln!("skipped: TEST_REDIS_URL not set");
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&redis, 6379).await;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.redis_url = Some(via);
    config.server.redis_prefix = format!("test-outage:{}", uuid::Uuid::new_v4().simple());
    let server = support::spawn_with(&url, config, 12).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    assert_eq!(client.request("tools/list", json!({})).await.status, 200);
    proxy.cut().await;
    let r = client.request("tools/list", json!({})).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("retry-after"), "1");
    // a bad token is still refused by authentication before admission is asked
    assert_eq!(
        server
            .client("sqp_0000000000000000000000000000000000000000")
            .request("tools/list", json!({}))
            .await
            .status,
        401
    );
}

/// How long a request may take to be refused while a fault lasts: the test's client-side
/// deadlines are 1 s; the rest is slack for a loaded 2-core machine.
const REFUSED_WITHIN: Duration = Duration::from_secs(4);

/// How long after a fault ends service must be back, by itself.
const RECOVERED_WITHIN: Duration = Duration::from_secs(5);

/// What a commit stream saw.
struct Stream {
    /// Acknowledged commits in order: (index, result).
    acked: Vec<(usize, Value)>,
    /// Attempts refused with 503 and `Retry-After`, and the longest any took to be answered.
    refused: usize,
    slowest_refusal: Duration,
    /// When each acknowledgement arrived.
    acked_at: Vec<Instant>,
}

/// Commits 0, 1, 2, … one after another, retrying an attempt refused with 503 (it must carry
/// `Retry-After`) under the same operation id, until `stop` is set; every other answer fails
/// the test. Acknowledgements are counted in `progress`.
async fn commit_stream(
    client: testkit::mcp::Client,
    stop: Arc<AtomicBool>,
    progress: tokio::sync::watch::Sender<usize>,
) -> Stream {
    let mut out = Stream {
        acked: Vec::new(),
        refused: 0,
        slowest_refusal: Duration::ZERO,
        acked_at: Vec::new(),
    };
    for i in 0.. {
        loop {
            let started = Instant::now();
            let r = client.tool("commit_play_turn", turn_args(i)).await;
            if let Some(result) = tool_ok(r.status, &r.body) {
                out.acked.push((i, result));
                out.acked_at.push(Instant::now());
                progress.send_replace(out.acked.len());
                break;
            }
            assert_eq!(r.status, 503, "commit {i}: {}", r.body);
            let retry: u64 = r.header("retry-after").parse().expect("Retry-After");
            assert!(retry >= 1);
            out.refused += 1;
            out.slowest_refusal = out.slowest_refusal.max(started.elapsed());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    out
}

/// Every acknowledged commit is there exactly once and nothing else is: versions, journal,
/// consequences, receipts and memory agree, and each acknowledgement replays as itself.
async fn exactly_once(
    server: &support::Server,
    token: &str,
    assignment: Uuid,
    acked: &[(usize, Value)],
) {
    let n = acked.len();
    for (k, (i, result)) in acked.iter().enumerate() {
        assert_eq!(*i, k, "acknowledgements out of order");
        assert_eq!(result["version"], json!(k + 2), "commit {k}");
    }
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = server.url();
    let (total, entries) = whole_journal(&http, &url, token).await;
    assert_eq!(total, n as i64);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["version"], json!(i + 2));
        assert_eq!(e["player_action"], format!("act {i}"));
    }
    let store = &server.store;
    assert_eq!(store.journal(assignment, false).await.unwrap().len(), n);
    let consequences = store
        .recent_consequences(assignment, 1_000_000)
        .await
        .unwrap();
    assert_eq!(
        consequences.len(),
        n * PER_TURN,
        "half-written consequences"
    );
    for i in 0..n {
        let receipt = store
            .receipt(assignment, op_id(i).parse().unwrap())
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no receipt of commit {i}"));
        assert_eq!(receipt.version, i as i64 + 2);
    }
    assert!(
        store
            .receipt(assignment, op_id(n).parse().unwrap())
            .await
            .unwrap()
            .is_none()
    );
    for (i, result) in acked {
        let (status, body) = call(&http, &url, token, "commit_play_turn", turn_args(*i))
            .await
            .expect("replay");
        let mut replay = tool_ok(status, &body).unwrap_or_else(|| panic!("replay {i}: {body}"));
        assert_eq!(replay["replayed"], true);
        let mut first = result.clone();
        first["replayed"] = json!(null);
        replay["replayed"] = json!(null);
        assert_eq!(replay, first, "replay of acknowledged commit {i}");
    }
}

/// A fault staged by a test: `begin` starts it, `end` ends it.
trait Fault {
    async fn begin(&mut self);
    async fn end(&mut self);
}

/// Runs a commit stream on `server`, stages `fault` once 3 commits are acknowledged, keeps
/// it for `hold`, ends it, and waits for 3 more; then checks the refusals were prompt 503s,
/// service came back by itself within [`RECOVERED_WITHIN`], and [`exactly_once`].
async fn stream_through(
    name: &str,
    server: &support::Server,
    fault: &mut impl Fault,
    hold: Duration,
) {
    let world = support::world(server, 1).await;
    let (assignment, token) = (&world.assignments[0].0, world.assignments[0].1.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let (progress, mut acks) = tokio::sync::watch::channel(0usize);
    let task = tokio::spawn(commit_stream(
        server.client(&token),
        Arc::clone(&stop),
        progress,
    ));
    let wait = |acks: &mut tokio::sync::watch::Receiver<usize>, at_least: usize| {
        let mut acks = acks.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(20), acks.wait_for(|n| *n >= at_least))
                .await
                .expect("the stream stalled")
                .map(|n| *n)
                .expect("stream")
        }
    };
    wait(&mut acks, 3).await;
    fault.begin().await;
    let before = *acks.borrow();
    tokio::time::sleep(hold).await;
    let during = *acks.borrow() - before;
    fault.end().await;
    let ended = Instant::now();
    let resumed_at = *acks.borrow();
    wait(&mut acks, resumed_at + 3).await;
    stop.store(true, Ordering::Relaxed);
    let stream = task.await.expect("stream task");
    assert!(
        stream.refused > 0,
        "{name}: nothing was refused during the fault"
    );
    assert!(
        stream.slowest_refusal < REFUSED_WITHIN,
        "{name}: a refusal took {:?}",
        stream.slowest_refusal
    );
    let first_after = stream.acked_at[resumed_at];
    let recovery = first_after.saturating_duration_since(ended);
    assert!(
        recovery < RECOVERED_WITHIN,
        "{name}: recovered after {recovery:?}"
    );
    eprintln!(
        "fault {name}: {} commits acknowledged, {during} during the {hold:?} fault, {} attempts \
         refused with 503 (slowest {:?}), first commit {recovery:?} after the fault ended",
        stream.acked.len(),
        stream.refused,
        stream.slowest_refusal,
    );
    exactly_once(server, &token, assignment.id, &stream.acked).await;
}

/// PostgreSQL behind a proxy, the server's timeouts short (1 s to acquire, 1 s per
/// statement).
async fn postgres_behind() -> Option<(Proxy, support::Server)> {
    let url = testkit::db::fresh_postgres().await?;
    let (proxy, via) = Proxy::in_front_of(&url, 5432).await;
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.db.acquire_timeout = Duration::from_secs(1);
    config.server.db.query_timeout = Duration::from_secs(1);
    let server = support::spawn_with(&via, config, 13).await;
    Some((proxy, server))
}

struct ProxyFault<'a> {
    proxy: &'a Proxy,
    black_hole: bool,
}

impl Fault for ProxyFault<'_> {
    async fn begin(&mut self) {
        if self.black_hole {
            self.proxy.black_hole().await;
        } else {
            self.proxy.cut().await;
        }
    }
    async fn end(&mut self) {
        self.proxy.resume().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_and_started_under_a_commit_stream() {
    let Some((proxy, server)) = postgres_behind().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let mut fault = ProxyFault {
        proxy: &proxy,
        black_hole: false,
    };
    stream_through(
        "postgres cut",
        &server,
        &mut fault,
        Duration::from_millis(1500),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_black_hole_under_a_commit_stream() {
    let Some((proxy, server)) = postgres_behind().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let mut fault = ProxyFault {
        proxy: &proxy,
        black_hole: true,
    };
    stream_through(
        "postgres black hole",
        &server,
        &mut fault,
        Duration::from_millis(2500),
    )
    .await;
}

/// A SQLite server whose busy timeout is short (300 ms), on the file `path`.
async fn sqlite_at(path: &Path) -> support::Server {
    let mut config = ServeConfig::default();
    config.server.limits = support::generous();
    config.server.db.statement_timeout = Duration::from_millis(300);
    let url = format!("sqlite://{}", path.display());
    support::spawn_with(&url, config, 14).await
}

/// Another connection to the database file holding `BEGIN EXCLUSIVE`: no one else may write.
struct Locked {
    url: String,
    holder: Option<sqlx::SqliteConnection>,
}

impl Fault for Locked {
    async fn begin(&mut self) {
        use sqlx::{ConnectOptions, Executor};
        let options: sqlx::sqlite::SqliteConnectOptions = self.url.parse().unwrap();
        let mut conn = options
            .busy_timeout(Duration::from_secs(10))
            .connect()
            .await
            .unwrap();
        conn.execute("BEGIN EXCLUSIVE").await.unwrap();
        self.holder = Some(conn);
    }
    async fn end(&mut self) {
        use sqlx::{Connection, Executor};
        let mut conn = self.holder.take().unwrap();
        conn.execute("ROLLBACK").await.unwrap();
        conn.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_locked_by_another_connection_under_a_commit_stream() {
    let dir = testkit::db::TempDir::new("sq-locked-");
    let path = dir.path().join("locked.db");
    let server = sqlite_at(&path).await;
    let mut fault = Locked {
        url: format!("sqlite://{}", path.display()),
        holder: None,
    };
    stream_through(
        "sqlite locked",
        &server,
        &mut fault,
        Duration::from_millis(1500),
    )
    .await;
}

/// A small tmpfs mounted on a directory (the tests run as root), unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None` (with the reason) when mounting is not permitted here.
    fn mount(at: &Path, size: &str) -> Result<Self, String> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(Self(at.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// The disk full: a file takes every byte left on the tmpfs, and is deleted to end it.
struct DiskFull {
    filler: PathBuf,
}

impl Fault for DiskFull {
    async fn begin(&mut self) {
        use std::io::Write;
        let mut file = std::fs::File::create(&self.filler).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        loop {
            if let Err(e) = file.write_all(&chunk).and_then(|()| file.flush()) {
                assert_eq!(e.raw_os_error(), Some(28), "expected ENOSPC: {e}");
                break;
            }
        }
        // what is left of a partial chunk, byte by byte
        while file.write_all(&[0]).is_ok() {}
        drop(file);
    }
    async fn end(&mut self) {
        std::fs::remove_file(&self.filler).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_disk_full_under_a_commit_stream() {
    let dir = testkit::db::TempDir::new("sq-full-");
    let _tmpfs = match Tmpfs::mount(dir.path(), "8m") {
        Ok(mounted) => mounted,
        Err(why) if !testkit::db::services_required() => {
            eprintln!("skipped: cannot mount a tmpfs here ({why})");
            return;
        }
        Err(why) => panic!("REQUIRE_SERVICES=1 but a tmpfs cannot be mounted: {why}"),
    };
    let server = sqlite_at(&dir.path().join("full.db")).await;
    let mut fault = DiskFull {
        filler: dir.path().join("filler"),
    };
    stream_through(
        "sqlite disk full",
        &server,
        &mut fault,
        Duration::from_millis(1500),
    )
    .await;
}

/// One `tools/list` of `client`: its status and how long the answer took.
async fn timed_list(client: &testkit::mcp::Client) -> (u16, String, Duration) {
    let started = Instant::now();
    let r = client.request("tools/list", json!({})).await;
    (
        r.status,
        r.header("retry-after").to_owned(),
        started.elapsed(),
    )
}

/// Polls `tools/list` until it answers 200; how long that took.
async fn until_served(client: &testkit::mcp::Client, name: &str) -> Duration {
    let started = Instant::now();
    loop {
        let (status, _, _) = timed_list(client).await;
        if status == 200 {
            return started.elapsed();
        }
        assert_eq!(status, 503, "{name}: while recovering");
        assert!(
            started.elapsed() < RECOVERED_WITHIN,
            "{name}: not served {RECOVERED_WITHIN:?} after the fault ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Redis stopped and started, then behind a black hole, for the admission of a credential
/// allowed 2 requests at once: each request during the fault is a prompt 503 with
/// `Retry-After`, service comes back by itself, and the requests refused during the fault
/// leave no concurrency lease behind (which would lock the credential out with 429).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_cut_and_black_hole_then_resume() {
    let Some(redis) = testkit::db::redis_url().await else {
        eprintln!("skipped: TEST_REDIS_URL not set");
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&redis, 6379).await;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let mut config = ServeConfig::default();
    config.server.limits = mcp_door::Limits {
        credential_concurrency: 2,
        ..support::generous()
    };
    config.server.redis_url = Some(via);
    config.server.redis_prefix = format!("test-outage:{}", Uuid::new_v4().simple());
    let server = support::spawn_with(&url, config, 15).await;
    let world = support::world(&server, 1).await;
    let client = server.client(&world.assignments[0].1);
    assert_eq!(timed_list(&client).await.0, 200);

    for black_hole in [false, true] {
        let name = if black_hole {
            "redis black hole"
        } else {
            "redis cut"
        };
        if black_hole {
            proxy.black_hole().await;
        } else {
            proxy.cut().await;
        }
        let mut slowest = Duration::ZERO;
        for _ in 0..4 {
            let (status, retry_after, took) = timed_list(&client).await;
            assert_eq!(status, 503, "{name}");
            assert_eq!(retry_after, "1", "{name}");
            assert!(took < REFUSED_WITHIN, "{name}: refused after {took:?}");
            slowest = slowest.max(took);
        }
        proxy.resume().await;
        let recovery = until_served(&client, name).await;
        // nothing refused during the fault holds a slot: sequential requests all pass, and
        // two at once too
        for _ in 0..6 {
            assert_eq!(timed_list(&client).await.0, 200, "{name}: after recovery");
        }
        let (a, b) = tokio::join!(timed_list(&client), timed_list(&client));
        assert_eq!((a.0, b.0), (200, 200), "{name}: two at once after recovery");
        eprintln!(
            "fault {name}: 4 requests refused with 503 (slowest {slowest:?}); served again \
             {recovery:?} after the fault ended"
        );
    }
}
