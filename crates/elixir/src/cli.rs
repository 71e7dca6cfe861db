//! The `elixir` command line: serve, migrate, account, agent, feedback, cards, demo, record,
//! changelog and backup.
//! Every flag can also be set through an `ELIXIR_*` environment variable.

use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use mcp_door::{Clock, ProductServeArgs, SystemClock};
use serde_json::json;

use crate::access::door_path;
use crate::access::kinds::{Kind, OsRandom, Random, Tier};
use crate::access::oauth::{MailSettings, OAuthSettings};
use crate::admin;
use crate::app::{self, ServeConfig};
use crate::content::Content;
use crate::domain::{FeedbackStatus, iso};
use crate::recorder;
use crate::services::Settings;
use crate::store::{self, SharedStore};
use crate::upstream::{DEFAULT_BASE_URL, Upstream, UpstreamConfig};

/// Elixir: a Clash Royale history recorder behind OAuth-protected MCP doors.
#[derive(Debug, Parser)]
#[command(name = "elixir", version, about)]
pub struct Cli {
    /// Database: `sqlite://FILE` (created if missing; the embedded default) or `postgres://…`.
    #[arg(
        long,
        global = true,
        env = "ELIXIR_DATABASE_URL",
        default_value = "sqlite://elixir.db"
    )]
    pub database_url: String,
    /// Log format: `text` or `json`.
    #[arg(long, global = true, env = "ELIXIR_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate the database, then serve the doors.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate,
    /// Manage accounts.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Manage agents and integrations and their service keys.
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Read and answer feedback.
    #[command(subcommand)]
    Feedback(FeedbackCommand),
    /// The card catalogue.
    #[command(subcommand)]
    Cards(CardsCommand),
    /// Record a generated clan of 30 players over the last 60 days (from a built-in fake of
    /// the Clash Royale API) into the database, then print how to connect. Run once on a
    /// fresh database, then `serve`.
    Demo {
        /// Directory of the raw-payload archive.
        #[arg(long, env = "ELIXIR_ARCHIVE_DIR", default_value = "./archive")]
        archive_dir: std::path::PathBuf,
        /// The origin `serve` will answer at, for the printed configuration.
        #[arg(
            long,
            env = "ELIXIR_PUBLIC_URL",
            default_value = "http://127.0.0.1:8090"
        )]
        public_url: String,
    },
    /// Run the recorder alone (no doors): read the tracked players and clans on their
    /// schedule until interrupted. Several servers and one recorder can share a database;
    /// each read is leased, so two recorders never read one subject.
    Record {
        #[command(flatten)]
        upstream: UpstreamArgs,
    },
    /// Print the embedded changelog as JSON, newest first.
    Changelog,
    /// Copy the embedded SQLite database (the record, accounts and OAuth grants) to a new file,
    /// online, while servers and recorders run. The raw-payload archive is a directory of
    /// write-once files: copy it with any file tool. PostgreSQL: use pg_dump.
    Backup {
        /// The file to write; it must not exist yet.
        #[arg(long)]
        to: std::path::PathBuf,
    },
}

/// How Elixir names the `serve` flags every product shares: `ELIXIR_*` variables, port 8090,
/// and what Redis, the client-address header and allowed origins are for here.
#[derive(Debug)]
pub struct Elixir;

impl mcp_door::Product for Elixir {
    const ENV_PREFIX: &'static str = "ELIXIR_";
    const DEFAULT_BIND: &'static str = "127.0.0.1:8090";

