//! Reading on a schedule: the daily read claimed once across instances, `elixir serve` polling
//! with a token and stopping, and the `elixir cards refresh` command.

use std::sync::Arc;
use std::time::Duration;

use elixir::recorder::{self, PollSettings, Poller, Tick};
use elixir::store::{self, SharedStore};
use elixir::upstream::{Upstream, payload_sha256};
use mcp_door::Clock;
use testkit::db::TempDir;

use super::{DAY, FIXTURE, FakeApi, Plan, TOKEN, config};
use crate::on_both_backends;
use crate::support::{Server, T0, spawn};

async fn second_store(url: &str) -> SharedStore {
    let store = store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
}

fn poller(
    server: &Server,
    store: SharedStore,
    api: &FakeApi,
    archive: &TempDir,
    owner: &str,
) -> Poller {
    Poller {
        upstream: Arc::new(
            Upstream::new(
                &config(api, archive),
                Arc::clone(&store),
                Arc::new(server.clock.clone()),
            )
            .unwrap(),
        ),
        store,
        clock: Arc::new(server.clock.clone()),
        owner: owner.into(),
        settings: PollSettings {
            check_every: Duration::from_millis(20),
            ..PollSettings::default()
        },
    }
}

/// Waits (in real time) until `f` holds.
async fn eventually(what: &str, mut f: impl AsyncFnMut() -> bool) {
    for _ in 0..500 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn the_daily_read_happens_once_across_instances(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let a = poller(
        &server,
        Arc::clone(&server.store),
        &api,
        &archive,
        "instance-a",
    );
    let b = poller(
        &server,
        second_store(url).await,
        &api,
        &archive,
        "instance-b",
    );

    // 2026-01-01T00:00Z belongs to game day 2025-12-31: the first look reads at once
    assert!(matches!(a.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 1);
    // 09:59Z is still that game day; 10:00Z starts the next
    server.clock.set_millis(T0 + 10 * 3_600_000 - 1);
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    server.clock.set_millis(T0 + 10 * 3_600_000);
    assert!(matches!(b.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 2);

    // a failed read keeps the claim: the owner retries when the budget allows, the other
    // instance only once the lease has lapsed
    server.clock.advance_millis(DAY);
    api.answer(Plan::Status(503, None));
    let failed_at = server.clock.now_millis();
    assert_eq!(
        a.tick().await.unwrap(),
        Tick::RetryAt(failed_at + 5 * 60_000)
    );
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    api.answer(Plan::Body(FIXTURE.to_owned()));
    server.clock.advance_millis(5 * 60_000);
    assert_eq!(b.tick().await.unwrap(), Tick::NotDue);
    server.clock.set_millis(failed_at + 15 * 60_000);
    assert!(matches!(b.tick().await.unwrap(), Tick::Read(_)));
    assert_eq!(a.tick().await.unwrap(), Tick::NotDue);
    assert_eq!(api.requests(), 4);
    assert_eq!(
        server
            .store
            .cards_catalogue()
            .await
            .unwrap()
            .unwrap()
            .observed_at,
        failed_at + 15 * 60_000
    );

    // as background tasks: the next game day is read once, and both stop on cancellation
    server.clock.advance_millis(DAY);
    let cancel = tokio_util::sync::CancellationToken::new();
    let tasks = [
        recorder::spawn_poller(a, cancel.clone()),
        recorder::spawn_poller(b, cancel.clone()),
    ];
    eventually("the next day's read", async || api.requests() == 5).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(api.requests(), 5);
    cancel.cancel();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the poll task stops on cancellation")
            .unwrap();
    }
}

async fn serve_polls_with_a_token_and_stops(url: &str) {
    let archive = TempDir::new("elixir-archive-");
    let outbox = TempDir::new("elixir-outbox-");
    let api = FakeApi::start(FIXTURE).await;
    let clock = mcp_door::FakeClock::new(T0);
    let mut config = elixir::app::ServeConfig {
        oauth: elixir::access::oauth::OAuthSettings {
            mail: elixir::access::oauth::MailSettings::Outbox(outbox.path().to_owned()),
            ..Default::default()
        },
        upstream: Some(config(&api, &archive)),
        poll: PollSettings {
            check_every: Duration::from_millis(20),
            ..PollSettings::default()
        },
        ..Default::default()
    };
    config.server.database_url = url.to_owned();
    config.server.drain_timeout = Duration::from_secs(1);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(elixir::app::run(
        config,
        listener,
        Arc::new(clock),
        Arc::new(crate::support::CountingRandom::new(7)),
        async move {
            let _ = stopped.await;
        },
    ));
    let http = reqwest::Client::new();
    eventually("serve to listen", async || {
        http.get(format!("http://{addr}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    // serve has migrated by now, so this connection does not race its migrations
    let store = second_store(url).await;
    eventually("the catalogue read by serve", async || {
        store.cards_catalogue().await.unwrap().is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(api.requests(), 1);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("serve returns after shutdown, its poll task stopped")
        .unwrap()
        .unwrap();
    assert_eq!(api.requests(), 1);
}

async fn the_refresh_command(url: &str) {
    use clap::Parser;
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    let base = api.base_url();
    let archive_dir = archive.path().display().to_string();
    let cli = |token: Option<&str>| {
        let mut argv = vec![
            "elixir",
            "--database-url",
            url,
            "cards",
            "refresh",
            "--cr-api-url",
            &base,
            "--archive-dir",
            &archive_dir,
            "--json",
        ];
        if let Some(t) = token {
            argv.extend(["--cr-api-token", t]);
        }
        elixir::cli::Cli::try_parse_from(argv).unwrap()
    };
    let missing = elixir::cli::run(cli(None)).await.unwrap_err();
    assert!(missing.to_string().contains("--cr-api-token"), "{missing}");
    assert_eq!(api.requests(), 0);
    elixir::cli::run(cli(Some(TOKEN))).await.unwrap();
    assert_eq!(api.requests(), 1);
    let store = second_store(url).await;
    let stored = store.cards_catalogue().await.unwrap().unwrap();
    assert_eq!(stored.catalogue.cards.len(), 12);
    assert_eq!(stored.payload_sha256, payload_sha256(FIXTURE.as_bytes()));
    let receipts = store.receipts("/cards", 10).await.unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].admission, "recorder");
    assert!(
        archive
            .path()
            .join(&stored.payload_sha256[..2])
            .join(format!("{}.json.gz", stored.payload_sha256))
            .exists()
    );
}

on_both_backends!(
    the_daily_read_happens_once_across_instances,
    serve_polls_with_a_token_and_stops,
    the_refresh_command
);
