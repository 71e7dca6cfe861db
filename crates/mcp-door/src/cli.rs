//! The `serve` flags every product's command line shares (address, Redis, client-address
//! header, metrics listener, pool size, allowed origins, TLS, connection cap, header timeout),
//! declared once ([`ServeArgs`]) and named per product ([`Product`]: its environment-variable
//! prefix, default address and any help text of its own), and what turns them into a
//! [`ServerConfig`] and a bound listener. Each product flattens [`ProductServeArgs`] into its
//! own `serve` command and keeps the flags only it has.

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgMatches, Args, FromArgMatches};
use tokio::net::TcpListener;

use crate::address::AddressSource;
use crate::serve::ConnectionLimits;
use crate::server::ServerConfig;
use crate::tls::TlsFiles;

/// The shared `serve` flags. Their environment variables are the product's: its
/// [`Product::ENV_PREFIX`] before the flag's name in capitals (`--redis-url` is
/// `SIDEQUEST_REDIS_URL` for Sidequest), set on the command when it is built.
#[derive(Debug, Clone, Args)]
// Its own group id: the derived one (the struct's name) is what a product calls its own
// `serve` flags too, and clap refuses two groups of one name.
#[group(id = "mcp_door_serve_args")]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Redis URL for admission counters shared by every instance (in-process when absent).
    #[arg(long)]
    pub redis_url: Option<String>,
    /// Behind a trusted proxy: the request header carrying the client's address (e.g.
    /// `x-forwarded-for` or `cloudfront-viewer-address`; its first comma-separated item, port
    /// dropped). Per-address limits key on it. Unset: the TCP peer. Set it only when every
    /// request arrives through that proxy, or clients can forge it.
    #[arg(long, value_parser = crate::address::parse_header_name)]
    pub client_address_header: Option<String>,
    /// Serve Prometheus `GET /metrics` on this address (keep it on the operators' network;
    /// it is not served beside the doors). Unset: not served.
    #[arg(long)]
    pub metrics_bind: Option<SocketAddr>,
    /// Database connections in the pool.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub db_max_connections: u32,
    /// An origin (`scheme://host[:port]`) besides the public URL's whose browser-based clients
    /// may call the doors (CORS); repeatable. Any other `Origin` is refused 403.
    #[arg(long = "allowed-origin", value_delimiter = ',', value_parser = crate::edge::parse_origin)]
    pub allowed_origins: Vec<String>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key); reread on SIGHUP.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Connections open at once; one more is closed as soon as it is accepted.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds a request's headers may take to arrive (an idle keep-alive connection is
    /// closed after them too).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub header_timeout_secs: u64,
}

/// The ids (field names) of [`ServeArgs`]' flags: what [`Product::ENV_PREFIX`] names.
pub const SHARED_FLAGS: [&str; 10] = [
    "bind",
    "redis_url",
    "client_address_header",
    "metrics_bind",
    "db_max_connections",
    "allowed_origins",
    "tls_cert",
    "tls_key",
    "max_connections",
    "header_timeout_secs",
];

impl ServeArgs {
    /// `server` with these flags: the database URL, Redis, the pool size, the metrics
    /// listener, allowed origins, `Host` checked when bound to loopback, the connection cap and
    /// header timeout, TLS. The rest of `server` (limits, timeouts, the Redis prefix) is kept.
    pub fn server_config(&self, database_url: &str, server: ServerConfig) -> ServerConfig {
        ServerConfig {
            database_url: database_url.to_owned(),
            redis_url: self.redis_url.clone(),
            db: sqlkit::PoolSettings {
                max_connections: self.db_max_connections,
                ..server.db
            },
            metrics_bind: self.metrics_bind,
            allowed_origins: self.allowed_origins.clone(),
            check_host: self.bind.ip().is_loopback(),
            connections: ConnectionLimits {
                max_connections: self.max_connections as usize,
                header_timeout: Duration::from_secs(self.header_timeout_secs),
                ..server.connections
            },
            tls: match (&self.tls_cert, &self.tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                _ => None,
            },
            ..server
        }
    }

    /// Where a request's client address comes from: the configured header, else the peer.
    pub fn address_source(&self) -> AddressSource {
        AddressSource::from_header(self.client_address_header.clone())
    }

    /// The listener on `--bind`; a failure names the address.
    pub async fn listen(&self) -> std::io::Result<TcpListener> {
        TcpListener::bind(self.bind)
            .await
            .map_err(|e| std::io::Error::new(e.kind(), format!("binding {}: {e}", self.bind)))
    }
}

/// How one product names the shared flags: the prefix of their environment variables, the
/// default address, and the help of a flag it explains its own way.
pub trait Product {
    /// Prepended to a flag's name in capitals: `SIDEQUEST_` makes `SIDEQUEST_BIND`.
    const ENV_PREFIX: &'static str;
    /// The default of `--bind`.
    const DEFAULT_BIND: &'static str;

    /// The help of the flag `id` (one of [`SHARED_FLAGS`]) when it differs from
    /// [`ServeArgs`]' own, written as clap shows a doc comment (no final period); `None`
    /// keeps that.
    fn help(id: &str) -> Option<&'static str> {
        let _ = id;
        None
    }
}

/// [`ServeArgs`] as product `P` names them: flatten it (`#[command(flatten)]`) into the
/// product's `serve` command; it derefs to the flags.
pub struct ProductServeArgs<P> {
    /// The parsed flags.
    pub args: ServeArgs,
    product: PhantomData<fn() -> P>,
}

// By hand: derived, they would ask `P` (a marker type) for `Debug` and `Clone` too.
impl<P> std::fmt::Debug for ProductServeArgs<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.args.fmt(f)
    }
}

