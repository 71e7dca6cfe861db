//! The README's connection recipes, run as written against the real binary: each fenced block
//! after a `<!-- recipe: NAME -->` marker in README.md, with the address and tokens filled in,
//! with the clients pinned in `tests/recipes` (Claude Code, mcp-remote driven by the official
//! TypeScript SDK's stdio client, MCP Inspector 2.x's CLI on Node 22 from npm, the official
//! Python and TypeScript SDK snippets, which are files there that README.md holds verbatim).
//! Needs `npm ci --prefix tests/recipes` (and `SIDEQUEST_PY` for Python); skipped with a note
//! without them, unless `REQUIRE_SERVICES=1`. Nothing talks to anything but 127.0.0.1.

use serde_json::Value;
use tokio::process::Command;

use crate::crash::{BIN, BinServer, demo};

use testkit::recipes::{
    listed_tool_names, mcp_list_line, node, pinned, printed_json, readme_recipe, recipes_dir, root,
    run, shell, summary_line,
};

/// What the README writes in place of the address and the credentials.
const README_BASE: &str = "http://127.0.0.1:8080";
const README_PLAY_TOKEN: &str = "sqp_…";
const README_AUTHOR_TOKEN: &str = "sqa_…";

/// A running server with the demo's assignment, its play token and an author token for `gm`.
struct World {
    _dir: testkit::db::TempDir,
    server: BinServer,
    base: String,
    play_token: String,
    author_token: String,
}

impl World {
    async fn start() -> Self {
        let dir = testkit::db::TempDir::new("sq-recipes-");
        let url = format!("sqlite://{}", dir.path().join("r.db").display());
        let (_assignment, play_token) = demo(&url).await;
        let (ok, out, err) = run(
            Command::new(BIN)
                .args([
                    "--database-url",
                    &url,
                    "token",
                    "author",
                    "--username",
                    "gm",
                ])
                .env("RUST_LOG", "warn"),
            30,
            "sidequest token author",
        )
        .await;
        assert!(ok, "sidequest token author failed: {err}");
        let author_token = out.trim().to_owned();
        assert!(author_token.starts_with("sqa_"), "{out}");
        let server = BinServer::start(&url, &[], dir.path()).await;
        let base = format!("http://{}", server.addr);
        Self {
            _dir: dir,
            server,
            base,
            play_token,
            author_token,
        }
    }

    /// A README recipe with this world's address and tokens.
    fn fill(&self, recipe: &str) -> String {
        recipe
            .replace(README_BASE, &self.base)
            .replace(README_PLAY_TOKEN, &self.play_token)
            .replace(README_AUTHOR_TOKEN, &self.author_token)
    }

    async fn stop(self) {
        self.server.kill().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_recipe_adds_both_doors_and_connects() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("sq-claude-home-");
    let script = world.fill(&readme_recipe("sidequest-claude-code"));
    assert!(
        script.contains("--header \"Authorization: Bearer sqp_"),
        "{script}"
    );
    let (ok, out, err) = run(&mut shell(&dir, home.path(), &script), 120, "claude").await;
    assert!(
        ok,
        "the Claude Code recipe failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    eprintln!("{out}");
    let line = |name: &str| mcp_list_line(&out, name);
    let player = line("sidequest");
    assert!(
        player.contains(&format!("{}/play/mcp", world.base)),
        "{player}"
    );
    assert!(player.contains("✔ Connected"), "{player}\n{err}");
    let author = line("sidequest-author");
    assert!(author.contains(&format!("{}/mcp", world.base)), "{author}");
    assert!(author.contains("✔ Connected"), "{author}\n{err}");
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_desktop_bridge_recipe_lists_and_calls() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("sq-desktop-home-");
    let config = home.path().join("claude_desktop_config.json");
    std::fs::write(
        &config,
        world.fill(&readme_recipe("sidequest-claude-desktop")),
    )
    .unwrap();
    let (ok, out, err) = run(
        node(&dir)
            .arg(dir.join("bridge.mjs"))
            .arg(&config)
            .arg("sidequest")
            .arg("get_play_context")
            .current_dir(&dir)
            .env("HOME", home.path()),
        90,
        "bridge.mjs",
    )
    .await;
    assert!(
        ok,
        "the Claude Desktop recipe failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    let summary = summary_line(&out);
    assert_eq!(summary["mcp_remote"], pinned(&dir, "mcp-remote"));
    let tools: Vec<&str> = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "get_play_context",
            "read_play_journal",
            "search_play_memory",
            "commit_play_turn",
            "finish_play_session"
        ]
    );
    assert_eq!(summary["server"]["name"], "sidequest", "{summary}");
    assert!(
        summary["structured"]["agent_contract"].is_string(),
        "{summary}"
    );
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_recipe_lists_and_calls() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("sq-inspector-home-");
    let recipe = world.fill(&readme_recipe("sidequest-inspector"));
    let lines: Vec<&str> = recipe.lines().collect();
    assert_eq!(lines.len(), 2, "{recipe}");
    let (ok, out, err) = run(&mut shell(&dir, home.path(), lines[0]), 90, "inspector").await;
    assert!(
        ok,
        "tools/list failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    let names = listed_tool_names(&out);
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.iter().any(|n| n == "commit_play_turn"), "{names:?}");
    let (ok, out, err) = run(&mut shell(&dir, home.path(), lines[1]), 90, "inspector").await;
    assert!(
        ok,
        "tools/call failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    let called = printed_json(&out);
    assert_ne!(called["isError"], true, "{called}");
    assert!(
        called["structuredContent"]["agent_contract"].is_string(),
        "{called}"
    );
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_snippet_is_the_readme_and_runs() {
    let file = root().join("tests/recipes/connect.py");
    let code = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        readme_recipe("connect.py"),
        code,
        "README.md must hold connect.py verbatim"
    );
    let Some(python) = testkit::db::service_env("SIDEQUEST_PY") else {
        eprintln!("skipped: SIDEQUEST_PY (a venv python with the MCP SDK) not set");
        return;
    };
    let world = World::start().await;
    let (ok, out, err) = run(
        Command::new(&python)
            .arg(&file)
            .arg(format!("{}/play/mcp", world.base))
            .arg(&world.play_token),
        60,
        "connect.py",
    )
    .await;
    assert!(
        ok,
        "connect.py failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    assert_snippet_output(&out);
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_snippet_is_the_readme_and_runs() {
    let file = root().join("tests/recipes/connect.mjs");
    let code = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        readme_recipe("connect.mjs"),
        code,
        "README.md must hold connect.mjs verbatim"
    );
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let (ok, out, err) = run(
        node(&dir)
            .arg(&file)
            .arg(format!("{}/play/mcp", world.base))
            .arg(&world.play_token)
            .current_dir(&dir),
        60,
        "connect.mjs",
    )
    .await;
    assert!(
        ok,
        "connect.mjs failed:\n{out}\n{err}\n{}",
        world.server.log_text()
    );
    assert_snippet_output(&out);
    world.stop().await;
}

/// Both snippets print the tool names, then `get_play_context`'s JSON text.
fn assert_snippet_output(out: &str) {
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "tools: get_play_context, read_play_journal, search_play_memory, commit_play_turn, \
             finish_play_session"
        ),
        "{out}"
    );
    let context = lines
        .next()
        .and_then(|l| l.strip_prefix("get_play_context: "))
        .unwrap_or_else(|| panic!("{out}"));
    let context: Value = serde_json::from_str(context).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(context["agent_contract"].is_string(), "{context}");
}
