//! Two server instances on one PostgreSQL database and one Redis: admission limits (rate,
//! per-token and global concurrency) and operation receipts hold across instances, not per
//! process. Skipped (with a note) when `TEST_DATABASE_URL` or `TEST_REDIS_URL` is unset, unless
//! `REQUIRE_SERVICES=1`.

use std::time::Duration;

use mcp_door::{DoorConfig, Limits};
use serde_json::{Value, json};
use sidequest::app::ServeConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use uuid::Uuid;

use crate::support::{self, Server};

/// Two instances sharing one fresh PostgreSQL database and one Redis (under a key prefix of
/// their own, so parallel tests and earlier runs never share counters; the keys expire on
/// their own), and the demo world.
struct Cluster {
    a: Server,
    b: Server,
    redis: Redis,
    prefix: String,
    world: sidequest::demo::DemoCreated,
}

impl Cluster {
    /// `None` (after printing why) when PostgreSQL or Redis is not configured.
    async fn start(limits: Limits, door: DoorConfig, assignments: u32) -> Option<Self> {
        let Some(redis_url) = testkit::db::redis_url().await else {
            eprintln!("skipped: TEST_REDIS_URL not set");
            return None;
        };
        let redis = Redis::parse(&redis_url);
        assert_eq!(
            redis.command(&["PING"]).await,
            "+PONG",
            "Redis at {redis_url} does not answer PING"
        );
        let Some(db) = testkit::db::fresh_postgres().await else {
            eprintln!("skipped: TEST_DATABASE_URL not set");
            return None;
        };
        let prefix = format!("sidequest:test:{}", Uuid::new_v4().simple());
        let mut config = ServeConfig::default();
        config.server.redis_url = Some(redis_url);
        config.server.redis_prefix = prefix.clone();
        config.server.limits = limits;
        config.server.door = door;
        // Seeds far apart: the two instances must never generate the same ids.
        let a = support::spawn_with(&db, config.clone(), 1).await;
        let b = support::spawn_with(&db, config, 1_000_000_000).await;
        let world = support::world(&a, assignments).await;
        Some(Self {
            a,
            b,
            redis,
            prefix,
            world,
        })
    }

    fn token(&self, i: usize) -> &str {
        &self.world.assignments[i].1
    }

    /// Admitted requests in flight across both instances, as Redis counts them.
    async fn global_in_flight(&self) -> i64 {
        let key = format!("{}:conc:global", self.prefix);
        let reply = self.redis.command(&["ZCARD", &key]).await;
        reply
            .strip_prefix(':')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("ZCARD answered {reply:?}"))
    }

    /// Waits (at most 10 s) until exactly `n` admitted requests are in flight.
    async fn wait_in_flight(&self, n: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let now = self.global_in_flight().await;
            if now == n {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "expected {n} admitted requests in flight, Redis counts {now}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A minimal RESP client, enough for PING and ZCARD (no Redis dev-dependency).
#[derive(Clone)]
struct Redis {
    addr: String,
    password: Option<String>,
    db: Option<String>,
}

impl Redis {
    /// `redis://[[user]:password@]host[:port][/db]`.
    fn parse(url: &str) -> Self {
        let rest = url
            .strip_prefix("redis://")
            .unwrap_or_else(|| panic!("only redis:// URLs are supported by this test: {url}"));
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, host) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let password = userinfo
            .map(|u| u.rsplit_once(':').map_or(u, |(_, p)| p))
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        let addr = if host.contains(':') {
            host.to_owned()
        } else {
            format!("{host}:6379")
        };
        let db = Some(path.split('?').next().unwrap_or_default())
            .filter(|d| !d.is_empty())
            .map(str::to_owned);
        Self { addr, password, db }
    }

    fn encode(args: &[&str]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
        }
        out
    }

    async fn connect(&self) -> (tokio::io::BufReader<TcpStream>, Vec<String>) {
        let stream = TcpStream::connect(&self.addr)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to Redis at {}: {e}", self.addr));
        let mut conn = tokio::io::BufReader::new(stream);
        let mut preamble = Vec::new();
        if let Some(p) = &self.password {
            preamble.push(Self::exchange(&mut conn, &["AUTH", p]).await.join(" "));
        }
        if let Some(db) = &self.db {
            preamble.push(Self::exchange(&mut conn, &["SELECT", db]).await.join(" "));
        }
        (conn, preamble)
    }

    /// Sends one command; answers the reply's lines (a simple reply is one line, an array one
    /// line per bulk element).
    async fn exchange(conn: &mut tokio::io::BufReader<TcpStream>, args: &[&str]) -> Vec<String> {
        use tokio::io::AsyncBufReadExt;
        conn.get_mut()
            .write_all(&Self::encode(args))
            .await
            .expect("redis write");
        let mut line = String::new();
        conn.read_line(&mut line).await.expect("redis read");
        let line = line.trim_end().to_owned();
        match line.strip_prefix('*') {
            Some(n) => {
                let n: usize = n.parse().unwrap_or(0);
                let mut out = Vec::with_capacity(n);
                for _ in 0..n {
                    let mut len = String::new();
                    conn.read_line(&mut len).await.expect("redis read");
                    let mut value = String::new();
                    conn.read_line(&mut value).await.expect("redis read");
                    out.push(value.trim_end().to_owned());
                }
                out
            }
            None => vec![line],
        }
    }

    /// One command on a new connection; its one-line reply (`+PONG`, `:3`, …).
    async fn command(&self, args: &[&str]) -> String {
        let (mut conn, preamble) = self.connect().await;
        for p in preamble {
            assert!(p.starts_with('+'), "Redis refused the preamble: {p}");
        }
        Self::exchange(&mut conn, args).await.join("\n")
    }
}

