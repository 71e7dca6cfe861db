//! Door refusals: 401 `invalid_token` (no bearer, bad, revoked or unknown credentials,
//! unknown public ids) with the resource-metadata challenge, 401 "suspended", 403
//! `wrong_resource`, key rotation, and the refusal counts.

use elixir::admin;
use serde_json::json;

use crate::on_both_backends;
use crate::support::{PERSON_TOKEN, spawn, success};
use testkit::mcp::Client;

const SCOPES: &str = "cr:read recordings:write collections:write account:write feedback:write";

fn challenge(path: &str, extra: &str) -> String {
    format!(
        "Bearer error=\"invalid_token\"{extra}, resource_metadata=\"https://elixir.test/.well-known/oauth-protected-resource{path}\", scope=\"{SCOPES}\""
    )
}

async fn service_key_refusals(url: &str) {
    let server = spawn(url).await;
    let agent = &server.agent;
    let agent_path = format!("/a/{}/mcp", agent.agent.public_id);
    let integration_path = format!("/i/{}/mcp", server.integration.agent.public_id);

    // the key works at its own door
    success(&server.agent().tool("elixir_docs", json!({})).await);

    // 401s: no bearer, a malformed or unknown key, an unknown public id, an OAuth token unknown
    let bogus_key = format!("svt_{}", "A".repeat(43));
    let unknown_door = "/a/zzzzzzzz9/mcp";
    for (path, token) in [
        ("/mcp", None),
        (agent_path.as_str(), None),
        (agent_path.as_str(), Some("svt_short")),
        (agent_path.as_str(), Some(bogus_key.as_str())),
        (unknown_door, Some(bogus_key.as_str())),
        (unknown_door, Some("oat_unknown")),
        ("/mcp", Some("oat_unknown")),
    ] {
        let r = Client::new(server.url(path), token.map(str::to_owned))
            .initialize("2025-06-18")
            .await;
        assert_eq!(r.status, 401, "{path} {token:?}: {}", r.body);
        assert_eq!(
            r.header("www-authenticate"),
            challenge(path, ""),
            "{path} {token:?}"
        );
    }

    // 403 wrong_resource: a key at /mcp, at the other kind's door, at an unknown door; a
    // person's token at an agent door
    for (path, token) in [
        ("/mcp", agent.service_key.as_str()),
        (integration_path.as_str(), agent.service_key.as_str()),
        (unknown_door, agent.service_key.as_str()),
        (agent_path.as_str(), PERSON_TOKEN),
    ] {
        let r = Client::new(server.url(path), Some(token.to_owned()))
            .initialize("2025-06-18")
            .await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        assert_eq!(r.body["error"]["data"]["code"], "wrong_resource");
        assert_eq!(
            r.header("www-authenticate"),
            challenge(path, ", error_description=\"wrong_resource\"")
        );
    }

    // suspended, then resumed
    admin::set_suspended(&server.store, &agent.agent.public_id, true)
        .await
        .unwrap();
    let r = server.agent().initialize("2025-06-18").await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("www-authenticate"),
        challenge(&agent_path, ", error_description=\"suspended\"")
    );
    admin::set_suspended(&server.store, &agent.agent.public_id, false)
        .await
        .unwrap();
    success(&server.agent().tool("elixir_docs", json!({})).await);

    // rotation keeps the door; the old key is refused; revocation refuses the new one
    let new_key = admin::rotate_key(
        &server.store,
        server.random.as_ref(),
        &agent.agent.public_id,
    )
    .await
    .unwrap();
    assert_eq!(server.agent().initialize("2025-06-18").await.status, 401);
    success(
        &server
            .door_of(agent, Some(&new_key))
            .tool("elixir_docs", json!({}))
            .await,
    );
    admin::revoke_key(&server.store, &agent.agent.public_id)
        .await
        .unwrap();
    assert_eq!(
        server
            .door_of(agent, Some(&new_key))
            .initialize("2025-06-18")
            .await
            .status,
        401
    );

    // every refusal was counted per credential, address and day: a known key under its hint,
    // a live grant's token under the grant, every credential nobody holds in one bucket
    let counts = server.store.refusals("2026-01-01").await.unwrap();
    assert_eq!(counts.len(), 4, "{counts:?}");
    let row = |credential: &str| {
        counts
            .iter()
            .find(|c| c.credential_hint == credential)
            .unwrap_or_else(|| panic!("{credential} in {counts:?}"))
    };
    let old = row(&elixir::access::kinds::credential_hint(&agent.service_key));
    assert_eq!(old.address, "127.0.0.1");
    assert_eq!(old.count, 4, "{counts:?}"); // 3 wrong doors, suspended
    assert_eq!(old.reason, "suspended");
    // svt_short, the bogus key twice, oat_unknown twice, the old key after rotation and the
    // new one after revocation: keys nobody holds any more
    let unknown = row("unknown");
    assert_eq!(unknown.count, 7, "{counts:?}");
    assert_eq!(unknown.reason, "invalid_token");
    let grant = row("grant:static-oat_person_all");
    assert_eq!((grant.count, grant.reason.as_str()), (1, "wrong_resource"));
    assert_eq!(row("none").count, 2);
}

on_both_backends!(service_key_refusals);
