//! Elixir's MCP tools through a PostgreSQL outage, without a restart: the server's pool goes
//! through the testkit proxy, which cuts the connections (PostgreSQL stopped) or swallows
//! every byte (a network black hole). Tool calls over an agent's service key get 503 with
//! `Retry-After` and the door's JSON-RPC error while the fault lasts, promptly; none is
//! charged to the owner's daily quota (a call already billed when the fault met its handler is
//! refunded once the database answers again); and calls succeed again within seconds of the
//! fault's end. The quota and the call log are read on a connection of their own, not through
//! the proxy.

use std::sync::Arc;
use std::time::{Duration, Instant};

use elixir::access::kinds::Kind;
use elixir::access::metering::day_start;
use elixir::mcp::call::{Success, handler};
use elixir::mcp::spec::{Group, SCOPE_READ, ToolSpec};
use elixir::model::Window;
use elixir::store::SharedStore;
use serde_json::{Value, json};
use testkit::mcp::Reply;
use testkit::proxy::Proxy;
use tokio::sync::Notify;

use crate::support::{Options, Server, spawn_with, success};

/// A refused call answers within this: the pool gives up on an acquire after 500 ms and on a
/// statement after 1 s here; the rest is slack for a loaded machine.
const REFUSED_WITHIN: Duration = Duration::from_secs(5);
/// Service is back within this after the fault ends.
const BACK_WITHIN: Duration = Duration::from_secs(10);

/// The two sides of [`gate_tool`]: the handler says it was entered (billed already), then
/// waits to be let through to its store read.
#[derive(Default)]
struct Gate {
    entered: Notify,
    go: Notify,
}

/// A metered test-only tool whose handler waits at the gate, then reads the store: a call the
/// gate already billed when the fault begins.
fn gate_tool(gate: Arc<Gate>) -> ToolSpec {
    ToolSpec {
        name: "elixir_test_gate",
        group: Group::Service,
        title: "Gate",
        description: "Reference tool: test only; waits for the test, then reads a usage counter."
            .into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![],
        params: vec![],
        compact_drops: None,
        output: vec![(
            "count",
            json!({"type": "integer", "description": "A counter."}),
            true,
        )],
        docs: "limits#what-is-metered".into(),
        too_large_hint: "Report the request_id.".into(),
        handler: handler(move |ctx, _a| {
            let gate = Arc::clone(&gate);
            async move {
                gate.entered.notify_one();
                gate.go.notified().await;
                let count = ctx
                    .services
                    .store
                    .usage("test:gate", Window::Day, 0)
                    .await?;
                Ok(Success::new().field("count", Value::from(count)))
            }
        }),
    }
}

/// A 503 with `Retry-After: 1` and the door's JSON-RPC error, without internals.
fn assert_unavailable(r: &Reply, what: &str) {
    assert_eq!(r.status, 503, "{what}: {}", r.body);
    assert_eq!(r.header("retry-after"), "1", "{what}");
    assert_eq!(r.body["error"]["code"], -32000, "{what}: {}", r.body);
    assert!(
        !r.body.to_string().contains("127.0.0.1"),
        "{what}: a 5xx must not carry internals: {}",
        r.body
    );
}

/// The owner's tool calls charged today, and the agent's audited calls (successes, failures),
/// read beside the proxy.
async fn ledger(store: &SharedStore, server: &Server) -> (i64, usize, usize) {
    let day = day_start(server.clock_now());
    let charged = store
        .usage(&format!("calls:{}", server.person.id), Window::Day, day)
        .await
        .unwrap();
    let audit = store
        .recent_agent_audit(server.agent.agent.id, 1000)
        .await
        .unwrap();
    let ok = audit.iter().filter(|a| a.error_code.is_none()).count();
    (charged, ok, audit.len() - ok)
}

