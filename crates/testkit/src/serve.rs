//! Serving a test's router on a real port-0 listener, with the peer address every handler
//! may read (`ConnectInfo`) and a graceful stop when the test lets go of the handle.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Serves `router` on `listener` in the background until the returned sender is sent to or
/// dropped (then in-flight requests finish and the task ends).
pub fn spawn(listener: TcpListener, router: axum::Router) -> oneshot::Sender<()> {
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = stopped.await;
        })
        .await;
    });
    stop
}