    fn help(id: &str) -> Option<&'static str> {
        match id {
            "redis_url" => Some(
                "Redis URL for the door's per-credential admission shared by every instance; \
                 hourly and daily metering stay in the database",
            ),
            "client_address_header" => Some(
                "Behind a trusted proxy: the request header carrying the client's address (e.g. \
                 `cloudfront-viewer-address`; its first comma-separated item is used). Refusal \
                 counts and the per-address sign-in and registration limits key on it. Unset: the \
                 TCP peer. Set it only when every request arrives through that proxy, or clients \
                 can forge it",
            ),
            "allowed_origins" => Some(
                "An origin (`scheme://host[:port]`) besides the public URL's whose browser-based \
                 clients may call the doors (CORS, after finishing OAuth); repeatable. Any other \
                 `Origin` is refused 403",
            ),
            _ => None,
        }
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The flags every product's `serve` has (address, Redis, pool size, metrics, edge, TLS).
    #[command(flatten)]
    pub shared: ProductServeArgs<Elixir>,
    /// The public origin the doors are reached at: the OAuth `issuer`, and what challenges and
    /// OAuth resources name (`https://elixir.poapkings.com` in production).
    #[arg(
        long,
        env = "ELIXIR_PUBLIC_URL",
        default_value = "http://127.0.0.1:8090"
    )]
    pub public_url: String,
    /// Directory the sign-in codes are written to, one `.eml` per message (when no SMTP relay
    /// is set).
    #[arg(long, env = "ELIXIR_MAIL_OUTBOX", default_value = "./outbox")]
    pub mail_outbox: std::path::PathBuf,
    /// SMTP relay for the sign-in codes: `smtps://user:pass@host:465`,
    /// `smtp://user:pass@host:587?tls=required` or `smtp://host:25`. Never logged.
    #[arg(long, env = "ELIXIR_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<Redacted>,
    /// `From:` of the sign-in code email (default `no-reply@<public host>`).
    #[arg(long, env = "ELIXIR_MAIL_FROM")]
    pub mail_from: Option<String>,
    /// The OAuth server secret (at least 32 bytes; the same on every instance). Without it a
    /// random one is used and codes in flight do not survive a restart.
    #[arg(long, env = "ELIXIR_OAUTH_SECRET", hide_env_values = true)]
    pub oauth_secret: Option<Redacted>,
    /// Access-token life in seconds (3600; shorter only for tests).
    #[arg(long, env = "ELIXIR_ACCESS_TTL_SECS", default_value_t = 3600, hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub access_ttl_secs: u64,
    /// Seconds between purges of expired OAuth flows, codes, tokens and sessions.
    #[arg(long, env = "ELIXIR_OAUTH_PURGE_SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub oauth_purge_secs: u64,
    /// Admitted requests per credential per sliding minute (the door's burst admission, before
    /// the hourly rate and daily quota are metered).
    #[arg(long, env = "ELIXIR_CREDENTIAL_RATE_PER_MINUTE", default_value_t = 600, value_parser = clap::value_parser!(u32).range(1..))]
    pub credential_rate_per_minute: u32,
    /// Admitted requests in flight per credential.
    #[arg(long, env = "ELIXIR_CREDENTIAL_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub credential_concurrency: u32,
    /// Admitted requests in flight across every door (and instance, with Redis).
    #[arg(long, env = "ELIXIR_GLOBAL_CONCURRENCY", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub global_concurrency: u32,
    /// Audit rows queued for the writer before a finished call's row waits for room (it is
    /// never dropped).
    #[arg(long, env = "ELIXIR_AUDIT_QUEUE", default_value_t = 4_096, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub audit_queue: u32,
    /// Authenticated requests per principal per UTC clock hour.
    #[arg(long, env = "ELIXIR_HOURLY_RATE", default_value_t = 300, value_parser = clap::value_parser!(i64).range(1..))]
    pub hourly_rate: i64,
    /// Milliseconds the heavy (H) tools' whole aggregation may run before the database
    /// cancels it and the call answers query_timeout (refunded).
    #[arg(long, env = "ELIXIR_HEAVY_QUERY_BUDGET_MS", default_value_t = 18_000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub heavy_query_budget_ms: u64,
    #[command(flatten)]
    pub upstream: UpstreamArgs,
}

/// Where the Clash Royale API is and where its payloads are archived.
#[derive(Debug, Clone, Args)]
pub struct UpstreamArgs {
    /// Bearer token of the Clash Royale API (developer.clashroyale.com, allowed for this
    /// host's address). Without it `serve` reads nothing. Never logged.
    #[arg(long, env = "ELIXIR_CR_API_TOKEN", hide_env_values = true)]
    pub cr_api_token: Option<Redacted>,
    /// Base URL of the Clash Royale API.
    #[arg(long, env = "ELIXIR_CR_API_URL", default_value = DEFAULT_BASE_URL)]
    pub cr_api_url: String,
    /// Directory of the raw-payload archive: every HTTP 200, gzipped, named by its SHA-256.
    #[arg(long, env = "ELIXIR_ARCHIVE_DIR", default_value = "./archive")]
    pub archive_dir: std::path::PathBuf,
}

