//! What every product's `serve` shares: its configuration ([`ServerConfig`]: database and pool,
//! Redis, admission limits, the pre-auth gate, the doors' transport limits, the metrics
//! listener, the drain) and the parts every door of one server is composed from ([`Doors`]),
//! so a product states only what differs. Product-only settings stay in each product's own
//! configuration, which embeds a [`ServerConfig`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sqlkit::PoolSettings;

use crate::admission::{
    Admission, AdmissionError, Limits, LocalAdmission, PreAuthGate, RedisAdmission,
};
use crate::auth::Authenticator;
use crate::catalog::Catalog;
use crate::clock::Clock;
use crate::door::{Door, DoorConfig, Presenter};
use crate::metrics::Metrics;
use crate::serve::Serving;

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
}

impl ServerConfig {
    /// A server on `database_url` whose Redis admission keys start with `redis_prefix`, with
    /// the platform's defaults: in-process admission with [`Limits::default`], 64 requests
    /// authenticating at once, [`DEFAULT_POOL`], [`DoorConfig::default`], a 30 s drain and no
    /// metrics listener.
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
        }
    }

    /// How [`serve_until`](crate::serve_until) stops this server.
    pub fn serving(&self) -> Serving {
        Serving {
            drain_timeout: self.drain_timeout,
            metrics_bind: self.metrics_bind,
        }
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
        let admission: Arc<dyn Admission> = match &config.redis_url {
            Some(url) => Arc::new(
                RedisAdmission::connect(url, &config.redis_prefix, config.limits.clone()).await?,
            ),
            None => Arc::new(LocalAdmission::new(config.limits.clone(), clock)),
        };
        Ok(Self {
            admission,
            pre_auth: PreAuthGate::new(config.pre_auth_concurrency),
            config: config.door.clone(),
            metrics: Arc::new(Metrics::new()),
        })
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
    }
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
}
