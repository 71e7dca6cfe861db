//! What every product's `serve` shares: its configuration ([`ServerConfig`]: database and pool,
//! Redis, admission limits, the pre-auth gate, the doors' transport limits, the metrics
//! listener, the drain, the edge — allowed origins, connection limits, TLS, readiness) and the
//! parts every door of one server is composed from ([`Doors`]), and what can fail while they
//! start ([`StartError`]), so a product states only what differs. Product-only settings stay in each product's own
//! configuration, which embeds a [`ServerConfig`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use sqlkit::{Lifecycle, PoolSettings};
use tokio::net::TcpListener;

use crate::admission::{
    Admission, AdmissionError, Limits, LocalAdmission, PreAuthGate, RedisAdmission,
};
use crate::auth::Authenticator;
use crate::catalog::Catalog;
use crate::clock::Clock;
use crate::door::{Door, DoorConfig, Presenter};
use crate::drain::DrainLimits;
use crate::edge::{DoorEdge, OriginPolicy};
use crate::metrics::Metrics;
use crate::ready::{DEFAULT_READY_TIMEOUT, Readiness};
use crate::serve::{ConnectionLimits, Serving, serve_until};
use crate::tls::TlsFiles;

/// The pool settings of [`ServerConfig::new`]: 16 connections, 5 s to get one, a 10 s
/// statement timeout (SQLite's busy timeout), a 5 s lock timeout (PostgreSQL) and a 6 s
/// client-side deadline per PostgreSQL statement: the lock timeout and a second for its
/// answer, so a lock wait always ends with PostgreSQL's own error first, while a database
/// that stops answering is given up within seconds, not at the 25 s tool deadline.
pub const DEFAULT_POOL: PoolSettings = PoolSettings {
    max_connections: 16,
    acquire_timeout: Duration::from_secs(5),
    statement_timeout: Duration::from_secs(10),
    lock_timeout: Duration::from_secs(5),
    query_timeout: Duration::from_secs(6),
    sqlite_cache_kib: sqlkit::SQLITE_DEFAULT_CACHE_KIB,
};

/// The part of a server's configuration every product has.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `sqlite://FILE`, `sqlite::memory:` or `postgres://…`.
    pub database_url: String,
    /// Redis for admission counters shared by every instance; in-process when absent.
    pub redis_url: Option<String>,
    /// Namespace of the admission keys in Redis (one per deployment sharing a Redis).
    pub redis_prefix: String,
    /// Per-credential and global admission.
    pub limits: Limits,
    /// Requests this instance authenticates at once, across its doors.
    pub pre_auth_concurrency: usize,
    /// The database pool's size and timeouts.
    pub db: PoolSettings,
    /// Transport limits of every door (body size and time, tool deadline, JSON limits).
    pub door: DoorConfig,
    /// How long in-flight requests may take to finish after a shutdown signal.
    pub drain_timeout: Duration,
    /// Where `GET /metrics` (Prometheus) is served; `None`: not served (still counted).
    pub metrics_bind: Option<SocketAddr>,
    /// Origins a door accepts besides the public URL's (`--allowed-origin`); browser-based
    /// clients from them get CORS answers. Normalized `scheme://host[:port]`.
    pub allowed_origins: Vec<String>,
    /// Whether the doors check `Host` against the public URL (the server is bound to a
    /// loopback address, where DNS rebinding is the threat).
    pub check_host: bool,
    /// The connection cap and the header and body timeouts of every connection.
    pub connections: ConnectionLimits,
    /// How much of a body a handler left unread is drained before the connection closes.
    pub body_drain: DrainLimits,
    /// Serve HTTPS with this certificate and key (`--tls-cert`/`--tls-key`).
    pub tls: Option<TlsFiles>,
    /// How long each `/readyz` check may take.
    pub ready_timeout: Duration,
}