/// Calls until one succeeds; how long that took.
async fn back_after(server: &Server, name: &str) -> Duration {
    let ended = Instant::now();
    loop {
        let r = server.agent().tool("elixir_settings", json!({})).await;
        if r.status == 200 {
            success(&r);
            return ended.elapsed();
        }
        assert_unavailable(&r, &format!("{name}: after the fault"));
        assert!(
            ended.elapsed() < BACK_WITHIN,
            "{name}: still refused {:?} after the fault ended",
            ended.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn tools_through(black_hole: bool) {
    let name = if black_hole {
        "postgres black hole"
    } else {
        "postgres cut"
    };
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&url, 5432).await;
    let gate = Arc::new(Gate::default());
    let server = spawn_with(
        &via,
        Options {
            acquire_timeout: Some(Duration::from_millis(500)),
            query_timeout: Some(Duration::from_secs(1)),
            extra: vec![gate_tool(Arc::clone(&gate))],
            ..Options::default()
        },
    )
    .await;
    let beside: SharedStore = elixir::store::connect(&url, &mcp_door::DEFAULT_POOL)
        .await
        .unwrap();
    let begin = || async {
        if black_hole {
            proxy.black_hole().await;
        } else {
            proxy.cut().await;
        }
    };
    let agent = server.agent();
    success(&agent.tool("elixir_settings", json!({})).await);
    success(&agent.tool("elixir_docs", json!({})).await);
    server.state.services.audit.flush().await;
    let before = ledger(&beside, &server).await;
    assert_eq!(before, (1, 2, 0), "{name}: one metered call, one free");

    // 1. calls while the fault lasts: metered, free and the door's own methods alike are a
    //    prompt 503 (the service key cannot be checked), nothing charged, nothing logged
    begin().await;
    let mut slowest = Duration::ZERO;
    for (method, tool) in [
        ("tools/call", "elixir_settings"),
        ("tools/call", "clans_roster"),
        ("tools/call", "elixir_docs"),
        ("tools/list", ""),
    ] {
        let started = Instant::now();
        let r = if method == "tools/call" {
            agent.tool(tool, json!({})).await
        } else {
            agent.request(method, json!({})).await
        };
        let took = started.elapsed();
        assert_unavailable(&r, &format!("{name}: {method} {tool}"));
        assert!(
            took < REFUSED_WITHIN,
            "{name}: {tool} refused after {took:?}"
        );
        slowest = slowest.max(took);
    }
    assert_eq!(
        ledger(&beside, &server).await,
        before,
        "{name}: a refused call was charged or logged"
    );
    proxy.resume().await;
    let back = back_after(&server, name).await;

    // 2. a call billed before the fault reached its handler: 503, and refunded once the
    //    database answers again
    server.state.services.audit.flush().await;
    let (charged, ok, failed) = ledger(&beside, &server).await;
    let call = tokio::spawn({
        let agent = server.agent();
        async move { agent.tool("elixir_test_gate", json!({})).await }
    });
    tokio::time::timeout(Duration::from_secs(10), gate.entered.notified())
        .await
        .expect("the gated call reached its handler");
    assert_eq!(
        ledger(&beside, &server).await.0,
        charged + 1,
        "{name}: the gated call is billed before its handler runs"
    );
    begin().await;
    gate.go.notify_one();
    let r = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the gated call answers during the fault")
        .unwrap();
    assert_unavailable(&r, &format!("{name}: the gated call"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.resume().await;
    let back_again = back_after(&server, name).await;
    // the successful call of back_after is charged; the gated one is taken back
    let deadline = Instant::now() + BACK_WITHIN;
    loop {
        let (now_charged, now_ok, _) = ledger(&beside, &server).await;
        if now_charged == charged + 1 {
            server.state.services.audit.flush().await;
            let (_, final_ok, final_failed) = ledger(&beside, &server).await;
            // the failed call is never logged as a success; its own row (with the door's
            // error) is there when the call log's writer met the database back in time
            assert_eq!(final_ok, ok + 1, "{name}: successes logged");
            assert!(
                final_failed - failed <= 1,
                "{name}: {} failures logged",
                final_failed - failed
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{name}: {now_charged} calls charged, expected {} (the failed call was not refunded); {now_ok} logged",
            charged + 1
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "fault {name} (tools): 4 calls refused, slowest {slowest:?}; served again {back:?} after \
         the fault; a call billed before the fault was refused and refunded; served again \
         {back_again:?} after the second fault"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_through_postgres_stopped_and_started() {
    tools_through(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_through_a_postgres_black_hole() {
    tools_through(true).await;
}
