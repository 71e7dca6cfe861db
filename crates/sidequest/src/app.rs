//! Assembling the server: the router of every door and page, and `run` with graceful
//! shutdown. The state the handlers share and its configuration are [`crate::state`]'s
//! (re-exported here).

use std::sync::Arc;

use axum::Router;
use mcp_door::{Clock, Door, Serving, serve_until};
use tokio::net::TcpListener;

use crate::mcp::player::{self, PlayAuthenticator, PlayerPresenter};
use crate::service::Random;
use crate::store;

pub use crate::state::{AppState, ServeConfig, StartError, default_login_hash_concurrency};

/// The router of every door and page.
pub fn app(state: AppState) -> Result<Router, StartError> {
    let catalog = Arc::new(player::catalog(Arc::clone(&state.service))?);
    let player_door = Door::new(
        "/play/mcp",
        Arc::new(PlayAuthenticator {
            service: Arc::clone(&state.service),
        }),
        catalog,
        Arc::clone(&state.admission),
        Arc::new(PlayerPresenter),
    )
    .with_config(state.door.clone())
    .with_pre_auth(state.pre_auth.clone())
    .with_metrics(Arc::clone(&state.metrics));
    let author_door = crate::mcp::author::router(&state)?;
    Ok(Router::new()
        .merge(player_door.router())
        .merge(author_door)
        .merge(crate::http::router(state))
        .route("/healthz", axum::routing::get(|| async { "ok" })))
}

/// Connects, migrates and serves on `listener` until `shutdown` resolves, then drains.
pub async fn run(
    config: ServeConfig,
    listener: TcpListener,
    clock: Arc<dyn Clock>,
    random: Arc<dyn Random>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let store = store::connect(&config.database_url, &config.db).await?;
    store.migrate().await?;
    let state = AppState::new(store, &config, clock, random).await?;
    let metrics = Arc::clone(&state.metrics);
    let router = app(state)?;
    tracing::info!(address = %listener.local_addr()?, "sidequest serving /play/mcp, /mcp and /api");
    serve_until(
        listener,
        router,
        &metrics,
        &Serving {
            drain_timeout: config.drain_timeout,
            metrics_bind: config.metrics_bind,
        },
        shutdown,
    )
    .await?;
    Ok(())
}
