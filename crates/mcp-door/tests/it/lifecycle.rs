//! Dispatch outside tools: notifications, client responses, initialize, ping, unknown methods,
//! optional resources.

use http::StatusCode;
use serde_json::json;

use crate::support::{Toy, post, toy_tools};
use mcp_door::Catalog;

#[tokio::test]
async fn notifications_and_client_responses_are_202_with_no_body() {
    let toy = Toy::new();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}}"#,
    ] {
        let reply = toy.send(post(Some("good-user"), body)).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{body}");
        assert!(reply.body.is_empty(), "{body}: {:?}", reply.body);
    }
}

#[tokio::test]
async fn initialize_echoes_supported_versions_and_falls_back_to_the_latest() {
    let toy = Toy::new();
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let params = json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let result = toy
            .rpc(Some("good-user"), "initialize", params)
            .await
            .result();
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
    }
}

#[tokio::test]
async fn initialize_presents_the_product_per_kind() {
    let toy = Toy::new();
    let catalog = Catalog::new(toy_tools(&toy.probes, "Echoes text back.")).unwrap();
    for kind in ["user", "admin"] {
        let result = toy
            .rpc(
                Some(&format!("good-{kind}")),
                "initialize",
                json!({"protocolVersion": "2025-11-25"}),
            )
            .await
            .result();
        assert_eq!(result["serverInfo"]["name"], format!("toy-{kind}"));
        assert_eq!(
            result["serverInfo"]["version"],
            format!("1.0.0+{}", catalog.fingerprint(kind))
        );
        assert_eq!(result["instructions"], format!("Toy door for {kind}"));
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert!(
            result["capabilities"].get("resources").is_none(),
            "{result}"
        );
        assert!(result["capabilities"].get("prompts").is_none(), "{result}");
        assert!(result.get("_meta").is_none());
    }
}

#[tokio::test]
async fn resources_and_prompts_without_a_provider_are_method_not_found() {
    let toy = Toy::new();
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    ] {
        let reply = toy
            .rpc(
                Some("good-user"),
                method,
                json!({"uri": "toy://readme", "name": "x"}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.error_code(), -32601, "{method}");
    }
}

#[tokio::test]
async fn a_resource_provider_adds_the_capability_and_the_methods() {
    let toy = Toy::builder().with_resources().build();
    let init = toy
        .rpc(
            Some("good-user"),
            "initialize",
            json!({"protocolVersion": "2025-11-25"}),
        )
        .await
        .result();
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    assert!(init["capabilities"].get("prompts").is_none());
    let list = toy
        .rpc(Some("good-user"), "resources/list", json!({}))
        .await
        .result();
    assert_eq!(list["resources"][0]["uri"], "toy://readme");
    let read = toy
        .rpc(
            Some("good-user"),
            "resources/read",
            json!({"uri": "toy://readme"}),
        )
        .await
        .result();
    assert_eq!(read["contents"][0]["text"], "hello");
    assert_eq!(
        toy.rpc(
            Some("good-user"),
            "resources/read",
            json!({"uri": "toy://nope"})
        )
        .await
        .error_code(),
        -32002
    );
    assert_eq!(
        toy.rpc(Some("good-user"), "resources/read", json!({}))
            .await
            .error_code(),
        -32602
    );
}

#[tokio::test]
async fn ping_is_an_empty_result_and_unknown_methods_are_32601() {
    let toy = Toy::new();
    let reply = toy.rpc(Some("good-user"), "ping", json!({})).await;
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    let unknown = toy
        .rpc(Some("good-user"), "sampling/createMessage", json!({}))
        .await;
    assert_eq!(unknown.status, StatusCode::OK);
    assert_eq!(unknown.error_code(), -32601);
    assert_eq!(unknown.json()["id"], 1);
}
