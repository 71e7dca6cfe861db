//! Reading Linux's /proc for a run: a process's resident set (now and peak), and CPU time of
//! this process, of the server, of every process with a given name (PostgreSQL backends) and
//! of the whole machine — so a report can say which of them the run was bound by.

use std::collections::HashMap;

/// Clock ticks per second of /proc's CPU times. `USER_HZ` is 100 on every Linux architecture
/// we run on (`getconf CLK_TCK`); reading it would need libc for one constant.
pub const TICKS_PER_SEC: f64 = 100.0;

/// A `kB` field of /proc/PID/status (`VmRSS`, `VmHWM`).
pub fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|line| {
        line.strip_prefix(field)?
            .strip_prefix(':')?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// Resets the process's peak resident set (`VmHWM`) to its current one, so the peak reported
/// belongs to this run and not to start-up or an earlier run. Best effort.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// `(name, utime + stime)` of /proc/PID/stat, all threads of the process together.
fn stat(pid: u32) -> Option<(String, u64)> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(text: &str) -> Option<(String, u64)> {
    // The name sits in parentheses and may itself hold spaces or parentheses.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_owned();
    // After the name: state (field 3) … utime (14), stime (15).
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}

/// `(name, CPU ticks used so far)` of every process, by pid.
pub fn cpu_ticks_all() -> HashMap<u32, (String, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(pid).map(|s| (pid, s)))
        .collect()
}

/// The whole machine's CPU ticks since boot, all CPUs together, from /proc/stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineTicks {
    /// Everything but idle and iowait (user, nice, system, irq, softirq, steal).
    pub busy: u64,
    /// Of which at a positive nice value: background builds and tests, never our processes.
    pub nice: u64,
    /// Of which stolen: time this virtual machine's CPUs were ready to run but the hypervisor
    /// ran another guest. Busy for the window's arithmetic, but nobody's work here.
    pub steal: u64,
    pub total: u64,
}

pub fn machine_ticks() -> Option<MachineTicks> {
    parse_machine(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn parse_machine(text: &str) -> Option<MachineTicks> {
    let line = text.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4)?;
    Some(MachineTicks {
        busy: total - idle,
        nice: *v.get(1)?,
        steal: v.get(7).copied().unwrap_or(0),
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "1234 (tokio (rt) x) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 75 0 0 20 0 4 0 100 1000 200 0";
        assert_eq!(parse_stat(line), Some(("tokio (rt) x".into(), 325)));
    }

    #[test]
    fn this_process_is_visible() {
        assert!(cpu_ticks_all().contains_key(&std::process::id()));
        assert!(status_kb(std::process::id(), "VmRSS").is_some_and(|kb| kb > 0));
        let m = machine_ticks().unwrap();
        assert!(m.nice <= m.busy && m.busy <= m.total);
        let parsed = parse_machine("cpu  100 20 30 400 5 1 2 3 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            parsed,
            MachineTicks {
                busy: 156,
                nice: 20,
                steal: 3,
                total: 561
            }
        );
    }
}
