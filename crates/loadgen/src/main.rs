//! `loadgen`: the benchmark driver of docs/benchmarks.md. It owns the command line and hands
//! each subcommand to its module: `baseline` (a bare axum server to compare against), `prime`
//! and `run` (concurrent MCP clients against a door), `pgbench` and `wrk` (the same figures from
//! pgbench's per-transaction logs and from wrk), `table` (the Markdown summary) and `meta`
//! (Elixir's heavy tools over a generated world). A benchmark tool, not
//! a library: errors are `anyhow` throughout, as in any `main`.

mod baseline;
mod cpu;
mod floor_turn;
mod meta;
mod pgbench;
mod procfs;
mod run;
mod stats;
mod table;
mod workload;
mod wrk;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "loadgen",
    about = "Loopback load generator for Sidequest's MCP doors"
)]
struct Cli {
    /// Tokio worker threads (0: one per CPU, like the server).
    #[arg(long, global = true, env = "LOADGEN_THREADS", default_value_t = 0)]
    threads: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a constant JSON body of N bytes to every POST (the bare-handler reference).
    Baseline(baseline::BaselineArgs),
    /// Commit K turns on each of N assignments, so get_play_context returns a played state.
    Prime(run::PrimeArgs),
    /// Drive N concurrent MCP clients for a fixed time and report throughput and latency.
    Run(run::RunArgs),
    /// Report the CPU use of named processes over a window (run beside pgbench).
    Cpu(cpu::CpuArgs),
    /// Summarize pgbench per-transaction logs (`pgbench -l`) in `run`'s JSON shape.
    Pgbench(pgbench::PgbenchArgs),
    /// Summarize a wrk run (bench/wrk-read.lua) in `run`'s JSON shape.
    Wrk(wrk::WrkArgs),
    /// Fill a database from cr-fake's world and time Elixir's meta tools (battles_meta_*).
    Meta(meta::MetaArgs),
    /// Print the Markdown table of a directory of results, with ratios against the targets.
    Table(table::TableArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if cli.threads > 0 {
        builder.worker_threads(cli.threads);
    }
    let runtime = builder.enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Baseline(args) => baseline::serve(args).await,
            Command::Prime(args) => run::prime(args).await,
            Command::Run(args) => run::run(args).await,
            Command::Cpu(args) => cpu::watch(args).await,
            Command::Pgbench(args) => pgbench::summarize(&args),
            Command::Wrk(args) => wrk::summarize(&args),
            Command::Table(args) => table::print(&args),
            Command::Meta(args) => meta::run(args).await,
        }
    })
}
