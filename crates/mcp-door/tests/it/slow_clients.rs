//! Slow and flooding clients under `serve_until`: a connection that sends nothing, or its
//! headers a byte at a time, is closed after the header timeout; an idle keep-alive connection
//! too; a body that stops arriving fails after the body timeout; the connection cap admits
//! exactly its number and closes one past it at once; and a normal client's requests stay
//! answered promptly while hundreds of such connections are open.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::{get, post};
use bytes::Bytes;
use mcp_door::{ConnectionLimits, Serving};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::staged_close::serve;

fn app() -> Router {
    Router::new()
        .route("/hello", get(|| async { "hello" }))
        .route("/echo", post(|b: Bytes| async move { b.len().to_string() }))
}

fn serving(max_connections: usize, header_ms: u64, body_ms: u64) -> Serving {
    Serving {
        connections: ConnectionLimits {
            max_connections,
            header_timeout: Duration::from_millis(header_ms),
            body_timeout: Duration::from_millis(body_ms),
        },
        ..Serving::new()
    }
}

fn addr(base: &str) -> SocketAddr {
    base.trim_start_matches("http://").parse().unwrap()
}

/// Reads until the peer closes (or resets); how long that took, capped at `limit`.
async fn closed_after(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + limit).into(), stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

async fn get_hello(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out).await;
    out
}

#[tokio::test]
async fn a_silent_connection_and_a_byte_a_tick_are_closed_after_the_header_timeout() {
    let (base, _stop) = serve(app(), serving(64, 400, 5_000)).await;
    let mut silent = TcpStream::connect(addr(&base)).await.unwrap();
    let took = closed_after(&mut silent, Duration::from_secs(5)).await;
    assert!(
        took.is_some_and(|t| t >= Duration::from_millis(350)),
        "{took:?}"
    );

    let mut dribble = TcpStream::connect(addr(&base)).await.unwrap();
    let started = Instant::now();
    let request =
        b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut closed = false;
    for byte in request {
        if dribble.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    if !closed {
        let mut buf = Vec::new();
        let n = tokio::time::timeout(Duration::from_secs(2), dribble.read_to_end(&mut buf)).await;
        assert!(
            !String::from_utf8_lossy(&buf).contains("hello"),
            "a request dribbled past the header timeout is not answered: {n:?}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let (base, _stop) = serve(app(), serving(64, 400, 5_000)).await;
    let mut s = TcpStream::connect(addr(&base)).await.unwrap();
    s.write_all(b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = s.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).contains("hello"));
    let took = closed_after(&mut s, Duration::from_secs(5)).await;
    assert!(took.is_some(), "the idle connection stays open");
}

#[tokio::test]
async fn a_body_that_stops_arriving_fails_after_the_body_timeout() {
    let (base, _stop) = serve(app(), serving(64, 5_000, 300)).await;
    let mut s = TcpStream::connect(addr(&base)).await.unwrap();
    s.write_all(b"POST /echo HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\nabc")
        .await
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .expect("answered within 5 s")
        .unwrap();
    let head = String::from_utf8_lossy(&buf[..n]);
    assert!(head.starts_with("HTTP/1.1 4"), "{head}");
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn the_connection_cap_admits_its_number_and_closes_one_past_it() {
    const CAP: usize = 8;
    let (base, _stop) = serve(app(), serving(CAP, 1_500, 5_000)).await;
    let a = addr(&base);
    // CAP idle connections, each accepted (a request on each is answered)
    let mut held = Vec::new();
    for _ in 0..CAP {
        let mut s = TcpStream::connect(a).await.unwrap();
        s.write_all(b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 1024];
        let n = s.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).contains("hello"));
        held.push(s);
    }
    // one past: closed at once, unanswered
    let mut past = TcpStream::connect(a).await.unwrap();
    let _ = past
        .write_all(b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await;
    let took = closed_after(&mut past, Duration::from_millis(1_000)).await;
    assert!(took.is_some(), "one past the cap is closed at once");
    // closing one frees its place
    drop(held.pop());
    let mut answered = false;
    for _ in 0..50 {
        if get_hello(a).await.contains("hello") {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(answered, "a freed place admits a new connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_normal_client_stays_answered_during_a_flood() {
    let (base, _stop) = serve(app(), serving(1024, 10_000, 10_000)).await;
    let a = addr(&base);
    // 300 silent connections, 100 sending a header byte every 100 ms, 100 idle keep-alive
    let mut flood = Vec::new();
    for _ in 0..300 {
        flood.push(TcpStream::connect(a).await.unwrap());
    }
    let mut dribblers = Vec::new();
    for _ in 0..100 {
        let mut s = TcpStream::connect(a).await.unwrap();
        dribblers.push(tokio::spawn(async move {
            for byte in b"GET /hello HTTP/1.1\r\nx-slow: "
                .iter()
                .chain(std::iter::repeat(&b'a'))
            {
                if s.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }));
    }
    for _ in 0..100 {
        let mut s = TcpStream::connect(a).await.unwrap();
        s.write_all(b"GET /hello HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 512];
        let _ = s.read(&mut buf).await.unwrap();
        flood.push(s);
    }
    let client = reqwest::Client::new();
    let mut worst = Duration::ZERO;
    for _ in 0..30 {
        let started = Instant::now();
        let r = client.get(format!("{base}/hello")).send().await.unwrap();
        assert_eq!(r.text().await.unwrap(), "hello");
        worst = worst.max(started.elapsed());
    }
    for d in dribblers {
        d.abort();
    }
    eprintln!("worst latency of 30 requests during a 500-connection flood: {worst:?}");
    // far below the 10 s header timeout the flood would have to wait out if it starved us
    assert!(worst < Duration::from_secs(2), "{worst:?}");
}
