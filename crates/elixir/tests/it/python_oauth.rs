//! The real `elixir serve` binary connected through OAuth by the OFFICIAL MCP Python SDK
//! (`tests/python/elixir_oauth_flow.py`): discovery, registration, consent by email code from
//! the outbox, token, initialize, a Help tool, a refresh, a grant narrowed on Account →
//! Connections answering 403 −32003, and the SDK's step-up re-consent. Needs `SIDEQUEST_PY`
//! (the venv python with `tests/python/requirements.txt`); skipped with a note when unset,
//! unless `REQUIRE_SERVICES=1`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// The access-token life the binary runs with, so that the SDK refreshes during the run.
/// Six seconds: long enough that registration, consent and the first `tools/list` (the SDKs
/// compile every output schema) finish inside it on a loaded machine, so the one refresh the
/// scripts expect is the one after their wait.
pub(crate) const ACCESS_TTL_SECS: &str = "6";

/// Starts the real binary on a free port over `dir/e.db`, with codes written to `dir/outbox`
/// and its log in `dir/server.log`; returns it and its origin once `/healthz` answers.
pub(crate) async fn start(dir: &Path) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let log = std::fs::File::create(dir.join("server.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_elixir"))
        .arg("--database-url")
        .arg(format!("sqlite://{}", dir.join("e.db").display()))
        .arg("serve")
        .arg("--bind")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--public-url")
        .arg(&base)
        .arg("--mail-outbox")
        .arg(dir.join("outbox"))
        .arg("--access-ttl-secs")
        .arg(ACCESS_TTL_SECS)
        .env(
            "ELIXIR_OAUTH_SECRET",
            "python-flow-secret-python-flow-secret",
        )
        .env_remove("ELIXIR_SMTP_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn elixir");
    let http = reqwest::Client::new();
    for _ in 0..100 {
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
    panic!(
        "elixir did not start:\n{}",
        std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_sdk_connects_through_oauth() {
    let Some(python) = testkit::db::service_env("SIDEQUEST_PY") else {
        eprintln!("skipped: SIDEQUEST_PY (a venv python with the MCP SDK) not set");
        return;
    };
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/elixir_oauth_flow.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let dir = testkit::db::TempDir::new("elixir-pysdk-");
    let (mut server, base) = start(dir.path()).await;

    let run = Command::new(&python)
        .arg(&script)
        .arg(&base)
        .arg(dir.path().join("outbox"))
        .arg(ACCESS_TTL_SECS)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the SDK script finished within 90 s")
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = server.kill().await;
    assert!(
        out.status.success(),
        "elixir_oauth_flow.py failed ({}):\n{stdout}\n{stderr}\nserver log:\n{}",
        out.status,
        std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default()
    );
    assert!(stdout.contains("ok:"), "no summary line: {stdout}");
    // The outbox holds one .eml per code and the log names each file, never the code.
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(log.contains("outbox: message written"), "{log}");
    eprintln!("{}", stdout.trim());
}
