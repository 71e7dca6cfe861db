//! Refusal counts stay bounded and private: a burst of random bearers from one address fills
//! one `unknown` row; a refused known key or grant keeps its own row and shows to its owner
//! only; counts past their retention are purged by the periodic purge.

use std::sync::Arc;

use elixir::model::Refusal;
use testkit::mcp::Client;

use crate::browser::Browser;
use crate::oauth::{connect, spawn_oauth};
use crate::on_both_backends;
use crate::support::{ORIGIN, T0, count_rows, spawn};

const BEARERS: usize = 2_000;
const AT_ONCE: usize = 32;

/// A random bearer: a well-formed service key nobody holds, or an opaque token nobody issued.
fn random_bearer(i: usize) -> String {
    let noise = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    if i.is_multiple_of(2) {
        format!("svt_{}", &noise[..43])
    } else {
        format!("oat_{noise}")
    }
}

async fn random_bearers_fill_one_unknown_row(url: &str) {
    let server = spawn(url).await;
    let door = server.url(&format!("/a/{}/mcp", server.agent.agent.public_id));
    let mut workers = Vec::with_capacity(AT_ONCE);
    for w in 0..AT_ONCE {
        let door = door.clone();
        workers.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            for i in (w..BEARERS).step_by(AT_ONCE) {
                let client = Client {
                    http: http.clone(),
                    url: door.clone(),
                    token: Some(random_bearer(i)),
                };
                assert_eq!(client.initialize("2025-06-18").await.status, 401);
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let rows = server.store.refusals("2026-01-01").await.unwrap();
    let total = count_rows(url, "refusals").await;
    eprintln!("refusals rows after {BEARERS} random bearers: {total}");
    assert_eq!(total, 1, "{rows:?}");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].credential_hint, "unknown");
    assert_eq!(rows[0].address, "127.0.0.1");
    assert_eq!(rows[0].reason, "invalid_token");
    assert_eq!(rows[0].count, BEARERS as i64);
}

async fn known_credentials_keep_their_rows_for_their_owner(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-refusals-");
    let server = spawn_oauth(url, dir.path()).await;
    let base = server.url("");
    let agent = &server.agent;
    let agent_door = format!("/a/{}/mcp", agent.agent.public_id);
    let mut owner = Browser::new(&base, dir.path());
    let tokens = connect(
        &base,
        &mut owner,
        "king@example.com",
        &format!("{ORIGIN}/mcp"),
        None,
    )
    .await
    .unwrap();
    let grant_id = server
        .state
        .oauth
        .as_ref()
        .unwrap()
        .server
        .connections(&server.person.id.to_string())
        .await
        .unwrap()[0]
        .grant_id
        .clone();

    // The agent's key at the integration's door, the personal token at the agent's door (both
    // live, both at the wrong door), and an unknown key at the agent's door.
    let key_hint = elixir::access::kinds::credential_hint(&agent.service_key);
    let at = |path: &str, token: &str| Client::new(server.url(path), Some(token.to_owned()));
    let integration_door = format!("/i/{}/mcp", server.integration.agent.public_id);
    for _ in 0..2 {
        let r = at(&integration_door, &agent.service_key)
            .initialize("2025-06-18")
            .await;
        assert_eq!(r.status, 403);
    }
    let r = at(&agent_door, &tokens.access)
        .initialize("2025-06-18")
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let stranger = "svt_0000000000000000000000000000000000000000000";
    assert_eq!(
        at(&agent_door, stranger)
            .initialize("2025-06-18")
            .await
            .status,
        401
    );

    let mut rows: Vec<(String, String, String, i64)> = server
        .store
        .refusals("2026-01-01")
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.credential_hint, r.door, r.reason, r.count))
        .collect();
    rows.sort();
    let mut expected = vec![
        (
            format!("grant:{grant_id}"),
            agent_door.clone(),
            "wrong_resource".to_owned(),
            1,
        ),
        (
            key_hint.clone(),
            integration_door.clone(),
            "wrong_resource".to_owned(),
            2,
        ),
        (
            "unknown".to_owned(),
            agent_door.clone(),
            "invalid_token".to_owned(),
            1,
        ),
    ];
    expected.sort();
    assert_eq!(rows, expected);

    // The owner sees its key's and its grant's refusals, not the unknown bucket, even though
    // the unknown key was presented at the owner's own door.
    let page = owner.get("/account/refusals").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(&key_hint), "{}", page.body);
    assert!(page.body.contains(&format!("grant:{grant_id}")));
    assert!(!page.body.contains("<code>unknown</code>"), "{}", page.body);
    let agent_page = owner
        .get(&format!("/account/agents/{}", agent.agent.public_id))
        .await;
    assert!(agent_page.body.contains(&key_hint), "{}", agent_page.body);
    assert!(!agent_page.body.contains("<code>unknown</code>"));
    let connections = owner.get("/account/connections").await;
    assert!(connections.body.contains(&format!("grant:{grant_id}")));

    // Another account sees none of it.
    let mut other = Browser::new(&base, dir.path());
    other.sign_in("other@example.com").await;
    let theirs = other.get("/account/refusals").await;
    assert_eq!(theirs.status, 200);
    for secret in [key_hint.as_str(), grant_id.as_str(), "<code>unknown</code>"] {
        assert!(!theirs.body.contains(secret), "{secret}: {}", theirs.body);
    }
    assert!(theirs.body.contains("No refused credentials"));
}

async fn refusal_counts_past_retention_are_purged(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-refusals-");
    let server = spawn_oauth(url, dir.path()).await;
    // T0 is 2026-01-01: today and the seven days before are kept.
    let days = [
        "2025-12-01",
        "2025-12-24",
        "2025-12-25",
        "2025-12-31",
        "2026-01-01",
    ];
    for day in days {
        server
            .store
            .record_refusal(&Refusal {
                credential_hint: "unknown".into(),
                address: "203.0.113.9".into(),
                day: day.into(),
                door: "/mcp".into(),
                reason: "invalid_token".into(),
                at: T0,
            })
            .await
            .unwrap();
    }
    assert_eq!(count_rows(url, "refusals").await, days.len() as i64);
    let oauth = Arc::clone(&server.state.oauth.as_ref().unwrap().server);
    let cancel = tokio_util::sync::CancellationToken::new();
    let task = elixir::access::oauth::spawn_purge(
        oauth,
        Arc::clone(&server.store),
        Arc::new(server.clock.clone()),
        std::time::Duration::from_millis(20),
        cancel.clone(),
    );
    for _ in 0..250 {
        if count_rows(url, "refusals").await < days.len() as i64 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    cancel.cancel();
    task.await.unwrap();
    for (day, kept) in days.iter().zip([0, 0, 1, 1, 1]) {
        assert_eq!(
            server.store.refusals(day).await.unwrap().len(),
            kept,
            "{day}"
        );
    }
    assert_eq!(elixir::access::refusals::REFUSAL_RETENTION_DAYS, 8);
}

on_both_backends!(
    random_bearers_fill_one_unknown_row,
    known_credentials_keep_their_rows_for_their_owner,
    refusal_counts_past_retention_are_purged,
);
