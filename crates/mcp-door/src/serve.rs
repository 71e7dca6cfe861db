//! A server process's life around its router: logging set up ([`init_tracing`]), serving until
//! shutdown with a bounded drain and the metrics listener stopping with it ([`serve_until`]),
//! and the signal that starts the shutdown ([`shutdown_signal`]). Every product's `main` and
//! `run` go through these.
//!
//! The accept loop is the platform's own (hyper's HTTP/1.1 connection under it), so that slow
//! and flooding clients are bounded here for every route: a connection cap
//! ([`ConnectionLimits::max_connections`], connections past it are closed at once), a header
//! timeout that also ends idle keep-alive connections, a whole-body timeout, optional TLS
//! ([`crate::tls`], reloaded on SIGHUP) and the staged close of unread bodies
//! ([`crate::drain`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::{Layer, ServiceExt};

use crate::around::AroundLayer;
use crate::drain::DrainLimits;
use crate::metrics::{self, Metrics};
use crate::tls::{TlsFiles, TlsReloader};

/// Bounds on every connection, whatever route it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// A request's headers (and the TLS handshake) must arrive within this time; an idle
    /// keep-alive connection is closed after it too.
    pub header_timeout: Duration,
    /// A request's whole body must arrive within this time after its headers; past it the
    /// body read fails (a door answers 408 sooner, after its own body timeout).
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    /// 1024 connections, 10 s for headers (and idle keep-alive), 30 s for a body.
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// How a server serves and stops.
#[derive(Debug, Clone)]
pub struct Serving {
    /// How long in-flight requests may take to finish once `shutdown` resolves; past it the
    /// remaining connections are closed.
    pub drain_timeout: Duration,
    /// Where `GET /metrics` is served (bound here, so a bad address fails the start).
    pub metrics_bind: Option<SocketAddr>,
    /// The connection cap and the header and body timeouts.
    pub connections: ConnectionLimits,
    /// How much of a body a handler left unread is drained before closing.
    pub body_drain: DrainLimits,
    /// Serve HTTPS with this certificate and key (read at start, again on SIGHUP).
    pub tls: Option<TlsFiles>,
}

impl Serving {
    /// A 30 s drain, no metrics listener, the default connection and drain limits, plain HTTP.
    pub fn new() -> Self {
        Self {
            drain_timeout: Duration::from_secs(30),
            metrics_bind: None,
            connections: ConnectionLimits::default(),
            body_drain: DrainLimits::default(),
            tls: None,
        }
    }
}

impl Default for Serving {
    fn default() -> Self {
        Self::new()
    }
}

/// Serves `router` on `listener` (with the peer address as connect info) until `shutdown`
/// resolves, then lets in-flight requests finish for at most [`Serving::drain_timeout`] and
/// returns. Connections still open past the drain are not waited for: their tasks end with
/// the runtime, i.e. when the process exits after `run`. With [`Serving::metrics_bind`],
/// `metrics` is served there until the same moment. A TLS certificate or key that cannot be
/// read fails here, before anything is served.
pub async fn serve_until(
    listener: TcpListener,
    router: Router,
    metrics: &Arc<Metrics>,
    serving: &Serving,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = serving.tls.as_ref().map(TlsReloader::load).transpose()?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let Some(bind) = serving.metrics_bind {
        metrics::serve(metrics, TcpListener::bind(bind).await?, stop_rx.clone())?;
    }
    if let Some(tls) = &tls {
        reload_on_sighup(tls.clone(), stop_rx.clone());
    }
    // Around the router as a whole, not through `Router::layer`, which wraps every route in a
    // boxed service of its own.
    let router = AroundLayer(serving.body_drain).layer(router);
    let limits = serving.connections;
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!(%peer, "connection cap reached; closing a new connection");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let watcher = graceful.watcher();
        let tls = tls.as_ref().map(TlsReloader::acceptor);
        tokio::spawn(async move {
            match tls {
                None => serve_connection(stream, peer, router, limits, watcher).await,
                Some(acceptor) => {
                    match tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await
                    {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, peer, router, limits, watcher).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(serving.drain_timeout) => {
            tracing::warn!("drain timeout reached; not waiting for the remaining connections");
        }
    }
    Ok(())
}

/// One HTTP/1.1 connection: the peer address as connect info, every body under the body
/// timeout, the header timeout, a graceful close when the server stops.
async fn serve_connection<I, S>(
    io: I,
    peer: SocketAddr,
    router: S,
    limits: ConnectionLimits,
    watcher: Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: tower::Service<
            http::Request<axum::body::Body>,
            Response = axum::response::Response,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let body_timeout = limits.body_timeout;
    let service = router.map_request(move |request: http::Request<Incoming>| {
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(ConnectInfo(peer));
        http::Request::from_parts(
            parts,
            axum::body::Body::new(TimedBody::new(body, body_timeout)),
        )
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
    if let Err(e) = watcher.watch(connection).await {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// A request body that fails once its deadline passes before its end.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl TimedBody {
    fn new(inner: Incoming, timeout: Duration) -> Self {
        Self {
            inner,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

impl http_body::Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "request body not received in time",
            ))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Rereads the certificate and key on every SIGHUP until `stop`; a failed reread keeps the
/// ones in use and says why.
fn reload_on_sighup(tls: TlsReloader, mut stop: tokio::sync::watch::Receiver<bool>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            tracing::warn!("cannot listen for SIGHUP; the TLS certificate will not be reloaded");
            return;
        };
        loop {
            tokio::select! {
                _ = hup.recv() => match tls.reload() {
                    Ok(()) => tracing::info!("SIGHUP: TLS certificate and key reloaded"),
                    Err(e) => tracing::error!(error = %e, "SIGHUP: TLS reload failed; keeping the certificate in use"),
                },
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    });
    #[cfg(not(unix))]
    let _ = (tls, stop);
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
