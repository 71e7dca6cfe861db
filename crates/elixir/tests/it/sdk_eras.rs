//! Elixir's person and agent doors connected in both protocol eras by the OFFICIAL SDKs: the
//! Python SDK 2.x (`tests/python/sdk_eras.py`: its default `auto`, pinned to 2026-07-28, and
//! `legacy`) and the TypeScript SDK 2.x (`tests/node/sdk_eras.mjs`: its default handshake,
//! pinned to 2025-06-18 and 2025-03-26, `auto`, pinned to 2026-07-28). Each lists the tools
//! and calls `elixir_docs`; the `serverInfo` facts (the tools fingerprint in the version, the
//! principal `_meta`) reach the 2026-07-28 clients through `server/discover`. Needs
//! `SIDEQUEST_PY` and `ELIXIR_NODE_DIR`; skipped with a note when unset, unless
//! `REQUIRE_SERVICES=1`.

use serde_json::{Value, json};
use testkit::sdk::{Call, Sdks};

use crate::on_both_backends;
use crate::support::{PERSON_TOKEN, Server, spawn};

/// The facts a door of `kind` shows in a mode: Elixir's name and the tools fingerprint in the
/// version, and in a 2026-07-28 discovery the principal's kind.
fn elixir_mode(kind: &str, fingerprint: &str) -> impl Fn(&str, &Value) {
    move |mode, m| {
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
}

async fn both_doors(server: &Server, sdks: &Sdks) {
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
    let arguments = json!({"page": "quickstart"});
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
        let call = Call {
            url: &url,
            token: &token,
            tool: "elixir_docs",
            arguments: &arguments,
        };
        for summary in [
            sdks.python(call, elixir_mode(kind, &fingerprint)).await,
            sdks.typescript(call, elixir_mode(kind, &fingerprint)).await,
        ] {
            // the default modes that discover must have shown the facts
            let auto = &summary["modes"]["auto"]["discover_meta"];
            assert!(auto.is_object(), "auto saw no server/discover _meta");
        }
    }
}

async fn official_sdks_connect_in_both_eras(url: &str) {
    let Some(sdks) = Sdks::from_env() else {
        return;
    };
    let server = spawn(url).await;
    both_doors(&server, &sdks).await;
}

on_both_backends!(official_sdks_connect_in_both_eras);
