//! Client ID Metadata Documents, with a fake fetcher: the document names the client and
//! its redirect URIs, must name its own URL, and private addresses are never fetched.

use http::StatusCode;

use crate::harness::{AuthRequest, Backend, Harness, PERSON_DOOR};
use crate::on_both;

const CLIENT_URL: &str = "https://app.example/oauth/client.json";

fn document(client_id: &str) -> String {
    serde_json::json!({
        "client_id": client_id,
        "client_name": "Doc App",
        "redirect_uris": ["http://127.0.0.1/callback"],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
}

fn request(client_id: &str) -> AuthRequest {
    AuthRequest {
        client_id: client_id.into(),
        redirect_uri: "http://127.0.0.1:40123/callback".into(),
        resource: PERSON_DOOR.into(),
        scope: None,
        state: None,
        verifier: "d".repeat(64),
    }
}

#[tokio::test]
async fn document_client_runs_the_whole_flow() {
    let h = Harness::sqlite().await;
    h.fetcher
        .documents
        .lock()
        .unwrap()
        .insert(CLIENT_URL.into(), document(CLIENT_URL));
    let req = request(CLIENT_URL);
    let page = h.open(&req, &[]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("Doc App"));
    assert!(page.body.contains("described at app.example"));
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    let grant = h
        .server
        .verify_access_token(&tokens.access, PERSON_DOOR)
        .await
        .unwrap();
    assert_eq!(grant.client_id, CLIENT_URL);
    assert_eq!(
        h.refresh(&req, &tokens.refresh).await.status,
        StatusCode::OK
    );
    // Cached: one fetch served every step.
    assert_eq!(h.fetcher.fetches.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn bad_documents_and_private_addresses_are_refused() {
    let h = Harness::sqlite().await;
    let other = "https://app.example/other.json";
    // The document names another URL.
    h.fetcher
        .documents
        .lock()
        .unwrap()
        .insert(other.into(), document(CLIENT_URL));
    let r = h.open(&request(other), &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("unknown client_id"));
    // Private, loopback and plain-http URLs are refused before any fetch.
    let before = h.fetcher.fetches.lock().unwrap().len();
    for url in [
        "https://127.0.0.1/client.json",
        "https://10.0.0.8/client.json",
        "https://[::1]/client.json",
        "https://localhost/client.json",
        "https://169.254.169.254/latest/meta-data",
        "http://app.example/client.json",
    ] {
        let r = h.open(&request(url), &[]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{url}");
    }
    assert_eq!(h.fetcher.fetches.lock().unwrap().len(), before);
}

#[tokio::test]
async fn documents_are_ignored_when_disabled() {
    let h = Harness::with(Backend::Sqlite, |c| c.client_id_metadata_documents = false)
        .await
        .unwrap();
    h.fetcher
        .documents
        .lock()
        .unwrap()
        .insert(CLIENT_URL.into(), document(CLIENT_URL));
    let r = h.open(&request(CLIENT_URL), &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(h.fetcher.fetches.lock().unwrap().is_empty());
}

/// Resolving a metadata-document `client_id` may fetch it, so it takes the per-address flow
/// limit first: distinct URLs cannot make the server fetch without limit, and a request
/// refused by the limit fetches nothing. URLs refused before any network traffic do not count.
async fn document_fetches_take_the_flow_limit_first(backend: Backend) {
    let Some(h) = Harness::with(backend, |c| c.flows_per_address_per_hour = 3).await else {
        return;
    };
    let from = [("x-test-addr", "198.51.100.30")];
    let fetches = || h.fetcher.fetches.lock().unwrap().len();
    // Refused before any fetch: neither fetched nor counted.
    for url in ["https://10.0.0.8/client.json", "http://app.example/c.json"] {
        let r = h.open(&request(url), &from).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{url}");
    }
    assert_eq!(fetches(), 0);
    // Three distinct URLs with no document: each is fetched (and fails) and counts.
    for i in 0..3 {
        let url = format!("https://app{i}.example/client.json");
        let r = h.open(&request(&url), &from).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    }
    assert_eq!(fetches(), 3);
    // The fourth is refused by the limit and fetches nothing, nor does a good document.
    h.fetcher
        .documents
        .lock()
        .unwrap()
        .insert(CLIENT_URL.into(), document(CLIENT_URL));
    for url in ["https://app3.example/client.json", CLIENT_URL] {
        let r = h.open(&request(url), &from).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{url}: {}", r.body);
        assert!(r.location().is_none());
    }
    assert_eq!(fetches(), 3);
    // Another address (another /64 for IPv6) is not affected.
    let r = h
        .open(&request(CLIENT_URL), &[("x-test-addr", "2001:db8:5:6::1")])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(fetches(), 4);
}
on_both!(document_fetches_take_the_flow_limit_first);

/// The token endpoint resolves a document client only for a code or refresh token issued to
/// it: token requests naming distinct document URLs fetch nothing.
async fn token_requests_fetch_only_for_their_own_client(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let fetches = || h.fetcher.fetches.lock().unwrap().len();
    for i in 0..50 {
        let url = format!("https://app{i}.example/client.json");
        let (grant_type, secret) = match i % 2 {
            0 => ("authorization_code", "code"),
            _ => ("refresh_token", "refresh_token"),
        };
        let r = h
            .post_token(&[
                ("grant_type", grant_type),
                ("client_id", &url),
                (secret, &format!("made-up-{i}")),
                ("redirect_uri", "https://client.example/callback"),
                ("code_verifier", &"v".repeat(43)),
            ])
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
        assert_eq!(r.error_code(), "invalid_grant");
    }
    assert_eq!(fetches(), 0);
    // The client's own code and refresh token still work, through one fetch.
    h.fetcher
        .documents
        .lock()
        .unwrap()
        .insert(CLIENT_URL.into(), document(CLIENT_URL));
    let req = request(CLIENT_URL);
    let tokens = h.tokens(&req, "alice@example.com", None).await;
    assert_eq!(
        h.refresh(&req, &tokens.refresh).await.status,
        StatusCode::OK
    );
    // A real code presented under another document URL: refused, nothing fetched or spent.
    let code = h.code_for(&req, "alice@example.com", None).await;
    let before = fetches();
    let mut other = request("https://app99.example/client.json");
    other.redirect_uri = req.redirect_uri.clone();
    other.verifier = req.verifier.clone();
    let r = h.exchange(&other, &code).await;
    assert_eq!(r.error_code(), "invalid_grant", "{}", r.body);
    assert_eq!(fetches(), before);
    assert_eq!(h.exchange(&req, &code).await.status, StatusCode::OK);
}
on_both!(token_requests_fetch_only_for_their_own_client);
