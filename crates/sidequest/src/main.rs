//! The `sidequest` binary: parse the command line, start logging, hand over to the library.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = sidequest::cli::Cli::parse();
    mcp_door::init_tracing(&cli.log_format);
    sidequest::cli::run(cli).await
}
