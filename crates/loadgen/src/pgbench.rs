//! `loadgen pgbench`: pgbench's per-transaction logs (`pgbench -l`) summarized over the same
//! warm-up and window as `run`, in `run`'s JSON shape, so the table compares like with like.
//! Running pgbench itself is bench/run.sh's job.

use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::json;

use crate::cpu;
use crate::stats::{Latency, round};

/// Arguments of `loadgen pgbench`.
#[derive(Debug, clap::Args)]
pub struct PgbenchArgs {
    /// A name for this run, copied into the JSON.
    #[arg(long, default_value = "")]
    name: String,
    /// The `-c` pgbench ran with.
    #[arg(long)]
    clients: usize,
    /// Seconds at the start of the log not measured.
    #[arg(long, default_value_t = 3.0)]
    warmup_secs: f64,
    /// Length of the measured window.
    #[arg(long, default_value_t = 15.0)]
    duration_secs: f64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// `loadgen cpu` output for the same window (with `--cpu-name pgbench`), to include.
    #[arg(long)]
    cpu_file: Option<PathBuf>,
    /// The log files (`pgbench_log.PID[.THREAD]`).
    #[arg(required = true)]
    logs: Vec<PathBuf>,
}

/// One logged transaction: when it ended (µs since the epoch) and how long it took (µs), or
/// `None` for a failed or skipped one.
fn parse_line(line: &str) -> Option<(u64, Option<u64>)> {
    // client_id transaction_no time script_no time_epoch time_us [schedule_lag retries]
    let f: Vec<&str> = line.split_whitespace().collect();
    let end = f.get(4)?.parse::<u64>().ok()? * 1_000_000 + f.get(5)?.parse::<u64>().ok()?;
    Some((end, f.get(2)?.parse::<u64>().ok()))
}

/// Summarizes the logs.
pub fn summarize(args: &PgbenchArgs) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for path in &args.logs {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        rows.extend(text.lines().filter_map(parse_line));
    }
    let Some(first_start) = rows
        .iter()
        .map(|&(end, took)| end - took.unwrap_or(0))
        .min()
    else {
        bail!("no transactions in the pgbench logs");
    };
    let from = first_start + (args.warmup_secs * 1e6) as u64;
    let to = from + (args.duration_secs * 1e6) as u64;
    let mut micros = Vec::new();
    let mut errors = 0u64;
    for (end, took) in rows {
        match took {
            Some(t) if end - t >= from && end <= to => {
                micros.push(u32::try_from(t).unwrap_or(u32::MAX))
            }
            None if end >= from && end <= to => errors += 1,
            _ => {}
        }
    }
    let n = micros.len() as u64;
    let latency = Latency::of(&mut micros);
    let tps = n as f64 / args.duration_secs;
    let cpu = match &args.cpu_file {
        Some(path) => Some(cpu::per_request(cpu::read(path)?, n, "pgbench", None)),
        None => None,
    };
    let report = json!({
        "name": args.name,
        "kind": "pgbench",
        "clients": args.clients,
        "duration_secs": args.duration_secs,
        "warmup_secs": args.warmup_secs,
        "requests": n,
        "errors": errors,
        "error_rate": if n + errors == 0 { 1.0 } else { errors as f64 / (n + errors) as f64 },
        "rps": round(tps),
        "latency": latency.to_json(),
        "cpu": cpu,
    });
    eprintln!(
        "{:<28} {:>3} clients  {:>9.1} tx/s   p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  errors {}",
        args.name, args.clients, tps, latency.p50_ms, latency.p99_ms, latency.max_ms, errors
    );
    if args.json {
        println!("{report}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_lines_parse() {
        assert_eq!(
            super::parse_line("3 17 2450 0 1700000000 123456"),
            Some((1_700_000_000_123_456, Some(2450)))
        );
        assert_eq!(
            super::parse_line("3 17 failed 0 1700000000 5 0 1"),
            Some((1_700_000_000_000_005, None))
        );
        assert_eq!(super::parse_line("garbage"), None);
    }
}
