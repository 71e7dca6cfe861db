//! The state every handler shares ([`AppState`]), what `serve` is configured with
//! ([`ServeConfig`]) and what can fail at start ([`StartError`]). Its own module so that the
//! assembly (`app`) and the doors that read the state (`http`, `mcp`) import it without
//! importing each other.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_door::{
    AddressSource, Admission, Clock, DoorConfig, Limits, LocalAdmission, Metrics, PreAuthGate,
    RedisAdmission,
};
use tokio::sync::Semaphore;

use crate::campaign::CampaignService;
use crate::service::{PlayService, Random};
use crate::store::{self, DbOptions, SharedStore};

/// Everything `serve` is configured with.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub database_url: String,
    pub redis_url: Option<String>,
    /// Namespace of the admission keys in Redis (one per deployment sharing a Redis).
    pub redis_prefix: String,
    pub limits: Limits,
    pub pre_auth_concurrency: usize,
    pub db: DbOptions,
    pub door: DoorConfig,
    /// How long in-flight requests may take to finish after a shutdown signal.
    pub drain_timeout: Duration,
    /// The public base URL; when it is https, session cookies are always `Secure`.
    pub public_url: Option<String>,
    /// Where `GET /metrics` (Prometheus) is served; `None`: not served (still counted).
    pub metrics_bind: Option<SocketAddr>,
    /// Where the client address of the login throttle comes from.
    pub address_source: AddressSource,
    /// Logins that may hash a password at once on this instance (argon2 takes 19 MiB and a
    /// core each); a login that finds them all taken is 429 `login_busy`.
    pub login_hash_concurrency: usize,
}

/// The default of [`ServeConfig::login_hash_concurrency`]: one hash per core, since more at
/// once only adds memory, not throughput.
pub fn default_login_hash_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            database_url: "sqlite://sidequest.db".into(),
            redis_url: None,
            redis_prefix: "sidequest:admission".into(),
            limits: Limits::default(),
            pre_auth_concurrency: 64,
            db: DbOptions::default(),
            door: DoorConfig::default(),
            drain_timeout: Duration::from_secs(30),
            public_url: None,
            metrics_bind: None,
            address_source: AddressSource::Peer,
            login_hash_concurrency: default_login_hash_concurrency(),
        }
    }
}

/// A failure to start the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error("database: {0}")]
    Store(#[from] store::StoreError),
    #[error("admission: {0}")]
    Admission(#[from] mcp_door::AdmissionError),
    #[error("catalog: {0}")]
    Catalog(#[from] mcp_door::CatalogError),
    #[error("server: {0}")]
    Io(#[from] std::io::Error),
}

/// The state every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<PlayService>,
    /// Everything outside the player door (REST, author door), over the same store.
    pub campaign: Arc<CampaignService>,
    pub admission: Arc<dyn Admission>,
    pub pre_auth: PreAuthGate,
    pub door: DoorConfig,
    /// Session cookies are `Secure` for every request (the public URL is https).
    pub secure_cookies: bool,
    /// Counts of both doors and the pool, for `GET /metrics`.
    pub metrics: Arc<Metrics>,
    /// Where a request's client address comes from (the login throttle keys on it).
    pub address_source: AddressSource,
    /// The cap on logins hashing a password at once (taken without waiting).
    pub login_hashing: Arc<Semaphore>,
}

impl AppState {
    /// Builds the state over an already migrated store.
    pub async fn new(
        store: SharedStore,
        config: &ServeConfig,
        clock: Arc<dyn Clock>,
        random: Arc<dyn Random>,
    ) -> Result<Self, StartError> {
        let admission: Arc<dyn Admission> = match &config.redis_url {
            Some(url) => Arc::new(
                RedisAdmission::connect(url, &config.redis_prefix, config.limits.clone()).await?,
            ),
            None => Arc::new(LocalAdmission::new(
                config.limits.clone(),
                Arc::clone(&clock),
            )),
        };
        let metrics = Arc::new(Metrics::new());
        let pool = Arc::clone(&store);
        metrics.sample_pool("sidequest", move || pool.pool_use());
        let service = Arc::new(PlayService::new(store, clock, random));
        Ok(Self {
            metrics,
            address_source: config.address_source.clone(),
            login_hashing: Arc::new(Semaphore::new(config.login_hash_concurrency.max(1))),
            campaign: Arc::new(CampaignService::new(Arc::clone(&service))),
            service,
            admission,
            pre_auth: PreAuthGate::new(config.pre_auth_concurrency),
            door: config.door.clone(),
            secure_cookies: config
                .public_url
                .as_deref()
                .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://")),
        })
    }
}
