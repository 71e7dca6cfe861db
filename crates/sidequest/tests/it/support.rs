//! Shared fixtures: servers on 127.0.0.1:0 over either backend, a fake clock, the demo world.

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_door::{FakeClock, Limits};
use sidequest::app::{self, AppState, ServeConfig};
use sidequest::demo::{self, DemoCreated};
use sidequest::service::PlayService;
use sidequest::store::{self, SharedStore};
use testkit::mcp::Client;
pub use testkit::random::CountingRandom;

pub use testkit::db::{Backend, fresh_url};

/// A running server and what a test needs to drive it.
pub struct Server {
    pub addr: SocketAddr,
    pub clock: FakeClock,
    pub service: Arc<PlayService>,
    pub store: SharedStore,
    pub metrics: Arc<mcp_door::Metrics>,
    /// The player door's cache of rendered reads.
    pub reads: sidequest::mcp::answers::ReadCache,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}/play/mcp", self.addr)
    }

    pub fn client(&self, token: &str) -> Client {
        Client::new(self.url(), Some(token.to_owned()))
    }

    pub fn anonymous(&self) -> Client {
        Client::new(self.url(), None)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Limits high enough that a test is never throttled unless it means to be.
pub fn generous() -> Limits {
    Limits {
        rate_per_window: 100_000,
        credential_concurrency: 64,
        global_concurrency: 256,
        ..Limits::default()
    }
}

/// Starts a server over `url` (migrated) with `config` tweaks.
pub async fn spawn_with(url: &str, mut config: ServeConfig, seed: u64) -> Server {
    config.server.database_url = url.to_owned();
    let store = store::connect(url, &config.server.db)
        .await
        .expect("connect");
    store.migrate().await.expect("migrate");
    let clock = FakeClock::new(1_767_225_600_000); // 2026-01-01T00:00:00Z
    let state = AppState::new(
        Arc::clone(&store),
        &config,
        Arc::new(clock.clone()),
        Arc::new(CountingRandom::new(seed)),
    )
    .await
    .expect("state");
    let service = Arc::clone(&state.service);
    let metrics = Arc::clone(&state.doors.metrics);
    let reads = state.reads.clone();
    let router = app::app(state).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let tx = testkit::serve::spawn(listener, router);
    Server {
        addr,
        clock,
        service,
        store,
        metrics,
        reads,
        shutdown: Some(tx),
    }
}

/// Starts a server over `url` with generous limits (the login hashing cap included).
pub async fn spawn(url: &str) -> Server {
    spawn_with(
        url,
        ServeConfig {
            server: mcp_door::ServerConfig {
                limits: generous(),
                ..ServeConfig::default().server
            },
            login_hash_concurrency: 64,
            ..ServeConfig::default()
        },
        1,
    )
    .await
}

/// The demo world with `n` assignments (tokens included).
pub async fn world(server: &Server, n: u32) -> DemoCreated {
    demo::run(&server.service, n).await.expect("demo")
}
