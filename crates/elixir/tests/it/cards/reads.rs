//! One read of the upstream: its receipts, the gzipped archive and the two-hour raw retention,
//! refused payloads; the budget honouring Retry-After and the circuit opened by repeated 403s.

use std::io::Read;

use elixir::model::Receipt;
use elixir::recorder::RecorderError;
use elixir::upstream::{UpstreamError, payload_sha256};
use elixir_record::cards::CardsError;
use mcp_door::Clock;
use testkit::db::TempDir;

use super::{FIXTURE, FakeApi, Plan, refresh, upstream};
use crate::on_both_backends;
use crate::support::{T0, spawn};

fn gunzip(path: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

async fn receipts_archive_and_raw_retention(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let upstream = upstream(&server, &api, &archive);
    let sha = payload_sha256(FIXTURE.as_bytes());
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(
        api.state.authorization.lock().unwrap().as_deref(),
        Some("Bearer test-api-token")
    );
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(
        receipts,
        [Receipt {
            endpoint: "/cards".into(),
            subject: None,
            fetched_at: T0,
            status: Some(200),
            payload_sha256: Some(sha.clone()),
            admission: "recorder".into(),
        }]
    );
    // the archive holds the payload gzipped under its digest
    let path = archive
        .path()
        .join(&sha[..2])
        .join(format!("{sha}.json.gz"));
    assert_eq!(gunzip(&path), FIXTURE.as_bytes());
    assert_eq!(
        upstream.archive().get(&sha).await.unwrap().as_deref(),
        Some(FIXTURE.as_bytes())
    );
    // and the database keeps it raw
    let raw = server.store.raw_payload(&sha).await.unwrap().unwrap();
    assert_eq!((raw.body.as_str(), raw.fetched_at), (FIXTURE, T0));
    assert_eq!(raw.endpoint, "/cards");

    // the same payload an hour later: unchanged, a second receipt, the raw copy renewed
    server.clock.advance_millis(3_600_000);
    let again = refresh(&server, &upstream).await.unwrap();
    assert!(!again.changed);
    assert_eq!(server.store.receipts("/cards", 10).await.unwrap().len(), 2);
    assert_eq!(
        server
            .store
            .raw_payload(&sha)
            .await
            .unwrap()
            .unwrap()
            .fetched_at,
        T0 + 3_600_000
    );
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1,
        "one file per payload"
    );

    // two hours on, a failed read still purges the raw copy and leaves a receipt without a
    // payload; the catalogue stays as last read
    server.clock.advance_millis(2 * 3_600_000 + 1);
    api.answer(Plan::Status(503, None));
    let failed = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            failed,
            RecorderError::Upstream(UpstreamError::Status { status: 503, retry_at: Some(at) })
                if at == server.clock.now_millis() + 5 * 60_000
        ),
        "{failed:?}"
    );
    assert_eq!(server.store.raw_payload(&sha).await.unwrap(), None);
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(receipts.len(), 3);
    assert_eq!(
        (receipts[0].status, receipts[0].payload_sha256.clone()),
        (Some(503), None)
    );
    let stored = server.store.cards_catalogue().await.unwrap().unwrap();
    assert_eq!(stored.observed_at, T0 + 3_600_000);

    // a payload the rules refuse is archived and receipted, and changes nothing
    server.clock.advance_millis(5 * 60_000);
    let odd = r#"{"items":[{"name":"Odd","id":42000000,"maxLevel":16,"rarity":"common"}]}"#;
    api.answer(Plan::Body(odd.to_owned()));
    let rejected = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            rejected,
            RecorderError::Rejected(CardsError::UnknownKind { id: 42000000, .. })
        ),
        "{rejected:?}"
    );
    let odd_sha = payload_sha256(odd.as_bytes());
    let receipts = server.store.receipts("/cards", 10).await.unwrap();
    assert_eq!(
        receipts[0].payload_sha256.as_deref(),
        Some(odd_sha.as_str())
    );
    assert_eq!(
        upstream.archive().get(&odd_sha).await.unwrap().as_deref(),
        Some(odd.as_bytes())
    );
    assert_eq!(
        server.store.cards_catalogue().await.unwrap().unwrap(),
        stored
    );
    assert_eq!(api.requests(), 4);
}

async fn the_budget_honours_retry_after(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let upstream = upstream(&server, &api, &archive);
    api.answer(Plan::Status(429, Some("120")));
    let throttled = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            throttled,
            RecorderError::Upstream(UpstreamError::Status { status: 429, retry_at: Some(at) })
                if at == T0 + 120_000
        ),
        "{throttled:?}"
    );
    assert_eq!(api.requests(), 1);
    // both lanes pause: nothing is sent, and no receipt is written, until Retry-After passes
    api.answer(Plan::Body(FIXTURE.to_owned()));
    for advance in [0, 119_999] {
        server.clock.advance_millis(advance);
        let refused = refresh(&server, &upstream).await.unwrap_err();
        assert!(
            matches!(
                refused,
                RecorderError::Upstream(UpstreamError::Throttled { until, .. }) if until == T0 + 120_000
            ),
            "{refused:?}"
        );
    }
    assert_eq!(api.requests(), 1);
    assert_eq!(server.store.receipts("/cards", 10).await.unwrap().len(), 1);
    server.clock.advance_millis(1);
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(api.requests(), 2);

    // without Retry-After the pause is 60 s
    api.answer(Plan::Status(429, None));
    let now = server.clock.now_millis();
    assert!(refresh(&server, &upstream).await.is_err());
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(59_999);
    assert!(refresh(&server, &upstream).await.is_err());
    server.clock.set_millis(now + 60_000);
    refresh(&server, &upstream).await.unwrap();
    assert_eq!(api.requests(), 4);

    // five consecutive 403s open the circuit: nothing more is sent until the probe
    server.clock.advance_millis(10_000);
    api.answer(Plan::Status(403, None));
    for _ in 0..5 {
        assert!(refresh(&server, &upstream).await.is_err());
    }
    assert_eq!(api.requests(), 9);
    let open = refresh(&server, &upstream).await.unwrap_err();
    assert!(
        matches!(
            open,
            RecorderError::Upstream(UpstreamError::CircuitOpen { .. })
        ),
        "{open:?}"
    );
    assert_eq!(api.requests(), 9);
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(15 * 60_000);
    refresh(&server, &upstream).await.unwrap();
    let receipts = server.store.receipts("/cards", 1).await.unwrap();
    assert_eq!(receipts[0].admission, "probe");
    assert_eq!(api.requests(), 10);
}

on_both_backends!(
    receipts_archive_and_raw_retention,
    the_budget_honours_retry_after
);
