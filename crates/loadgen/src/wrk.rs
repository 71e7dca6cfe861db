//! `loadgen wrk`: one wrk run (bench/wrk-read.lua's closing JSON line) and the CPU of the
//! same window (`loadgen cpu`) in `run`'s JSON shape, so the table sets a wrk-driven read
//! beside loadgen's and pgbench's. Running wrk itself is the bench scripts' job.

use std::path::PathBuf;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::json;

use crate::cpu;
use crate::stats::round;

/// Arguments of `loadgen wrk`.
#[derive(Debug, clap::Args)]
pub struct WrkArgs {
    /// A name for this run, copied into the JSON.
    #[arg(long, default_value = "")]
    name: String,
    /// The `-c` (connections) wrk ran with.
    #[arg(long)]
    clients: usize,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// `loadgen cpu` output for the same window (with `--cpu-name wrk` and the server's).
    #[arg(long)]
    cpu_file: Option<PathBuf>,
    /// The process name of the server in the CPU report (`sidequest`, the peer's `sq-peer`,
    /// the bare handler's `loadgen`).
    #[arg(long)]
    server_name: Option<String>,
    /// wrk's output: its closing JSON line is read (bench/wrk-read.lua's `done`).
    output: PathBuf,
}

/// What bench/wrk-read.lua prints when wrk is done.
#[derive(Debug, Deserialize)]
struct Done {
    requests: u64,
    errors: u64,
    socket_errors: u64,
    duration_us: u64,
    p50_us: u64,
    p99_us: u64,
    max_us: u64,
    bytes: u64,
}

fn done_line(text: &str) -> anyhow::Result<Done> {
    let Some(line) = text.lines().rev().find(|l| l.trim_start().starts_with('{')) else {
        bail!("no closing JSON line in wrk's output (was it run with bench/wrk-read.lua?)");
    };
    serde_json::from_str(line).context("wrk's closing JSON line")
}

/// Summarizes the run.
pub fn summarize(args: &WrkArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.output)
        .with_context(|| format!("reading {}", args.output.display()))?;
    let done = done_line(&text)?;
    let failed = done.errors + done.socket_errors;
    let ok = done.requests.saturating_sub(failed);
    let secs = done.duration_us as f64 / 1e6;
    if secs <= 0.0 {
        bail!("wrk ran for no time");
    }
    let ms = |us: u64| round(us as f64 / 1000.0);
    let cpu = match &args.cpu_file {
        Some(path) => {
            let cpu = cpu::read(path)?;
            // The CPU window lies inside wrk's run: the requests of that window, at wrk's rate.
            let window = cpu["window_secs"].as_f64().unwrap_or(secs);
            let n = (ok as f64 * window / secs).round() as u64;
            Some(cpu::per_request(cpu, n, "wrk", args.server_name.as_deref()))
        }
        None => None,
    };
    let rps = ok as f64 / secs;
    let report = json!({
        "name": args.name,
        "kind": "wrk",
        "clients": args.clients,
        "duration_secs": round(secs),
        "requests": ok,
        "errors": failed,
        "error_rate": if done.requests == 0 { 1.0 } else { failed as f64 / done.requests as f64 },
        "rps": round(rps),
        "latency": {"p50_ms": ms(done.p50_us), "p99_ms": ms(done.p99_us), "max_ms": ms(done.max_us)},
        "response_bytes": done.bytes.checked_div(done.requests),
        "cpu": cpu,
    });
    eprintln!(
        "{:<28} {:>3} clients  {:>9.1} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  errors {}/{}",
        args.name,
        args.clients,
        rps,
        ms(done.p50_us),
        ms(done.p99_us),
        ms(done.max_us),
        failed,
        done.requests
    );
    if args.json {
        println!("{report}");
    }
    if failed * 100 > done.requests {
        bail!("{failed} of {} requests failed", done.requests);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_closing_line_is_read_after_wrks_own_report() {
        let text = "Running 15s test @ http://127.0.0.1:1/play/mcp\n  2 threads and 8 connections\n\
            Requests/sec:  12000.00\n\
            {\"requests\":180000,\"errors\":0,\"socket_errors\":0,\"duration_us\":15000000,\
            \"p50_us\":600,\"p99_us\":1500,\"max_us\":9000,\"bytes\":270000000}\n";
        let done = super::done_line(text).expect("parsed");
        assert_eq!(done.requests, 180_000);
        assert_eq!(done.p99_us, 1500);
        assert!(super::done_line("Requests/sec: 1\n").is_err());
    }
}
