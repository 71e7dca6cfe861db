//! The official SDKs' HTTP clients as a test drives them: the async `httpx` client of the MCP
//! Python SDK (`tests/python/refusals.py`, run by `SIDEQUEST_PY`) and Node's `fetch`, which the
//! MCP TypeScript SDK calls (`tests/node/refusals.mjs`, run by the `node` in `ELIXIR_NODE_DIR`'s
//! environment). Each sends a list of [`Case`]s and reports, per case, the status it read or the
//! error it raised — what the staged-close tests compare.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

/// How a case's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    ContentLength,
    Chunked,
}

/// One POST: `size` bytes of spaces to `url` with `headers`, paused `pause_ms` after the
/// first 16 KiB.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub size: usize,
    pub framing: Framing,
    pub pause_ms: u64,
}

impl Case {
    pub fn new(
        name: impl Into<String>,
        url: impl Into<String>,
        size: usize,
        framing: Framing,
    ) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            headers: vec![("content-type".into(), "application/json".into())],
            size,
            framing,
            pause_ms: 0,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn pause(mut self, ms: u64) -> Self {
        self.pause_ms = ms;
        self
    }

    fn to_json(&self) -> Value {
        let headers: serde_json::Map<String, Value> = self
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), Value::String(v.clone())))
            .collect();
        json!({
            "name": self.name,
            "url": self.url,
            "headers": headers,
            "size": self.size,
            "mode": match self.framing { Framing::ContentLength => "length", Framing::Chunked => "chunked" },
            "pause_ms": self.pause_ms,
        })
    }
}

/// What one client read for one case: its status, or the error it raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub name: String,
    pub status: Option<u16>,
    pub body: String,
    pub error: Option<String>,
}

fn repo_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

async fn run(mut command: Command, cases: &[Case]) -> Vec<Outcome> {
    let spec = Value::Array(cases.iter().map(Case::to_json).collect()).to_string();
    let run = command
        .arg(spec)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the client script finished within 120 s")
        .expect("the client script runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client script failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("one JSON line per case");
            Outcome {
                name: v["name"].as_str().unwrap_or_default().to_owned(),
                status: v["status"].as_u64().and_then(|s| u16::try_from(s).ok()),
                body: v["body"].as_str().unwrap_or_default().to_owned(),
                error: v["error"].as_str().map(str::to_owned),
            }
        })
        .collect()
}

/// The cases sent with the async httpx client; `None` (skipped) when `SIDEQUEST_PY` is unset,
/// a failure then with `REQUIRE_SERVICES=1`.
pub async fn python_httpx(cases: &[Case]) -> Option<Vec<Outcome>> {
    let python = crate::db::service_env("SIDEQUEST_PY")?;
    let mut command = Command::new(python);
    command.arg(repo_file("tests/python/refusals.py"));
    Some(run(command, cases).await)
}

/// The cases sent with Node's fetch; `None` (skipped) when `ELIXIR_NODE_DIR` is unset, a
/// failure then with `REQUIRE_SERVICES=1`.
pub async fn node_fetch(cases: &[Case]) -> Option<Vec<Outcome>> {
    crate::db::service_env("ELIXIR_NODE_DIR")?;
    let mut command = Command::new("node");
    command.arg(repo_file("tests/node/refusals.mjs"));
    Some(run(command, cases).await)
}

/// Sends `cases` with both clients and asserts that each read `expected` of its case (same
/// order); returns how many clients ran.
pub async fn assert_both_read(cases: &[(Case, u16)]) -> usize {
    let plain: Vec<Case> = cases.iter().map(|(c, _)| c.clone()).collect();
    let mut ran = 0;
    for (client, outcomes) in [
        ("async httpx", python_httpx(&plain).await),
        ("node fetch", node_fetch(&plain).await),
    ] {
        let Some(outcomes) = outcomes else {
            eprintln!("skipped {client}: its environment variable is not set");
            continue;
        };
        ran += 1;
        assert_eq!(outcomes.len(), cases.len(), "{client}: {outcomes:?}");
        for ((case, expected), got) in cases.iter().zip(&outcomes) {
            assert_eq!(
                got.status,
                Some(*expected),
                "{client}, case {}: expected {expected}, got {got:?}",
                case.name
            );
        }
    }
    ran
}