impl<P> Clone for ProductServeArgs<P> {
    fn clone(&self) -> Self {
        Self {
            args: self.args.clone(),
            product: PhantomData,
        }
    }
}

impl<P> std::ops::Deref for ProductServeArgs<P> {
    type Target = ServeArgs;

    fn deref(&self) -> &ServeArgs {
        &self.args
    }
}

impl<P: Product> ProductServeArgs<P> {
    /// The shared flags on `command`, with `P`'s environment variables, default address and
    /// help.
    fn name(mut command: clap::Command) -> clap::Command {
        for id in SHARED_FLAGS {
            command = command.mut_arg(id, |arg| {
                let arg = arg.env(format!("{}{}", P::ENV_PREFIX, id.to_ascii_uppercase()));
                let arg = match P::help(id) {
                    Some(help) => arg.help(help),
                    None => arg,
                };
                if id == "bind" {
                    arg.default_value(P::DEFAULT_BIND)
                } else {
                    arg
                }
            });
        }
        command
    }
}

impl<P: Product> FromArgMatches for ProductServeArgs<P> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            args: ServeArgs::from_arg_matches(matches)?,
            product: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.args.update_from_arg_matches(matches)
    }
}

impl<P: Product> Args for ProductServeArgs<P> {
    fn augment_args(command: clap::Command) -> clap::Command {
        Self::name(ServeArgs::augment_args(command))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::name(ServeArgs::augment_args_for_update(command))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    struct Example;

    impl Product for Example {
        const ENV_PREFIX: &'static str = "EXAMPLE_";
        const DEFAULT_BIND: &'static str = "127.0.0.1:9000";

        fn help(id: &str) -> Option<&'static str> {
            (id == "redis_url").then_some("Example's Redis")
        }
    }

    /// An example product's command line.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ProductServeArgs<Example>,
        #[command(flatten)]
        own: own::ServeArgs,
    }

    mod own {
        /// A product's own `serve` flags, named as both products name theirs.
        #[derive(Debug, clap::Args)]
        pub struct ServeArgs {
            /// A flag of the product's own.
            #[arg(long, env = "EXAMPLE_OWN", default_value_t = 1)]
            pub own: u32,
        }
    }

    #[test]
    fn every_shared_flag_is_named_by_the_product() {
        use clap::CommandFactory;
        let command = Cli::command();
        for id in SHARED_FLAGS {
            let arg = command
                .get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap_or_else(|| panic!("{id} is not a flag"));
            let expected = format!("EXAMPLE_{}", id.to_ascii_uppercase());
            assert_eq!(arg.get_env(), Some(std::ffi::OsStr::new(&expected)), "{id}");
        }
        Cli::command().debug_assert();
        let help = Cli::command().render_long_help().to_string();
        let redis = command
            .get_arguments()
            .find(|a| a.get_id() == "redis_url")
            .and_then(|a| a.get_help())
            .map(|h| h.to_string());
        assert_eq!(redis.as_deref(), Some("Example's Redis"));
        assert!(help.contains("[env: EXAMPLE_REDIS_URL=]"), "{help}");
        assert!(help.contains("[env: EXAMPLE_ALLOWED_ORIGINS=]"), "{help}");
        assert!(help.contains("[default: 127.0.0.1:9000]"), "{help}");
        assert!(
            help.contains("--allowed-origin <ALLOWED_ORIGINS>"),
            "{help}"
        );
    }

    #[test]
    fn flags_become_the_server_config() {
        let cli = Cli::try_parse_from([
            "x",
            "--bind",
            "0.0.0.0:7000",
            "--redis-url",
            "redis://r",
            "--db-max-connections",
            "3",
            "--allowed-origin",
            "https://a.example,http://localhost:6274",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--max-connections",
            "5",
            "--header-timeout-secs",
            "7",
            "--metrics-bind",
            "127.0.0.1:9100",
            "--client-address-header",
            "X-Forwarded-For",
        ])
        .unwrap();
        let defaults = ServerConfig::new("sqlite://d.db", "x:admission");
        let config = cli.serve.server_config("sqlite://e.db", defaults.clone());
        assert_eq!(config.database_url, "sqlite://e.db");
        assert_eq!(config.redis_url.as_deref(), Some("redis://r"));
        assert_eq!(config.redis_prefix, "x:admission");
        assert_eq!(config.db.max_connections, 3);
        assert_eq!(config.db.statement_timeout, defaults.db.statement_timeout);
        assert_eq!(config.metrics_bind, Some("127.0.0.1:9100".parse().unwrap()));
        assert_eq!(
            config.allowed_origins,
            ["https://a.example", "http://localhost:6274"]
        );
        assert!(!config.check_host, "not bound to loopback");
        assert_eq!(config.connections.max_connections, 5);
        assert_eq!(config.connections.header_timeout, Duration::from_secs(7));
        assert_eq!(
            config.connections.body_timeout,
            defaults.connections.body_timeout
        );
        let tls = config.tls.unwrap();
        assert_eq!((tls.cert, tls.key), ("c.pem".into(), "k.pem".into()));
        assert_eq!(
            cli.serve.address_source(),
            AddressSource::from_header(Some("x-forwarded-for".into()))
        );
    }

    #[test]
    fn defaults_are_the_products_and_tls_needs_both_files() {
        let cli = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(cli.serve.bind, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(cli.own.own, 1);
        let config = cli
            .serve
            .server_config("sqlite://e.db", ServerConfig::new("sqlite://d.db", "p"));
        assert!(config.check_host);
        assert!(config.tls.is_none());
        assert_eq!(config.redis_url, None);
        assert_eq!(cli.serve.address_source(), AddressSource::Peer);
        let err = Cli::try_parse_from(["x", "--tls-cert", "c.pem"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        let err = Cli::try_parse_from(["x", "--max-connections", "0"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }
}
