//! The discovery documents, exactly (test 34).

use http::StatusCode;
use serde_json::json;

use crate::harness::{Backend, Harness};
use crate::on_both;

async fn n34_metadata_documents(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let scopes = json!([
        "cr:read",
        "recordings:write",
        "collections:write",
        "account:write",
        "feedback:write",
        "account:email"
    ]);
    let r = h.get("/.well-known/oauth-authorization-server", &[]).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("cache-control"), Some("max-age=300"));
    assert_eq!(
        r.json(),
        json!({
            "issuer": "https://auth.example",
            "authorization_endpoint": "https://auth.example/oauth/authorize",
            "token_endpoint": "https://auth.example/oauth/token",
            "registration_endpoint": "https://auth.example/oauth/register",
            "userinfo_endpoint": "https://auth.example/oauth/userinfo",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": scopes,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        })
    );

    for (path, resource) in [
        (
            "/.well-known/oauth-protected-resource",
            "https://auth.example/mcp",
        ),
        (
            "/.well-known/oauth-protected-resource/mcp",
            "https://auth.example/mcp",
        ),
        (
            "/.well-known/oauth-protected-resource/a/agenta001/mcp",
            "https://auth.example/a/agenta001/mcp",
        ),
        // An agent door is a door by its shape: existence is not revealed here.
        (
            "/.well-known/oauth-protected-resource/a/nosuchagent1/mcp",
            "https://auth.example/a/nosuchagent1/mcp",
        ),
    ] {
        let r = h.get(path, &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert_eq!(r.header("cache-control"), Some("max-age=300"), "{path}");
        assert_eq!(
            r.json(),
            json!({
                "resource": resource,
                "authorization_servers": ["https://auth.example"],
                "scopes_supported": scopes,
                "bearer_methods_supported": ["header"],
            }),
            "{path}"
        );
    }
    let r = h
        .get("/.well-known/oauth-protected-resource/other/thing", &[])
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}
on_both!(n34_metadata_documents);

#[tokio::test]
async fn metadata_documents_flag_is_omitted_when_off() {
    let h = Harness::with(Backend::Sqlite, |c| c.client_id_metadata_documents = false)
        .await
        .unwrap();
    let doc = h
        .get("/.well-known/oauth-authorization-server", &[])
        .await
        .json();
    assert!(doc.get("client_id_metadata_document_supported").is_none());
    assert_eq!(doc["authorization_response_iss_parameter_supported"], true);
}

#[tokio::test]
async fn json_endpoints_allow_browser_clients_but_the_consent_page_does_not() {
    let h = Harness::sqlite().await;
    let r = h.get("/.well-known/oauth-authorization-server", &[]).await;
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let r = h
        .request(
            "OPTIONS",
            "/oauth/token",
            &[("origin", "https://inspector.example")],
            "",
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert!(
        r.header("access-control-allow-headers")
            .unwrap()
            .contains("authorization")
    );
    let r = h.get("/oauth/authorize", &[]).await;
    assert!(r.header("access-control-allow-origin").is_none());
    let r = h.request("DELETE", "/oauth/token", &[], "").await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}
