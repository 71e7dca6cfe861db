//! Where the CPU went during a measured window: this process (the client), the server, the
//! processes with given names (PostgreSQL backends, pgbench), everything else on the machine
//! (other people's builds and tests — the contention a figure must admit to) and the machine
//! as a whole. Raw /proc reading is `procfs`'s.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::procfs::{self, TICKS_PER_SEC};
use crate::stats::round;

/// Every process's CPU ticks and the machine's at one instant.
pub struct Snapshot {
    at: Instant,
    processes: HashMap<u32, (String, u64)>,
    machine: Option<procfs::MachineTicks>,
}

impl Snapshot {
    pub fn take() -> Self {
        Self {
            at: Instant::now(),
            processes: procfs::cpu_ticks_all(),
            machine: procfs::machine_ticks(),
        }
    }
}

/// Ticks each process spent between two snapshots (a process born in between counts from zero).
fn deltas<'b>(a: &Snapshot, b: &'b Snapshot) -> Vec<(u32, &'b str, u64)> {
    b.processes
        .iter()
        .map(|(pid, (name, t))| {
            (
                *pid,
                name.as_str(),
                t.saturating_sub(a.processes.get(pid).map_or(0, |(_, t0)| *t0)),
            )
        })
        .filter(|&(_, _, d)| d > 0)
        .collect()
}

/// The CPU report between two snapshots, in % of one core (like `top`) and µs per request;
/// the machine's busy share in % of all cores. `server` and `names` pick out the processes
/// under test; `others_pct` is the rest of the machine's busy time (`niced_pct` of it at a
/// positive nice value, `steal_pct` of it taken by the hypervisor for other guests),
/// `others_top` the busiest other processes alive at both ends.
pub fn report(
    a: &Snapshot,
    b: &Snapshot,
    server: Option<u32>,
    names: &[String],
    requests: u64,
) -> Value {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let entry = |ticks: u64| {
        let us = if requests == 0 {
            0.0
        } else {
            round(ticks as f64 / TICKS_PER_SEC * 1e6 / requests as f64)
        };
        json!({"pct": round(ticks as f64 / TICKS_PER_SEC / secs * 100.0), "us_per_request": us})
    };
    let own = std::process::id();
    let (mut own_ticks, mut server_ticks) = (0, 0);
    let mut named: BTreeMap<&str, u64> = names.iter().map(|n| (n.as_str(), 0)).collect();
    let mut others: HashMap<&str, u64> = HashMap::new();
    for (pid, name, ticks) in deltas(a, b) {
        if pid == own {
            own_ticks += ticks;
        } else if Some(pid) == server {
            server_ticks += ticks;
        } else if let Some(n) = named.get_mut(name) {
            *n += ticks;
        } else {
            *others.entry(name).or_default() += ticks;
        }
    }
    let mut others: Vec<(&str, u64)> = others.into_iter().collect();
    others.sort_by_key(|&(_, t)| std::cmp::Reverse(t));
    let pct = |ticks: u64| round(ticks as f64 / TICKS_PER_SEC / secs * 100.0);
    let ours = own_ticks + server_ticks + named.values().sum::<u64>();
    let machine = a.machine.zip(b.machine);
    let busy_pct = machine.map(|(m0, m1)| {
        round(
            m1.busy.saturating_sub(m0.busy) as f64
                / m1.total.saturating_sub(m0.total).max(1) as f64
                * 100.0,
        )
    });
    // Everything busy that is not ours: other processes, short-lived ones included (builds and
    // test binaries that start and end inside the window escape the per-process snapshots).
    let others_ticks = machine.map(|(m0, m1)| m1.busy.saturating_sub(m0.busy).saturating_sub(ours));
    let niced_ticks = machine.map(|(m0, m1)| m1.nice.saturating_sub(m0.nice));
    let steal_ticks = machine.map(|(m0, m1)| m1.steal.saturating_sub(m0.steal));
    json!({
        "window_secs": round(secs),
        "cores": std::thread::available_parallelism().map_or(0, usize::from),
        "machine_busy_pct": busy_pct,
        "loadgen": entry(own_ticks),
        "server": server.map(|_| entry(server_ticks)),
        "named": named.into_iter().map(|(n, t)| (n.to_owned(), entry(t))).collect::<Map<String, Value>>(),
        "others_pct": others_ticks.map(pct),
        "niced_pct": niced_ticks.map(pct),
        "steal_pct": steal_ticks.map(pct),
        "others_top": others.iter().take(3).map(|(n, t)| json!({"name": n, "pct": pct(*t)})).collect::<Vec<_>>(),
    })
}

