//! The `sidequest` command line: serve, migrate, user, token, demo and backup. Every flag can also be
//! set through a `SIDEQUEST_*` environment variable.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use mcp_door::{Clock, Limits, ProductServeArgs, ServerConfig, SystemClock};
use sqlkit::PoolSettings;
use uuid::Uuid;

use crate::app::{self, ServeConfig};
use crate::demo;
use crate::domain::password;
use crate::service::{OsRandom, PlayService, Random};
use crate::store::{self, SharedStore};

/// Sidequest: solo, downtime and absence play for tabletop campaigns, facilitated by the
/// player's own AI assistant over MCP.
#[derive(Debug, Parser)]
#[command(name = "sidequest", version, about)]
pub struct Cli {
    /// Database: `sqlite://FILE` (created if missing; the embedded default) or `postgres://…`.
    #[arg(
        long,
        global = true,
        env = "SIDEQUEST_DATABASE_URL",
        default_value = "sqlite://sidequest.db"
    )]
    pub database_url: String,
    /// Log format: `text` or `json`.
    #[arg(
        long,
        global = true,
        env = "SIDEQUEST_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate the database, then serve the player door `POST /play/mcp`.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate,
    /// Manage user accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Issue or revoke play tokens; issue author tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Create (or reuse) a demo GM, player and scenario, and N playable assignments with tokens.
    Demo(DemoArgs),
    /// Copy the embedded SQLite database to a new file, online, while servers run (PostgreSQL:
    /// use pg_dump).
    Backup(BackupArgs),
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write; it must not exist yet.
    #[arg(long)]
    pub to: std::path::PathBuf,
}

/// How Sidequest names the `serve` flags every product shares: `SIDEQUEST_*` variables,
/// port 8080, and what the client-address header is for here.
#[derive(Debug)]
pub struct Sidequest;

impl mcp_door::Product for Sidequest {
    const ENV_PREFIX: &'static str = "SIDEQUEST_";
    const DEFAULT_BIND: &'static str = "127.0.0.1:8080";

