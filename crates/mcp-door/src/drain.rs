//! The staged close of RFC 9112 §9.6: when a handler answers before it has read the whole
//! request body (a 413, 401, 429, 408 or 400 on a body still arriving), the rest of the body is
//! read and discarded in the background — at most [`DrainLimits::max_bytes`] within
//! [`DrainLimits::max_time`] — while the response is written, and the response says
//! `Connection: close`. Closing at once instead leaves unread bytes in the socket, the kernel
//! answers them with a reset, and a client that reads only after sending (async `httpx`,
//! `fetch`) loses the response. [`staged_close`] does it, as a tower layer through
//! [`crate::around::AroundLayer`] with the [`DrainLimits`].

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, header};
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;

use crate::around::Around;

/// How much of an unread request body is drained after an early answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainLimits {
    /// Bytes read and discarded at most; past them the connection is closed.
    pub max_bytes: u64,
    /// Time the drain may take at most; past it the connection is closed.
    pub max_time: Duration,
}

impl Default for DrainLimits {
    /// 8 MiB within 10 s: enough for a client that sent a few megabytes to a 300 KB door.
    fn default() -> Self {
        Self {
            max_bytes: 8 * 1024 * 1024,
            max_time: Duration::from_secs(10),
        }
    }
}

/// Marks a request whose body an outer [`staged_close`] already tracks, so nested routers
/// (a door inside a product's app inside `serve_until`) drain it once.
#[derive(Debug, Clone, Copy)]
struct Armed;

/// The request body, shared between the handler's view of it and the middleware.
struct Slot {
    body: Mutex<Option<Body>>,
    finished: AtomicBool,
}

impl Slot {
    fn take(&self) -> Option<Body> {
        self.body.lock().ok().and_then(|mut b| b.take())
    }
}

/// The handler's view of the body: every frame goes through the shared slot, so what the
/// handler leaves unread stays there for the drain.
struct Tracked(Arc<Slot>);

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let slot = &self.0;
        let Ok(mut guard) = slot.body.lock() else {
            return Poll::Ready(None);
        };
        let Some(body) = guard.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(&mut *body).poll_frame(cx);
        match &polled {
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => {
                slot.finished.store(true, Ordering::Release);
            }
            Poll::Ready(Some(Ok(_))) if body.is_end_stream() => {
                slot.finished.store(true, Ordering::Release);
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.0
            .body
            .lock()
            .ok()
            .and_then(|b| b.as_ref().map(http_body::Body::is_end_stream))
            .unwrap_or(true)
    }

    fn size_hint(&self) -> SizeHint {
        self.0
            .body
            .lock()
            .ok()
            .and_then(|b| b.as_ref().map(http_body::Body::size_hint))
            .unwrap_or_default()
    }
}

/// Runs `next` (the handler) on a tracked body; if the handler answered without reading the
/// body to its end, drains the rest in the background within `limits` and marks the response
/// `Connection: close`. As a tower layer: `AroundLayer(limits)` ([`Around`] below).
pub(crate) async fn staged_close<F, Fut>(limits: DrainLimits, request: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    if request.extensions().get::<Armed>().is_some() {
        return next(request).await;
    }
    let (mut parts, body) = request.into_parts();
    if http_body::Body::is_end_stream(&body) {
        return next(Request::from_parts(parts, body)).await;
    }
    parts.extensions.insert(Armed);
    let slot = Arc::new(Slot {
        body: Mutex::new(Some(body)),
        finished: AtomicBool::new(false),
    });
    let tracked = Body::new(Tracked(Arc::clone(&slot)));
    let mut response = next(Request::from_parts(parts, tracked)).await;
    if slot.finished.load(Ordering::Acquire) {
        return response;
    }
    if let Some(rest) = slot.take()
        && !http_body::Body::is_end_stream(&rest)
    {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        tokio::spawn(drain(rest, limits));
    }
    response
}

