//! Memory under a login burst, on the real binary: 400 logins at once with unknown usernames
//! from one address must not hash 400 passwords at once (argon2 takes 19 MiB per hash). The
//! throttle checks at most 10 of them and the hashing cap at most 2 at a time, so the peak
//! resident set of `sidequest serve` stays near its idle size.

use std::time::Duration;

use crate::crash::BinServer;

/// 400 parallel logins. With read-then-record throttling and no cap, every one of them
/// hashed at once: 35 MB became 7.8 GB in 11 s.
const BURST: usize = 400;
/// The peak RSS the server may reach, in KiB. Measured on a 2-core machine (debug build,
/// SQLite, `--login-hash-concurrency 2`): 45 MB idle (the start-up dummy hash included),
/// 73 MB peak after the burst (the test prints both). The old code needs 400 × 19 MiB. The
/// bound leaves room for allocator and build differences while staying below what 8
/// concurrent hashes on top of the idle size would take.
const PEAK_RSS_BOUND_KIB: u64 = 200 * 1024;

/// `VmHWM` (the peak resident set) of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_burst_keeps_memory_bounded() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc (peak RSS is read from /proc/<pid>/status)");
        return;
    }
    let (dir, url) = testkit::db::fresh_sqlite_url();
    let server = BinServer::start(&url, &["--login-hash-concurrency", "2"], dir.path()).await;
    let pid = server.child.id().expect("server pid");
    let idle = peak_rss_kib(pid);

    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let login = format!("http://{}/api/auth/login", server.addr);
    let mut logins = tokio::task::JoinSet::new();
    for i in 0..BURST {
        let (http, login) = (http.clone(), login.clone());
        logins.spawn(async move {
            let body = serde_json::json!({"username": format!("ghost{i}"), "password": "guess"});
            http.post(&login)
                .json(&body)
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
    }
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for status in logins.join_all().await {
        *statuses.entry(status.expect("an answer")).or_default() += 1;
    }
    let peak = peak_rss_kib(pid);
    eprintln!("peak RSS: idle {idle} KiB, after {BURST} logins {peak} KiB; answers {statuses:?}");

    assert_eq!(statuses.values().sum::<usize>(), BURST);
    assert!(
        statuses.keys().all(|s| [401, 429].contains(s)),
        "only failures and refusals: {statuses:?}"
    );
    assert!(
        statuses.get(&401).copied().unwrap_or(0) <= 9,
        "at most the limit's worth checked: {statuses:?}"
    );
    assert!(
        peak < PEAK_RSS_BOUND_KIB,
        "peak RSS {peak} KiB (idle {idle} KiB) is over the bound of {PEAK_RSS_BOUND_KIB} KiB"
    );
    server.kill().await;
}
