//! `prime` and `run`: N concurrent MCP clients, client i on token i (one assignment each),
//! each looping keep-alive HTTP/1.1 POSTs over one shared connection pool. `run` measures a
//! fixed window after a warm-up and reports throughput, latency percentiles, the server's
//! peak resident set and where the CPU went. Request shapes live in `workload`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::body::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::json;
use tokio::task::JoinSet;

use crate::stats::{Latency, round};
use crate::workload::{self, Tool, TurnTexts};
use crate::{cpu, procfs};

/// Where the clients go and as whom.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The MCP endpoint (e.g. `http://127.0.0.1:8080/play/mcp`) or a `loadgen baseline` URL.
    #[arg(long)]
    url: String,
    /// Play tokens: `sidequest demo --json` output or one per line; client i uses token i.
    /// Without it no `Authorization` header is sent (fine for the baseline only).
    #[arg(long)]
    tokens_file: Option<PathBuf>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// The published scene committed turns name.
    #[arg(long, default_value = "harbor")]
    scene: String,
}

/// Arguments of `loadgen prime`.
#[derive(Debug, clap::Args)]
pub struct PrimeArgs {
    #[command(flatten)]
    target: Target,
    /// Turns to commit on each assignment.
    #[arg(long, default_value_t = 10)]
    turns: u32,
}

/// Arguments of `loadgen run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    target: Target,
    /// The tool every request calls.
    #[arg(long, value_enum)]
    tool: Tool,
    /// Length of the measured window.
    #[arg(long, default_value_t = 15.0)]
    duration_secs: f64,
    /// Load before the window, not measured.
    #[arg(long, default_value_t = 3.0)]
    warmup_secs: f64,
    /// The server's process id: its peak resident set and CPU time are reported.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Also report the CPU time of every process with this name (e.g. `postgres`); repeatable.
    #[arg(long)]
    cpu_name: Vec<String>,
    /// A name for this run, copied into the JSON (used by `loadgen table`).
    #[arg(long, default_value = "")]
    name: String,
    /// Print the result as one JSON object on stdout (the human summary goes to stderr).
    #[arg(long)]
    json: bool,
    /// Fail when more than this fraction of measured requests fail.
    #[arg(long, default_value_t = 0.01)]
    max_error_rate: f64,
}

/// One HTTP client identity: the shared pool, the URL and this client's bearer header.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    url: Arc<str>,
    auth: Option<HeaderValue>,
}

impl Client {
    /// POSTs one JSON-RPC body; `(status, body)` or a transport error.
    async fn post(&self, body: Bytes) -> Result<(u16, Bytes), String> {
        let mut request = self
            .http
            .post(&*self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| format!("transport: {e}"))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("transport (body): {e}"))?;
        Ok((status, bytes))
    }

    /// Calls a tool and checks the answer.
    async fn call(&self, body: Bytes) -> Result<workload::Success, String> {
        let (status, bytes) = self.post(body).await?;
        workload::check(status, &bytes)
    }

    /// The assignment's current version, from `get_play_context` (1 against the baseline).
    async fn version(&self) -> Result<i64, String> {
        let body = Bytes::from(workload::call(Tool::GetPlayContext.name(), &json!({})));
        Ok(self.call(body).await?.version.unwrap_or(1))
    }
}

/// One client per token, all on one keep-alive pool sized for them.
fn clients(target: &Target) -> anyhow::Result<Vec<Client>> {
    let tokens = match &target.tokens_file {
        Some(path) => Some(workload::tokens(path)?),
        None => None,
    };
    if let Some(t) = &tokens
        && t.len() < target.clients
    {
        bail!(
            "{} clients need {} tokens (one assignment each); the tokens file has {}",
            target.clients,
            target.clients,
            t.len()
        );
    }
    if target.clients == 0 {
        bail!("--clients must be at least 1");
    }
    // HTTP/1.1 only (reqwest without its `http2` feature); Nagle off, as reqwest defaults.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(target.clients)
        .tcp_nodelay(true)
        .build()?;
    let url: Arc<str> = Arc::from(target.url.as_str());
    (0..target.clients)
        .map(|i| {
            let auth = match &tokens {
                Some(t) => Some(
                    HeaderValue::from_str(&format!("Bearer {}", t[i]))
                        .context("a token is not a valid header value")?,
                ),
                None => None,
            };
            Ok(Client {
                http: http.clone(),
                url: Arc::clone(&url),
                auth,
            })
        })
        .collect()
}

