//! Assembling the server: shared services, one door per principal kind (`/mcp`,
//! `/a/{public_id}/mcp`, `/i/{public_id}/mcp`) with its catalog, authenticator, presenter,
//! method gate and audit, `/healthz` (liveness) and `/readyz` (the database and Redis
//! answering), and `run` with graceful shutdown and the background tasks (the OAuth
//! purge; the recorder's poller when an API token is configured).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use mcp_door::{Clock, Doors, Limits, ServerConfig};
use sqlkit::PoolSettings;
use tokio::net::TcpListener;

use crate::access::door_path;
use crate::access::gate::{AccessTokenVerifier, DoorAuth, Limiter, OAuthVerifier, ToolTerms};
use crate::access::kinds::{Kind, Random};
use crate::access::oauth::{OAuthParts, OAuthSettings, OAuthSetupError};
use crate::content::Content;
use crate::mcp::audit::ElixirAudit;
use crate::mcp::audit_writer::AuditWriter;
use crate::mcp::presenter::ElixirPresenter;
use crate::mcp::resources::Docs;
use crate::mcp::spec::{Flag, ToolSpec};
use crate::recorder::{PollSettings, Poller};
use crate::services::{Services, Settings};
use crate::store::{self, SharedStore};
use crate::tools;
use crate::upstream::{UpstreamConfig, UpstreamError};

/// Everything `serve` is configured with.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// What every server shares: database and pool, Redis (the doors' per-credential
    /// admission across instances; hourly and daily metering stay in the database), the
    /// admission limits (a burst and concurrency guard in front of metering), the pre-auth
    /// gate, the doors' transport limits, the metrics listener, the drain.
    pub server: ServerConfig,
    pub settings: Settings,
    /// The authorization server (consent, tokens) and the account pages.
    pub oauth: OAuthSettings,
    /// The Clash Royale API; without it nothing is read and the record stays empty.
    pub upstream: Option<UpstreamConfig>,
    pub poll: PollSettings,
}

impl Default for ServeConfig {
    fn default() -> Self {
        let server = ServerConfig::new("sqlite://elixir.db", "elixir:admission");
        Self {
            server: ServerConfig {
                limits: Limits {
                    rate_per_window: 600,
                    window: Duration::from_secs(60),
                    credential_concurrency: 8,
                    global_concurrency: 64,
                    lease: Duration::from_secs(120),
                },
                // Elixir's own statement timeout, below the doors' 25 s tool deadline, and a
                // larger SQLite page cache: the record's indexes take writes all over a
                // multi-gigabyte file (16 connections × 8 MiB at the most; docs/benchmarks.md,
                // "Ingest from both logs").
                db: PoolSettings {
                    statement_timeout: Duration::from_secs(23),
                    sqlite_cache_kib: 8 * 1024,
                    ..server.db
                },
                ..server
            },
            settings: Settings::default(),
            oauth: OAuthSettings::default(),
            upstream: None,
            poll: PollSettings::default(),
        }
    }
}

