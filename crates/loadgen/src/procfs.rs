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
    text.lines().find_map(|line| line.strip_prefix(field)?.strip_prefix(':')?.split_whitespace().next()?.parse().ok())
}

/// Resets the process's peak resident set (`VmHWM`) to its current one, so the peak reported
/// belongs to this run and not to start-up or an earlier run. Best effort.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// `(name, utime + stime)` of /proc/PID/stat, or of /proc/self/stat for `None`.
fn stat(pid: Option<u32>) -> Option<(String, u64)> {
    let path = pid.map_or_else(|| "/proc/self/stat".to_owned(), |p| format!("/proc/{p}/stat"));
    parse_stat(&std::fs::read_to_string(path).ok()?)
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

/// CPU ticks used so far by one process (`None`: this one).
pub fn cpu_ticks(pid: Option<u32>) -> Option<u64> {
    stat(pid).map(|(_, t)| t)
}

/// CPU ticks used so far by every process named `name`, by pid.
pub fn cpu_ticks_named(name: &str) -> HashMap<u32, u64> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return HashMap::new() };
    dir.filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| stat(Some(pid)).filter(|(n, _)| n == name).map(|(_, t)| (pid, t)))
        .collect()
}

/// Ticks spent between two snapshots of [`cpu_ticks_named`]; processes born in between count
/// from zero.
pub fn named_delta(before: &HashMap<u32, u64>, after: &HashMap<u32, u64>) -> u64 {
    after.iter().map(|(pid, t)| t.saturating_sub(before.get(pid).copied().unwrap_or(0))).sum()
}

/// `(busy, total)` ticks of the whole machine since boot, from /proc/stat.
pub fn machine_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    let total: u64 = v.iter().take(8).sum(); // user nice system idle iowait irq softirq steal
    let idle = v.get(3)? + v.get(4)?;
    Some((total - idle, total))
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
        assert!(cpu_ticks(None).is_some());
        assert!(status_kb(std::process::id(), "VmRSS").is_some_and(|kb| kb > 0));
        let (busy, total) = machine_ticks().unwrap();
        assert!(busy <= total);
    }
}