impl ServerConfig {
    /// A server on `database_url` whose Redis admission keys start with `redis_prefix`, with
    /// the platform's defaults: in-process admission with [`Limits::default`], 64 requests
    /// authenticating at once, [`DEFAULT_POOL`], [`DoorConfig::default`], a 30 s drain, no
    /// metrics listener, no allowed origin besides the public one, `Host` checked, the default
    /// [`ConnectionLimits`] and [`DrainLimits`], plain HTTP and 2 s readiness checks.
    pub fn new(database_url: impl Into<String>, redis_prefix: impl Into<String>) -> Self {
        Self {
            database_url: database_url.into(),
            redis_url: None,
            redis_prefix: redis_prefix.into(),
            limits: Limits::default(),
            pre_auth_concurrency: 64,
            db: DEFAULT_POOL,
            door: DoorConfig::default(),
            drain_timeout: Duration::from_secs(30),
            metrics_bind: None,
            allowed_origins: Vec::new(),
            check_host: true,
            connections: ConnectionLimits::default(),
            body_drain: DrainLimits::default(),
            tls: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }

    /// How [`serve_until`](crate::serve_until) stops this server.
    pub fn serving(&self) -> Serving {
        Serving {
            drain_timeout: self.drain_timeout,
            metrics_bind: self.metrics_bind,
            connections: self.connections,
            body_drain: self.body_drain,
            tls: self.tls.clone(),
        }
    }
}

/// A failure to start a server, in the parts every product's start-up has: its store
/// (connecting, migrating), admission (Redis), a catalog's declarations, and binding or
/// serving. A product with more to start wraps it in its own error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error("database: {0}")]
    Store(#[from] sqlkit::DbFailure),
    #[error("admission: {0}")]
    Admission(#[from] AdmissionError),
    #[error("catalog: {0}")]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error("server: {0}")]
    Io(#[from] std::io::Error),
}

impl From<sqlkit::OpenError> for StartError {
    fn from(err: sqlkit::OpenError) -> Self {
        Self::Store(err.into())
    }
}

/// What every door of one server shares: one admission (so the global gate and each
/// credential's budget span every door), one pre-auth gate, the transport limits and the
/// metrics. Cloning is cheap.
#[derive(Clone)]
pub struct Doors {
    pub admission: Arc<dyn Admission>,
    pub pre_auth: PreAuthGate,
    pub config: DoorConfig,
    /// Counts of every door (and the pools sampled into it), for `GET /metrics`.
    pub metrics: Arc<Metrics>,
    /// The doors' origin policy and staged close.
    pub edge: DoorEdge,
    /// `/readyz`'s checks: Redis when configured; the product adds its database.
    pub readiness: Readiness,
}

impl std::fmt::Debug for Doors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doors")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Doors {
    /// The shared parts `config` describes: Redis admission when it names a Redis (connected
    /// here, so an unreachable one fails the start), else in-process admission on `clock`;
    /// a pre-auth gate of [`ServerConfig::pre_auth_concurrency`]; fresh metrics.
    pub async fn open(
        config: &ServerConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, AdmissionError> {
        let mut readiness = Readiness::new(config.ready_timeout);
        let admission: Arc<dyn Admission> = match &config.redis_url {
            Some(url) => {
                readiness = readiness.with_redis(ready_redis(url).await?);
                Arc::new(
                    RedisAdmission::connect(url, &config.redis_prefix, config.limits.clone())
                        .await?,
                )
            }
            None => Arc::new(LocalAdmission::new(config.limits.clone(), clock)),
        };
        Ok(Self {
            admission,
            pre_auth: PreAuthGate::new(config.pre_auth_concurrency),
            config: config.door.clone(),
            metrics: Arc::new(Metrics::new()),
            edge: DoorEdge {
                origins: Arc::new(origin_policy(config, None)),
                drain: config.body_drain,
            },
            readiness,
        })
    }

    /// The parts of a server over the database `store`, reached at `public_url`: [`Doors::open`]
    /// and [`Doors::with_public_url`], the store's pool sampled into the metrics as `pool`, and
    /// `/readyz` checking that the database answers (after Redis, when configured).
    pub async fn over_store(
        config: &ServerConfig,
        clock: Arc<dyn Clock>,
        public_url: Option<&str>,
        pool: &str,
        store: Arc<dyn Lifecycle>,
    ) -> Result<Self, AdmissionError> {
        let mut doors = Self::open(config, clock)
            .await?
            .with_public_url(config, public_url);
        let sampled = Arc::clone(&store);
        doors.metrics.sample_pool(pool, move || sampled.pool_use());
        doors.readiness = doors.readiness.with_check("database", move || {
            let store = Arc::clone(&store);
            async move { store.ping().await }
        });
        Ok(doors)
    }

    /// What a server answers beside its doors: `GET /healthz` (liveness: `ok` while the
    /// process serves) and `GET /readyz` ([`Doors::readiness`]).
    pub fn health_router(&self) -> Router {
        Router::new()
            .route("/healthz", axum::routing::get(|| async { "ok" }))
            .merge(self.readiness.clone().router())
    }

    /// Serves `router` on `listener` as `config` says ([`ServerConfig::serving`]: drain,
    /// metrics listener, connection limits, TLS) with these parts' metrics, until `shutdown`;
    /// see [`serve_until`].
    pub async fn serve(
        &self,
        listener: TcpListener,
        router: Router,
        config: &ServerConfig,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        serve_until(listener, router, &self.metrics, &config.serving(), shutdown).await
    }

    /// These parts for a server reached at `public_url`: the doors accept its origin (and,
    /// `Host` checked, its host). Without one, loopback origins count as the server's own.
    pub fn with_public_url(mut self, config: &ServerConfig, public_url: Option<&str>) -> Self {
        self.edge.origins = Arc::new(origin_policy(config, public_url));
        self
    }

    /// A door at `path` on these shared parts; the product adds what only it has (resources,
    /// prompts, audit, method gate) with the `with_*` builders.
    pub fn door(
        &self,
        path: &str,
        auth: Arc<dyn Authenticator>,
        catalog: Arc<Catalog>,
        presenter: Arc<dyn Presenter>,
    ) -> Door {
        Door::new(path, auth, catalog, Arc::clone(&self.admission), presenter)
            .with_config(self.config.clone())
            .with_pre_auth(self.pre_auth.clone())
            .with_metrics(Arc::clone(&self.metrics))
            .with_edge(self.edge.clone())
    }
}

/// The origin policy of `config` at `public_url`. Allowed origins are validated where they are
/// given (the command line); one that still does not parse is left out with a warning, and a
/// public URL that does not parse leaves only loopback origins as the server's own.
fn origin_policy(config: &ServerConfig, public_url: Option<&str>) -> OriginPolicy {
    let allowed: Vec<String> = config
        .allowed_origins
        .iter()
        .filter(|o| {
            let ok = OriginPolicy::new(None, std::slice::from_ref(o), false).is_ok();
            if !ok {
                tracing::warn!(origin = %o, "not an origin; left out of the allowed origins");
            }
            ok
        })
        .cloned()
        .collect();
    OriginPolicy::new(public_url, &allowed, config.check_host).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the public URL has no origin; only loopback origins are the server's own");
        OriginPolicy::new(None, &allowed, config.check_host).unwrap_or_default()
    })
}

/// A connection for `/readyz`'s Redis `PING`, apart from admission's so a check never waits
/// behind admission traffic; an unreachable Redis fails the start like admission's does.
async fn ready_redis(url: &str) -> Result<redis::aio::ConnectionManager, AdmissionError> {
    let client =
        redis::Client::open(url).map_err(|e| AdmissionError::Unavailable(e.to_string()))?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Duration::from_secs(1))
        .set_response_timeout(Duration::from_secs(1))
        .set_number_of_retries(0);
    redis::aio::ConnectionManager::new_with_config(client, config)
        .await
        .map_err(|e| AdmissionError::Unavailable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    #[test]
    fn new_has_the_platform_defaults() {
        let c = ServerConfig::new("sqlite://x.db", "x:admission");
        assert_eq!(c.database_url, "sqlite://x.db");
        assert_eq!(c.redis_prefix, "x:admission");
        assert_eq!(c.redis_url, None);
        assert_eq!(c.limits.rate_per_window, Limits::default().rate_per_window);
        assert_eq!(c.pre_auth_concurrency, 64);
        assert_eq!(c.db, DEFAULT_POOL);
        assert_eq!(c.door, DoorConfig::default());
        let serving = c.serving();
        assert_eq!(serving.drain_timeout, Duration::from_secs(30));
        assert_eq!(serving.metrics_bind, None);
    }

    #[test]
    fn a_store_that_does_not_open_is_a_database_failure_to_start() {
        let err = StartError::from(sqlkit::OpenError::Migrate(sqlkit::DbFailure::NotFound));
        assert_eq!(err.to_string(), "database: not found");
        let err = StartError::from(std::io::Error::other("port taken"));
        assert_eq!(err.to_string(), "server: port taken");
    }

    #[tokio::test]
    async fn doors_share_one_pre_auth_gate_of_the_configured_size() {
        let config = ServerConfig {
            pre_auth_concurrency: 3,
            ..ServerConfig::new("sqlite::memory:", "t")
        };
        let doors = Doors::open(&config, Arc::new(FakeClock::new(0)))
            .await
            .unwrap();
        let held: Vec<_> = (0..3)
            .map(|_| doors.pre_auth.try_enter().unwrap())
            .collect();
        assert!(
            doors.clone().pre_auth.try_enter().is_err(),
            "a clone shares the gate"
        );
        drop(held);
        assert!(doors.pre_auth.try_enter().is_ok());
    }

    #[tokio::test]
    async fn an_unreachable_redis_fails_the_start() {
        let config = ServerConfig {
            redis_url: Some("redis://127.0.0.1:1".into()),
            ..ServerConfig::new("sqlite::memory:", "t")
        };
        let err = Doors::open(&config, Arc::new(FakeClock::new(0)))
            .await
            .err();
        assert!(
            matches!(err, Some(AdmissionError::Unavailable(_))),
            "{err:?}"
        );
    }

    /// A database that answers until told not to, with a pool of 3 connections, 1 idle.
    struct Database(std::sync::atomic::AtomicBool);

    #[async_trait::async_trait]
    impl Lifecycle for Database {
        async fn migrate(&self) -> Result<(), sqlkit::DbFailure> {
            Ok(())
        }

        async fn ping(&self) -> Result<(), sqlkit::DbFailure> {
            if self.0.load(std::sync::atomic::Ordering::SeqCst) {
                Ok(())
            } else {
                Err(sqlkit::DbFailure::Unavailable("database gone".into()))
            }
        }

        fn pool_use(&self) -> sqlkit::PoolUse {
            sqlkit::PoolUse { size: 3, idle: 1 }
        }
    }

    #[tokio::test]
    async fn a_store_s_doors_check_its_database_and_sample_its_pool() {
        use tower::ServiceExt;
        let config = ServerConfig::new("sqlite::memory:", "t");
        let database = Arc::new(Database(std::sync::atomic::AtomicBool::new(true)));
        let doors = Doors::over_store(
            &config,
            Arc::new(FakeClock::new(0)),
            None,
            "example",
            database.clone(),
        )
        .await
        .unwrap();
        let get = |path: &'static str| {
            let router = doors.health_router();
            async move {
                let response = router
                    .oneshot(
                        http::Request::get(path)
                            .body(axum::body::Body::empty())
                            .unwrap(),
                    )
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                let body = http_body_util::BodyExt::collect(response.into_body())
                    .await
                    .unwrap()
                    .to_bytes();
                (status, String::from_utf8(body.to_vec()).unwrap())
            }
        };
        assert_eq!(get("/healthz").await, (200, "ok".to_owned()));
        let (status, body) = get("/readyz").await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(r#""database":"ok""#), "{body}");
        database.0.store(false, std::sync::atomic::Ordering::SeqCst);
        let (status, body) = get("/readyz").await;
        assert_eq!(status, 503, "{body}");
        assert!(body.contains(r#""database":"failed""#), "{body}");
        assert_eq!(get("/healthz").await.0, 200, "liveness is not readiness");
        let metrics = doors.metrics.render().unwrap();
        assert!(
            metrics.contains(r#"pool_connections{pool="example",state="in_use"} 2"#),
            "{metrics}"
        );
    }
}
