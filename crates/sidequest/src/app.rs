//! Assembling the server: the router of every door and page (with the platform's `/healthz`,
//! liveness, and `/readyz`, the database and Redis answering), and `run` with graceful shutdown. The state the handlers share and its configuration are [`crate::state`]'s
//! (re-exported here).

use std::sync::Arc;

use axum::Router;
use mcp_door::Clock;
use tokio::net::TcpListener;

use crate::mcp::player::{self, PlayAuthenticator, PlayTokens, PlayerPresenter};
use crate::service::Random;
use crate::store;

pub use crate::state::{AppState, ServeConfig, StartError, default_login_hash_concurrency};

/// The router of every door and page.
pub fn app(state: AppState) -> Result<Router, StartError> {
    let catalog = Arc::new(player::catalog(
        Arc::clone(&state.service),
        state.reads.clone(),
    )?);
    let player_door = state.doors.door(
        "/play/mcp",
        Arc::new(PlayAuthenticator {
            tokens: PlayTokens::new(Arc::clone(&state.service)),
            realm: player::play_realm(),
        }),
        catalog,
        Arc::new(PlayerPresenter),
    );
    let author_door = crate::mcp::author::router(&state)?;
    Ok(Router::new()
        .merge(player_door.router())
        .merge(author_door)
        .merge(crate::http::router(state.clone()))
        .merge(crate::web::router(state.clone()))
        .merge(state.doors.health_router()))
}

/// Connects, migrates and serves on `listener` until `shutdown` resolves, then drains.
pub async fn run(
    config: ServeConfig,
    listener: TcpListener,
    clock: Arc<dyn Clock>,
    random: Arc<dyn Random>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let store = sqlkit::open_migrated(store::connect(
        &config.server.database_url,
        &config.server.db,
    ))
    .await?;
    let state = AppState::new(store, &config, clock, random).await?;
    let doors = state.doors.clone();
    let router = app(state)?;
    tracing::info!(address = %listener.local_addr()?, "sidequest serving the pages, /play/mcp, /mcp and /api");
    doors
        .serve(listener, router, &config.server, shutdown)
        .await?;
    Ok(())
}
