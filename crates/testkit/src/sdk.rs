//! The official SDKs driven against a product's door in both protocol eras: the Python SDK 2.x
//! (`tests/python/sdk_eras.py`) and the TypeScript SDK 2.x (`tests/node/sdk_eras.mjs`) each
//! connect in every mode they offer, list the tools and call one. [`Sdks::from_env`] finds the
//! interpreters (`SIDEQUEST_PY`, `ELIXIR_NODE_DIR`), [`Sdks::python`] and [`Sdks::typescript`]
//! run a script and check the era each mode reached ([`PYTHON_ERAS`], [`TYPESCRIPT_ERAS`]);
//! what a product's server says about itself in each mode is the caller's `check`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;

/// The Python SDK's modes and the revision each must reach.
pub const PYTHON_ERAS: [(&str, &str); 3] = [
    ("auto", "2026-07-28"),
    ("2026-07-28", "2026-07-28"),
    ("legacy", "2025-11-25"),
];

/// The TypeScript SDK's modes and the revision each must reach.
pub const TYPESCRIPT_ERAS: [(&str, &str); 5] = [
    ("default", "2025-11-25"),
    ("legacy-2025-06-18", "2025-06-18"),
    ("legacy-2025-03-26", "2025-03-26"),
    ("auto", "2026-07-28"),
    ("2026-07-28", "2026-07-28"),
];

/// Where the SDKs are: a Python with the MCP SDK and `tests/node` after `npm ci`.
#[derive(Debug, Clone)]
pub struct Sdks {
    /// `SIDEQUEST_PY`: a venv's python with the MCP SDK 2.x.
    pub python: String,
    /// `ELIXIR_NODE_DIR`: `tests/node` after `npm ci` (the scripts' working directory).
    pub node_dir: PathBuf,
}

/// One tool call the scripts make after listing.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The door's URL.
    pub url: &'a str,
    /// Its bearer token.
    pub token: &'a str,
    /// The tool to call.
    pub tool: &'a str,
    /// Its arguments.
    pub arguments: &'a Value,
}

impl Sdks {
    /// Both SDKs from the environment, or `None` (the test skips with a note) when one is not
    /// set; with `REQUIRE_SERVICES=1` a missing one fails instead.
    pub fn from_env() -> Option<Self> {
        let python = crate::db::service_env("SIDEQUEST_PY");
        let node = crate::db::service_env("ELIXIR_NODE_DIR");
        match (python, node) {
            (Some(python), Some(node)) => Some(Self {
                python,
                node_dir: PathBuf::from(node),
            }),
            _ => {
                eprintln!(
                    "skipped: SIDEQUEST_PY (a venv python with the MCP SDK) or ELIXIR_NODE_DIR (tests/node after `npm ci`) not set"
                );
                None
            }
        }
    }

    /// The Python SDK's summary of `call`, each of its modes at its era of [`PYTHON_ERAS`]
    /// with the tool call answered, and `check(mode, its summary)` for each.
    pub async fn python(&self, call: Call<'_>, check: impl Fn(&str, &Value)) -> Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/sdk_eras.py");
        let summary = drive(&self.python, &self.node_dir, &script, call).await;
        assert!(
            summary["sdk"].as_str().is_some_and(|v| v.starts_with("2.")),
            "{summary}"
        );
        check_eras(&summary, &PYTHON_ERAS, check);
        summary
    }

    /// The TypeScript SDK's summary of `call`, each of its modes at its era of
    /// [`TYPESCRIPT_ERAS`] with the tool call answered, `structuredContent` in every revision
    /// but 2025-03-26, and `check(mode, its summary)` for each.
    pub async fn typescript(&self, call: Call<'_>, check: impl Fn(&str, &Value)) -> Value {
        let script = self.node_dir.join("sdk_eras.mjs");
        let summary = drive("node", &self.node_dir, &script, call).await;
        check_eras(&summary, &TYPESCRIPT_ERAS, check);
        // 2025-03-26 has no structuredContent; every later revision carries it
        assert_eq!(summary["modes"]["legacy-2025-03-26"]["structured"], false);
        assert_eq!(summary["modes"]["default"]["structured"], true);
        assert_eq!(summary["modes"]["2026-07-28"]["structured"], true);
        summary
    }
}

fn check_eras(summary: &Value, eras: &[(&str, &str)], check: impl Fn(&str, &Value)) {
    for (mode, version) in eras {
        let m = &summary["modes"][*mode];
        assert_eq!(m["protocol"], *version, "{mode}: {m}");
        assert_eq!(m["tool_ok"], true, "{mode}: {m}");
        check(mode, m);
    }
}

/// Runs `program script URL TOKEN TOOL ARGS` (cwd `dir`) and returns its JSON summary line,
/// failing with its output unless it exited 0 with `"ok": true`.
async fn drive(program: &str, dir: &Path, script: &Path, call: Call<'_>) -> Value {
    let run = Command::new(program)
        .arg(script)
        .arg(call.url)
        .arg(call.token)
        .arg(call.tool)
        .arg(call.arguments.to_string())
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
