//! Sidequest's player door connected in both protocol eras by the OFFICIAL SDKs: the Python
//! SDK 2.x (`tests/python/sdk_eras.py`: its default `auto`, pinned to 2026-07-28, and
//! `legacy`) and the TypeScript SDK 2.x (`tests/node/sdk_eras.mjs`: its default handshake,
//! pinned to 2025-06-18 and 2025-03-26, `auto`, pinned to 2026-07-28), each listing the tools
//! and calling `get_play_context` on the real binary. Needs `SIDEQUEST_PY` and
//! `ELIXIR_NODE_DIR`; skipped with a note when unset, unless `REQUIRE_SERVICES=1`.

use serde_json::json;
use testkit::sdk::{Call, Sdks};

use crate::crash::{BinServer, demo};

/// The player door's five tools and Sidequest's name, in every mode.
fn sidequest_mode(mode: &str, m: &serde_json::Value) {
    assert_eq!(m["tools"], 5, "{mode}: the player door's five tools: {m}");
    if let Some(server) = m["server"].as_object() {
        assert_eq!(server["name"], "sidequest", "{mode}: {m}");
    }
}

async fn official_sdks_connect_in_both_eras(url: &str) {
    let Some(sdks) = Sdks::from_env() else {
        return;
    };
    let dir = testkit::db::TempDir::new("sq-eras-");
    let (_assignment, token) = demo(url).await;
    let server = BinServer::start(url, &[], dir.path()).await;
    let door = server.url();
    let call = Call {
        url: &door,
        token: &token,
        tool: "get_play_context",
        arguments: &json!({}),
    };
    for summary in [
        sdks.python(call, sidequest_mode).await,
        sdks.typescript(call, sidequest_mode).await,
    ] {
        let meta = &summary["modes"]["auto"]["discover_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/serverInfo"]["name"], "sidequest",
            "auto saw no server/discover identity: {meta}"
        );
    }
    server.kill().await;
}

testkit::on_both_backends!(official_sdks_connect_in_both_eras);
