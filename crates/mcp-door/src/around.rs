//! The crate's middleware as tower layers: an [`Around`] answers a request around the service
//! it wraps ([`AroundLayer`]), with one boxed future a request and nothing else boxed or
//! cloned beyond tower's ready clone (what an `axum::middleware::from_fn` layer costs twice
//! over: a boxed clone of the service and a mapped, boxed future of its own).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use tower::{Layer, Service};

/// Middleware: what happens around the wrapped service.
pub trait Around: Clone + Send + Sync + 'static {
    /// Answers `request`, calling `next` (the wrapped service) at most once.
    fn around<N, F>(self, request: Request, next: N) -> impl Future<Output = Response> + Send
    where
        N: FnOnce(Request) -> F + Send,
        F: Future<Output = Response> + Send;
}

/// A tower layer running `A` around the service it wraps.
#[derive(Debug, Clone)]
pub struct AroundLayer<A>(pub A);

impl<A: Clone, S> Layer<S> for AroundLayer<A> {
    type Service = AroundService<A, S>;

    fn layer(&self, inner: S) -> Self::Service {
        AroundService {
            around: self.0.clone(),
            inner,
        }
    }
}

/// The service of [`AroundLayer`].
#[derive(Debug, Clone)]
pub struct AroundService<A, S> {
    around: A,
    inner: S,
}

impl<A, S> Service<Request> for AroundService<A, S>
where
    A: Around,
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service that was polled ready answers; a clone takes its place (tower's rule).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let around = self.around.clone();
        Box::pin(async move {
            let next = move |request| async move {
                let Ok(response) = inner.call(request).await;
                response
            };
            Ok(around.around(request, next).await)
        })
    }
}
