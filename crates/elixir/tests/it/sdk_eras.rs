//! Elixir's person and agent doors connected in both protocol eras by the OFFICIAL SDKs: the
//! Python SDK 2.x (`tests/python/sdk_eras.py`: its default `auto`, pinned to 2026-07-28, and
//! `legacy`) and the TypeScript SDK 2.x (`tests/node/sdk_eras.mjs`: its default handshake,
//! pinned to 2025-06-18 and 2025-03-26, `auto`, pinned to 2026-07-28). Each lists the tools
//! and calls `elixir_docs`; the `serverInfo` facts (the tools fingerprint in the version, the
//! principal `_meta`) reach the 2026-07-28 clients through `server/discover`. Needs
//! `SIDEQUEST_PY` and `ELIXIR_NODE_DIR`; skipped with a note when unset, unless
//! `REQUIRE_SERVICES=1`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

use crate::on_both_backends;
use crate::support::{PERSON_TOKEN, Server, spawn};

/// Runs `program script URL TOKEN TOOL ARGS` (cwd `dir`) and returns its JSON summary line.
async fn drive(program: &str, dir: &Path, script: &Path, url: &str, token: &str) -> Value {
    let args = json!({"page": "quickstart"});
    let run = Command::new(program)
        .arg(script)
        .arg(url)
        .arg(token)
        .arg("elixir_docs")
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

/// The era each mode must have reached, and the facts a 2026-07-28 discovery carries.
fn check(summary: &Value, expected: &[(&str, &str)], kind: &str, fingerprint: &str) {
    for (mode, version) in expected {
        let m = &summary["modes"][*mode];
        assert_eq!(m["protocol"], *version, "{mode}: {m}");
        assert_eq!(m["tool_ok"], true, "{mode}: {m}");
        if let Some(server) = m["server"].as_object() {
            assert_eq!(server["name"], "elixir-mcp", "{mode}: {m}");
            assert_eq!(
                server["version"],
                format!("1.1.0+tools.{fingerprint}"),
                "{mode}: {m}"
            );
        }
        if m["discover_meta"].is_object() {
            let meta = &m["discover_meta"];
            assert_eq!(
                meta["elixir.poapkings.com/principal"]["kind"], kind,
                "{mode}: {meta}"
            );
            assert_eq!(
                meta["io.modelcontextprotocol/serverInfo"]["version"],
                format!("1.1.0+tools.{fingerprint}")
            );
        }
    }
    // the default modes that discover must have shown the facts
    let auto = &summary["modes"]["auto"]["discover_meta"];
    assert!(auto.is_object(), "auto saw no server/discover _meta");
}

fn tools() -> Option<(String, PathBuf)> {
    let python = testkit::db::service_env("SIDEQUEST_PY");
    let node = testkit::db::service_env("ELIXIR_NODE_DIR");
    match (python, node) {
        (Some(p), Some(n)) => Some((p, PathBuf::from(n))),
        _ => {
            eprintln!(
                "skipped: SIDEQUEST_PY (a venv python with the MCP SDK) or ELIXIR_NODE_DIR (tests/node after `npm ci`) not set"
            );
            None
        }
    }
}

async fn both_doors(server: &Server, python: &str, node_dir: &Path) {
    let py_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/sdk_eras.py");
    let node_script = node_dir.join("sdk_eras.mjs");
    let person = (server.url("/mcp"), PERSON_TOKEN.to_owned(), "person");
    let agent_path = elixir::access::door_path::agent_door(
        server.agent.agent.kind,
        &server.agent.agent.public_id,
    );
    let agent = (
        server.url(&agent_path),
        server.agent.service_key.clone(),
        "agent",
    );
    for (url, token, kind) in [person, agent] {
        let kind_enum = if kind == "person" {
            elixir::access::kinds::Kind::Person
        } else {
            elixir::access::kinds::Kind::Agent
        };
        let specs = elixir::tools::registry();
        let fingerprint = elixir::tools::catalog(&specs, kind_enum, &server.state.services)
            .unwrap()
            .fingerprint(kind);
        let py = drive(python, node_dir, &py_script, &url, &token).await;
        assert!(py["sdk"].as_str().unwrap().starts_with("2."), "{py}");
        check(
            &py,
            &[
                ("auto", "2026-07-28"),
                ("2026-07-28", "2026-07-28"),
                ("legacy", "2025-11-25"),
            ],
            kind,
            &fingerprint,
        );
        let ts = drive("node", node_dir, &node_script, &url, &token).await;
        check(
            &ts,
            &[
                ("default", "2025-11-25"),
                ("legacy-2025-06-18", "2025-06-18"),
                ("legacy-2025-03-26", "2025-03-26"),
                ("auto", "2026-07-28"),
                ("2026-07-28", "2026-07-28"),
            ],
            kind,
            &fingerprint,
        );
        // 2025-03-26 has no structuredContent; every later revision carries it
        assert_eq!(ts["modes"]["legacy-2025-03-26"]["structured"], false);
        assert_eq!(ts["modes"]["default"]["structured"], true);
        assert_eq!(ts["modes"]["2026-07-28"]["structured"], true);
    }
}

async fn official_sdks_connect_in_both_eras(url: &str) {
    let Some((python, node_dir)) = tools() else {
        return;
    };
    let server = spawn(url).await;
    both_doors(&server, &python, &node_dir).await;
}

on_both_backends!(official_sdks_connect_in_both_eras);
