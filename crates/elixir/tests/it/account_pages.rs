//! The account pages added after the first cut: an agent's own page (door, key, OAuth
//! connections, recent calls, refusals; 404 for another's or an unknown agent), disconnected
//! connections listed with the refusals of their tokens, and client addresses taken from a
//! trusted proxy header only when the server is told to.

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;

use crate::browser::Browser;
use crate::oauth::{connect, spawn_oauth};
use crate::on_both_backends;
use crate::support::{ORIGIN, Options, spawn_with, success};

async fn an_agent_has_its_own_page(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-agent-page-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let agent = &server.agent;
    let public_id = agent.agent.public_id.clone();
    let path = format!("/account/agents/{public_id}");

    // Not signed in: to the sign-in page.
    let mut browser = Browser::new(&base, dir.path());
    let anonymous = browser.get(&path).await;
    assert_eq!(anonymous.status, 303);
    assert_eq!(anonymous.header("location"), "/signin");

    // The owner (king@example.com owns the test world) connects a client at the agent's door,
    // the service key makes a call, and a wrong key is refused at the door.
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/a/{public_id}/mcp"),
        None,
    )
    .await
    .unwrap();
    let called = success(
        &server
            .door_of(agent, Some(&agent.service_key))
            .tool("elixir_docs", json!({}))
            .await,
    );
    let request_id = called["meta"]["request_id"].as_str().unwrap().to_owned();
    let wrong = "svt_0000000000000000000000000000000000000000000";
    assert_eq!(
        server
            .door_of(agent, Some(wrong))
            .initialize("2025-06-18")
            .await
            .status,
        401
    );
    // the audit row of the call is written off the request path, in batches
    server.state.services.audit.flush().await;

    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_secure();
    assert!(page.body.contains(&agent.agent.name), "{}", page.body);
    assert!(page.body.contains(&format!("{ORIGIN}/a/{public_id}/mcp")));
    // its OAuth connection, linked to Connections
    let grant = server
        .state
        .oauth
        .as_ref()
        .unwrap()
        .server
        .connections(&server.person.id.to_string())
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.resource.ends_with(&format!("/a/{public_id}/mcp")))
        .unwrap();
    assert!(
        page.body
            .contains(&format!("/account/connections#grant-{}", grant.grant_id)),
        "{}",
        page.body
    );
    assert!(!page.body.contains(&tokens.access));
    // its recent call, linked to Activity
    assert!(
        page.body
            .contains(&format!("/account/activity?request_id={request_id}")),
        "{}",
        page.body
    );
    // a key nobody holds, refused at its door, is nobody's: not on the owner's page
    assert!(
        !page
            .body
            .contains(&elixir::access::kinds::credential_hint(wrong)),
        "{}",
        page.body
    );
    // its own key, refused at another door, is on its page
    let elsewhere = format!("/i/{}/mcp", server.integration.agent.public_id);
    let refused =
        testkit::mcp::Client::new(server.url(&elsewhere), Some(agent.service_key.clone()))
            .initialize("2025-06-18")
            .await;
    assert_eq!(refused.status, 403);
    let page = browser.get(&path).await;
    assert!(
        page.body
            .contains(&elixir::access::kinds::credential_hint(&agent.service_key)),
        "{}",
        page.body
    );
    // the key actions are there, and work from the page
    let suspend = page.form(&format!("{path}/suspend"));
    assert_eq!(
        browser
            .post(&suspend.action, &suspend.with(&[]))
            .await
            .status,
        303
    );
    assert!(browser.get(&path).await.body.contains(">suspended<"));

    // The integration's page shows its own door; the person's calls are not listed there.
    let integration = &server.integration.agent.public_id;
    let page = browser.get(&format!("/account/agents/{integration}")).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(&format!("/i/{integration}/mcp")));
    assert!(!page.body.contains(&request_id));

    // Unknown and not-owned agents: the same 404.
    assert_eq!(browser.get("/account/agents/zzzzzzzz9").await.status, 404);
    let mut other = Browser::new(&base, dir.path());
    other.sign_in("other@example.com").await;
    assert_eq!(other.get(&path).await.status, 404);
}

async fn disconnected_connections_list_their_refusals(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-disconnected-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let person = server.person_client(&tokens.access);
    success(&person.tool("elixir_docs", json!({})).await);
    let page = browser.get("/account/connections").await;
    assert!(!page.body.contains("Disconnected in the last"));

    // Disconnect; the client keeps presenting its token twice.
    let revoke = page.form("/revoke");
    let grant_id = revoke
        .action
        .trim_start_matches("/account/connections/")
        .trim_end_matches("/revoke")
        .to_owned();
    assert_eq!(
        browser.post(&revoke.action, &revoke.with(&[])).await.status,
        303
    );
    for _ in 0..2 {
        assert_eq!(person.tool("elixir_docs", json!({})).await.status, 401);
    }

    let page = browser.get("/account/connections").await;
    assert!(page.body.contains("No connections yet"), "{}", page.body);
    assert!(page.body.contains("Disconnected in the last 7 days"));
    let ended = section(&page.body, &format!("id=\"ended-{grant_id}\""));
    assert!(ended.contains("Test client"), "{ended}");
    assert!(ended.contains("<code>/mcp</code>"), "{ended}");
    assert!(
        ended.contains(&format!("grant:{grant_id}</code></td><td>127.0.0.1</td>")),
        "{ended}"
    );
    assert!(
        ended.contains("<td>invalid_token</td><td>2</td>"),
        "{ended}"
    );
    // no form acts on an ended connection
    assert!(!ended.contains("<form"), "{ended}");
    let refusals = browser.get("/account/refusals").await;
    assert!(
        refusals.body.contains(&format!("grant:{grant_id}")),
        "{}",
        refusals.body
    );

    // Another account sees none of it.
    let mut other = Browser::new(&base, dir.path());
    other.sign_in("other@example.com").await;
    let theirs = other.get("/account/connections").await;
    assert!(!theirs.body.contains(&grant_id));
    assert!(
        !other
            .get("/account/refusals")
            .await
            .body
            .contains(&grant_id)
    );
}