/// `loadgen prime`: commits `turns` turns on every client's assignment, failing on any error.
pub async fn prime(args: PrimeArgs) -> anyhow::Result<()> {
    let mut set = JoinSet::new();
    for (i, client) in clients(&args.target)?.into_iter().enumerate() {
        let texts = TurnTexts::new(i, &args.target.scene);
        let turns = args.turns;
        set.spawn(async move {
            let mut version = client.version().await?;
            for _ in 0..turns {
                let done = client.call(Bytes::from(texts.commit(version))).await?;
                version = done.version.unwrap_or(version + 1);
            }
            Ok::<i64, String>(version)
        });
    }
    let mut versions = Vec::new();
    while let Some(joined) = set.join_next().await {
        versions.push(joined?.map_err(|e| anyhow::anyhow!("priming failed: {e}"))?);
    }
    eprintln!(
        "primed {} assignments with {} turns each (versions now {}..={})",
        versions.len(),
        args.turns,
        versions.iter().min().unwrap_or(&0),
        versions.iter().max().unwrap_or(&0)
    );
    Ok(())
}

/// What one worker saw inside the measured window.
#[derive(Debug, Default)]
struct Tally {
    micros: Vec<u32>,
    ok: u64,
    errors: u64,
    errors_outside: u64,
    response_bytes: u64,
    request_bytes: u64,
    first_errors: Vec<String>,
}

/// The measured window, shared by every worker.
#[derive(Debug, Clone, Copy)]
struct Window {
    from: Instant,
    to: Instant,
}

