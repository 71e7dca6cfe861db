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

    // A client unused for 365 days is gone; one used recently is not. (Both are used once
    // at the start: a client never used at all is gone after an hour.)
    let req = h.client_request().await;
    let kept = h.client_request().await;
    for client in [&req, &kept] {
        let code = h.code_for(client, "alice@example.com", None).await;
        assert_eq!(h.exchange(client, &code).await.status, StatusCode::OK);
    }
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

fn registration() -> serde_json::Value {
    json!({"client_name": "Burst", "redirect_uris": ["https://c.example/cb"]})
}

/// Registers from `address`; the client id, or `None` when refused with 429.
async fn register_id(h: &Harness, address: &str) -> Option<String> {
    let r = h.register_from(address, registration()).await;
    match r.status {
        StatusCode::CREATED => Some(r.json()["client_id"].as_str().unwrap().to_owned()),
        StatusCode::TOO_MANY_REQUESTS => {
            assert_eq!(r.error_code(), "temporarily_unavailable");
            None
        }
        other => panic!("{other}: {}", r.body),
    }
}

/// A signed-in consent for `client_id` up to its 303 (the client is then used).
async fn use_client(h: &Harness, cookie: &str, client_id: &str) {
    let req = crate::harness::AuthRequest {
        client_id: client_id.to_owned(),
        redirect_uri: "https://c.example/cb".into(),
        resource: crate::harness::PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "u".repeat(43),
    };
    let page = h.open(&req, &[("cookie", cookie)]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let body = crate::harness::form(&[
        ("request", &page.field("request")),
        ("csrf", &page.field("csrf")),
        ("action", "authorize"),
        ("consent", "1"),
        ("scope", "cr:read"),
    ]);
    let done = h.post_page(&body, &[("cookie", cookie)]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
}

async fn signed_in_cookie(h: &Harness) -> String {
    let set_cookie = h.server.sign_in("acc-alice").await.unwrap();
    set_cookie.split(';').next().unwrap().to_owned()
}

/// How many of `ids` the store still holds.
async fn rows_left(h: &Harness, ids: &[String]) -> usize {
    let mut left = 0;
    for id in ids {
        if h.server.store().client(id).await.unwrap().is_some() {
            left += 1;
        }
    }
    left
}

/// One subscriber's /64 is one address for the per-address limit: 20 an hour from any
/// addresses in it, then 429; the next /64 is another client.
async fn registration_limit_keys_ipv6_on_its_64(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    for i in 0..20 {
        let address = format!("2001:db8:1:2::{:x}", i + 1);
        assert!(register_id(&h, &address).await.is_some(), "{address}");
    }
    for address in ["2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:db8:1:2::abcd"] {
        assert!(register_id(&h, address).await.is_none(), "{address}");
    }
    assert!(register_id(&h, "2001:db8:1:3::1").await.is_some());
    // IPv4 addresses stay one each.
    assert!(register_id(&h, "192.0.2.77").await.is_some());
}
on_both!(registration_limit_keys_ipv6_on_its_64);

/// The daily cap counts clients never used: 200 registrations that are each used leave the
/// cap empty, so the 201st registers; 200 unused then fill it.
async fn used_clients_do_not_count_toward_the_daily_cap(backend: Backend) {
    let Some(h) = Harness::with(backend, |c| {
        c.registration.per_address_per_hour = 10_000;
        c.flows_per_address_per_hour = 10_000;
    })
    .await
    else {
        return;
    };
    let cookie = signed_in_cookie(&h).await;
    for i in 0..200 {
        let id = register_id(&h, "203.0.113.50").await;
        let id = id.unwrap_or_else(|| panic!("registration {i} refused"));
        use_client(&h, &cookie, &id).await;
    }
    // The 201st registers; a second use of it gives nothing back twice.
    let first = register_id(&h, "203.0.113.50").await.unwrap();
    use_client(&h, &cookie, &first).await;
    use_client(&h, &cookie, &first).await;
    let mut unused = 0;
    while register_id(&h, "203.0.113.50").await.is_some() {
        unused += 1;
        assert!(unused <= 200, "the cap does not hold");
    }
    // 201 used clients take no slot: 200 unused ones fit, the 201st unused is refused.
    assert_eq!(unused, 200);
}
on_both!(used_clients_do_not_count_toward_the_daily_cap);

/// 200 never-used registrations fill the day's cap; an hour later the purge deletes them
/// and gives their slots back, and a client that registered and never authorized is then an
/// unknown client (`invalid_client`; it must register again).
async fn unused_registrations_are_purged_and_free_the_cap(backend: Backend) {
    let Some(h) = Harness::with(backend, |c| c.registration.per_address_per_hour = 10_000).await
    else {
        return;
    };
    let mut ids = Vec::new();
    for i in 0..200 {
        let id = register_id(&h, "203.0.113.60").await;
        ids.push(id.unwrap_or_else(|| panic!("registration {i} refused")));
    }
    assert!(register_id(&h, "203.0.113.61").await.is_none());
    // Still refused just before the hour is up, even after a purge.
    h.advance_secs(3599);
    assert!(h.server.purge().await.is_ok());
    assert_eq!(rows_left(&h, &ids).await, 200);
    assert!(register_id(&h, "203.0.113.61").await.is_none());
    h.advance_secs(1);
    // Past the hour the unused client is refused at once, purge or not.
    let r = h
        .post_token(&[
            ("grant_type", "authorization_code"),
            ("code", "eac_whatever"),
            ("client_id", &ids[0]),
        ])
        .await;
    assert_eq!(r.error_code(), "invalid_client");
    assert!(h.server.purge().await.unwrap() >= 200);
    assert_eq!(rows_left(&h, &ids).await, 0);
    let fresh = register_id(&h, "203.0.113.61").await;
    assert!(fresh.is_some(), "the purge gave the slots back");
    let r = h
        .post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "ert_whatever"),
            ("client_id", &ids[1]),
        ])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error_code(), "invalid_client");
}
on_both!(unused_registrations_are_purged_and_free_the_cap);

/// A burst of unauthenticated registrations from many addresses (IPv4 and IPv6 /64s)
/// leaves at most the cap's 200 rows, and none once the purge TTL has passed.
async fn registration_burst_leaves_the_table_bounded(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let mut ids = Vec::new();
    let mut attempts = 0;
    for round in 0..30 {
        for net in 0..10 {
            for address in [
                format!("198.18.{net}.{round}"),
                format!("2001:db8:{net}:{net}::{round:x}"),
            ] {
                attempts += 1;
                ids.extend(register_id(&h, &address).await);
            }
        }
    }
    let after_burst = rows_left(&h, &ids).await;
    h.advance_secs(3600);
    h.server.purge().await.unwrap();
    let after_purge = rows_left(&h, &ids).await;
    eprintln!(
        "registration burst: {attempts} attempts, {} registered, {after_burst} rows after the \
         burst, {after_purge} after TTL + purge",
        ids.len()
    );
    assert_eq!(ids.len(), 200);
    assert_eq!(after_burst, 200);
    assert_eq!(after_purge, 0);
}
on_both!(registration_burst_leaves_the_table_bounded);