/// Arguments of `loadgen cpu`.
#[derive(Debug, clap::Args)]
pub struct CpuArgs {
    /// Seconds to wait before the window opens.
    #[arg(long, default_value_t = 3.0)]
    warmup_secs: f64,
    /// Length of the window.
    #[arg(long, default_value_t = 15.0)]
    duration_secs: f64,
    /// Report the CPU time of every process with this name; repeatable.
    #[arg(long)]
    cpu_name: Vec<String>,
}

/// `loadgen cpu`: the report above for load `run` does not drive itself (pgbench); the
/// per-request figures are left at zero for `loadgen pgbench` to fill in.
pub async fn watch(args: CpuArgs) -> anyhow::Result<()> {
    tokio::time::sleep(Duration::from_secs_f64(args.warmup_secs)).await;
    let a = Snapshot::take();
    tokio::time::sleep(Duration::from_secs_f64(args.duration_secs)).await;
    let b = Snapshot::take();
    println!("{}", report(&a, &b, None, &args.cpu_name, 0));
    Ok(())
}

/// A `loadgen cpu` report read back from its file.
pub fn read(path: &std::path::Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// Fills in `us_per_request` of a `loadgen cpu` report for `n` requests of a load that
/// `run` did not drive (pgbench, wrk): the process named `client` becomes the client's
/// figure (`loadgen`, where the table looks for it) and the processes named `server`, if
/// any, the server's, moved out of `named` as `run` keeps its server apart from the named
/// processes.
pub fn per_request(mut cpu: Value, n: u64, client: &str, server: Option<&str>) -> Value {
    let window = cpu["window_secs"].as_f64().unwrap_or(0.0);
    let us = |pct: f64| {
        if n == 0 {
            0.0
        } else {
            round(pct / 100.0 * window * 1e6 / n as f64)
        }
    };
    if let Some(named) = cpu["named"].as_object_mut() {
        for entry in named.values_mut() {
            let pct = entry["pct"].as_f64().unwrap_or(0.0);
            entry["us_per_request"] = json!(us(pct));
        }
    }
    cpu["loadgen"] = cpu["named"][client].clone();
    if let Some(server) = server {
        let named = cpu["named"].as_object_mut().and_then(|n| n.remove(server));
        cpu["server"] = named.unwrap_or(Value::Null);
    }
    cpu
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_filed_under_the_right_process() {
        let own = std::process::id();
        let at = Instant::now();
        let snap = |t: u64| Snapshot {
            at,
            processes: HashMap::from([
                (own, ("loadgen".into(), t)),
                (7, ("server".into(), 2 * t)),
                (8, ("postgres".into(), t)),
                (9, ("postgres".into(), t)),
                (10, ("rustc".into(), 3 * t)),
            ]),
            machine: Some(procfs::MachineTicks {
                busy: 10 * t,
                nice: t,
                steal: t / 2,
                total: 20 * t,
            }),
        };
        let (a, mut b) = (snap(100), snap(200));
        b.at = at + Duration::from_secs(1);
        let r = report(&a, &b, Some(7), &["postgres".into()], 100);
        assert_eq!(r["loadgen"]["pct"], 100.0);
        assert_eq!(r["server"]["us_per_request"], 20_000.0);
        assert_eq!(r["named"]["postgres"]["pct"], 200.0);
        // busy 1000 ticks in 1 s, ours 100 + 200 + 200
        assert_eq!(r["others_pct"], 500.0);
        assert_eq!(r["niced_pct"], 100.0);
        assert_eq!(r["steal_pct"], 50.0);
        assert_eq!(r["others_top"][0]["name"], "rustc");
        assert_eq!(r["machine_busy_pct"], 50.0);
    }

    #[test]
    fn cpu_reports_get_per_transaction_figures() {
        let cpu = serde_json::json!({"window_secs": 10.0, "named": {"postgres": {"pct": 150.0}, "pgbench": {"pct": 20.0}}});
        let out = super::per_request(cpu, 10_000, "pgbench", None);
        assert_eq!(out["named"]["postgres"]["us_per_request"], 1500.0);
        assert_eq!(out["loadgen"]["us_per_request"], 200.0);
    }

    #[test]
    fn a_named_server_becomes_the_server_figure() {
        let cpu = serde_json::json!({"window_secs": 10.0, "named": {"sidequest": {"pct": 80.0}, "wrk": {"pct": 30.0}}});
        let out = super::per_request(cpu, 20_000, "wrk", Some("sidequest"));
        assert_eq!(out["server"]["us_per_request"], 400.0);
        assert_eq!(out["loadgen"]["us_per_request"], 150.0);
        assert!(
            out["named"].get("sidequest").is_none(),
            "counted once, as the server"
        );
    }
}
