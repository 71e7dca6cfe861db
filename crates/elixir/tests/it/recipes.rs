//! README.md's Elixir connection recipes, run as written against the real `elixir serve`
//! binary with the clients pinned in `tests/recipes`: Claude Code (the OAuth door it finds
//! needing authentication, an agent's door with its key connected), Claude Desktop's
//! `mcp-remote` bridge through the whole OAuth flow (the consent done over HTTP from the URL the
//! bridge prints, the code read from the outbox), MCP Inspector 2.x's CLI with an agent's key.
//! Needs `npm ci --prefix tests/recipes`; skipped with a note without it, unless
//! `REQUIRE_SERVICES=1`. Nothing talks to anything but 127.0.0.1.

use serde_json::Value;
use tokio::process::{Child, Command};

use crate::python_oauth::start;

use testkit::recipes::{
    listed_tool_names, mcp_list_line, node, pinned, printed_json, readme_recipe, recipes_dir, run,
    shell, summary_line,
};

/// What the README writes in place of the address and the agent's credentials.
const README_BASE: &str = "http://127.0.0.1:8090";
const README_PUBLIC_ID: &str = "<public_id>";
const README_KEY: &str = "svt_…";
/// The person who consents in the bridge's OAuth flow (a new account).
const EMAIL: &str = "desktop-bridge@example.com";

/// A running server and an agent with its key, made with the binary's own commands.
struct World {
    dir: testkit::db::TempDir,
    server: Child,
    base: String,
    public_id: String,
    key: String,
}

