//! Sidequest's player door connected in both protocol eras by the OFFICIAL SDKs: the Python
//! SDK 2.x (`tests/python/sdk_eras.py`: its default `auto`, pinned to 2026-07-28, and
//! `legacy`) and the TypeScript SDK 2.x (`tests/node/sdk_eras.mjs`: its default handshake,
//! pinned to 2025-06-18 and 2025-03-26, `auto`, pinned to 2026-07-28), each listing the tools
//! and calling `get_play_context` on the real binary. Needs `SIDEQUEST_PY` and
//! `ELIXIR_NODE_DIR`; skipped with a note when unset, unless `REQUIRE_SERVICES=1`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::crash::{BinServer, demo};

/// Runs `program script URL TOKEN TOOL ARGS` (cwd `dir`) and returns its JSON summary line.
async fn drive(program: &str, dir: &Path, script: &Path, url: &str, token: &str) -> Value {
    let args = json!({});
    let run = Command::new(program)
        .arg(script)
        .arg(url)
        .arg(token)
        .arg("get_play_context")
        .arg(args.to_string())
        .current_dir(dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the SDK script finished within 120 s")
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "{} printed no JSON summary:\n{stdout}\n{stderr}",
                script.display()
            )
        });
    assert!(
        out.status.success() && summary["ok"] == true,
        "{} failed ({}):\n{summary:#}\n{stderr}",
        script.display(),
        out.status
    );
    eprintln!("{summary}");
    summary
}

fn check(summary: &Value, expected: &[(&str, &str)]) {
    for (mode, version) in expected {
        let m = &summary["modes"][*mode];
        assert_eq!(m["protocol"], *version, "{mode}: {m}");
        assert_eq!(m["tool_ok"], true, "{mode}: {m}");
        assert_eq!(m["tools"], 5, "{mode}: the player door's five tools: {m}");
        if let Some(server) = m["server"].as_object() {
            assert_eq!(server["name"], "sidequest", "{mode}: {m}");
        }
    }
    let meta = &summary["modes"]["auto"]["discover_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/serverInfo"]["name"], "sidequest",
        "auto saw no server/discover identity: {meta}"
    );
}

async fn official_sdks_connect_in_both_eras(url: &str) {
    let (Some(python), Some(node_dir)) = (
        testkit::db::service_env("SIDEQUEST_PY"),
        testkit::db::service_env("ELIXIR_NODE_DIR").map(PathBuf::from),
    ) else {
        eprintln!(
            "skipped: SIDEQUEST_PY (a venv python with the MCP SDK) or ELIXIR_NODE_DIR (tests/node after `npm ci`) not set"
        );
        return;
    };
    let dir = testkit::db::TempDir::new("sq-eras-");
    let (_assignment, token) = demo(url).await;
    let server = BinServer::start(url, &[], dir.path()).await;
    let py_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/sdk_eras.py");
    let py = drive(&python, &node_dir, &py_script, &server.url(), &token).await;
    check(
        &py,
        &[
            ("auto", "2026-07-28"),
            ("2026-07-28", "2026-07-28"),
            ("legacy", "2025-11-25"),
        ],
    );
    let node_script = node_dir.join("sdk_eras.mjs");
    let ts = drive("node", &node_dir, &node_script, &server.url(), &token).await;
    check(
        &ts,
        &[
            ("default", "2025-11-25"),
            ("legacy-2025-06-18", "2025-06-18"),
            ("legacy-2025-03-26", "2025-03-26"),
            ("auto", "2026-07-28"),
            ("2026-07-28", "2026-07-28"),
        ],
    );
    // 2025-03-26 has no structuredContent; every later revision carries it
    assert_eq!(ts["modes"]["legacy-2025-03-26"]["structured"], false);
    assert_eq!(ts["modes"]["default"]["structured"], true);
    assert_eq!(ts["modes"]["2026-07-28"]["structured"], true);
    server.kill().await;
}

testkit::on_both_backends!(official_sdks_connect_in_both_eras);
