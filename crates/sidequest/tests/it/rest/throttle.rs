//! The login throttle under bursts: many parallel logins for one user verify at most the
//! limit's worth of passwords (the right one included), and the hashing cap answers the
//! logins it has no slot for at once, recording nothing for them.

use serde_json::Value;
use sidequest::app::ServeConfig;
use sidequest::domain::login::LOGIN_MAX_FAILURES;

use super::{Browser, Resp, make_user, password_of};
use crate::support::{self, Server};

async fn server(url: &str, login_hash_concurrency: usize) -> Server {
    support::spawn_with(
        url,
        ServeConfig {
            server: mcp_door::ServerConfig {
                limits: support::generous(),
                ..ServeConfig::default().server
            },
            login_hash_concurrency,
            ..ServeConfig::default()
        },
        1,
    )
    .await
}

async fn failures(s: &Server, key: &str) -> i64 {
    s.store.login_failures_since(key, 0).await.unwrap()
}

/// Sends every login at once (each future starts its request when first polled) and gives the
/// answers in the order sent.
async fn burst(logins: Vec<(Browser, String, String)>) -> Vec<Resp> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (browser, username, password)) in logins.into_iter().enumerate() {
        tasks.spawn(async move { (i, browser.try_login(&username, &password).await) });
    }
    let mut answers: Vec<(usize, Resp)> = tasks.join_all().await;
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, r)| r).collect()
}

/// 200 logins for one user at once, the right password 100th, with hashing slots for all of
/// them: the throttle alone decides, and it lets at most 10 passwords be checked.
async fn a_burst_verifies_at_most_the_limit(url: &str) {
    const BURST: usize = 200;
    const RIGHT: usize = 100;
    let s = server(url, 256).await;
    make_user(&s, "target", false).await;
    let logins = (0..BURST)
        .map(|i| {
            // Twenty addresses, so the username's count is the one that binds.
            let browser = Browser::from_ip(&s, &format!("127.0.2.{}", 1 + i % 20));
            let password = if i == RIGHT {
                password_of("target")
            } else {
                format!("guess {i}")
            };
            (browser, "target".to_owned(), password)
        })
        .collect();
    let answers = burst(logins).await;

    let signed_in = answers.iter().filter(|r| r.status == 200).count();
    let wrong = answers.iter().filter(|r| r.status == 401).count();
    let refused: Vec<&Resp> = answers.iter().filter(|r| r.status == 429).collect();
    assert_eq!(
        signed_in + wrong + refused.len(),
        BURST,
        "only 200, 401 and 429"
    );
    // The 401s and a 200 are the attempts whose password was checked; the one that reached
    // the limit was checked as well but answers like every refusal after it.
    assert!(signed_in <= 1);
    // Twenty addresses take ten attempts each, so no address's limit binds: the username's
    // does. Its failures are a run that a sign-in ends (the right password deletes the run
    // reserved before it; attempts reserved after it stay and count on). So the wrong
    // passwords checked are at most the limit less one before the right one's reservation
    // (it holds a slot of its own while its password is checked), and at most the limit
    // after its release: however the burst interleaves with that release, never more.
    let bound = if signed_in == 1 {
        2 * LOGIN_MAX_FAILURES as usize - 1
    } else {
        LOGIN_MAX_FAILURES as usize - 1
    };
    assert!(
        wrong <= bound,
        "{signed_in} signed in and {wrong} wrong passwords checked"
    );
    if signed_in == 1 {
        assert_eq!(
            answers[RIGHT].status, 200,
            "only the right password signs in"
        );
    } else {
        // The right password came after the limit: refused unchecked, like the rest.
        assert_eq!(answers[RIGHT].status, 429);
        assert_eq!(wrong, LOGIN_MAX_FAILURES as usize - 1);
    }
    let first = refused[0];
    for r in &refused {
        assert_eq!(r.text, first.text, "one answer for every refusal");
        assert_eq!(r.header("retry-after"), "900");
        assert!(r.header("set-cookie").is_empty());
    }
    let body: Value = first.json();
    assert_eq!(body["error"], "too_many_attempts");
    let recorded = failures(&s, "user:target").await;
    eprintln!(
        "burst of {BURST}: {signed_in} signed in, {wrong} wrong passwords checked, {} refused \
         (429), {recorded} failures recorded",
        refused.len()
    );
    assert!(
        recorded <= LOGIN_MAX_FAILURES,
        "{recorded} failures recorded"
    );
    if signed_in == 0 {
        assert_eq!(recorded, LOGIN_MAX_FAILURES);
    }
}

/// With one hashing slot, logins that arrive while it is taken are 429 `login_busy` with
/// `Retry-After: 1` at once, and nothing is recorded for them; the others are checked as
/// usual, and once the burst is over logins work again.
async fn the_hashing_cap_refuses_without_recording(url: &str) {
    const BURST: usize = 20;
    let s = server(url, 1).await;
    make_user(&s, "player", false).await;
    // Unknown usernames, each from its own address: every admitted one costs a full
    // (production-cost) dummy hash, and no throttle key reaches its limit.
    let logins = (0..BURST)
        .map(|i| {
            let browser = Browser::from_ip(&s, &format!("127.0.3.{}", 1 + i));
            (browser, format!("ghost{i}"), "guess".to_owned())
        })
        .collect();
    let answers = burst(logins).await;

    let mut busy = 0;
    for (i, r) in answers.iter().enumerate() {
        let user = failures(&s, &format!("user:ghost{i}")).await;
        let address = failures(&s, &format!("ip:127.0.3.{}", 1 + i)).await;
        match r.status {
            401 => {
                assert_eq!(r.json()["error"], "invalid_credentials");
                assert_eq!((user, address), (1, 1), "a checked failure is recorded");
            }
            429 => {
                busy += 1;
                let body = r.json();
                assert_eq!(body["error"], "login_busy", "{body}");
                assert_eq!(r.header("retry-after"), "1");
                assert_eq!((user, address), (0, 0), "a busy answer records nothing");
            }
            other => panic!("login {i}: status {other}: {}", r.text),
        }
    }
    assert!(busy >= 1, "one slot for {BURST} slow hashes at once");
    assert!(busy < BURST, "the slot served someone");
    Browser::from_ip(&s, "127.0.3.100")
        .try_login("player", &password_of("player"))
        .await
        .expect(200);
}

crate::on_both_backends!(
    a_burst_verifies_at_most_the_limit,
    the_hashing_cap_refuses_without_recording,
);
