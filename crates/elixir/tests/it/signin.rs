//! The sign-in page under load: a burst of parallel guesses at one flow's code admits at most
//! `max_attempts` of them and every later answer reads alike; code sends from one IPv6 /64
//! share one address budget.

use std::sync::Arc;

use crate::browser::{Browser, newest_code};
use crate::oauth::spawn_oauth;
use crate::on_both_backends;
use crate::support::{Options, spawn_with};

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
    let form = browser.get("/signin").await.form("/signin");
    let sent = browser
        .post(
            "/signin",
            &form.with(&[("email", "king@example.com"), ("action", "send_code")]),
        )
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let code = newest_code(dir.path());
    let form = sent.form("/signin");
    let flow = form.get("flow").unwrap().to_owned();
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
    let per_address = 20; // mcp-oauth's default sends per address per hour
    // Two addresses of one /64 take turns, each code to a fresh address (the per-email
    // budget never binds).
    for i in 0..per_address {
        let address = if i % 2 == 0 {
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

on_both_backends!(
    parallel_guesses_admit_at_most_the_limit,
    one_ipv6_slash_64_shares_the_send_budget,
);