impl UpstreamArgs {
    /// The upstream configuration, when a token is set.
    pub fn config(&self) -> Option<UpstreamConfig> {
        self.cr_api_token.as_ref().map(|token| UpstreamConfig {
            base_url: self.cr_api_url.clone(),
            archive_dir: self.archive_dir.clone(),
            ..UpstreamConfig::new(token.0.clone())
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum CardsCommand {
    /// Read `/cards` from the API once, archive it and store the catalogue (whatever the
    /// day's scheduled read did); prints a one-line summary.
    Refresh {
        #[command(flatten)]
        upstream: UpstreamArgs,
        /// Print JSON.
        #[arg(long, env = "ELIXIR_JSON")]
        json: bool,
    },
}

/// A secret flag value (SMTP URL with credentials, the OAuth secret): `Debug` never shows it.
#[derive(Clone)]
pub struct Redacted(pub String);

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::str::FromStr for Redacted {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Create an account.
    Create {
        #[arg(long, env = "ELIXIR_ACCOUNT_EMAIL")]
        email: String,
        /// member, leader, family, partner or admin.
        #[arg(long, env = "ELIXIR_ACCOUNT_TIER", default_value = "member")]
        tier: String,
        /// Print JSON.
        #[arg(long, env = "ELIXIR_JSON")]
        json: bool,
    },
    /// Set an account's tier.
    SetTier {
        #[arg(long, env = "ELIXIR_ACCOUNT_EMAIL")]
        email: String,
        #[arg(long, env = "ELIXIR_ACCOUNT_TIER")]
        tier: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Create an agent (or integration) for an account; prints its public id and service key once.
    Create {
        /// The owner's email.
        #[arg(long, env = "ELIXIR_AGENT_OWNER")]
        owner: String,
        #[arg(long, env = "ELIXIR_AGENT_NAME")]
        name: String,
        /// agent or integration.
        #[arg(long, env = "ELIXIR_AGENT_KIND", default_value = "agent")]
        kind: String,
        #[arg(long, env = "ELIXIR_JSON")]
        json: bool,
    },
    /// Replace the agent's service key (printed once); the old one stops working.
    RotateKey {
        #[arg(long, env = "ELIXIR_AGENT_PUBLIC_ID")]
        public_id: String,
        #[arg(long, env = "ELIXIR_JSON")]
        json: bool,
    },
    /// Revoke the agent's service key.
    RevokeKey {
        #[arg(long, env = "ELIXIR_AGENT_PUBLIC_ID")]
        public_id: String,
    },
    /// Suspend the agent: every credential of its door answers 401 "suspended".
    Suspend {
        #[arg(long, env = "ELIXIR_AGENT_PUBLIC_ID")]
        public_id: String,
    },
    /// Resume a suspended agent.
    Resume {
        #[arg(long, env = "ELIXIR_AGENT_PUBLIC_ID")]
        public_id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum FeedbackCommand {
    /// List reports, newest first, as JSON lines.
    List {
        /// Only reports in this status.
        #[arg(long, env = "ELIXIR_FEEDBACK_STATUS")]
        status: Option<String>,
        #[arg(long, env = "ELIXIR_FEEDBACK_LIMIT", default_value_t = 50)]
        limit: i64,
    },
    /// Set a report's status and optionally reply (delivered on the reporter's next page).
    Reply {
        #[arg(long, env = "ELIXIR_FEEDBACK_ID")]
        id: i64,
        /// seen, planned, done or declined.
        #[arg(long, env = "ELIXIR_FEEDBACK_STATUS")]
        status: String,
        #[arg(long, env = "ELIXIR_FEEDBACK_MESSAGE")]
        message: Option<String>,
        /// The release that shipped the fix.
        #[arg(long, env = "ELIXIR_FEEDBACK_SHIPPED_IN")]
        shipped_in: Option<String>,
    },
}

/// The real clock, or with the `test-clock` feature and `ELIXIR_TEST_CLOCK_FILE` set, the real
/// clock shifted by that file's seconds.
fn system_clock() -> Arc<dyn Clock> {
    #[cfg(feature = "test-clock")]
    if let Some(clock) = crate::test_clock::FileOffsetClock::from_env() {
        tracing::warn!("test clock: time is shifted by {}", crate::test_clock::ENV);
        return Arc::new(clock);
    }
    Arc::new(SystemClock)
}

/// Opens and migrates the database for a one-shot command, with the default pool.
async fn open(url: &str) -> anyhow::Result<SharedStore> {
    Ok(sqlkit::open_migrated(store::connect(url, &ServeConfig::default().server.db)).await?)
}

fn tier(text: &str) -> anyhow::Result<Tier> {
    Tier::parse(text)
        .with_context(|| format!("unknown tier {text:?} (member, leader, family, partner, admin)"))
}

fn oauth_settings(args: &ServeArgs) -> anyhow::Result<OAuthSettings> {
    let secret = match &args.oauth_secret {
        Some(s) if s.0.len() < 32 => bail!("--oauth-secret must be at least 32 bytes"),
        Some(s) => Some(s.0.as_bytes().to_vec()),
        None => None,
    };
    Ok(OAuthSettings {
        secret,
        mail: match &args.smtp_url {
            Some(url) => MailSettings::Smtp(url.0.clone()),
            None => MailSettings::Outbox(args.mail_outbox.clone()),
        },
        mail_from: args.mail_from.clone(),
        access_ttl: std::time::Duration::from_secs(args.access_ttl_secs),
        purge_every: std::time::Duration::from_secs(args.oauth_purge_secs),
    })
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let clock: Arc<dyn Clock> = system_clock();
    let random: Arc<dyn Random> = Arc::new(OsRandom);
    match cli.command {
        Command::Serve(args) => {
            let defaults = ServeConfig::default();
            let shared = &args.shared;
            let config = ServeConfig {
                server: {
                    let server = shared.server_config(&cli.database_url, defaults.server.clone());
                    mcp_door::ServerConfig {
                        limits: mcp_door::Limits {
                            rate_per_window: args.credential_rate_per_minute,
                            credential_concurrency: args.credential_concurrency,
                            global_concurrency: args.global_concurrency,
                            ..server.limits.clone()
                        },
                        ..server
                    }
                },
                settings: Settings {
                    public_url: args.public_url.clone(),
                    hourly_rate: args.hourly_rate,
                    audit_queue: args.audit_queue as usize,
                    address_source: shared.address_source(),
                    heavy_query_budget: std::time::Duration::from_millis(
                        args.heavy_query_budget_ms,
                    ),
                    // the cursor key is replaced by the one derived from the OAuth secret
                    ..Settings::default()
                },
                oauth: oauth_settings(&args)?,
                upstream: args.upstream.config(),
                ..defaults
            };
            let listener = shared.listen().await?;
            app::run(config, listener, clock, random, mcp_door::shutdown_signal()).await?;
        }
        Command::Migrate => {
            open(&cli.database_url).await?;
            println!("migrated");
        }
        Command::Account(cmd) => {
            let store = open(&cli.database_url).await?;
            match cmd {
                AccountCommand::Create {
                    email,
                    tier: t,
                    json,
                } => {
                    let account = admin::create_account(
                        &store,
                        random.as_ref(),
                        clock.now_millis(),
                        Some(&email),
                        tier(&t)?,
                    )
                    .await?;
                    if json {
                        println!(
                            "{}",
                            json!({"id": account.id, "email": account.email, "tier": account.tier.as_str(), "created_at": iso(account.created_at)})
                        );
                    } else {
                        println!("created account {} ({})", account.id, account.tier.as_str());
                    }
                }
                AccountCommand::SetTier { email, tier: t } => {
                    let Some(account) =
                        store.account_by_email(&email.trim().to_lowercase()).await?
                    else {
                        bail!("no account with email {email}")
                    };
                    store.set_account_tier(account.id, tier(&t)?).await?;
                    println!("{email} is now {t}");
                }
            }
        }
        Command::Agent(cmd) => {
            let store = open(&cli.database_url).await?;
            match cmd {
                AgentCommand::Create {
                    owner,
                    name,
                    kind,
                    json,
                } => {
                    let Some(account) =
                        store.account_by_email(&owner.trim().to_lowercase()).await?
                    else {
                        bail!("no account with email {owner}")
                    };
                    let kind = match Kind::parse(&kind) {
                        Some(k @ (Kind::Agent | Kind::Integration)) => k,
                        _ => bail!("--kind is agent or integration"),
                    };
                    let issued = admin::create_agent(
                        &store,
                        random.as_ref(),
                        clock.now_millis(),
                        account.id,
                        &name,
                        kind,
                    )
                    .await?;
                    let door = door_path::agent_door(kind, &issued.agent.public_id);
                    if json {
                        println!(
                            "{}",
                            json!({"public_id": issued.agent.public_id, "kind": kind.as_str(), "door": door, "service_key": issued.service_key})
                        );
                    } else {
                        println!(
                            "public_id {}\ndoor {door}\nservice key (shown once): {}",
                            issued.agent.public_id, issued.service_key
                        );
                    }
                }
                AgentCommand::RotateKey { public_id, json } => {
                    let key = admin::rotate_key(&store, random.as_ref(), &public_id).await?;
                    if json {
                        println!("{}", json!({"public_id": public_id, "service_key": key}));
                    } else {
                        println!("{key}");
                    }
                }
                AgentCommand::RevokeKey { public_id } => {
                    admin::revoke_key(&store, &public_id).await?;
                    println!("revoked the service key of {public_id}");
                }
                AgentCommand::Suspend { public_id } => {
                    admin::set_suspended(&store, &public_id, true).await?;
                    println!("suspended {public_id}");
                }
                AgentCommand::Resume { public_id } => {
                    admin::set_suspended(&store, &public_id, false).await?;
                    println!("resumed {public_id}");
                }
            }
        }
        Command::Feedback(cmd) => {
            let store = open(&cli.database_url).await?;
            match cmd {
                FeedbackCommand::List { status, limit } => {
                    let status = match status.as_deref() {
                        Some(s) => Some(
                            FeedbackStatus::parse(s)
                                .with_context(|| format!("unknown status {s:?}"))?,
                        ),
                        None => None,
                    };
                    for f in store.all_feedback(status, limit.clamp(1, 1000)).await? {
                        println!(
                            "{}",
                            json!({"id": f.id, "created_at": iso(f.created_at), "account_id": f.account_id, "agent_id": f.agent_id, "kind": f.principal_kind.as_str(), "category": f.category, "status": f.status.as_str(), "message": f.message, "context": f.context, "request_id": f.request_id, "response": f.response})
                        );
                    }
                }
                FeedbackCommand::Reply {
                    id,
                    status,
                    message,
                    shipped_in,
                } => {
                    let status = FeedbackStatus::parse(&status)
                        .with_context(|| format!("unknown status {status:?}"))?;
                    let f = admin::reply_feedback(
                        &store,
                        clock.now_millis(),
                        id,
                        status,
                        message.as_deref(),
                        shipped_in.as_deref(),
                    )
                    .await?;
                    println!("feedback {} is {}", f.id, f.status.as_str());
                }
            }
        }
        Command::Cards(CardsCommand::Refresh { upstream, json }) => {
            let Some(config) = upstream.config() else {
                bail!("--cr-api-token (or ELIXIR_CR_API_TOKEN) is required to read the API")
            };
            let store = open(&cli.database_url).await?;
            let reader = Upstream::new(&config, Arc::clone(&store), Arc::clone(&clock))?;
            let refreshed = recorder::refresh_cards(&reader, &store, clock.as_ref()).await?;
            if json {
                println!("{}", refreshed.to_json());
            } else {
                println!("{}", refreshed.summary());
            }
        }
        Command::Demo {
            archive_dir,
            public_url,
        } => {
            let store = open(&cli.database_url).await?;
            println!(
                "recording a generated clan of {} players over {} days…",
                crate::demo::PLAYERS,
                crate::demo::DAYS
            );
            let demo = crate::demo::record(
                crate::demo::DAYS,
                &store,
                clock.as_ref(),
                random.as_ref(),
                &archive_dir,
                |line| {
                    println!("  {line}");
                },
            )
            .await?;
            let base = public_url.trim_end_matches('/');
            println!(
                "\nrecorded {} battles of {} players in {} ({}); the demo account's primary player is {}.\n\n\
                 Start the server:  elixir --database-url {} serve\n\n\
                 Personal door (OAuth; sign in as {} — the code goes to the mail outbox, see `serve --help`):\n  \
                 claude mcp add --transport http elixir {base}/mcp\n\n\
                 Agent door for the clan (service key, shown once):\n  \
                 claude mcp add --transport http elixir-clan {base}/a/{}/mcp --header \"Authorization: Bearer {}\"\n\n\
                 Then ask, for example: \"How did {} do in the last 30 days?\"",
                demo.battles,
                demo.players,
                demo.clan_name,
                demo.clan_tag,
                demo.primary_tag,
                cli.database_url,
                crate::demo::DEMO_EMAIL,
                demo.agent_public_id,
                demo.service_key,
                demo.primary_tag,
            );
        }
        Command::Record { upstream } => {
            let Some(config) = upstream.config() else {
                bail!("--cr-api-token (or ELIXIR_CR_API_TOKEN) is required to record")
            };
            let store = open(&cli.database_url).await?;
            let poller = recorder::Poller::over(
                &config,
                store,
                Arc::clone(&clock),
                format!("record-{}", crate::access::kinds::new_uuid(random.as_ref())),
                recorder::PollSettings::default(),
            )?;
            let cancel = tokio_util::sync::CancellationToken::new();
            let task = recorder::spawn_poller(poller, cancel.clone());
            tracing::info!("elixir recording; interrupt to stop");
            mcp_door::shutdown_signal().await;
            cancel.cancel();
            task.await?;
        }
        Command::Changelog => {
            let content = Content::load(&[]).map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::to_string_pretty(&content.changelog)?);
        }
        Command::Backup { to } => {
            let busy = std::time::Duration::from_secs(30);
            let done = sqlkit::backup_sqlite(&cli.database_url, &to, busy)
                .await
                .context("backup")?;
            println!("{done}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn serve_keeps_its_flags_and_elixir_env_names() {
        use clap::CommandFactory;
        let command = super::Cli::command();
        testkit::cli::assert_flag_envs(
            &command,
            "serve",
            &[
                ("bind", "ELIXIR_BIND"),
                ("redis-url", "ELIXIR_REDIS_URL"),
                ("client-address-header", "ELIXIR_CLIENT_ADDRESS_HEADER"),
                ("metrics-bind", "ELIXIR_METRICS_BIND"),
                ("db-max-connections", "ELIXIR_DB_MAX_CONNECTIONS"),
                ("allowed-origin", "ELIXIR_ALLOWED_ORIGINS"),
                ("tls-cert", "ELIXIR_TLS_CERT"),
                ("tls-key", "ELIXIR_TLS_KEY"),
                ("max-connections", "ELIXIR_MAX_CONNECTIONS"),
                ("header-timeout-secs", "ELIXIR_HEADER_TIMEOUT_SECS"),
                ("public-url", "ELIXIR_PUBLIC_URL"),
                ("hourly-rate", "ELIXIR_HOURLY_RATE"),
            ],
        );
        let cli = <super::Cli as clap::Parser>::try_parse_from(["elixir", "serve"]).unwrap();
        let super::Command::Serve(args) = cli.command else {
            panic!("serve")
        };
        assert_eq!(args.shared.bind.to_string(), "127.0.0.1:8090");
        let redis = command
            .find_subcommand("serve")
            .unwrap()
            .get_arguments()
            .find(|a| a.get_long() == Some("redis-url"))
            .and_then(|a| a.get_help())
            .map(|h| h.to_string());
        assert_eq!(
            redis.as_deref(),
            Some(
                "Redis URL for the door's per-credential admission shared by every instance; \
                 hourly and daily metering stay in the database"
            )
        );
    }
}
