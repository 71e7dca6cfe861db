//! Admission of author tokens: per-token rate limits, and the global concurrency gate shared by
//! the author door and the player door.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use mcp_door::{Admission, AdmissionError, DoorConfig, FakeClock, Limits, Permit, ServerConfig};
use serde_json::json;
use sidequest::app::{self, AppState, ServeConfig};
use sidequest::demo::{self, DemoCreated};
use sidequest::store;
use testkit::mcp::{Client, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{author_client, author_token};
use crate::support::{self, CountingRandom};

async fn per_token_limits_apply_to_author_tokens(url: &str) {
    let server = support::spawn_with(
        url,
        ServeConfig {
            server: ServerConfig {
                limits: Limits {
                    rate_per_window: 3,
                    ..Limits::default()
                },
                ..ServeConfig::default().server
            },
            ..ServeConfig::default()
        },
        5,
    )
    .await;
    let world = support::world(&server, 1).await;
    let (_, token) = author_token(&server.service, &world.gm).await;
    let gm = author_client(server.addr, &token);
    for i in 0..3 {
        assert_eq!(
            gm.request("ping", json!({})).await.status,
            200,
            "request {i}"
        );
    }
    let r = gm.request("tools/list", json!({})).await;
    assert_eq!(r.status, 429, "{}", r.body);
    let retry: u64 = r.header("retry-after").parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // another author token and a play token have their own budgets
    let (_, second) = author_token(&server.service, &world.gm).await;
    assert_eq!(
        author_client(server.addr, &second)
            .request("ping", json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        server
            .client(&world.assignments[0].1)
            .request("ping", json!({}))
            .await
            .status,
        200
    );
    server.clock.advance_millis(60_000);
    assert_eq!(gm.request("ping", json!({})).await.status, 200);
}

/// The shared admission, counting the requests it holds admitted, so a test can wait for
/// them without racing them.
struct Counting {
    inner: Arc<dyn Admission>,
    in_flight: Arc<AtomicI64>,
}

#[async_trait]
impl Admission for Counting {
    async fn admit(&self, credential: &str) -> Result<Permit, AdmissionError> {
        let permit = self.inner.admit(credential).await?;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let count = Arc::clone(&self.in_flight);
        Ok(Permit::new(move || {
            drop(permit);
            count.fetch_sub(1, Ordering::SeqCst);
        }))
    }
}

/// A server whose admission is wrapped in [`Counting`].
struct GateServer {
    addr: SocketAddr,
    in_flight: Arc<AtomicI64>,
    world: DemoCreated,
    author_tokens: [String; 2],
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl GateServer {
    async fn start(url: &str, config: ServeConfig) -> Self {
        let store = store::connect(url, &config.server.db).await.unwrap();
        store.migrate().await.unwrap();
        let clock = FakeClock::new(1_767_225_600_000);
        let mut state = AppState::new(
            store,
            &config,
            Arc::new(clock),
            Arc::new(CountingRandom::new(9)),
        )
        .await
        .unwrap();
        let in_flight = Arc::new(AtomicI64::new(0));
        state.doors.admission = Arc::new(Counting {
            inner: Arc::clone(&state.doors.admission),
            in_flight: Arc::clone(&in_flight),
        });
        let world = demo::run(&state.service, 2).await.unwrap();
        let author_tokens = [
            author_token(&state.service, &world.gm).await.1,
            author_token(&state.service, &world.gm).await.1,
        ];
        let router = app::app(state).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let tx = testkit::serve::spawn(listener, router);
        Self {
            addr,
            in_flight,
            world,
            author_tokens,
            _shutdown: tx,
        }
    }

    async fn wait_in_flight(&self, n: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let now = self.in_flight.load(Ordering::SeqCst);
            if now == n {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "expected {n} admitted requests in flight, counted {now}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn play(&self, i: usize) -> Client {
        Client::new(
            format!("http://{}/play/mcp", self.addr),
            Some(self.world.assignments[i].1.clone()),
        )
    }

    fn author(&self, i: usize) -> Client {
        author_client(self.addr, &self.author_tokens[i])
    }
}

/// A request that passed admission and now waits for the rest of its body.
struct Held(TcpStream);

impl Held {
    async fn open(addr: SocketAddr, path: &str, token: &str) -> Self {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body.as_bytes()[..10]).await.unwrap();
        stream.flush().await.unwrap();
        Self(stream)
    }

    /// The status of the response, once the server gives up on the body.
    async fn status(mut self) -> u16 {
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), self.0.read_to_end(&mut raw))
            .await
            .expect("response in time")
            .unwrap();
        let text = String::from_utf8_lossy(&raw);
        text.split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"))
    }
}

fn assert_global_limit(reply: &Reply) {
    assert_eq!(reply.status, 429, "body {}", reply.body);
    assert_eq!(reply.header("retry-after"), "1");
    let message = reply.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("global concurrency exceeded"), "{message}");
}

async fn the_global_gate_is_shared_by_both_doors(url: &str) {
    let server = GateServer::start(
        url,
        ServeConfig {
            server: ServerConfig {
                limits: Limits {
                    rate_per_window: 1_000,
                    credential_concurrency: 8,
                    global_concurrency: 2,
                    ..Limits::default()
                },
                door: DoorConfig {
                    body_timeout: Duration::from_secs(6),
                    ..DoorConfig::default()
                },
                ..ServeConfig::default().server
            },
            ..ServeConfig::default()
        },
    )
    .await;
    assert_eq!(
        server.author(1).request("ping", json!({})).await.status,
        200
    );
    server.wait_in_flight(0).await;

    // one admitted request on each door fills the global gate of two
    let on_author = Held::open(server.addr, "/mcp", &server.author_tokens[0]).await;
    server.wait_in_flight(1).await;
    let on_player = Held::open(server.addr, "/play/mcp", &server.world.assignments[0].1).await;
    server.wait_in_flight(2).await;

    // every other credential is refused on either door
    assert_global_limit(&server.author(1).request("ping", json!({})).await);
    assert_global_limit(&server.play(1).request("tools/list", json!({})).await);
    assert_global_limit(&server.author(1).tool("wiki_list_pages", json!({})).await);
    assert_global_limit(&server.play(1).request("initialize", json!({})).await);
    // the refusals spent nothing
    server.wait_in_flight(2).await;

    // the held requests time out waiting for their bodies, and free the gate
    let (a, p) = tokio::join!(on_author.status(), on_player.status());
    assert_eq!((a, p), (408, 408));
    server.wait_in_flight(0).await;
    assert_eq!(
        server.author(1).request("ping", json!({})).await.status,
        200
    );
    assert_eq!(server.play(1).request("ping", json!({})).await.status, 200);
    assert!(
        !server
            .author(0)
            .tool("wiki_list_pages", json!({}))
            .await
            .is_error()
    );
}

crate::on_both_backends!(
    per_token_limits_apply_to_author_tokens,
    the_global_gate_is_shared_by_both_doors
);
