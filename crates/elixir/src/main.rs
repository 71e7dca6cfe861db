//! The `elixir` binary: parse the command line, start logging, hand over to the library.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = elixir::cli::Cli::parse();
    let _log = mcp_door::init_tracing(&cli.log_format);
    elixir::cli::run(cli).await
}
