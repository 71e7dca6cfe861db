//! The sign-in page under load: a burst of parallel guesses at one flow's code admits at most
//! `max_attempts` of them and every later answer reads alike; `GET /signin` stores nothing
//! (the flow is signed until its first code is sent), and a forged or expired flow stores
//! nothing either; code sends from one IPv6 /64 share one address budget.

use std::sync::Arc;

use crate::browser::{Browser, newest_code};
use crate::oauth::spawn_oauth;
use crate::on_both_backends;
use crate::support::{Options, count_rows, spawn_with};

/// How many guesses the burst releases at once, and where the right code sits among them.
const GUESSES: usize = 200;
const RIGHT: usize = 100;
const MAX_ATTEMPTS: usize = 5;

/// One answer of the burst.
struct Answer {
    status: u16,
    cookie: bool,
    body: String,
}

async fn parallel_guesses_admit_at_most_the_limit(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-signin-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    let (sent, code) = browser.request_code("king@example.com").await;
    let form = sent.form("/signin");
    // The hidden field is `<id>.<expires_at>`; the code is stored under the id.
    let flow = form
        .get("flow")
        .unwrap()
        .split('.')
        .next()
        .unwrap()
        .to_owned();
    let wrong = if code == "000000" { "111111" } else { "000000" };

    // Real parallel requests over several clients, all released by one barrier.
    let clients: Vec<reqwest::Client> = (0..8)
        .map(|_| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap()
        })
        .collect();
    let barrier = Arc::new(tokio::sync::Barrier::new(GUESSES));
    let target = server.url("/signin");
    let mut tasks = Vec::with_capacity(GUESSES);
    for i in 0..GUESSES {
        let guess = if i == RIGHT { code.as_str() } else { wrong };
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.with(&[("code", guess), ("action", "verify")]))
            .finish();
        let request = clients[i % clients.len()]
            .post(&target)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let response = request.send().await.unwrap();
            Answer {
                status: response.status().as_u16(),
                cookie: response.headers().contains_key("set-cookie"),
                body: response.text().await.unwrap(),
            }
        }));
    }
    let mut answers = Vec::with_capacity(GUESSES);
    for t in tasks {
        answers.push(t.await.unwrap());
    }

    let admitted: Vec<usize> = (0..GUESSES)
        .filter(|&i| answers[i].status == 303 || answers[i].body.contains("That code is not right"))
        .collect();
    eprintln!("burst of {GUESSES}: {} admitted", admitted.len());
    assert!(
        admitted.len() <= MAX_ATTEMPTS,
        "{} admitted: {admitted:?}",
        admitted.len()
    );
    let signed_in = answers[RIGHT].status == 303;
    // Only the right guess can sign in, and only as one of the admitted few.
    for (i, a) in answers.iter().enumerate() {
        if i != RIGHT {
            assert_ne!(a.status, 303, "guess {i} signed in");
            assert!(!a.cookie, "guess {i} got a cookie");
        }
    }
    if signed_in {
        assert!(admitted.contains(&RIGHT));
        assert!(answers[RIGHT].cookie);
    } else {
        assert!(!answers[RIGHT].cookie);
    }
    let refused: Vec<&Answer> = (0..GUESSES)
        .filter(|i| !admitted.contains(i))
        .map(|i| &answers[i])
        .collect();
    assert_eq!(refused.len(), GUESSES - admitted.len());
    for a in &refused {
        assert_eq!(a.status, 400, "{}", a.body);
    }
    let attempts = server
        .state
        .oauth
        .as_ref()
        .unwrap()
        .server
        .store()
        .email_code(&flow)
        .await
        .unwrap()
        .unwrap()
        .attempts;
    assert!(
        attempts <= MAX_ATTEMPTS as i64,
        "{attempts} attempts counted"
    );
    if !signed_in {
        // The limit was reached: every later answer is the same page, byte for byte, the
        // one a patient guesser gets.
        // The fifth admitted guess, wrong too, ends the flow and reads like the refusals (and
        // so does the right one when it was admitted but a wrong one ended the flow first).
        assert_eq!(attempts, MAX_ATTEMPTS as i64);
        assert!(admitted.len() < MAX_ATTEMPTS, "{admitted:?}");
        let first = refused[0];
        assert!(
            first.body.contains("This sign-in has ended"),
            "{}",
            first.body
        );
        for a in &refused {
            assert_eq!((a.status, &a.body), (first.status, &first.body));
        }
        // The browser that asked for the code is still not signed in.
        assert_eq!(browser.get("/account").await.status, 303);
        let late = browser
            .post(
                "/signin",
                &form.with(&[("code", &code), ("action", "verify")]),
            )
            .await;
        assert_eq!((late.status, &late.body), (first.status, &first.body));
    }
}

/// A browser posting as `address` (the trusted proxy header).
async fn send_from(browser: &mut Browser, address: &str, email: &str) -> u16 {
    let form = browser.get("/signin").await.form("/signin");
    browser
        .post_with(
            "/signin",
            &form.with(&[("email", email), ("action", "send_code")]),
            &[("cloudfront-viewer-address", address)],
        )
        .await
        .status
}