/// A request that passed admission on `server` and now waits for the rest of its body,
/// holding its concurrency slots until the body completes, times out or the peer goes away.
struct Held {
    stream: TcpStream,
    rest: &'static [u8],
}

const HELD_BODY: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

impl Held {
    /// Sends the headers and the first bytes of the body only.
    async fn open(server: &Server, token: &str) -> Self {
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let (first, rest) = HELD_BODY.as_bytes().split_at(10);
        let head = format!(
            "POST /play/mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            server.addr,
            HELD_BODY.len()
        );
        stream.write_all(head.as_bytes()).await.expect("write");
        stream.write_all(first).await.expect("write");
        stream.flush().await.expect("flush");
        Self { stream, rest }
    }

    /// Sends the rest of the body (unless `send_rest` is false) and reads the whole response
    /// (up to its Content-Length: after a refusal the server keeps the connection open a while
    /// to drain the body, so it does not wait for the close); answers (status, body).
    async fn finish(mut self, send_rest: bool) -> (u16, String) {
        if send_rest {
            self.stream.write_all(self.rest).await.expect("write");
        }
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), async {
            let mut buf = [0u8; 4096];
            while !complete(&raw) {
                match self.stream.read(&mut buf).await.expect("read") {
                    0 => break,
                    n => raw.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await
        .expect("response in time");
        let text = String::from_utf8_lossy(&raw).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }
}

/// Whether `raw` holds a response head and as many body bytes as its Content-Length says.
fn complete(raw: &[u8]) -> bool {
    let text = String::from_utf8_lossy(raw);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    head.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .is_some_and(|len| body.len() >= len)
}

fn error_message(reply: &testkit::mcp::Reply) -> String {
    reply.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A 429 with an integer `Retry-After` in `range`, whose message names `reason`.
fn assert_limited(reply: &testkit::mcp::Reply, reason: &str, range: std::ops::RangeInclusive<u64>) {
    assert_eq!(reply.status, 429, "expected 429; body {}", reply.body);
    let retry: u64 = reply.header("retry-after").parse().unwrap_or_else(|_| {
        panic!(
            "Retry-After is not an integer: {:?}",
            reply.header("retry-after")
        )
    });
    assert!(
        range.contains(&retry),
        "Retry-After {retry} not in {range:?}"
    );
    assert!(
        error_message(reply).contains(reason),
        "expected {reason:?} in {}",
        reply.body
    );
}

fn ping_ok(reply: &testkit::mcp::Reply) {
    assert_eq!(reply.status, 200, "body {}", reply.body);
    assert_eq!(reply.body["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limit_holds_across_instances() {
    let limits = Limits {
        rate_per_window: 5,
        credential_concurrency: 8,
        global_concurrency: 64,
        ..Limits::default()
    };
    let Some(c) = Cluster::start(limits, DoorConfig::default(), 2).await else {
        return;
    };
    let on_a = c.a.client(c.token(0));
    let on_b = c.b.client(c.token(0));
    // five admitted requests alternating between the instances: each instance saw at most
    // three, so only a shared window can refuse the sixth
    let init = on_a.initialize("2025-11-25").await;
    assert_eq!(init.result()["protocolVersion"], "2025-11-25");
    ping_ok(&on_b.request("ping", json!({})).await);
    ping_ok(&on_a.request("ping", json!({})).await);
    ping_ok(&on_b.request("ping", json!({})).await);
    ping_ok(&on_a.request("ping", json!({})).await);
    assert_limited(
        &on_b.request("ping", json!({})).await,
        "per-token rate exceeded",
        1..=60,
    );
    assert_limited(
        &on_a.request("tools/list", json!({})).await,
        "per-token rate exceeded",
        1..=60,
    );
    // refusals spend no budget and do not leak concurrency slots
    c.wait_in_flight(0).await;
    // another token has its own budget on both instances
    let other_a = c.a.client(c.token(1));
    let other_b = c.b.client(c.token(1));
    for _ in 0..2 {
        ping_ok(&other_a.request("ping", json!({})).await);
        ping_ok(&other_b.request("ping", json!({})).await);
    }
    ping_ok(&other_a.request("ping", json!({})).await);
    assert_limited(
        &other_b.request("ping", json!({})).await,
        "per-token rate exceeded",
        1..=60,
    );
    // a tool call is refused too, before anything is written
    let r = on_b
        .tool(
            "commit_play_turn",
            json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": 1,
                "player_action": "a", "narration": "n", "memory_markdown": "m",
                "current_scene": "harbor", "consequences": []}),
        )
        .await;
    assert_limited(&r, "per-token rate exceeded", 1..=60);
    let assignment =
        c.a.store
            .assignment(c.world.assignments[0].0.id)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(assignment.version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrency_holds_across_instances() {
    let limits = Limits {
        rate_per_window: 1_000,
        credential_concurrency: 2,
        global_concurrency: 3,
        ..Limits::default()
    };
    // Long enough that the held requests outlive every step before their bodies are sent,
    // even on a loaded 2-core machine (3 s was seen to expire first under a parallel build).
    let door = DoorConfig {
        body_timeout: Duration::from_secs(8),
        ..DoorConfig::default()
    };
    let Some(c) = Cluster::start(limits, door, 3).await else {
        return;
    };
    let (t1, t2, t3) = (c.token(0), c.token(1), c.token(2));
    c.wait_in_flight(0).await;

    // token 1 holds one admitted request on each instance: its limit of two is reached,
    // though each instance alone has only one in flight
    let held_a = Held::open(&c.a, t1).await;
    c.wait_in_flight(1).await;
    let held_b = Held::open(&c.b, t1).await;
    c.wait_in_flight(2).await;
    assert_limited(
        &c.a.client(t1).request("ping", json!({})).await,
        "per-token concurrency exceeded",
        1..=1,
    );
    assert_limited(
        &c.b.client(t1).request("ping", json!({})).await,
        "per-token concurrency exceeded",
        1..=1,
    );
    c.wait_in_flight(2).await;

    // the third global slot is free: token 2 passes on A, and its slot is returned
    ping_ok(&c.a.client(t2).request("ping", json!({})).await);
    c.wait_in_flight(2).await;

    // token 2 takes the last global slot on B; now every token is refused on A, which has
    // only one request of its own in flight
    let held_b2 = Held::open(&c.b, t2).await;
    c.wait_in_flight(3).await;
    assert_limited(
        &c.a.client(t3).request("ping", json!({})).await,
        "global concurrency exceeded",
        1..=1,
    );
    assert_limited(
        &c.a.client(t2).request("ping", json!({})).await,
        "global concurrency exceeded",
        1..=1,
    );
    assert_limited(
        &c.b.client(t3).request("initialize", json!({})).await,
        "global concurrency exceeded",
        1..=1,
    );

    // the held requests were admitted and are only waiting for their bodies: completing one
    // answers it normally and frees its slots
    let (status, body) = held_a.finish(true).await;
    assert_eq!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["id"], 7);
    assert_eq!(body["result"], json!({}));
    c.wait_in_flight(2).await;
    ping_ok(&c.a.client(t3).request("ping", json!({})).await);
    c.wait_in_flight(2).await;

    // a body that never completes times out with 408 (body_timeout 8 s) and frees its slots
    let (status, _) = held_b.finish(false).await;
    assert_eq!(status, 408);
    c.wait_in_flight(1).await;
    // a client that goes away mid-body frees its slots too
    drop(held_b2);
    c.wait_in_flight(0).await;
    ping_ok(&c.a.client(t1).request("ping", json!({})).await);
    ping_ok(&c.b.client(t1).request("ping", json!({})).await);
    ping_ok(&c.b.client(t2).request("ping", json!({})).await);
    c.wait_in_flight(0).await;
}

fn turn(op: &str, version: i64, text: &str) -> Value {
    json!({"operation_id": op, "expected_version": version,
        "player_action": format!("act {text}"), "narration": format!("narrate {text}"),
        "memory_markdown": format!("memory {text}"), "current_scene": "harbor",
        "consequences": [{"category": "discovery", "description": format!("found {text}")}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn receipts_hold_across_instances() {
    let Some(c) = Cluster::start(support::generous(), DoorConfig::default(), 1).await else {
        return;
    };
    let on_a = c.a.client(c.token(0));
    let on_b = c.b.client(c.token(0));
    let op = "20000000-0000-4000-8000-000000000001";

    let first = on_a
        .tool("commit_play_turn", turn(op, 1, "one"))
        .await
        .json();
    assert_eq!(first["version"], 2);
    assert_eq!(first["replayed"], false);
    assert_eq!(first["session_id"], c.world.assignments[0].0.id.to_string());

    // B sees A's commit, and an identical retry on B answers A's receipt
    assert_eq!(
        on_b.tool("get_play_context", json!({})).await.json()["version"],
        2
    );
    let mut expected = first.clone();
    expected["replayed"] = json!(true);
    let replay = on_b
        .tool("commit_play_turn", turn(op, 1, "one"))
        .await
        .json();
    assert_eq!(replay, expected);
    // the same operation with the id in upper case is the same operation
    let replay = on_b
        .tool("commit_play_turn", turn(&op.to_uppercase(), 1, "one"))
        .await
        .json();
    assert_eq!(replay, expected);

    // reusing the id for different arguments on B is a conflict, and writes nothing
    let r = on_b.tool("commit_play_turn", turn(op, 1, "changed")).await;
    assert!(r.is_error(), "{}", r.body);
    assert_eq!(
        r.text(),
        format!("409: Operation {op} was already used with different arguments.")
    );
    // …so is reusing it for another kind of operation
    let r = on_b
        .tool(
            "finish_play_session",
            json!({"operation_id": op, "expected_version": 2, "summary": "done"}),
        )
        .await;
    assert!(r.is_error(), "{}", r.body);
    assert!(r.text().starts_with("409: Operation"), "{}", r.text());
    // a stale version with a new id fails on either instance
    let r = on_b
        .tool(
            "commit_play_turn",
            turn(&Uuid::new_v4().to_string(), 1, "stale"),
        )
        .await;
    assert!(
        r.text()
            .starts_with("409: Version conflict: expected 1, current 2."),
        "{}",
        r.text()
    );
    let ctx = on_a.tool("get_play_context", json!({})).await.json();
    assert_eq!(ctx["version"], 2);
    assert_eq!(ctx["memory_markdown"], "memory one");
    assert_eq!(
        on_a.tool("read_play_journal", json!({})).await.json()["total"],
        1
    );

    // twelve different operations racing for version 2 from both instances: exactly one wins
    let mut racers = Vec::new();
    for i in 0..12 {
        let client = if i % 2 == 0 {
            on_a.clone()
        } else {
            on_b.clone()
        };
        racers.push(tokio::spawn(async move {
            let op = Uuid::new_v4().to_string();
            client
                .tool("commit_play_turn", turn(&op, 2, &format!("race {i}")))
                .await
        }));
    }
    let mut winners = Vec::new();
    for r in racers {
        let reply = r.await.unwrap();
        if reply.is_error() {
            assert!(
                reply.text().starts_with("409: Version conflict"),
                "{}",
                reply.text()
            );
        } else {
            winners.push(reply.json());
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(winners[0]["version"], 3);

    // a finish committed on B replays on A after completion, and the first turn still replays
    let finish = json!({"operation_id": "20000000-0000-4000-8000-000000000002",
        "expected_version": 3, "summary": "back at dawn"});
    let done = on_b
        .tool("finish_play_session", finish.clone())
        .await
        .json();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["version"], 4);
    assert_eq!(done["replayed"], false);
    let again = on_a.tool("finish_play_session", finish).await.json();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["version"], 4);
    assert_eq!(
        on_a.tool("commit_play_turn", turn(op, 1, "one"))
            .await
            .json(),
        expected
    );
    let journal = on_b.tool("read_play_journal", json!({})).await.json();
    assert_eq!(journal["total"], 3);
}
