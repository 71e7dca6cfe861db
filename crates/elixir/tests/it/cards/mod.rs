//! The card catalogue end to end. This module owns what its children share: the fake Clash
//! Royale API (axum on a port-0 listener serving the shared `/cards` fixture, counting requests,
//! able to answer 429/503/403) and one read of it through the upstream client, budget and archive
//! into the store. The children own the catalogue at the doors, the reads themselves, and polling.

mod catalogue;
mod instances;
mod polling;
mod reads;
mod statements;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use elixir::recorder::{self, RecorderError};
use elixir::upstream::{Upstream, UpstreamConfig};
use serde_json::json;
use testkit::db::TempDir;

use crate::support::Server;

/// The shared fixture, copied into the repository.
const FIXTURE: &str = include_str!("../../fixtures/clash-royale-api/cards.json");
const TOKEN: &str = "test-api-token";
const DAY: i64 = 24 * 3_600_000;

/// What the fake API answers on `/v1/cards` right now.
#[derive(Debug, Clone)]
enum Plan {
    Body(String),
    Status(u16, Option<&'static str>),
}

struct FakeState {
    requests: AtomicUsize,
    plan: Mutex<Plan>,
    authorization: Mutex<Option<String>>,
}

/// A fake Clash Royale API on 127.0.0.1:0.
struct FakeApi {
    addr: SocketAddr,
    state: Arc<FakeState>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn cards_route(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    state.requests.fetch_add(1, Ordering::SeqCst);
    *state.authorization.lock().unwrap() = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let plan = state.plan.lock().unwrap().clone();
    match plan {
        Plan::Body(body) => (
            StatusCode::OK,
            [
                ("content-type", "application/json"),
                ("cache-control", "max-age=600"),
            ],
            body,
        )
            .into_response(),
        Plan::Status(status, retry_after) => {
            let reason = match status {
                429 => "requestThrottled",
                503 => "inMaintenance",
                403 => "accessDenied",
                _ => "unknownException",
            };
            let mut response = (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                json!({"reason": reason}).to_string(),
            )
                .into_response();
            if let Some(r) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", r.parse().unwrap());
            }
            response
        }
    }
}

impl FakeApi {
    async fn start(body: &str) -> Self {
        let state = Arc::new(FakeState {
            requests: AtomicUsize::new(0),
            plan: Mutex::new(Plan::Body(body.to_owned())),
            authorization: Mutex::new(None),
        });
        let router = axum::Router::new()
            .route("/v1/cards", axum::routing::get(cards_route))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
        });
        Self {
            addr,
            state,
            _stop: tx,
        }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    fn answer(&self, plan: Plan) {
        *self.state.plan.lock().unwrap() = plan;
    }
}

fn config(api: &FakeApi, archive: &TempDir) -> UpstreamConfig {
    UpstreamConfig {
        base_url: api.base_url(),
        archive_dir: archive.path().to_owned(),
        ..UpstreamConfig::new(TOKEN)
    }
}

fn upstream(server: &Server, api: &FakeApi, archive: &TempDir) -> Upstream {
    Upstream::new(
        &config(api, archive),
        Arc::clone(&server.store),
        Arc::new(server.clock.clone()),
    )
    .unwrap()
}

async fn refresh(
    server: &Server,
    upstream: &Upstream,
) -> Result<recorder::CardsRefreshed, RecorderError> {
    recorder::refresh_cards(upstream, &server.store, &server.clock).await
}
