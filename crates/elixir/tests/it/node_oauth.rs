//! The real `elixir serve` binary connected through OAuth by the OFFICIAL MCP TypeScript SDK
//! (`@modelcontextprotocol/sdk`, MCP Inspector's engine; `tests/node/elixir_oauth_flow.mjs`):
//! 401 → discovery → registration → consent by email code from the outbox → token → initialize
//! → tools/list → `elixir_docs` → the SDK's refresh after the 6 s access TTL → second call → the
//! grant narrowed on Account → Connections answering 403 −32003 (the SDK's step-up refreshes
//! instead of re-consenting, so the script asserts that) → tokens forgotten, one-click
//! re-consent → `elixir_feedback` filed. Then the server's own record: the account, its two
//! grants, its audited calls and the feedback. Needs `ELIXIR_NODE_DIR` (`tests/node` after
//! `npm ci`); skipped with a note when unset, unless `REQUIRE_SERVICES=1`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use elixir::tools;
use mcp_oauth::{Clients, Grants};
use serde_json::Value;
use tokio::process::Command;

use crate::python_oauth::{ACCESS_TTL_SECS, start};

/// The address the script signs in with (a new account).
const EMAIL: &str = "node-flow@example.com";
const STANDARD: [&str; 5] = [
    "cr:read",
    "recordings:write",
    "collections:write",
    "account:write",
    "feedback:write",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_typescript_sdk_connects_through_oauth() {
    let Some(node_dir) = testkit::db::service_env("ELIXIR_NODE_DIR") else {
        eprintln!("skipped: ELIXIR_NODE_DIR (tests/node after `npm ci`) not set");
        return;
    };
    let node_dir = Path::new(&node_dir);
    let script = node_dir.join("elixir_oauth_flow.mjs");
    assert!(script.is_file(), "{} is missing", script.display());
    let sdk = node_dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.is_file(),
        "{} is missing: run `npm ci --prefix {}`",
        sdk.display(),
        node_dir.display()
    );
    let dir = testkit::db::TempDir::new("elixir-tssdk-");
    let (mut server, base) = start(dir.path()).await;

    let run = Command::new("node")
        .arg(&script)
        .arg(&base)
        .arg(dir.path().join("outbox"))
        .arg(ACCESS_TTL_SECS)
        .current_dir(node_dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the SDK script finished within 90 s")
        .unwrap_or_else(|e| panic!("cannot run node: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
    assert!(
        out.status.success(),
        "elixir_oauth_flow.mjs failed ({}):\n{stdout}\n{stderr}\nserver log:\n{log}",
        out.status
    );
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON summary line: {stdout}"));
    eprintln!("{summary}");

    // What the SDK saw.
    assert_eq!(summary["ok"], true, "{summary}");
    let client_id = summary["client_id"].as_str().unwrap();
    let listed: Vec<&str> = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // The person door's list: every declared tool a person may call.
    let registry: Vec<&str> = tools::registry()
        .iter()
        .filter(|s| s.kinds.contains(&elixir::access::kinds::Kind::Person))
        .map(|s| s.name)
        .collect();
    assert_eq!(listed, registry, "tools/list at the person door");
    assert_eq!(summary["refreshed"], true, "{summary}");
    assert_eq!(summary["refresh_rotated"], true, "{summary}");
    // code exchange, refresh, the step-up attempt's refresh, the re-consent's code exchange
    assert_eq!(summary["token_saves"], 4, "{summary}");
    assert_eq!(summary["code_logins"], 1, "{summary}");
    assert_eq!(summary["authorizations"], 2, "{summary}");
    assert_eq!(summary["narrowed_scope"], "cr:read", "{summary}");
    assert_eq!(
        summary["reconsented_scope"],
        STANDARD.join(" "),
        "{summary}"
    );
    // The outbox holds one .eml per code and the log names each file, never the code.
    assert!(log.contains("outbox: message written"), "{log}");

    // What the server recorded, read from its database while it runs (SQLite in WAL mode).
    let url = format!("sqlite://{}", dir.path().join("e.db").display());
    let store = elixir::store::connect(&url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    let account = store
        .account_by_email(EMAIL)
        .await
        .unwrap()
        .expect("the consent by code created the account");

    // Account → Connections: the narrowed grant and the re-consented one, both this client's.
    let oauth = mcp_oauth::SqlStore::connect(&url, &mcp_oauth::SqlStore::DEFAULT_POOL)
        .await
        .unwrap();
    let mut grants = oauth.account_grants(&account.id.to_string()).await.unwrap();
    grants.sort_by_key(|g| g.created_at);
    assert_eq!(grants.len(), 2, "{grants:?}");
    for grant in &grants {
        assert_eq!(grant.client_id, client_id);
        assert_eq!(grant.client_name, "Elixir TypeScript SDK flow test");
        assert_eq!(grant.resource, format!("{base}/mcp"));
        assert_eq!(grant.revoked_at, None);
        assert!(grant.subject.personal, "{grant:?}");
    }
    assert_eq!(grants[0].scopes, ["cr:read"]);
    assert_eq!(grants[1].scopes, STANDARD);
    let client = oauth.client(client_id).await.unwrap();
    assert!(
        client.is_some(),
        "the registered client {client_id} is stored"
    );

    // The audit: three docs reads, three refused feedback calls (the raw one and the SDK's two,
    // before and after its refresh), then the filed one. Rows are written by a background task,
    // so the last one may still be on its way.
    let mut audit = Vec::new();
    for _ in 0..100 {
        audit = store.recent_audit(account.id, 50).await.unwrap();
        if audit.len() >= 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut calls: Vec<(&str, &str)> = audit
        .iter()
        .map(|a| {
            (
                a.tool.as_deref().unwrap_or("-"),
                a.error_code.as_deref().unwrap_or("ok"),
            )
        })
        .collect();
    // newest first: the filed report is the last call
    assert_eq!(calls.first(), Some(&("elixir_feedback", "ok")), "{audit:?}");
    calls.sort_unstable();
    let docs = ("elixir_docs", "ok");
    let refused = ("elixir_feedback", "insufficient_scope");
    let filed = ("elixir_feedback", "ok");
    assert_eq!(
        calls,
        [docs, docs, docs, refused, refused, refused, filed],
        "{audit:?}"
    );
    assert!(audit.iter().all(|a| a.door == "/mcp"), "{audit:?}");

    // The one feedback report, filed after the re-consent.
    let feedback = store.all_feedback(None, 10).await.unwrap();
    assert_eq!(feedback.len(), 1, "{feedback:?}");
    assert_eq!(feedback[0].account_id, account.id);
    assert_eq!(feedback[0].message, "TypeScript SDK re-consent works");
    assert_eq!(Value::from(feedback[0].id), summary["feedback_id"]);
    server.kill().await.unwrap();
}
