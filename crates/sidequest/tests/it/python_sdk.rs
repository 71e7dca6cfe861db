//! The real binary driven by the official MCP Python SDK client (`tests/python/e2e_sdk.py`).
//! Needs `SIDEQUEST_PY`: the python of a venv with `tests/python/requirements.txt` installed;
//! skipped with a note when unset, unless `REQUIRE_SERVICES=1`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::crash::{BinServer, demo};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_sdk_plays_a_session() {
    let Some(python) = testkit::db::service_env("SIDEQUEST_PY") else {
        eprintln!("skipped: SIDEQUEST_PY (a venv python with the MCP SDK) not set");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/e2e_sdk.py");
    assert!(script.is_file(), "{} is missing", script.display());

    let dir = testkit::db::TempDir::new("sq-pysdk-");
    let url = format!("sqlite://{}", dir.path().join("p.db").display());
    let (_assignment, token) = demo(&url).await;
    // default admission limits: the SDK must work within what real clients get
    let server = BinServer::start(&url, &[], dir.path()).await;

    let run = Command::new(&python)
        .arg(&script)
        .arg(server.url())
        .arg(&token)
        .env_remove("SIDEQUEST_URL")
        .env_remove("SIDEQUEST_TOKEN")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the SDK script finished within 60 s")
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "e2e_sdk.py failed ({}):\n{stdout}\n{stderr}\nserver log:\n{}",
        out.status,
        server.log_text()
    );
    assert!(stdout.contains("ok:"), "no summary line: {stdout}");
    eprintln!("{}", stdout.trim());
    server.kill().await;
}