    fn help(id: &str) -> Option<&'static str> {
        (id == "client_address_header").then_some(
            "Behind a trusted proxy: the request header carrying the client's address (e.g. \
             `x-forwarded-for` or `cloudfront-viewer-address`; its first comma-separated item, port \
             dropped). The login throttle keys on it. Unset: the TCP peer. Set it only when every \
             request arrives through that proxy, or clients can forge it",
        )
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The flags every product's `serve` has (address, Redis, pool size, metrics, edge, TLS).
    #[command(flatten)]
    pub shared: ProductServeArgs<Sidequest>,
    /// Namespace of the admission keys in Redis; deployments sharing one Redis need distinct ones.
    #[arg(
        long,
        env = "SIDEQUEST_REDIS_PREFIX",
        default_value = "sidequest:admission"
    )]
    pub redis_prefix: String,
    /// Admitted requests per token per sliding minute.
    #[arg(long, env = "SIDEQUEST_TOKEN_RATE_PER_MINUTE", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub token_rate_per_minute: u32,
    /// Admitted requests in flight per token.
    #[arg(long, env = "SIDEQUEST_TOKEN_CONCURRENCY", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub token_concurrency: u32,
    /// Admitted requests in flight across every door and instance (with Redis).
    #[arg(long, env = "SIDEQUEST_GLOBAL_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub global_concurrency: u32,
    /// Requests this instance authenticates at once (the pre-auth gate).
    #[arg(long, env = "SIDEQUEST_PRE_AUTH_CONCURRENCY", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub pre_auth_concurrency: u32,
    /// PostgreSQL statement_timeout (and SQLite busy timeout), in milliseconds.
    #[arg(long, env = "SIDEQUEST_STATEMENT_TIMEOUT_MS", default_value_t = 10_000)]
    pub statement_timeout_ms: u64,
    /// PostgreSQL lock_timeout, in milliseconds.
    #[arg(long, env = "SIDEQUEST_LOCK_TIMEOUT_MS", default_value_t = 5_000)]
    pub lock_timeout_ms: u64,
    /// The server's public base URL; when it is https, session cookies are always `Secure`
    /// (they are also `Secure` on any request with `X-Forwarded-Proto: https`).
    #[arg(long, env = "SIDEQUEST_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Logins this instance checks a password for at once (argon2 takes 19 MiB and a core
    /// each); a login beyond them is answered 429 `login_busy` with `Retry-After: 1` at once,
    /// never queued. Default: the number of CPUs.
    #[arg(long, env = "SIDEQUEST_LOGIN_HASH_CONCURRENCY", value_parser = clap::value_parser!(u32).range(1..))]
    pub login_hash_concurrency: Option<u32>,
    /// Bytes of rendered player-door read answers (`get_play_context`, `read_play_journal`,
    /// `search_play_memory`) kept in memory per assignment version, so an unchanged read costs
    /// the token check and no rendering; 0 keeps none.
    #[arg(long, env = "SIDEQUEST_READ_CACHE_BYTES", default_value_t = crate::mcp::answers::DEFAULT_READ_CACHE_BYTES)]
    pub read_cache_bytes: u64,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user (a player unless --gm).
    Create {
        #[arg(long)]
        username: String,
        /// Read the password from standard input (first line).
        #[arg(long)]
        password_stdin: bool,
        /// The user is a game master.
        #[arg(long)]
        gm: bool,
    },
    /// Set (or replace) a user's password, read from standard input (first line, at least 8
    /// characters); their open sessions end.
    Password {
        #[arg(long)]
        username: String,
    },
    /// Deactivate a user: their sessions and every play token of their assignments stop working.
    Deactivate {
        #[arg(long)]
        username: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a play token for an assignment (revokes its previous token); printed once.
    Issue {
        #[arg(long)]
        assignment: Uuid,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke the assignment's play token.
    Revoke {
        #[arg(long)]
        assignment: Uuid,
    },
    /// Issue an author personal token (for `/mcp`) to a game master; printed once.
    Author {
        #[arg(long)]
        username: String,
        /// A label to recognise the token by when listing or revoking it.
        #[arg(long, default_value = "cli")]
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// How many assignments to create.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub assignments: u32,
    /// Print one JSON object describing everything created, tokens included.
    #[arg(long)]
    pub json: bool,
    /// The server's public base URL, used in the printed MCP client configuration.
    #[arg(
        long,
        env = "SIDEQUEST_PUBLIC_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub public_url: String,
}

/// Reads a password from the first line of standard input (at least 8 characters) and hashes
/// it with a fresh salt.
fn password_from_stdin(random: &dyn Random) -> anyhow::Result<String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("reading the password from stdin")?;
    let password = input.lines().next().unwrap_or_default();
    if password.chars().count() < 8 {
        bail!("the password must have at least 8 characters");
    }
    let mut salt = [0u8; 16];
    random.fill(&mut salt);
    password::hash(password, salt).map_err(anyhow::Error::msg)
}

/// The sign-in page's address that `serve` prints: under the public URL when there is one,
/// else on the bound address (a wildcard bind is reached on the loopback).
pub fn sign_in_url(public_url: Option<&str>, bound: std::net::SocketAddr) -> String {
    if let Some(base) = public_url {
        return format!("{}/signin", base.trim_end_matches('/'));
    }
    let host = match bound.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
        ip if ip.is_unspecified() => "[::1]".to_owned(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        std::net::IpAddr::V4(ip) => ip.to_string(),
    };
    format!("http://{host}:{}/signin", bound.port())
}

/// Opens and migrates the database for a one-shot command, with the default pool.
async fn open(url: &str) -> anyhow::Result<SharedStore> {
    Ok(sqlkit::open_migrated(store::connect(url, &ServeConfig::default().server.db)).await?)
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let random: Arc<dyn Random> = Arc::new(OsRandom);
    match cli.command {
        Command::Serve(args) => {
            let defaults = ServeConfig::default();
            let shared = &args.shared;
            let server = shared.server_config(&cli.database_url, defaults.server);
            let config = ServeConfig {
                server: ServerConfig {
                    redis_prefix: args.redis_prefix.clone(),
                    limits: Limits {
                        rate_per_window: args.token_rate_per_minute,
                        credential_concurrency: args.token_concurrency,
                        global_concurrency: args.global_concurrency,
                        ..server.limits.clone()
                    },
                    pre_auth_concurrency: args.pre_auth_concurrency as usize,
                    db: PoolSettings {
                        statement_timeout: Duration::from_millis(args.statement_timeout_ms),
                        lock_timeout: Duration::from_millis(args.lock_timeout_ms),
                        ..server.db
                    },
                    ..server
                },
                public_url: args.public_url.clone(),
                address_source: shared.address_source(),
                login_hash_concurrency: args
                    .login_hash_concurrency
                    .map_or_else(app::default_login_hash_concurrency, |n| n as usize),
                read_cache_bytes: args.read_cache_bytes,
            };
            let listener = shared.listen().await?;
            println!(
                "Sidequest is running. Sign in at {}",
                sign_in_url(args.public_url.as_deref(), listener.local_addr()?)
            );
            app::run(config, listener, clock, random, mcp_door::shutdown_signal()).await?;
        }
        Command::Migrate => {
            open(&cli.database_url).await?;
            println!("migrated {}", redact(&cli.database_url));
        }
        Command::User(UserCommand::Create {
            username,
            password_stdin,
            gm,
        }) => {
            let store = open(&cli.database_url).await?;
            let password_hash = if password_stdin {
                Some(password_from_stdin(random.as_ref())?)
            } else {
                None
            };
            let user = demo::create_user(
                &store,
                clock.as_ref(),
                random.as_ref(),
                &username,
                gm,
                password_hash,
            )
            .await?;
            println!(
                "created user {} ({}){}",
                user.username,
                user.id,
                if gm { " — GM" } else { "" }
            );
        }
        Command::User(UserCommand::Password { username }) => {
            let store = open(&cli.database_url).await?;
            let Some(user) = store.user_by_username(&username).await? else {
                bail!("no user named {username}")
            };
            let hash = password_from_stdin(random.as_ref())?;
            store.set_password_hash(user.id, Some(&hash)).await?;
            let sessions = store.delete_sessions_of(user.id).await?;
            println!("set the password of {username} (ended {sessions} session(s))");
        }
        Command::User(UserCommand::Deactivate { username }) => {
            let store = open(&cli.database_url).await?;
            let Some(user) = store.user_by_username(&username).await? else {
                bail!("no user named {username}")
            };
            store.set_user_active(user.id, false).await?;
            // Sessions are refused for inactive users anyway; deleting them frees the rows.
            let sessions = store.delete_sessions_of(user.id).await?;
            println!("deactivated {username} (ended {sessions} session(s))");
        }
        Command::Token(cmd) => {
            let store = open(&cli.database_url).await?;
            let service = PlayService::new(store, clock, random);
            match cmd {
                TokenCommand::Issue { assignment, json } => {
                    let (token, expires_at) = service
                        .issue_token(assignment)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"assignment_id": assignment, "token": token, "expires_at": crate::domain::time::iso8601(expires_at)})
                        );
                    } else {
                        println!("{token}");
                    }
                }
                TokenCommand::Revoke { assignment } => {
                    let n = service
                        .revoke_token(assignment)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    println!("revoked {n} live token(s) of {assignment}");
                }
                TokenCommand::Author {
                    username,
                    name,
                    json,
                } => {
                    let Some(user) = service.store.user_by_username(&username).await? else {
                        bail!("no user named {username}")
                    };
                    if !user.is_gm || !user.active {
                        bail!("author tokens are for active game masters; {username} is not one");
                    }
                    let campaign = crate::campaign::CampaignService::new(Arc::new(service));
                    let issued = campaign
                        .create_author_token(&user, &name)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    if json {
                        println!("{}", crate::render::author_token_issued(&issued));
                    } else {
                        println!("{}", issued.token);
                    }
                }
            }
        }
        Command::Demo(args) => {
            let store = open(&cli.database_url).await?;
            let service = PlayService::new(store, clock, random);
            let created = demo::run(&service, args.assignments).await?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&created.to_json())?);
            } else {
                println!("{}", created.client_config(&args.public_url));
            }
        }
        Command::Backup(args) => {
            let done = sqlkit::backup_sqlite(&cli.database_url, &args.to, BACKUP_BUSY_TIMEOUT)
                .await
                .context("backup")?;
            println!("{done}");
        }
    }
    Ok(())
}

