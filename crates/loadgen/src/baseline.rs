//! The reference server: a bare axum handler answering every POST with one constant JSON body
//! of a chosen size, shaped like a tool result so `run` checks it exactly as it checks
//! Sidequest's answers. It owns nothing else: no auth, no logging per request, and no database
//! unless asked for one statement a request (`--database-url`, `--statement`: the floor of a
//! server that must ask its database once per request, on the same driver and pool), or with
//! `--turn` the floor under a commit (`floor_turn`).

use std::io::Write;
use std::net::SocketAddr;

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use sha2::{Digest, Sha256};

/// Arguments of `loadgen baseline`.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    /// Address to listen on (`127.0.0.1:0` picks a free port; the URL is printed on stdout).
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Exact size of the response body in bytes.
    #[arg(long, default_value_t = 4096)]
    body_bytes: usize,
    /// A PostgreSQL URL: each request first runs `--statement` on a pooled connection (sqlkit's
    /// pool, as the servers use) and is answered only when it returns a row; or, with
    /// `--turn`, is written as a turn.
    #[arg(long)]
    database_url: Option<String>,
    /// The statement run per request; `$1` is bound to the SHA-256 hex digest of the request's
    /// bearer token.
    #[arg(long, requires = "database_url", conflicts_with = "turn")]
    statement: Option<String>,
    /// The floor under a commit: every `commit_play_turn` request is written with
    /// bench/turn.sql's statement (and `get_play_context` answered with the version), on the
    /// Sidequest database at `--database-url`; the answer is `--body-bytes` long.
    #[arg(long, requires = "database_url")]
    turn: bool,
    /// Connections in the pool.
    #[arg(long, default_value_t = 16)]
    pool: u32,
}

/// The smallest body this shape allows.
const SHELL: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""}],"isError":false}}"#;

/// A JSON-RPC tool result of exactly `bytes` bytes (or the bare shell when that is larger).
pub fn body(bytes: usize) -> String {
    padded(SHELL, bytes)
}

/// `shell`, a tool result whose text content is empty, with that text padded so the whole is
/// `bytes` long (or `shell` itself when that is longer).
pub fn padded(shell: &str, bytes: usize) -> String {
    let pad = "x".repeat(bytes.saturating_sub(shell.len()));
    shell.replacen(r#""text":"""#, &format!(r#""text":"{pad}""#), 1)
}

/// The SHA-256 hex digest of the request's bearer token (of nothing, without one), as the
/// servers look a play token up.
pub fn token_digest(headers: &HeaderMap) -> String {
    let token = mcp_door::bearer_token(headers).unwrap_or_default();
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Serves the constant body until SIGINT/SIGTERM.
pub async fn serve(args: BaselineArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    let address = listener.local_addr()?;
    let body = Bytes::from(body(args.body_bytes));
    // The servers' own pool settings, with this many connections.
    let settings = sqlkit::PoolSettings {
        max_connections: args.pool,
        ..mcp_door::DEFAULT_POOL
    };
    let db = match &args.database_url {
        Some(url) => Some(
            sqlkit::Db::open(url, &settings)
                .await
                .with_context(|| format!("opening {url}"))?,
        ),
        None => None,
    };
    let app = match (db, args.statement) {
        (Some(db), _) if args.turn => {
            let floor = crate::floor_turn::Floor::new(db, args.body_bytes);
            routes(move |headers: HeaderMap, request: Bytes| floor.clone().handle(headers, request))
        }
        (Some(db), Some(statement)) => {
            // Kept for the life of the process, so that every request's statement borrows it.
            let statement: &'static str = Box::leak(statement.into_boxed_str());
            routes(move |headers: HeaderMap, request: Bytes| {
                let (body, db) = (body.clone(), db.clone());
                async move {
                    drop(request);
                    let digest = token_digest(&headers);
                    match sqlkit::sql(statement)
                        .bind(digest.as_str())
                        .fetch_optional(&db)
                        .await
                    {
                        Ok(Some(_)) => Ok(([(header::CONTENT_TYPE, "application/json")], body)),
                        Ok(None) => Err(StatusCode::UNAUTHORIZED),
                        Err(_) => Err(StatusCode::SERVICE_UNAVAILABLE),
                    }
                }
            })
        }
        (Some(_), None) => anyhow::bail!("--database-url needs --statement or --turn"),
        (None, _) => routes(move |request: Bytes| {
            let body = body.clone();
            async move {
                // Take the request body, as a real handler must, then answer the constant.
                drop(request);
                ([(header::CONTENT_TYPE, "application/json")], body)
            }
        }),
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "http://{address}")?;
    stdout.flush()?;
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await?;
    Ok(())
}

/// Every POST, at any path, answered by `handler`.
fn routes<H, T>(handler: H) -> Router
where
    H: axum::handler::Handler<T, ()>,
    T: 'static,
{
    Router::new()
        .route("/", post(handler.clone()))
        .route("/{*path}", post(handler))
}

async fn shutdown() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { () = interrupt => {}, () = terminate => {} }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_body_has_the_asked_size_and_is_a_tool_result() {
        for n in [0, 10, 200, 4096, 12_345] {
            let b = super::body(n);
            assert_eq!(b.len(), n.max(super::SHELL.len()));
            let v: serde_json::Value = serde_json::from_str(&b).unwrap();
            assert_eq!(v["result"]["isError"], false);
        }
    }
}
