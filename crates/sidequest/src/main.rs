//! The `sidequest` binary: parse the command line, start logging, hand over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: a request allocates and frees many small
/// buffers (JSON values, SQL arguments, strings), and glibc's malloc was about a tenth of
/// the server's CPU under load; mimalloc took a commit's server CPU about 10% lower, for a
/// larger resident set that stays well inside the 150 MB bound (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = sidequest::cli::Cli::parse();
    let _log = mcp_door::init_tracing(&cli.log_format);
    sidequest::cli::run(cli).await
}
