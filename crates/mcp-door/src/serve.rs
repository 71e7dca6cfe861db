//! Serving a product's router until shutdown: graceful stop, a bounded drain, and the
//! metrics listener stopping with it. Every product's `run` ends the same way.

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
