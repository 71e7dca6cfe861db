//! Shared fixtures: a server over a fresh database with a fake clock, deterministic
//! randomness and a static OAuth verifier; the people, agents and tokens of a small world.

use std::net::SocketAddr;
use std::sync::Arc;

use elixir::access::door_path;
use elixir::access::gate::{Grant, StaticVerifier};
use elixir::access::kinds::{Kind, STANDARD_SCOPES, Tier};
use elixir::admin::{self, IssuedAgent};
use elixir::app::{self, AppState, ServeConfig};
use elixir::mcp::spec::ToolSpec;
use elixir::model::Account;
use elixir::services::Settings;
use elixir::store::{self, SharedStore};
use elixir::tools;
use mcp_door::{FakeClock, Limits};
use serde_json::Value;
use testkit::mcp::{Client, Reply};

pub const ORIGIN: &str = "https://elixir.test";
/// 2026-01-01T00:00:00Z.
pub const T0: i64 = 1_767_225_600_000;
pub const PERSON_TOKEN: &str = "oat_person_all";
pub const READ_ONLY_TOKEN: &str = "oat_person_read";
pub const OTHER_PERSON_TOKEN: &str = "oat_other_person";

pub use testkit::random::CountingRandom;

pub use testkit::db::{Backend, fresh_url};

/// A running server and its small world.
pub struct Server {
    pub addr: SocketAddr,
    /// The public origin: [`ORIGIN`], or `http://<addr>` with [`Options::browser_origin`].
    pub origin: String,
    pub clock: FakeClock,
    pub state: AppState,
    pub store: SharedStore,
    pub random: Arc<CountingRandom>,
    pub person: Account,
    pub agent: IssuedAgent,
    pub integration: IssuedAgent,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A client of the person door with `token`.
    pub fn person_client(&self, token: &str) -> Client {
        Client::new(self.url("/mcp"), Some(token.to_owned()))
    }

    /// The person with every standard scope.
    pub fn person(&self) -> Client {
        self.person_client(PERSON_TOKEN)
    }

    /// The agent's door with its service key.
    pub fn agent(&self) -> Client {
        self.door_of(&self.agent, Some(&self.agent.service_key))
    }

    /// The integration's door with its service key.
    pub fn integration(&self) -> Client {
        self.door_of(&self.integration, Some(&self.integration.service_key))
    }

    /// `issued`'s door with `token`.
    pub fn door_of(&self, issued: &IssuedAgent, token: Option<&str>) -> Client {
        Client::new(
            self.url(&door_path::agent_door(
                issued.agent.kind,
                &issued.agent.public_id,
            )),
            token.map(str::to_owned),
        )
    }

    /// The client of `kind` in this world.
    pub fn client(&self, kind: Kind) -> Client {
        match kind {
            Kind::Person => self.person(),
            Kind::Agent => self.agent(),
            Kind::Integration => self.integration(),
        }
    }
}

/// Options of a test server.
pub struct Options {
    pub hourly_rate: i64,
    pub extra: Vec<ToolSpec>,
    /// Wire the real mcp-oauth (codes written to this outbox) instead of the static verifier.
    pub oauth_outbox: Option<std::path::PathBuf>,
    /// Another instance over the same database: reuse this world instead of creating one.
    pub world: Option<(Account, IssuedAgent, IssuedAgent)>,
    /// Where the counting randomness starts (instances sharing a database need different ones).
    pub seed: u64,
    /// Redis for the door's admission, shared by instances.
    pub redis_url: Option<String>,
    /// Where client addresses come from (a proxy header in the refusal tests).
    pub address_source: elixir::AddressSource,
    /// Serve as `http://127.0.0.1:<port>` instead of [`ORIGIN`], so a real browser's `Origin`
    /// header and cookies match the issuer.
    pub browser_origin: bool,
    /// Wraps the migrated store before the server is built on it (the statement counts).
    pub wrap_store: Option<Box<dyn FnOnce(SharedStore) -> SharedStore + Send>>,
    /// The Clash Royale API (a fake's), for the live lane.
    pub upstream: Option<elixir::upstream::UpstreamConfig>,
    /// The server's clock, when the test made it first (to share it with a fake API).
    pub clock: Option<FakeClock>,
    /// The heavy tools' query budget (tiny in the query_timeout tests).
    pub heavy_query_budget: std::time::Duration,
    /// Origins the doors allow besides the public one (`--allowed-origin`).
    pub allowed_origins: Vec<String>,
    /// The database pool's acquire timeout (short in the outage tests).
    pub acquire_timeout: Option<std::time::Duration>,
    /// The client-side deadline of each PostgreSQL statement (short in the outage tests).
    pub query_timeout: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            hourly_rate: 300,
            extra: Vec::new(),
            oauth_outbox: None,
            world: None,
            seed: 1,
            redis_url: None,
            address_source: elixir::AddressSource::Peer,
            browser_origin: false,
            wrap_store: None,
            upstream: None,
            clock: None,
            heavy_query_budget: elixir::services::HEAVY_QUERY_BUDGET,
            allowed_origins: Vec::new(),
            acquire_timeout: None,
            query_timeout: None,
        }
    }
}

