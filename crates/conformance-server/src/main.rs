//! Serves the conformance fixtures on `--bind` (default 127.0.0.1:0) and prints the endpoint
//! URL on stdout's first line.

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
#[command(about = "The MCP conformance suite's fixture server, on mcp-door")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.bind).await?;
    println!(
        "http://{}{}",
        listener.local_addr()?,
        conformance_server::PATH
    );
    let router = conformance_server::router()?;
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(mcp_door::shutdown_signal())
    .await?;
    Ok(())
}