impl World {
    async fn start() -> Self {
        let dir = testkit::db::TempDir::new("elixir-recipes-");
        let (server, base) = start(dir.path()).await;
        let db = format!("sqlite://{}", dir.path().join("e.db").display());
        let cli = |args: &[&str]| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_elixir"));
            command
                .arg("--database-url")
                .arg(&db)
                .args(args)
                .env("RUST_LOG", "warn");
            command
        };
        let owner = "recipes-owner@example.com";
        let (ok, _, err) = run(
            &mut cli(&["account", "create", "--email", owner]),
            30,
            "account",
        )
        .await;
        assert!(ok, "elixir account create failed: {err}");
        let (ok, out, err) = run(
            &mut cli(&[
                "agent", "create", "--owner", owner, "--name", "Recipes", "--json",
            ]),
            30,
            "agent create",
        )
        .await;
        assert!(ok, "elixir agent create failed: {err}");
        let agent: Value =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
        Self {
            public_id: agent["public_id"].as_str().unwrap().to_owned(),
            key: agent["service_key"].as_str().unwrap().to_owned(),
            dir,
            server,
            base,
        }
    }

    fn fill(&self, recipe: &str) -> String {
        recipe
            .replace(README_BASE, &self.base)
            .replace(README_PUBLIC_ID, &self.public_id)
            .replace(README_KEY, &self.key)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    async fn stop(mut self) {
        self.server.kill().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_recipe_finds_oauth_and_connects_an_agent() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("elixir-claude-home-");
    let script = world.fill(&readme_recipe("elixir-claude-code"));
    let (ok, out, err) = run(&mut shell(&dir, home.path(), &script), 120, "claude").await;
    assert!(
        ok,
        "the Claude Code recipe failed:\n{out}\n{err}\n{}",
        world.log()
    );
    eprintln!("{out}");
    let line = |name: &str| mcp_list_line(&out, name);
    let person = line("elixir");
    assert!(person.contains(&format!("{}/mcp", world.base)), "{person}");
    assert!(person.contains("Needs authentication"), "{person}\n{err}");
    let agent = line("elixir-agent");
    assert!(
        agent.contains(&format!("{}/a/{}/mcp", world.base, world.public_id)),
        "{agent}"
    );
    assert!(agent.contains("✔ Connected"), "{agent}\n{err}");
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_desktop_bridge_recipe_through_oauth() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("elixir-desktop-home-");
    let config = home.path().join("claude_desktop_config.json");
    std::fs::write(&config, world.fill(&readme_recipe("elixir-claude-desktop"))).unwrap();
    let bridge = |entry: &str, oauth: bool| {
        let mut command = node(&dir);
        command
            .arg(dir.join("bridge.mjs"))
            .arg(&config)
            .arg(entry)
            .arg("elixir_docs")
            .current_dir(&dir)
            .env("HOME", home.path());
        if oauth {
            command.arg(world.dir.path().join("outbox")).arg(EMAIL);
        }
        command
    };
    let summary_of = |ok: bool, out: &str, err: &str| -> Value {
        assert!(
            ok,
            "the Claude Desktop recipe failed:\n{out}\n{err}\n{}",
            world.log()
        );
        summary_line(out)
    };

    // The agent's entry: its key from `env`, no consent.
    let (ok, out, err) = run(&mut bridge("elixir-agent", false), 90, "bridge.mjs").await;
    let summary = summary_of(ok, &out, &err);
    assert_eq!(summary["callback_port"], Value::Null, "{summary}");
    assert_eq!(summary["called"], "elixir_docs");

    // The person door's entry: the whole OAuth flow, headless.
    let (ok, out, err) = run(&mut bridge("elixir", true), 120, "bridge.mjs").await;
    let summary = summary_of(ok, &out, &err);
    assert_eq!(summary["mcp_remote"], pinned(&dir, "mcp-remote"));
    assert!(
        summary["callback_port"].is_string(),
        "consent was given: {summary}"
    );
    // The door answered the bridge's GET probe 401, so it listened for the code before it
    // printed where to sign in (with a 405 it prints first and listens after).
    assert_eq!(summary["listener_first"], true, "{summary}");
    let tools = summary["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "elixir_docs"), "{summary}");
    assert_eq!(summary["called"], "elixir_docs");
    // The tokens the bridge keeps are in the test's HOME, not the user's.
    assert!(home.path().join(".mcp-auth").is_dir());

    // What the server recorded: a grant for the bridge's client, on the person door, with the
    // scopes it asked for that Elixir defines (the standard five unless it named others).
    let url = format!("sqlite://{}", world.dir.path().join("e.db").display());
    let store = elixir::store::connect(&url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    let account = store
        .account_by_email(EMAIL)
        .await
        .unwrap()
        .expect("the consent by code created the account");
    let oauth = mcp_oauth::SqlStore::connect(&url, &mcp_oauth::SqlStore::DEFAULT_POOL)
        .await
        .unwrap();
    let grants = mcp_oauth::Grants::account_grants(&oauth, &account.id.to_string())
        .await
        .unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].resource, format!("{}/mcp", world.base));
    assert!(
        grants[0].scopes.iter().any(|s| s == "cr:read"),
        "{grants:?}"
    );
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_recipe_with_an_agent_key() {
    let Some(dir) = recipes_dir() else { return };
    let world = World::start().await;
    let home = testkit::db::TempDir::new("elixir-inspector-home-");
    let recipe = world.fill(&readme_recipe("elixir-inspector"));
    let lines: Vec<&str> = recipe.lines().collect();
    assert_eq!(lines.len(), 2, "{recipe}");
    let (ok, out, err) = run(&mut shell(&dir, home.path(), lines[0]), 90, "inspector").await;
    assert!(ok, "tools/list failed:\n{out}\n{err}\n{}", world.log());
    let names = listed_tool_names(&out);
    let agent_tools: Vec<&str> = elixir::tools::registry()
        .iter()
        .filter(|s| s.kinds.contains(&elixir::access::kinds::Kind::Agent))
        .map(|s| s.name)
        .collect();
    assert_eq!(names, agent_tools, "tools/list at the agent door");
    let (ok, out, err) = run(&mut shell(&dir, home.path(), lines[1]), 90, "inspector").await;
    assert!(ok, "tools/call failed:\n{out}\n{err}\n{}", world.log());
    let called = printed_json(&out);
    assert_ne!(called["isError"], true, "{called}");
    assert!(
        !called["content"].as_array().unwrap().is_empty(),
        "{called}"
    );
    world.stop().await;
}