/// The fixed OAuth secret of test servers (two instances share it, as production must).
pub const OAUTH_SECRET: &[u8] = b"elixir-test-secret-elixir-test-secret";

pub async fn spawn(url: &str) -> Server {
    spawn_with(url, Options::default()).await
}

pub async fn spawn_with(url: &str, mut options: Options) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let origin = if options.browser_origin {
        format!("http://{addr}")
    } else {
        ORIGIN.to_owned()
    };
    let config = ServeConfig {
        server: mcp_door::ServerConfig {
            database_url: url.to_owned(),
            redis_url: options.redis_url.clone(),
            redis_prefix: format!("elixir-test:{}", url.rsplit('/').next().unwrap_or("db")),
            limits: Limits {
                rate_per_window: 100_000,
                credential_concurrency: 64,
                global_concurrency: 256,
                ..Limits::default()
            },
            allowed_origins: options.allowed_origins.clone(),
            db: sqlkit::PoolSettings {
                acquire_timeout: options
                    .acquire_timeout
                    .unwrap_or(ServeConfig::default().server.db.acquire_timeout),
                query_timeout: options
                    .query_timeout
                    .unwrap_or(ServeConfig::default().server.db.query_timeout),
                ..ServeConfig::default().server.db
            },
            ..ServeConfig::default().server
        },
        settings: Settings {
            public_url: origin.clone(),
            hourly_rate: options.hourly_rate,
            address_source: options.address_source.clone(),
            heavy_query_budget: options.heavy_query_budget,
            ..Settings::default()
        },
        upstream: options.upstream.take(),
        ..ServeConfig::default()
    };
    let store = store::connect(url, &config.server.db)
        .await
        .expect("connect");
    store.migrate().await.expect("migrate");
    let store = match options.wrap_store.take() {
        Some(wrap) => wrap(store),
        None => store,
    };
    let clock = options.clock.take().unwrap_or_else(|| FakeClock::new(T0));
    let random = Arc::new(CountingRandom::new(options.seed));
    let mut specs = tools::registry();
    specs.extend(options.extra);
    let verifier = Arc::new(StaticVerifier::default());
    let state = AppState::with_specs(
        Arc::clone(&store),
        &config,
        Arc::new(clock.clone()),
        random.clone(),
        specs,
    )
    .await
    .expect("state");
    let state = match &options.oauth_outbox {
        None => state.with_verifier(verifier.clone()),
        Some(outbox) => {
            let oauth_store = elixir::access::oauth::connect_store(url)
                .await
                .expect("oauth store");
            let parts = elixir::access::oauth::build_server(
                &config.settings,
                Arc::clone(&store),
                oauth_store,
                &elixir::access::oauth::OAuthSettings {
                    secret: Some(OAUTH_SECRET.to_vec()),
                    mail: elixir::access::oauth::MailSettings::Outbox(outbox.clone()),
                    ..Default::default()
                },
                Arc::new(clock.clone()),
                random.clone(),
            )
            .expect("oauth");
            state.with_oauth(parts)
        }
    };

    let (person, agent, integration) = match options.world.clone() {
        Some(world) => world,
        None => create_world(&store, random.as_ref(), &verifier).await,
    };

    let router = app::app(&state).expect("router");
    let tx = testkit::serve::spawn(listener, router);
    Server {
        addr,
        origin,
        clock,
        state,
        store,
        random,
        person,
        agent,
        integration,
        shutdown: Some(tx),
    }
}

