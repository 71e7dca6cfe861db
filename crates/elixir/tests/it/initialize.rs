//! `initialize` per kind: the exact result (instructions checked apart), the fingerprint in
//! the version, and how the fingerprint follows the declarations.

use elixir::access::kinds::Kind;
use elixir::tools;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::on_both_backends;
use crate::support::spawn;

fn fingerprint_of(tools: &Value) -> String {
    hex::encode(Sha256::digest(tools.to_string().as_bytes()))[..12].to_owned()
}

async fn initialize_is_exact_per_kind(url: &str) {
    let server = spawn(url).await;
    let mut versions = Vec::new();
    for kind in Kind::ALL {
        let client = server.client(kind);
        let mut result = client.initialize("2025-06-18").await.result().clone();
        let instructions = result
            .as_object_mut()
            .unwrap()
            .remove("instructions")
            .unwrap();
        let instructions = instructions.as_str().unwrap();
        assert!(
            instructions.chars().count() <= 2048,
            "{kind}: {} chars",
            instructions.len()
        );
        assert!(
            instructions.contains("Conventions:")
                && instructions.contains("elixir_docs({\"page\": \"quickstart\"})"),
            "{instructions}"
        );
        let list = client.request("tools/list", json!({})).await.result()["tools"].clone();
        let fp = fingerprint_of(&list);
        assert_eq!(
            result,
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {
                    "tools": {"listChanged": true},
                    "resources": {"subscribe": false, "listChanged": false},
                    "prompts": {"listChanged": false},
                },
                "serverInfo": {
                    "name": "elixir-mcp",
                    "title": "Elixir MCP - Clash Royale history, recorded",
                    "version": format!("1.1.0+tools.{fp}"),
                    // no websiteUrl: 2025-06-18's Implementation predates it (2025-11-25)
                },
                "_meta": {"elixir.poapkings.com/principal": {"kind": kind.as_str(), "subject": null, "clan": null}},
            }),
            "{kind}"
        );
        versions.push(result["serverInfo"]["version"].as_str().unwrap().to_owned());
    }
    // agent and person see the same tool names but different declarations (on_behalf_of,
    // primary_player_tag); the integration sees fewer
    assert_ne!(versions[0], versions[1]);
    assert_ne!(versions[1], versions[2]);
    assert_ne!(versions[0], versions[2]);
}

async fn fingerprint_follows_a_declaration_change(url: &str) {
    let server = spawn(url).await;
    let services = &server.state.services;
    let specs = tools::registry();
    let before = tools::catalog(&specs, Kind::Person, services).unwrap();
    let mut changed = specs.clone();
    let docs = changed
        .iter_mut()
        .find(|s| s.name == "elixir_docs")
        .unwrap();
    docs.description.push_str(" Also reads tea leaves.");
    let after = tools::catalog(&changed, Kind::Person, services).unwrap();
    assert_ne!(before.fingerprint("person"), after.fingerprint("person"));
    // a tool hidden from a kind does not move that kind's fingerprint
    let mut hidden_change = specs.clone();
    let settings = hidden_change
        .iter_mut()
        .find(|s| s.name == "elixir_settings")
        .unwrap();
    settings.description.push_str(" Changed.");
    let a = tools::catalog(&specs, Kind::Integration, services).unwrap();
    let b = tools::catalog(&hidden_change, Kind::Integration, services).unwrap();
    assert_eq!(a.fingerprint("integration"), b.fingerprint("integration"));
    // and the served version is the catalog's fingerprint
    let served =
        server.person().initialize("2025-11-25").await.result()["serverInfo"]["version"].clone();
    assert_eq!(
        served,
        format!("1.1.0+tools.{}", before.fingerprint("person"))
    );
}

on_both_backends!(
    initialize_is_exact_per_kind,
    fingerprint_follows_a_declaration_change
);