/// A failure to start the server: in a part every server has ([`mcp_door::StartError`]:
/// store, admission, catalogs, listener) or in one only Elixir starts.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error(transparent)]
    Server(#[from] mcp_door::StartError),
    #[error("content: {0}")]
    Content(String),
    #[error("{0}")]
    OAuth(#[from] OAuthSetupError),
    #[error("upstream: {0}")]
    Upstream(#[from] UpstreamError),
}

// The platform's failures, met directly in Elixir's start-up, are its `Server` part.
impl From<sqlkit::OpenError> for StartError {
    fn from(err: sqlkit::OpenError) -> Self {
        Self::Server(err.into())
    }
}

impl From<mcp_door::AdmissionError> for StartError {
    fn from(err: mcp_door::AdmissionError) -> Self {
        Self::Server(err.into())
    }
}

impl From<mcp_door::CatalogError> for StartError {
    fn from(err: mcp_door::CatalogError) -> Self {
        Self::Server(err.into())
    }
}

impl From<std::io::Error> for StartError {
    fn from(err: std::io::Error) -> Self {
        Self::Server(err.into())
    }
}

/// The state the doors share.
#[derive(Clone)]
pub struct AppState {
    pub services: Arc<Services>,
    pub specs: Arc<Vec<ToolSpec>>,
    /// What the three doors share: admission, the pre-auth gate, transport limits and the
    /// metrics (the doors' counts and the pool's).
    pub doors: Doors,
    /// The OAuth access-token verifier (mcp-oauth's, once wired); `None` refuses OAuth tokens.
    pub verifier: Option<Arc<dyn AccessTokenVerifier>>,
    /// mcp-oauth, once wired: its endpoints and the account pages are served beside the doors.
    pub oauth: Option<OAuthParts>,
}

impl AppState {
    /// Builds the state over a migrated store with the registry of this build.
    pub async fn new(
        store: SharedStore,
        config: &ServeConfig,
        clock: Arc<dyn Clock>,
        random: Arc<dyn Random>,
    ) -> Result<Self, StartError> {
        Self::with_specs(store, config, clock, random, tools::registry()).await
    }

    /// [`AppState::new`] with an explicit registry (tests add test-only tools).
    pub async fn with_specs(
        store: SharedStore,
        config: &ServeConfig,
        clock: Arc<dyn Clock>,
        random: Arc<dyn Random>,
        specs: Vec<ToolSpec>,
    ) -> Result<Self, StartError> {
        let doors = Doors::over_store(
            &config.server,
            Arc::clone(&clock),
            Some(&config.settings.public_url),
            "elixir",
            store.clone(),
        )
        .await?;
        let content = Content::load(&tools::docs_sections(&specs)).map_err(StartError::Content)?;
        // The live lane reads with its own client; the budget it spends is the shared row.
        let live = match &config.upstream {
            Some(upstream) => crate::recorder::live::LiveLane::new(Arc::new(Poller::over(
                upstream,
                Arc::clone(&store),
                Arc::clone(&clock),
                "live",
                config.poll,
            )?)),
            None => crate::recorder::live::LiveLane::unconfigured(),
        };
        let services = Arc::new(Services {
            live: Arc::new(live),
            audit: AuditWriter::spawn(Arc::clone(&store), config.settings.audit_queue),
            store,
            clock,
            random,
            content: Arc::new(content),
            settings: Settings {
                public_url: config.settings.public_url.trim_end_matches('/').to_owned(),
                ..config.settings.clone()
            },
        });
        Ok(Self {
            services,
            specs: Arc::new(specs),
            doors,
            verifier: None,
            oauth: None,
        })
    }

    pub fn with_verifier(mut self, verifier: Arc<dyn AccessTokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// Wires mcp-oauth: its tokens are verified at every door (scopes read from the grant on
    /// each call), and its endpoints and the account pages join the router.
    pub fn with_oauth(mut self, parts: OAuthParts) -> Self {
        self.verifier = Some(Arc::new(OAuthVerifier {
            oauth: Arc::clone(&parts.server),
        }));
        self.oauth = Some(parts);
        self
    }
}

/// Per tool, the agent-only arguments a person door drops with a note instead of refusing
/// (SURFACE §1.4: `on_behalf_of` and `display_name` where the A/I declaration has them).
fn lenient_arguments(specs: &[ToolSpec], kind: Kind) -> HashMap<String, Vec<&'static str>> {
    if kind != Kind::Person {
        return HashMap::new();
    }
    specs
        .iter()
        .filter(|s| s.kinds.contains(&kind))
        .map(|s| {
            let names: Vec<&'static str> = s
                .params
                .iter()
                .filter(|p| p.agent_only)
                .map(|p| p.name)
                .collect();
            (s.name.to_owned(), names)
        })
        .filter(|(_, names)| !names.is_empty())
        .collect()
}

/// The router of every door.
pub fn app(state: &AppState) -> Result<Router, StartError> {
    let tools: HashMap<String, ToolTerms> = state
        .specs
        .iter()
        .map(|s| {
            let terms = ToolTerms {
                metered: !s.has(Flag::U),
                scope: s.scope,
                kinds: s.kinds.clone(),
            };
            (s.name.to_owned(), terms)
        })
        .collect();
    let gate = Arc::new(Limiter {
        services: Arc::clone(&state.services),
        tools,
    });
    let docs = Arc::new(Docs {
        services: Arc::clone(&state.services),
    });
    let audit = Arc::new(ElixirAudit {
        services: Arc::clone(&state.services),
    });
    let mut router = Router::new();
    for kind in Kind::ALL {
        let catalog = Arc::new(tools::catalog(&state.specs, kind, &state.services)?);
        let visible = state
            .specs
            .iter()
            .filter(|s| s.kinds.contains(&kind))
            .map(|s| s.name.to_owned())
            .collect();
        let door = state
            .doors
            .door(
                door_path::route(kind),
                Arc::new(DoorAuth {
                    kind,
                    services: Arc::clone(&state.services),
                    verifier: state.verifier.clone(),
                }),
                catalog,
                Arc::new(ElixirPresenter {
                    kind,
                    services: Arc::clone(&state.services),
                    visible,
                    lenient: lenient_arguments(&state.specs, kind),
                }),
            )
            .with_resources(docs.clone())
            .with_prompts(docs.clone())
            .with_audit(audit.clone())
            .with_method_gate(gate.clone());
        router = router.merge(door.router());
    }
    if let Some(oauth) = &state.oauth {
        router = router
            .merge(oauth.server.router())
            .merge(crate::web::router(crate::web::Web::new(
                Arc::clone(&state.services),
                oauth.clone(),
            )));
    }
    Ok(router.merge(state.doors.health_router()))
}

/// Connects, migrates and serves on `listener` until `shutdown` resolves, then drains.
pub async fn run(
    config: ServeConfig,
    listener: TcpListener,
    clock: Arc<dyn Clock>,
    random: Arc<dyn Random>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let store = sqlkit::open_migrated(store::connect(
        &config.server.database_url,
        &config.server.db,
    ))
    .await?;
    // One database for both: mcp-oauth's migrations share `_sqlx_migrations` (both migrators
    // ignore the other's versions).
    let oauth_store = crate::access::oauth::connect_store(&config.server.database_url).await?;
    let parts = crate::access::oauth::build_server(
        &config.settings,
        Arc::clone(&store),
        oauth_store,
        &config.oauth,
        Arc::clone(&clock),
        Arc::clone(&random),
    )?;
    let owner = crate::access::kinds::new_uuid(random.as_ref()).to_string();
    let poller = match &config.upstream {
        Some(upstream) => Some(Poller::over(
            upstream,
            Arc::clone(&store),
            Arc::clone(&clock),
            owner,
            config.poll,
        )?),
        None => {
            tracing::warn!("no Clash Royale API token (--cr-api-token): nothing is recorded");
            None
        }
    };
    // Cursors are signed with a key derived from the OAuth secret the server runs with, so
    // every instance sharing the secret accepts the others' cursors.
    let config = ServeConfig {
        settings: Settings {
            cursor_key: crate::services::CursorKey::derive(&parts.secret),
            ..config.settings.clone()
        },
        ..config
    };
    let state = AppState::new(store, &config, clock, random)
        .await?
        .with_oauth(parts.clone());
    let router = app(&state)?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let purge = crate::access::oauth::spawn_purge(
        parts.server,
        Arc::clone(&state.services.store),
        Arc::clone(&state.services.clock),
        config.oauth.purge_every,
        cancel.clone(),
    );
    let poll = poller.map(|p| crate::recorder::spawn_poller(p, cancel.clone()));
    tracing::info!(address = %listener.local_addr()?, issuer = %state.services.settings.public_url, "elixir serving /mcp, /a/{{public_id}}/mcp, /i/{{public_id}}/mcp, OAuth and the account pages");
    state
        .doors
        .serve(listener, router, &config.server, shutdown)
        .await?;
    cancel.cancel();
    let _ = purge.await;
    if let Some(poll) = poll {
        let _ = poll.await;
    }
    // Every finished request queued its audit row before answering: store them before the
    // process goes (Activity and the feedback ledger read them).
    if tokio::time::timeout(AUDIT_FLUSH, state.services.audit.flush())
        .await
        .is_err()
    {
        tracing::warn!("audit rows still queued at shutdown were not all stored");
    }
    Ok(())
}

/// How long shutdown waits for queued audit rows.
const AUDIT_FLUSH: Duration = Duration::from_secs(10);
