//! The state every handler shares ([`AppState`]), what `serve` is configured with
//! ([`ServeConfig`]: mcp-door's [`ServerConfig`] and Sidequest's own settings) and what can
//! fail at start ([`StartError`], mcp-door's). Its own module so that the
//! assembly (`app`) and the doors that read the state (`http`, `mcp`) import it without
//! importing each other.

use std::sync::Arc;

use mcp_door::{AddressSource, Clock, Doors, ServerConfig};
use tokio::sync::Semaphore;

use crate::campaign::CampaignService;
use crate::mcp::answers::ReadCache;
use crate::service::{PlayService, Random};
use crate::store::SharedStore;

/// Everything `serve` is configured with.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// What every server shares: database and pool, Redis, admission limits, the pre-auth
    /// gate, the doors' transport limits, the metrics listener, the drain.
    pub server: ServerConfig,
    /// The public base URL; when it is https, session cookies are always `Secure`.
    pub public_url: Option<String>,
    /// Where the client address of the login throttle comes from.
    pub address_source: AddressSource,
    /// Logins that may hash a password at once on this instance (argon2 takes 19 MiB and a
    /// core each); a login that finds them all taken is 429 `login_busy`.
    pub login_hash_concurrency: usize,
    /// The bound of the player door's cache of rendered read answers, in bytes (0: none).
    pub read_cache_bytes: u64,
}

/// The default of [`ServeConfig::login_hash_concurrency`]: one hash per core, since more at
/// once only adds memory, not throughput.
pub fn default_login_hash_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            // Sidequest's limits, pool, drain and door limits are the platform's defaults.
            server: ServerConfig::new("sqlite://sidequest.db", "sidequest:admission"),
            public_url: None,
            address_source: AddressSource::Peer,
            login_hash_concurrency: default_login_hash_concurrency(),
            read_cache_bytes: crate::mcp::answers::DEFAULT_READ_CACHE_BYTES,
        }
    }
}

/// A failure to start the server: the platform's, since everything Sidequest starts (store,
/// admission, catalogs, listener) is a part every product has.
pub use mcp_door::StartError;

/// The state every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<PlayService>,
    /// Everything outside the player door (REST, author door), over the same store.
    pub campaign: Arc<CampaignService>,
    /// What both doors share: admission, the pre-auth gate, transport limits and the
    /// metrics (both doors' counts and the pool's).
    pub doors: Doors,
    /// Session cookies are `Secure` for every request (the public URL is https).
    pub secure_cookies: bool,
    /// Where a request's client address comes from (the login throttle keys on it).
    pub address_source: AddressSource,
    /// The cap on logins hashing a password at once (taken without waiting).
    pub login_hashing: Arc<Semaphore>,
    /// The player door's rendered read answers, per (assignment, version, read).
    pub reads: ReadCache,
}

impl AppState {
    /// Builds the state over an already migrated store.
    pub async fn new(
        store: SharedStore,
        config: &ServeConfig,
        clock: Arc<dyn Clock>,
        random: Arc<dyn Random>,
    ) -> Result<Self, StartError> {
        let doors = Doors::over_store(
            &config.server,
            Arc::clone(&clock),
            config.public_url.as_deref(),
            "sidequest",
            store.clone(),
        )
        .await?;
        let service = Arc::new(PlayService::new(store, clock, random));
        let reads = ReadCache::new(config.read_cache_bytes);
        let sampled = reads.clone();
        doors
            .metrics
            .sample_cache("play_reads", move || sampled.held());
        Ok(Self {
            doors,
            address_source: config.address_source.clone(),
            login_hashing: Arc::new(Semaphore::new(config.login_hash_concurrency.max(1))),
            reads,
            campaign: Arc::new(CampaignService::new(Arc::clone(&service))),
            service,
            secure_cookies: config
                .public_url
                .as_deref()
                .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://")),
        })
    }
}