async fn worker(
    client: Client,
    tool: Tool,
    texts: TurnTexts,
    mut version: i64,
    window: Window,
) -> Tally {
    // Every read is without arguments.
    let read = Bytes::from(workload::call(tool.read(), &json!({})));
    let mut tally = Tally {
        micros: Vec::with_capacity(1 << 14),
        ..Tally::default()
    };
    // A play session starts with a read, then alternates.
    let mut commits = tool == Tool::CommitPlayTurn;
    loop {
        let body = if commits {
            Bytes::from(texts.commit(version))
        } else {
            read.clone()
        };
        let sent = body.len() as u64;
        let start = Instant::now();
        if start >= window.to {
            break;
        }
        let outcome = match client.post(body).await {
            Ok((status, bytes)) => workload::check(status, &bytes).map(|s| (s, bytes.len() as u64)),
            Err(e) => Err(e),
        };
        let end = Instant::now();
        let measured = start >= window.from && end <= window.to;
        match outcome {
            Ok((success, received)) => {
                if let Some(v) = success.version {
                    version = v;
                }
                if measured {
                    tally.ok += 1;
                    tally.micros.push(
                        u32::try_from(end.duration_since(start).as_micros()).unwrap_or(u32::MAX),
                    );
                    tally.response_bytes += received;
                    tally.request_bytes += sent;
                }
            }
            Err(message) => {
                if measured {
                    tally.errors += 1;
                } else {
                    tally.errors_outside += 1;
                }
                if tally.first_errors.len() < 3 {
                    tally.first_errors.push(message);
                }
                if commits {
                    // Resynchronize (a conflict or a lost answer); not a measured request.
                    if let Ok(v) = client.version().await {
                        version = v;
                    }
                }
                // Do not spin on a dead server.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        if tool == Tool::PlaySession {
            commits = !commits;
        }
    }
    tally
}

/// Samples the server's resident set every 50 ms until `until`; returns the largest `VmRSS`
/// seen and the kernel's `VmHWM` at the end.
async fn sample_rss(pid: u32, until: Instant) -> (u64, Option<u64>) {
    let mut peak = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    while Instant::now() < until {
        tick.tick().await;
        peak = peak.max(procfs::status_kb(pid, "VmRSS").unwrap_or(0));
    }
    (peak, procfs::status_kb(pid, "VmHWM"))
}

/// `loadgen run`.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    if !(args.duration_secs > 0.0 && args.warmup_secs >= 0.0) {
        bail!("--duration-secs must be positive and --warmup-secs not negative");
    }
    let clients = clients(&args.target)?;
    let n = clients.len();

    // Every client learns its assignment's version before the clock starts.
    let mut setup = JoinSet::new();
    for (i, client) in clients.into_iter().enumerate() {
        let tool = args.tool;
        setup.spawn(async move {
            let version = if tool == Tool::CommitPlayTurn {
                client.version().await?
            } else {
                0
            };
            Ok::<_, String>((i, client, version))
        });
    }
    let mut ready = Vec::with_capacity(n);
    while let Some(joined) = setup.join_next().await {
        ready.push(joined?.map_err(|e| anyhow::anyhow!("setting up a client failed: {e}"))?);
    }
    ready.sort_by_key(|(i, _, _)| *i);

    let server_rss_start = args.server_pid.and_then(|p| procfs::status_kb(p, "VmRSS"));
    let peak_reset = args.server_pid.is_some_and(procfs::reset_peak);
    let start = Instant::now();
    let from = start + Duration::from_secs_f64(args.warmup_secs);
    let window = Window {
        from,
        to: from + Duration::from_secs_f64(args.duration_secs),
    };

    let rss = args
        .server_pid
        .map(|pid| tokio::spawn(sample_rss(pid, window.to)));
    let cpu = {
        let (pid, names) = (args.server_pid, args.cpu_name.clone());
        tokio::spawn(async move {
            tokio::time::sleep_until(tokio::time::Instant::from_std(window.from)).await;
            let a = cpu::Snapshot::take();
            tokio::time::sleep_until(tokio::time::Instant::from_std(window.to)).await;
            (a, cpu::Snapshot::take(), pid, names)
        })
    };
    let mut workers = JoinSet::new();
    for (i, client, version) in ready {
        workers.spawn(worker(
            client,
            args.tool,
            TurnTexts::new(i, &args.target.scene),
            version,
            window,
        ));
    }
    let mut total = Tally::default();
    while let Some(joined) = workers.join_next().await {
        let t = joined?;
        total.micros.extend_from_slice(&t.micros);
        total.ok += t.ok;
        total.errors += t.errors;
        total.errors_outside += t.errors_outside;
        total.response_bytes += t.response_bytes;
        total.request_bytes += t.request_bytes;
        total.first_errors.extend(
            t.first_errors
                .into_iter()
                .take(3usize.saturating_sub(total.first_errors.len())),
        );
    }
    let (cpu_a, cpu_b, pid, names) = cpu.await?;
    let rss = match rss {
        Some(handle) => Some(handle.await?),
        None => None,
    };

    let latency = Latency::of(&mut total.micros);
    let attempts = total.ok + total.errors;
    let error_rate = if attempts == 0 {
        1.0
    } else {
        total.errors as f64 / attempts as f64
    };
    let mean = |bytes: u64| bytes.checked_div(total.ok).unwrap_or(0);
    let rps = total.ok as f64 / args.duration_secs;
    let report = json!({
        "name": args.name,
        "kind": "loadgen",
        "url": args.target.url,
        "tool": args.tool.name(),
        "clients": n,
        "duration_secs": args.duration_secs,
        "warmup_secs": args.warmup_secs,
        "requests": total.ok,
        "errors": total.errors,
        "errors_outside_window": total.errors_outside,
        "error_rate": error_rate,
        "rps": round(rps),
        "latency": latency.to_json(),
        "request_bytes": mean(total.request_bytes),
        "response_bytes": mean(total.response_bytes),
        "rss": rss.map(|(sampled, hwm)| json!({
            "start_kb": server_rss_start,
            "peak_kb": hwm.unwrap_or(0).max(sampled),
            "sampled_peak_kb": sampled,
            "hwm_kb": hwm,
            "hwm_reset_at_start": peak_reset,
        })),
        "cpu": cpu::report(&cpu_a, &cpu_b, pid, &names, total.ok),
        "first_errors": total.first_errors,
    });
    eprintln!(
        "{:<28} {:>3} clients  {:>9.1} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  errors {}/{}  resp {} B{}",
        if args.name.is_empty() {
            args.tool.name()
        } else {
            &args.name
        },
        n,
        rps,
        latency.p50_ms,
        latency.p99_ms,
        latency.max_ms,
        total.errors,
        attempts,
        report["response_bytes"],
        report["rss"]["peak_kb"]
            .as_u64()
            .map(|kb| format!("  server peak RSS {:.1} MB", kb as f64 / 1024.0))
            .unwrap_or_default(),
    );
    if args.json {
        println!("{report}");
    }
    for e in &total.first_errors {
        eprintln!("  error: {e}");
    }
    if error_rate > args.max_error_rate {
        bail!(
            "{} of {} measured requests failed ({:.2}% > {:.2}%); first: {}",
            total.errors,
            attempts,
            error_rate * 100.0,
            args.max_error_rate * 100.0,
            total.first_errors.first().map_or("-", String::as_str)
        );
    }
    Ok(())
}
