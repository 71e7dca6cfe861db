//! The email one-time code (tests 11–14).

use std::sync::Arc;
use std::time::Instant;

use http::StatusCode;

use crate::harness::{Backend, Harness, form, verify_form};
use crate::on_both;

async fn n11_five_wrong_codes_kill_the_flow(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    let code = h.mailed_code("alice@example.com");
    let wrong = if code == "111111" { "222222" } else { "111111" };
    for left in (1..=4).rev() {
        let r = h.enter_code(&code_page, wrong, None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert!(r.body.contains(&format!("{left} attempt")), "{}", r.body);
        assert!(r.location().is_none());
    }
    let last = h.enter_code(&code_page, wrong, None).await;
    assert_eq!(last.status, StatusCode::FORBIDDEN);
    assert!(last.body.contains("Too many wrong codes"));
    // The right code fails now, worded exactly as a wrong one (the answer tells nothing of
    // which guess was right), and so does asking for a new one in this flow.
    let r = h.enter_code(&code_page, &code, None).await;
    assert!(r.location().is_none());
    assert_eq!((r.status, &r.body), (last.status, &last.body));
    let r = h.enter_code(&code_page, wrong, None).await;
    assert_eq!((r.status, &r.body), (last.status, &last.body));
    let r = h.send_code(&code_page, "alice@example.com").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(h.mails_to("alice@example.com").len(), 1);
    // A new code in the same flow does not reset the count of wrong entries.
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    for _ in 0..4 {
        let r = h.enter_code(&code_page, "12345x", None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
    }
    let resent = h.send_code(&code_page, "alice@example.com").await;
    assert_eq!(resent.status, StatusCode::OK);
    let r = h.enter_code(&resent, "12345x", None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let fresh = h.mailed_code("alice@example.com");
    assert!(
        h.enter_code(&resent, &fresh, None)
            .await
            .location()
            .is_none()
    );
    // A new flow works.
    let done = h.consent_by_code(&req, "alice@example.com", None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
}
on_both!(n11_five_wrong_codes_kill_the_flow);

/// 200 guesses at one flow's code, released at once on a multi-thread runtime, the right
/// code among them (#100): no more than five are compared, none past the limit gets a code,
/// and every refusal past the limit is the same page.
async fn n11_parallel_guesses_never_outnumber_the_limit(backend: Backend) {
    const GUESSES: usize = 200;
    const RIGHT_AT: usize = 100;
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let max = h.server.config().email_code.max_attempts;
    let req = h.client_request().await;
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    let code = h.mailed_code("alice@example.com");
    let wrong = if code == "111111" { "222222" } else { "111111" };
    let barrier = Arc::new(tokio::sync::Barrier::new(GUESSES));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..GUESSES {
        let typed = if i == RIGHT_AT { code.as_str() } else { wrong };
        let request = h.post_page_owned(verify_form(&code_page, typed, None));
        let barrier = barrier.clone();
        tasks.spawn(async move {
            barrier.wait().await;
            (i, request.await)
        });
    }
    let started = Instant::now();
    let answers = tasks.join_all().await;
    let elapsed = started.elapsed();
    let not_right: Vec<_> = answers
        .iter()
        .filter(|(_, r)| r.body.contains("That code is not right"))
        .collect();
    let redirects: Vec<_> = answers
        .iter()
        .filter(|(_, r)| r.status == StatusCode::SEE_OTHER || r.location().is_some())
        .collect();
    // Admitted = compared: the "not right" answers, any 303, and (when the limit was
    // reached) the wrong guess that used up the last attempt, whose answer is by design the
    // same page as every refusal after it.
    let pending_id = code_page.field("request");
    let stored = h
        .server
        .store()
        .email_code(&pending_id)
        .await
        .unwrap()
        .unwrap();
    let mut statuses = std::collections::BTreeMap::new();
    for (_, r) in &answers {
        *statuses.entry(r.status.as_u16()).or_insert(0) += 1;
    }
    eprintln!(
        "burst of {GUESSES}: {} \"not right\", {} redirect, {} attempts stored, {elapsed:?}, \
         statuses {statuses:?}",
        not_right.len(),
        redirects.len(),
        stored.attempts
    );
    assert!(redirects.len() <= 1);
    assert!((not_right.len() + redirects.len()) as i64 <= max);
    assert!(stored.attempts <= max);
    assert!(stored.attempts >= (not_right.len() + redirects.len()) as i64);
    if let Some((i, _)) = redirects.first() {
        // The right code won a slot before the limit and ended the flow: it alone is the
        // 303. A wrong guess reserved before the code was spent may still have been
        // compared (one more "not right", or, as the last attempt, the refusal page).
        assert_eq!(*i, RIGHT_AT);
        assert!(stored.used_at.is_some());
        return;
    }
    // No 303: every reserved attempt was used up. The usual outcome is that five wrong
    // guesses took them and the right code was never compared (its code unspent). When
    // the right code did win one of the five slots but the guess holding the last slot
    // ended the flow before it could, it was compared and spent, yet gets the flow's end
    // like every refusal after it: one "not right" fewer, and still no authorization code.
    assert_eq!(stored.attempts, max);
    let right_compared = stored.used_at.is_some();
    let expected_not_right = max - 1 - i64::from(right_compared);
    assert_eq!(not_right.len() as i64, expected_not_right);
    let refused: Vec<_> = answers
        .iter()
        .filter(|(_, r)| !r.body.contains("That code is not right"))
        .map(|(_, r)| r)
        .collect();
    assert_eq!(refused.len(), GUESSES - not_right.len());
    let first = refused[0];
    assert_eq!(first.status, StatusCode::FORBIDDEN);
    assert!(
        first.body.contains("Too many wrong codes"),
        "{}",
        first.body
    );
    for r in &refused {
        assert_eq!((r.status, &r.body), (first.status, &first.body));
        assert!(r.location().is_none());
    }
    // Afterwards the right code is still refused alike.
    let r = h.enter_code(&code_page, &code, None).await;
    assert_eq!((r.status, &r.body), (first.status, &first.body));
}
on_both!(n11_parallel_guesses_never_outnumber_the_limit, multi_thread);

async fn n12_expired_reused_or_other_flow_code_fails(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;

    // Expired: 15 minutes and a second later.
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "alice@example.com").await;
    let code = h.mailed_code("alice@example.com");
    h.advance_secs(15 * 60 + 1);
    let r = h.enter_code(&code_page, &code, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("expired"), "{}", r.body);
    assert!(r.location().is_none());

    // Another flow's code: flow B's page does not take flow A's code.
    let page_a = h.open(&req, &[]).await;
    let code_page_a = h.send_code(&page_a, "alice@example.com").await;
    let code_a = h.mailed_code("alice@example.com");
    let page_b = h.open(&req, &[]).await;
    let code_page_b = h.send_code(&page_b, "alice@example.com").await;
    let code_b = h.mailed_code("alice@example.com");
    if code_a != code_b {
        let r = h.enter_code(&code_page_b, &code_a, None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert!(r.body.contains("not right"), "{}", r.body);
    }
    // Flow A's own code still works in flow A (a new code replaced none of A's).
    let done = h.enter_code(&code_page_a, &code_a, None).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);

    // Reused: once spent, the same code in the same page is refused.
    let again = h.enter_code(&code_page_a, &code_a, None).await;
    assert!(again.location().is_none());
    assert_eq!(again.status, StatusCode::BAD_REQUEST);

    // A resent code replaces the earlier one of the same flow.
    let resent = h.send_code(&code_page_b, "alice@example.com").await;
    let newest = h.mailed_code("alice@example.com");
    if newest != code_b {
        let r = h.enter_code(&resent, &code_b, None).await;
        assert!(r.location().is_none());
    }
    let r = h.enter_code(&resent, &newest, None).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
}
on_both!(n12_expired_reused_or_other_flow_code_fails);

/// The page after the email step, with what legitimately differs between two flows masked.
fn masked(body: &str, email: &str, request: &str, csrf: &str) -> String {
    body.replace(email, "EMAIL")
        .replace(request, "REQUEST")
        .replace(csrf, "CSRF")
}

async fn n13_known_and_unknown_email_identical(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let emails = ["alice@example.com", "nobody@example.com"];
    let mut answers = Vec::new();
    let mut fastest = [f64::MAX; 2];
    // Three rounds, alternating, so a scheduling hiccup cannot decide the timing comparison.
    for round in 0..3 {
        for (i, email) in emails.iter().enumerate() {
            let page = h.open(&req, &[]).await;
            let started = Instant::now();
            let r = h.send_code(&page, email).await;
            fastest[i] = fastest[i].min(started.elapsed().as_secs_f64());
            assert_eq!(r.status, StatusCode::OK);
            // The same work happens for both: a code is mailed either way.
            assert_eq!(h.mails_to(email).len(), round + 1, "{email}");
            let mut names: Vec<&str> = r.headers.keys().map(|k| k.as_str()).collect();
            names.sort_unstable();
            answers.push((
                masked(&r.body, email, &page.field("request"), &page.field("csrf")),
                names.join(","),
            ));
        }
    }
    for pair in answers.chunks(2) {
        assert_eq!(pair[0].0, pair[1].0, "identical pages");
        assert_eq!(pair[0].1, pair[1].1, "identical headers");
    }
    // Same code path, so the same timing class: neither is an order of magnitude slower.
    let [a, b] = fastest;
    assert!(a < 10.0 * b + 0.1 && b < 10.0 * a + 0.1, "{a} vs {b}");
    // Only after the proof does the unknown address learn there is no account.
    let page = h.open(&req, &[]).await;
    let code_page = h.send_code(&page, "nobody@example.com").await;
    let code = h.mailed_code("nobody@example.com");
    let r = h.enter_code(&code_page, &code, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.body.contains("No account"));
}
on_both!(n13_known_and_unknown_email_identical);

async fn n14_code_sending_rate_limited(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    // Per email: 5 an hour, whoever asks.
    for i in 0..5 {
        let page = h.open(&req, &[]).await;
        let addr = format!("192.0.2.{i}");
        let body = form(&[
            ("request", &page.field("request")),
            ("csrf", &page.field("csrf")),
            ("action", "send_code"),
            ("email", "bob@example.com"),
        ]);
        let r = h.post_page(&body, &[("x-test-addr", &addr)]).await;
        assert_eq!(r.status, StatusCode::OK, "send {i}");
    }
    let page = h.open(&req, &[]).await;
    let r = h.send_code(&page, "bob@example.com").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(r.body.contains("Too many codes"));
    assert_eq!(h.mails_to("bob@example.com").len(), 5);

    // Per address: 20 an hour from one address, whatever the email.
    for i in 0..20 {
        let page = h.open(&req, &[]).await;
        let r = h.send_code(&page, &format!("person{i}@example.com")).await;
        assert_eq!(r.status, StatusCode::OK, "address send {i}");
    }
    let page = h.open(&req, &[]).await;
    let r = h.send_code(&page, "person99@example.com").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(h.mails_to("person99@example.com").is_empty());

    // The next hour both limits reset (a new client: one never used is gone after an hour).
    h.advance_secs(3600);
    let req = h.client_request().await;
    let page = h.open(&req, &[]).await;
    assert_eq!(
        h.send_code(&page, "bob@example.com").await.status,
        StatusCode::OK
    );
}
on_both!(n14_code_sending_rate_limited);