/// How long a backup waits for a lock another process holds before it gives up.
const BACKUP_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The URL without its password, for printing.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].find(':') {
            Some(c) => format!("{}:***{}", &url[..s + 3 + c], &url[at..]),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::sign_in_url;

    #[test]
    fn serve_keeps_its_flags_and_sidequest_env_names() {
        use clap::CommandFactory;
        testkit::cli::assert_flag_envs(
            &super::Cli::command(),
            "serve",
            &[
                ("bind", "SIDEQUEST_BIND"),
                ("redis-url", "SIDEQUEST_REDIS_URL"),
                ("client-address-header", "SIDEQUEST_CLIENT_ADDRESS_HEADER"),
                ("metrics-bind", "SIDEQUEST_METRICS_BIND"),
                ("db-max-connections", "SIDEQUEST_DB_MAX_CONNECTIONS"),
                ("allowed-origin", "SIDEQUEST_ALLOWED_ORIGINS"),
                ("tls-cert", "SIDEQUEST_TLS_CERT"),
                ("tls-key", "SIDEQUEST_TLS_KEY"),
                ("max-connections", "SIDEQUEST_MAX_CONNECTIONS"),
                ("header-timeout-secs", "SIDEQUEST_HEADER_TIMEOUT_SECS"),
                ("redis-prefix", "SIDEQUEST_REDIS_PREFIX"),
                ("statement-timeout-ms", "SIDEQUEST_STATEMENT_TIMEOUT_MS"),
            ],
        );
        let cli = <super::Cli as clap::Parser>::try_parse_from(["sidequest", "serve"]).unwrap();
        let super::Command::Serve(args) = cli.command else {
            panic!("serve")
        };
        assert_eq!(args.shared.bind.to_string(), "127.0.0.1:8080");
    }

    #[test]
    fn serve_prints_the_sign_in_page() {
        let bound: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(sign_in_url(None, bound), "http://127.0.0.1:8080/signin");
        let bound: std::net::SocketAddr = "[::]:8080".parse().unwrap();
        assert_eq!(sign_in_url(None, bound), "http://[::1]:8080/signin");
        let bound: std::net::SocketAddr = "10.0.0.5:80".parse().unwrap();
        assert_eq!(sign_in_url(None, bound), "http://10.0.0.5:80/signin");
        assert_eq!(
            sign_in_url(Some("https://play.example/"), bound),
            "https://play.example/signin"
        );
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            super::redact("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(super::redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::redact("sqlite://x.db"), "sqlite://x.db");
    }
}
