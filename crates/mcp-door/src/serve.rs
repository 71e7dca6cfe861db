//! A server process's life around its router: logging set up ([`init_tracing`]), serving until
//! shutdown with a bounded drain and the metrics listener stopping with it ([`serve_until`]),
//! and the signal that starts the shutdown ([`shutdown_signal`]). Every product's `main` and
//! `run` go through these.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

use crate::metrics::{self, Metrics};

/// How a server stops.
#[derive(Debug, Clone)]
pub struct Serving {
    /// How long in-flight requests may take to finish once `shutdown` resolves; past it the
    /// remaining connections are closed.
    pub drain_timeout: Duration,
    /// Where `GET /metrics` is served (bound here, so a bad address fails the start).
    pub metrics_bind: Option<SocketAddr>,
}

/// Serves `router` on `listener` (with the peer address as connect info) until `shutdown`
/// resolves, then lets in-flight requests finish for at most [`Serving::drain_timeout`] and
/// returns. Connections still open past the drain are not waited for: their tasks end with
/// the runtime, i.e. when the process exits after `run`. With [`Serving::metrics_bind`],
/// `metrics` is served there until the same moment.
pub async fn serve_until(
    listener: TcpListener,
    router: Router,
    metrics: &Arc<Metrics>,
    serving: &Serving,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let Some(bind) = serving.metrics_bind {
        metrics::serve(metrics, TcpListener::bind(bind).await?, stop_rx.clone())?;
    }
    let server = axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let drain = serving.drain_timeout;
    let mut stopped = stop_rx;
    tokio::select! {
        r = server => r?,
        _ = async move {
            let _ = stopped.wait_for(|s| *s).await;
            tokio::time::sleep(drain).await;
        } => tracing::warn!("drain timeout reached; not waiting for the remaining connections"),
    }
    Ok(())
}

/// Initializes logging on standard error, `RUST_LOG` filtering (default `info`): one JSON
/// object per line when `format` is `json`, tracing-subscriber's text lines otherwise.
pub fn init_tracing(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM, logging that the drain starts: the
/// `shutdown` future a product's `serve` hands to [`serve_until`].
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown signal received; draining");
}