/// The text from `marker` to the end of its box.
fn section<'a>(html: &'a str, marker: &str) -> &'a str {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"));
    let rest = &html[start..];
    &rest[..rest.find("</div>").unwrap_or(rest.len())]
}

/// A client presenting `token` at the person's door with a proxy header.
fn with_header(server: &crate::support::Server, name: &str, value: &str) -> testkit::mcp::Client {
    let mut headers = HeaderMap::new();
    headers.insert(
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
        HeaderValue::from_str(value).unwrap(),
    );
    let mut client = server.person_client("svt_1111111111111111111111111111111111111111111");
    client.http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    client
}

async fn client_address_comes_from_the_trusted_header_only(url: &str) {
    let header = "cloudfront-viewer-address";
    let trusting = spawn_with(
        url,
        Options {
            address_source: elixir::AddressSource::Header(header.into()),
            ..Options::default()
        },
    )
    .await;
    for value in ["198.51.100.10:46532", "2001:db8::7:46532", "203.0.113.9"] {
        let refused = with_header(&trusting, header, value)
            .initialize("2025-06-18")
            .await;
        assert_eq!(refused.status, 401);
    }
    // without the header, the TCP peer
    let plain = trusting.person_client("svt_1111111111111111111111111111111111111111111");
    assert_eq!(plain.initialize("2025-06-18").await.status, 401);
    let mut addresses: Vec<(String, i64)> = trusting
        .store
        .refusals("2026-01-01")
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.address, r.count))
        .collect();
    addresses.sort();
    assert_eq!(
        addresses,
        [
            ("127.0.0.1".to_owned(), 1),
            ("198.51.100.10".to_owned(), 1),
            // IPv6 by its /64
            ("2001:db8::/64".to_owned(), 1),
            ("203.0.113.9".to_owned(), 1),
        ]
    );
}

/// A server not told about a proxy ignores the header: a client cannot pick its address.
async fn the_header_is_ignored_without_the_setting(url: &str) {
    let server = spawn_with(url, Options::default()).await;
    let refused = with_header(&server, "cloudfront-viewer-address", "198.51.100.10:1")
        .initialize("2025-06-18")
        .await;
    assert_eq!(refused.status, 401);
    let counts = server.store.refusals("2026-01-01").await.unwrap();
    assert_eq!(counts.len(), 1, "{counts:?}");
    assert_eq!(counts[0].address, "127.0.0.1");
}

async fn the_time_zone_is_set_on_the_account_page(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-timezone-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let mut browser = Browser::new(&base, dir.path());
    let tokens = connect(
        &base,
        &mut browser,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let page = browser.get("/account").await;
    let form = page.form("/account/timezone");
    assert!(
        page.body.contains("name=\"timezone\" value=\"UTC\""),
        "{}",
        page.body
    );

    for bad in ["Mars/Olympus", "", &"x".repeat(65)] {
        let refused = browser
            .post(&form.action, &form.with(&[("timezone", bad)]))
            .await;
        assert_eq!(refused.status, 400, "{bad}");
        assert!(refused.body.contains("is not an IANA time zone"));
    }
    // without the CSRF token: 403
    let forged = browser
        .post(&form.action, &[("timezone".into(), "Europe/Warsaw".into())])
        .await;
    assert_eq!(forged.status, 403);
    let account = server
        .store
        .account(server.person.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(account.timezone, "UTC");

    let saved = browser
        .post(&form.action, &form.with(&[("timezone", "Europe/Warsaw")]))
        .await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    assert_eq!(saved.header("location"), "/account?done=timezone");
    let page = browser.get("/account?done=timezone").await;
    assert!(page.body.contains("Time zone saved"));
    assert!(page.body.contains("<code>Europe/Warsaw</code>"));
    // the tools see it on the next call
    let settings = success(
        &server
            .person_client(&tokens.access)
            .tool("elixir_settings", json!({}))
            .await,
    );
    assert_eq!(settings["settings"]["timezone"], "Europe/Warsaw");
}

on_both_backends!(
    the_time_zone_is_set_on_the_account_page,
    an_agent_has_its_own_page,
    disconnected_connections_list_their_refusals,
    client_address_comes_from_the_trusted_header_only,
    the_header_is_ignored_without_the_setting
);
