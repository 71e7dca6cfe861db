//! Dynamic client registration (tests 32–33).

use http::StatusCode;
use serde_json::json;

use crate::harness::{Backend, Harness};
use crate::on_both;

async fn n32_registration_refusals(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let ok = h
        .register_from(
            "203.0.113.5",
            json!({"client_name": "Good", "redirect_uris": ["https://c.example/cb"]}),
        )
        .await;
    assert_eq!(ok.status, StatusCode::CREATED);
    let doc = ok.json();
    let id = doc["client_id"].as_str().unwrap();
    assert_eq!(id.len(), 24);
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    assert_eq!(doc["client_name"], "Good");
    assert_eq!(doc["redirect_uris"], json!(["https://c.example/cb"]));
    assert_eq!(doc["token_endpoint_auth_method"], "none");
    assert_eq!(
        doc["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(doc["response_types"], json!(["code"]));

    for (body, code) in [
        (
            json!({"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://c.example/cb"], "grant_types": ["authorization_code", "client_credentials"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://c.example/cb"], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://c.example/cb"], "response_types": ["token"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["http://c.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["javascript:alert(1)"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["data:text/html,<script>alert(1)</script>"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://c.example/cb#fragment"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://user:pw@c.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({"client_name": "x"}), "invalid_redirect_uri"),
    ] {
        let r = h.register_from("203.0.113.5", body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(r.error_code(), code, "{body}");
    }
    let r = h
        .request(
            "POST",
            "/oauth/register",
            &[("content-type", "application/json")],
            "not json",
        )
        .await;
    assert_eq!(r.error_code(), "invalid_client_metadata");
}
on_both!(n32_registration_refusals);

async fn n33_registration_limits_and_client_expiry(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let body = || json!({"redirect_uris": ["https://c.example/cb"]});
    for i in 0..20 {
        assert_eq!(
            h.register_from("198.51.100.20", body()).await.status,
            StatusCode::CREATED,
            "{i}"
        );
    }
    let r = h.register_from("198.51.100.20", body()).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.error_code(), "temporarily_unavailable");
    // Other addresses go on, up to 200 in the day in total.
    for i in 0..180 {
        let addr = format!("192.0.2.{}", i / 20);
        assert_eq!(
            h.register_from(&addr, body()).await.status,
            StatusCode::CREATED,
            "{i}"
        );
    }
    let r = h.register_from("203.0.113.200", body()).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.error_code(), "temporarily_unavailable");
    // The next day registration opens again.
    h.advance_secs(24 * 3600);
    assert_eq!(
        h.register_from("203.0.113.200", body()).await.status,
        StatusCode::CREATED
    );

    // A client unused for 365 days is gone; one used recently is not.
    let req = h.client_request().await;
    let kept = h.client_request().await;
    h.advance_secs(300 * 24 * 3600);
    let code = h.code_for(&kept, "alice@example.com", None).await;
    assert_eq!(h.exchange(&kept, &code).await.status, StatusCode::OK);
    h.advance_secs(66 * 24 * 3600);
    let r = h
        .post_token(&[
            ("grant_type", "authorization_code"),
            ("code", "eac_whatever"),
            ("client_id", &req.client_id),
        ])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "invalid_client");
    let page = h.open(&req, &[]).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("unknown client_id"));
    assert_eq!(h.open(&kept, &[]).await.status, StatusCode::OK);
}
on_both!(n33_registration_limits_and_client_expiry);

/// On a real listener with the peer address as the client address.
#[tokio::test]
async fn peer_address_limits_on_a_real_listener() {
    let h = Harness::with(Backend::Sqlite, |c| {
        c.address_source = mcp_oauth::AddressSource::Peer;
        c.registration.per_address_per_hour = 2;
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h
        .router
        .clone()
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let r = client
            .post(format!("http://{addr}/oauth/register"))
            .header("content-type", "application/json")
            .body(json!({"redirect_uris": ["https://c.example/cb"]}).to_string())
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
    }
    assert_eq!(statuses, [201, 201, 429]);
    server.abort();
}