async fn one_ipv6_slash_64_shares_the_send_budget(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-signin-");
    let server = spawn_with(
        url,
        Options {
            oauth_outbox: Some(dir.path().to_owned()),
            address_source: elixir::AddressSource::Header("cloudfront-viewer-address".into()),
            ..Options::default()
        },
    )
    .await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    let per_address: u32 = 20; // mcp-oauth's default sends per address per hour
    // Two addresses of one /64 take turns, each code to a fresh address (the per-email
    // budget never binds).
    for i in 0..per_address {
        let address = if i.is_multiple_of(2) {
            "2001:db8:1:2::1"
        } else {
            "[2001:db8:1:2:ffff:ffff:ffff:fffe]:4431"
        };
        let status = send_from(&mut browser, address, &format!("u{i}@example.com")).await;
        assert_eq!(status, 200, "send {i} from {address}");
    }
    for address in ["2001:db8:1:2::1", "2001:db8:1:2:abcd::9"] {
        assert_eq!(
            send_from(&mut browser, address, "late@example.com").await,
            429,
            "{address} shares the /64's budget"
        );
    }
    // The next /64 has its own.
    assert_eq!(
        send_from(&mut browser, "2001:db8:1:3::1", "next@example.com").await,
        200
    );
}

/// How many sign-in pages the flood asks for, and how many at a time.
const FLOOD: usize = 2_000;
const AT_ONCE: usize = 32;

async fn signin_pages_store_nothing(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-signin-");
    let server = spawn_oauth(url, dir.path()).await;
    let before = count_rows(url, "oauth_pending").await;
    let target = server.url("/signin");
    let mut workers = Vec::with_capacity(AT_ONCE);
    for w in 0..AT_ONCE {
        let target = target.clone();
        workers.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut flows = Vec::new();
            for _ in (w..FLOOD).step_by(AT_ONCE) {
                let page = http.get(&target).send().await.unwrap();
                assert_eq!(page.status(), 200);
                let body = page.text().await.unwrap();
                flows.push(
                    crate::browser::forms(&body)[0]
                        .get("flow")
                        .unwrap()
                        .to_owned(),
                );
            }
            flows
        }));
    }
    let mut flows = Vec::with_capacity(FLOOD);
    for w in workers {
        flows.extend(w.await.unwrap());
    }
    assert_eq!(flows.len(), FLOOD);
    flows.sort();
    flows.dedup();
    assert_eq!(flows.len(), FLOOD, "every page is a fresh flow");
    let after = count_rows(url, "oauth_pending").await;
    eprintln!("oauth_pending rows: {before} before {FLOOD} GET /signin, {after} after");
    assert_eq!(after, before);

    // A full sign-in still works, and its first code stores its flow.
    let mut browser = Browser::new(&server.url(""), dir.path());
    browser.sign_in("king@example.com").await;
    assert_eq!(browser.get("/account").await.status, 200);
    assert_eq!(count_rows(url, "oauth_pending").await, before + 1);
}

async fn forged_or_expired_flows_store_nothing(url: &str) {
    let dir = testkit::db::TempDir::new("elixir-signin-");
    let server = spawn_oauth(url, dir.path()).await;
    let mut browser = Browser::new(&server.url(""), dir.path());
    let form = browser.get("/signin").await.form("/signin");
    let send = [("email", "king@example.com"), ("action", "send_code")];
    let replace = |name: &str, value: &str| {
        let mut fields = form.with(&send);
        for (k, v) in &mut fields {
            if k == name {
                *v = value.to_owned();
            }
        }
        fields
    };
    let flow = form.get("flow").unwrap();
    let (id, expires) = flow.split_once('.').unwrap();
    let later: i64 = expires.parse::<i64>().unwrap() + 3_600_000;
    for forged in [
        replace("csrf", &"0".repeat(64)),
        // a longer life, or another id, under the same CSRF value
        replace("flow", &format!("{id}.{later}")),
        replace("flow", &format!("{}.{expires}", "A".repeat(id.len()))),
        replace("flow", id),
    ] {
        let refused = browser.post("/signin", &forged).await;
        assert_eq!(refused.status, 403, "{forged:?}: {}", refused.body);
    }
    // A genuine flow with no code sent: verify asks for one and stores nothing.
    let early = browser
        .post(
            "/signin",
            &form.with(&[("code", "123456"), ("action", "verify")]),
        )
        .await;
    assert_eq!(early.status, 400);
    assert!(
        early.body.contains("Ask for a code first."),
        "{}",
        early.body
    );
    // Past its 30 minutes the flow has ended.
    server.clock.advance_millis(30 * 60 * 1000);
    let late = browser.post("/signin", &form.with(&send)).await;
    assert_eq!(late.status, 400);
    assert!(
        late.body.contains("This sign-in has ended"),
        "{}",
        late.body
    );
    assert_eq!(count_rows(url, "oauth_pending").await, 0);
    assert_eq!(count_rows(url, "oauth_email_codes").await, 0);
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no mail sent"
    );

    // Two sends of one flow share its one record.
    let form = browser.get("/signin").await.form("/signin");
    for _ in 0..2 {
        let sent = browser.post("/signin", &form.with(&send)).await;
        assert_eq!(sent.status, 200, "{}", sent.body);
    }
    assert_eq!(count_rows(url, "oauth_pending").await, 1);
    let code = newest_code(dir.path());
    let done = browser
        .post(
            "/signin",
            &form.with(&[("code", &code), ("action", "verify")]),
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
}

on_both_backends!(
    signin_pages_store_nothing,
    forged_or_expired_flows_store_nothing,
    parallel_guesses_admit_at_most_the_limit,
    one_ipv6_slash_64_shares_the_send_budget,
);