async fn create_world(
    store: &SharedStore,
    random: &CountingRandom,
    verifier: &StaticVerifier,
) -> (Account, IssuedAgent, IssuedAgent) {
    let person = admin::create_account(store, random, T0, Some("king@example.com"), Tier::Member)
        .await
        .unwrap();
    let other = admin::create_account(store, random, T0, Some("other@example.com"), Tier::Leader)
        .await
        .unwrap();
    let agent = admin::create_agent(store, random, T0, person.id, "Clan bot", Kind::Agent)
        .await
        .unwrap();
    let integration = admin::create_agent(
        store,
        random,
        T0,
        person.id,
        "Legacy hook",
        Kind::Integration,
    )
    .await
    .unwrap();
    let all: Vec<String> = STANDARD_SCOPES.iter().map(|s| (*s).to_owned()).collect();
    let grant = |token: &str, account: &Account, scopes: Vec<String>| Grant {
        grant_id: format!("static-{token}"),
        account_id: account.id,
        agent_id: None,
        scopes,
    };
    verifier.insert(
        PERSON_TOKEN,
        &format!("{ORIGIN}/mcp"),
        grant(PERSON_TOKEN, &person, all.clone()),
    );
    verifier.insert(
        READ_ONLY_TOKEN,
        &format!("{ORIGIN}/mcp"),
        grant(READ_ONLY_TOKEN, &person, vec!["cr:read".into()]),
    );
    verifier.insert(
        OTHER_PERSON_TOKEN,
        &format!("{ORIGIN}/mcp"),
        grant(OTHER_PERSON_TOKEN, &other, all),
    );

    (person, agent, integration)
}

/// The parsed error body of an `isError` tool result, checking its invariant shape: no
/// `structuredContent`, `{error: {code, class, message, hint}, meta}` with the fixed meta keys
/// and quota, and the request id of the HTTP response.
pub fn tool_error(reply: &Reply) -> Value {
    let result = reply.result();
    assert_eq!(result["isError"], true, "{}", reply.body);
    assert!(result.get("structuredContent").is_none(), "{}", reply.body);
    let body: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    for key in ["code", "class", "message", "hint"] {
        assert!(body["error"][key].is_string(), "error.{key} in {body}");
    }
    check_meta(&body["meta"], reply);
    body
}

/// The success body, checking the envelope and that text and structuredContent agree.
pub fn success(reply: &Reply) -> Value {
    let result = reply.result();
    assert_eq!(result["isError"], false, "{}", reply.body);
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    for key in ["applied", "notes", "docs", "meta"] {
        assert!(text.get(key).is_some(), "{key} missing in {text}");
    }
    check_meta(&text["meta"], reply);
    text
}

fn check_meta(meta: &Value, reply: &Reply) {
    let keys: Vec<&String> = meta.as_object().unwrap().keys().collect();
    for k in &keys {
        assert!(
            elixir::mcp::call::META_KEYS.contains(&k.as_str()),
            "meta key {k}"
        );
    }
    assert_eq!(
        meta["request_id"],
        reply.header("x-request-id"),
        "meta.request_id is the door's"
    );
    assert_eq!(meta["contract_version"], "1.1.0");
    assert_eq!(meta["as_of"].as_str().unwrap().len(), 20);
    assert!(meta["disclaimer"].as_str().unwrap().contains("Supercell"));
    assert!(
        meta["quota"]["hour"]["resets_at"].is_string(),
        "quota in {meta}"
    );
}

/// The number of rows in `table` of the database at `url`, read over a connection of its own.
pub async fn count_rows(url: &str, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let n = sqlx::query_scalar(&sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        n
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let n = sqlx::query_scalar(&sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        n
    }
}
