//! Readiness for load balancers: `GET /readyz` answers 200 only when every dependency check
//! (the database, Redis when configured) answers within a short deadline, 503 with
//! `Retry-After` otherwise; each check's outcome is named in the JSON body. `/healthz` stays
//! the products' liveness answer and checks nothing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use http::{StatusCode, header};
use serde_json::{Map, Value, json};

/// The deadline of [`Readiness::new`]'s checks unless configured: 2 s.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(2);

type Check = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// The checks `/readyz` runs, all at once, each within the deadline.
#[derive(Clone)]
pub struct Readiness {
    checks: Vec<(&'static str, Check)>,
    deadline: Duration,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self.checks.iter().map(|(n, _)| *n).collect();
        f.debug_struct("Readiness")
            .field("checks", &names)
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl Readiness {
    /// No checks yet; each added one must answer within `deadline`.
    pub fn new(deadline: Duration) -> Self {
        Self {
            checks: Vec::new(),
            deadline,
        }
    }

    /// Adds the check `name`: `check()` resolves `Ok` when the dependency answers.
    pub fn with_check<F, Fut, E>(mut self, name: &'static str, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let check: Check = Arc::new(move || {
            let fut = check();
            Box::pin(async move { fut.await.map_err(|e| e.to_string()) })
        });
        self.checks.push((name, check));
        self
    }

    /// Adds a `redis` check (`PING`) over `conn`.
    pub fn with_redis(self, conn: redis::aio::ConnectionManager) -> Self {
        self.with_check("redis", move || {
            let mut conn = conn.clone();
            async move {
                redis::cmd("PING")
                    .query_async::<String>(&mut conn)
                    .await
                    .map(|_| ())
            }
        })
    }

    /// The names of the checks, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.checks.iter().map(|(n, _)| *n).collect()
    }

    /// Runs every check at once; whether all answered in time, and each one's outcome
    /// (`ok`, `timeout` or `failed`). Failures are logged with their detail, never returned.
    pub async fn probe(&self) -> (bool, Map<String, Value>) {
        let runs = self.checks.iter().map(|(name, check)| {
            let fut = check();
            let deadline = self.deadline;
            async move {
                let outcome = match tokio::time::timeout(deadline, fut).await {
                    Ok(Ok(())) => "ok",
                    Ok(Err(e)) => {
                        tracing::warn!(check = name, error = %e, "readiness check failed");
                        "failed"
                    }
                    Err(_) => {
                        tracing::warn!(check = name, ?deadline, "readiness check timed out");
                        "timeout"
                    }
                };
                (*name, outcome)
            }
        });
        let outcomes = futures::future::join_all(runs).await;
        let ready = outcomes.iter().all(|(_, o)| *o == "ok");
        let checks = outcomes
            .into_iter()
            .map(|(n, o)| (n.to_owned(), Value::String(o.to_owned())))
            .collect();
        (ready, checks)
    }

    /// `GET /readyz` over these checks.
    pub fn router<S: Clone + Send + Sync + 'static>(self) -> Router<S> {
        Router::new()
            .route("/readyz", axum::routing::get(readyz))
            .with_state(Arc::new(self))
    }
}

async fn readyz(State(readiness): State<Arc<Readiness>>) -> Response {
    let (ready, checks) = readiness.probe().await;
    let (status, word) = if ready {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
    };
    let body = axum::Json(json!({"status": word, "checks": checks}));
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    if !ready {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ready_only_when_every_check_answers_in_time() {
        let r = Readiness::new(Duration::from_millis(100))
            .with_check("a", || async { Ok::<_, String>(()) });
        assert!(r.probe().await.0);
        let slow = r.clone().with_check("slow", || async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok::<_, String>(())
        });
        let (ready, checks) = slow.probe().await;
        assert!(!ready);
        assert_eq!(checks["a"], "ok");
        assert_eq!(checks["slow"], "timeout");
        let failing = r.with_check("down", || async { Err::<(), _>("refused") });
        let (ready, checks) = failing.probe().await;
        assert!(!ready);
        assert_eq!(checks["down"], "failed");
        assert_eq!(
            Readiness::new(DEFAULT_READY_TIMEOUT).names(),
            Vec::<&str>::new()
        );
    }
}