/// [`staged_close`] as a tower layer (`AroundLayer(limits)`): around a whole service
/// (`serve_until` puts it around the router), a door's router (with the edge checks,
/// [`crate::edge`]) or the authorization server's.
impl Around for DrainLimits {
    fn around<N, F>(self, request: Request, next: N) -> impl Future<Output = Response> + Send
    where
        N: FnOnce(Request) -> F + Send,
        F: Future<Output = Response> + Send,
    {
        staged_close(self, request, next)
    }
}

/// Reads and discards `body` until its end, an error, `limits.max_bytes` or `limits.max_time`,
/// whichever comes first; returns the bytes discarded.
pub async fn drain(mut body: Body, limits: DrainLimits) -> u64 {
    let mut seen = 0u64;
    let read = async {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { break };
            if let Some(data) = frame.data_ref() {
                seen += data.len() as u64;
                if seen > limits.max_bytes {
                    break;
                }
            }
        }
    };
    let finished = tokio::time::timeout(limits.max_time, read).await.is_ok();
    if !finished {
        tracing::debug!(
            discarded = seen,
            "request body drain timed out; closing the connection"
        );
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;
    use std::convert::Infallible;
    use tower::{Layer, Service, ServiceExt};

    use crate::around::AroundLayer;

    fn routes() -> Router {
        Router::new()
            .route(
                "/early",
                post(|| async { (http::StatusCode::PAYLOAD_TOO_LARGE, "no") }),
            )
            .route(
                "/read",
                post(|body: Bytes| async move { body.len().to_string() }),
            )
    }

    /// The routes with the staged close on each (`Router::layer`, as a door has it).
    fn app() -> Router {
        routes().layer(AroundLayer(DrainLimits::default()))
    }

    /// An early answer closes (and its body is drained); a handler that read the body whole
    /// keeps the connection.
    async fn early_closes_and_full_read_does_not<S>(service: S)
    where
        S: Service<Request, Response = Response, Error = Infallible> + Clone,
    {
        let early = service
            .clone()
            .oneshot(
                http::Request::post("/early")
                    .body(Body::from("x".repeat(10)))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(early.headers()[header::CONNECTION], "close");
        let read = service
            .oneshot(
                http::Request::post("/read")
                    .body(Body::from("x".repeat(10)))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert!(read.headers().get(header::CONNECTION).is_none());
        assert_eq!(read.into_body().collect().await.unwrap().to_bytes(), "10");
    }

    #[tokio::test]
    async fn an_early_answer_closes_and_a_full_read_does_not() {
        early_closes_and_full_read_does_not(app()).await;
    }

    #[tokio::test]
    async fn the_layer_around_a_whole_router_does_the_same() {
        let limits = DrainLimits::default();
        early_closes_and_full_read_does_not(AroundLayer(limits).layer(routes())).await;
        // Around a router that has the layer on its routes too: the inner one sees the body
        // armed and lets it through.
        early_closes_and_full_read_does_not(AroundLayer(limits).layer(app())).await;
    }

    #[tokio::test]
    async fn the_drain_stops_one_byte_past_its_bound() {
        let limits = DrainLimits {
            max_bytes: 100,
            max_time: Duration::from_secs(5),
        };
        let chunks = (0..50).map(|_| Ok::<_, std::convert::Infallible>(Bytes::from_static(b"abc")));
        let body = Body::from_stream(futures::stream::iter(chunks));
        assert_eq!(
            drain(body, limits).await,
            102,
            "stops at the first chunk past 100"
        );
        let body = Body::from("y".repeat(100));
        assert_eq!(
            drain(body, limits).await,
            100,
            "exactly the bound is read whole"
        );
    }

    #[tokio::test]
    async fn the_drain_stops_at_its_time_bound() {
        let limits = DrainLimits {
            max_bytes: 100,
            max_time: Duration::from_millis(50),
        };
        let first = futures::stream::once(async {
            Ok::<_, std::convert::Infallible>(Bytes::from_static(b"ab"))
        });
        let body = Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()));
        assert_eq!(drain(body, limits).await, 2);
    }
}
