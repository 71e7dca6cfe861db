//! The Redis admission backend: two instances sharing one prefix share every number. Runs when
//! `TEST_REDIS_URL` is set; skipped with a note otherwise, unless `REQUIRE_SERVICES=1`.

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use serde_json::json;
use testkit::proxy::Proxy;

use crate::support::Toy;
use mcp_door::{Admission, AdmissionError, Limits, RedisAdmission};

fn redis_url(test: &str) -> Option<String> {
    match std::env::var("TEST_REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("REQUIRE_SERVICES").as_deref() == Ok("1") => {
            panic!("REQUIRE_SERVICES=1 but TEST_REDIS_URL is not set")
        }
        _ => {
            eprintln!("skipping {test}: TEST_REDIS_URL is not set");
            None
        }
    }
}

fn prefix() -> String {
    format!("mcp-door-test:{}", uuid::Uuid::new_v4().simple())
}

fn limits(rate: u32, credential: u32, global: u32) -> Limits {
    Limits {
        rate_per_window: rate,
        window: Duration::from_secs(60),
        credential_concurrency: credential,
        global_concurrency: global,
        lease: Duration::from_secs(30),
    }
}

async fn pair(url: &str, limits: Limits) -> (RedisAdmission, RedisAdmission) {
    let prefix = prefix();
    let a = RedisAdmission::connect(url, &prefix, limits.clone())
        .await
        .unwrap();
    let b = RedisAdmission::connect(url, &prefix, limits).await.unwrap();
    (a, b)
}

fn limited(result: Result<mcp_door::Permit, AdmissionError>) -> (&'static str, u64) {
    match result {
        Err(AdmissionError::Limited {
            reason,
            retry_after_secs,
        }) => (reason, retry_after_secs),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn rate_is_shared_across_instances() {
    let Some(url) = redis_url("rate_is_shared_across_instances") else {
        return;
    };
    let (a, b) = pair(&url, limits(3, 10, 10)).await;
    drop(a.admit("tok").await.unwrap());
    drop(b.admit("tok").await.unwrap());
    drop(a.admit("tok").await.unwrap());
    for instance in [&b, &a] {
        let (reason, retry) = limited(instance.admit("tok").await);
        assert_eq!(reason, "per-token rate exceeded");
        // the oldest admission is moments old: nearly the whole window remains
        assert!((50..=60).contains(&retry), "Retry-After {retry}");
    }
    // another credential has its own budget
    drop(b.admit("other").await.unwrap());
}

#[tokio::test]
async fn concurrency_is_shared_across_instances_and_freed_on_drop() {
    let Some(url) = redis_url("concurrency_is_shared_across_instances_and_freed_on_drop") else {
        return;
    };
    let (a, b) = pair(&url, limits(100, 2, 3)).await;
    let x1 = a.admit("x").await.unwrap();
    let _x2 = b.admit("x").await.unwrap();
    assert_eq!(
        limited(a.admit("x").await),
        ("per-token concurrency exceeded", 1)
    );
    assert_eq!(
        limited(b.admit("x").await),
        ("per-token concurrency exceeded", 1)
    );
    let _y1 = b.admit("y").await.unwrap();
    assert_eq!(
        limited(a.admit("z").await),
        ("global concurrency exceeded", 1)
    );
    assert_eq!(
        limited(b.admit("y").await),
        ("global concurrency exceeded", 1)
    );

    // the release is spawned: poll briefly for the freed slot
    drop(x1);
    let mut admitted = None;
    for _ in 0..100 {
        match a.admit("x").await {
            Ok(p) => {
                admitted = Some(p);
                break;
            }
            Err(AdmissionError::Limited { .. }) => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        admitted.is_some(),
        "the dropped permit never freed its slot"
    );
    // and now both limits are full again
    assert_eq!(
        limited(b.admit("x").await),
        ("per-token concurrency exceeded", 1)
    );
    assert_eq!(
        limited(b.admit("w").await),
        ("global concurrency exceeded", 1)
    );
}

/// A client that sends its next requests the moment it has an answer finds its finished
/// request's slot free on that instance, though Redis hears of the release a round trip later:
/// the admission waits for its own pending releases of the credential before refusing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_released_on_this_instance_is_free_for_the_next_request_at_once() {
    let Some(url) =
        redis_url("a_slot_released_on_this_instance_is_free_for_the_next_request_at_once")
    else {
        return;
    };
    let (a, _) = pair(&url, limits(10_000, 2, 100)).await;
    for _ in 0..20 {
        let first = a.admit("seq").await.unwrap();
        let second = a.admit("seq").await.unwrap();
        // both answers sent: the next two come at once
        drop(first);
        drop(second);
        let (third, fourth) = tokio::join!(a.admit("seq"), a.admit("seq"));
        let (_third, _fourth) = (third.unwrap(), fourth.unwrap());
        // the limit still holds while they are in flight
        assert_eq!(
            limited(a.admit("seq").await),
            ("per-token concurrency exceeded", 1)
        );
    }
}

#[tokio::test]
async fn a_closed_port_is_unavailable() {
    // needs no Redis server, so it always runs
    let result = RedisAdmission::connect("redis://127.0.0.1:1", &prefix(), Limits::default()).await;
    match result {
        Err(AdmissionError::Unavailable(_)) => {}
        Err(other) => panic!("expected Unavailable, got {other:?}"),
        Ok(admission) => assert!(matches!(
            admission.admit("t").await,
            Err(AdmissionError::Unavailable(_))
        )),
    }
    assert!(matches!(
        RedisAdmission::connect("not a url", &prefix(), Limits::default()).await,
        Err(AdmissionError::Unavailable(_))
    ));
}

#[tokio::test]
async fn two_doors_on_one_redis_share_the_rate() {
    let Some(url) = redis_url("two_doors_on_one_redis_share_the_rate") else {
        return;
    };
    let (a, b) = pair(&url, limits(3, 10, 10)).await;
    let one = Toy::builder().admission(Arc::new(a)).build();
    let two = Toy::builder().admission(Arc::new(b)).build();
    assert_eq!(
        one.rpc(Some("good-user"), "ping", json!({})).await.status,
        StatusCode::OK
    );
    assert_eq!(
        two.rpc(Some("good-user"), "ping", json!({})).await.status,
        StatusCode::OK
    );
    assert_eq!(
        one.call("good-user", "echo", json!({"text": "a"}))
            .await
            .status,
        StatusCode::OK
    );
    for door in [&two, &one] {
        let refused = door.rpc(Some("good-user"), "ping", json!({})).await;
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(refused.retry_after() >= 1);
    }
    assert_eq!(
        two.rpc(Some("good-admin"), "ping", json!({})).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn redis_going_away_makes_the_door_answer_503() {
    let Some(url) = redis_url("redis_going_away_makes_the_door_answer_503") else {
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&url, 6379).await;
    let admission = RedisAdmission::connect(&via, &prefix(), limits(100, 10, 10))
        .await
        .unwrap();
    let toy = Toy::builder().admission(Arc::new(admission)).build();
    assert_eq!(
        toy.rpc(Some("good-user"), "ping", json!({})).await.status,
        StatusCode::OK
    );

    proxy.cut().await;
    let reply = toy.rpc(Some("good-user"), "ping", json!({})).await;
    assert_eq!(
        reply.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.retry_after(), 1);
    assert_eq!(reply.error_code(), -32000);
    let body = String::from_utf8_lossy(&reply.body);
    assert!(
        !body.contains("127.0.0.1") && !body.to_lowercase().contains("redis://"),
        "{body}"
    );
}
