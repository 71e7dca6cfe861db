//! The door on a real 127.0.0.1:0 listener: an HTTP client (reqwest) and raw HTTP/1.1 over TCP
//! for what clients do not let us send (a chunked body of a chosen size).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::support::{PATH, Toy, padded_ping};

/// A served toy door; dropping it shuts the server down.
struct Served {
    toy: Toy,
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Served {
    async fn start() -> Self {
        let toy = Toy::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let app = toy
            .router
            .clone()
            .into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            toy,
            addr,
            _stop: stop,
        }
    }

    fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }
}

#[tokio::test]
async fn an_http_client_talks_to_the_door() {
    let served = Served::start().await;
    let client = reqwest::Client::new();
    let post = |token: &str, body: Value| {
        client
            .post(served.url())
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
    };

    let init = post(
        "good-user",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    assert_eq!(init.headers()["content-type"], "application/json");
    let request_id = init.headers()["x-request-id"].to_str().unwrap().to_owned();
    uuid::Uuid::parse_str(&request_id).unwrap();
    assert!(init.headers().get("mcp-session-id").is_none());
    let body: Value = init.json().await.unwrap();
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");

    let initialized = post(
        "good-user",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(initialized.status(), 202);
    assert!(initialized.bytes().await.unwrap().is_empty());

    let call = post("good-user", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "ąęółż"}}}))
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(call.status(), 200);
    let body: Value = call.json().await.unwrap();
    assert_eq!(
        body["result"]["structuredContent"],
        json!({"text": "ąęółż"})
    );

    let unauthorized = post("nope", json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);
    assert!(
        unauthorized.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );

    let get = client
        .get(served.url())
        .bearer_auth("good-user")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    assert!(get.headers().contains_key("x-request-id"));

    // on a real connection the authenticator sees the peer address
    let peers = served.toy.auth.peers.lock().unwrap().clone();
    assert!(!peers.is_empty());
    assert!(
        peers
            .iter()
            .all(|p| *p == Some(IpAddr::V4(Ipv4Addr::LOCALHOST))),
        "{peers:?}"
    );
}

/// Sends `body` chunked (no Content-Length) in 8 KiB chunks and returns the status code.
async fn chunked(addr: SocketAddr, body: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "POST {PATH} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer good-user\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(8 * 1024) {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    // the server may answer 413 and close before taking the last bytes: a failed write is fine
    let _ = stream.write_all(&request).await;
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            Err(_) if !response.is_empty() => break,
            Err(e) => panic!("no response: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split(' ')
        .nth(1)
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    assert!(
        text.to_ascii_lowercase().contains("\r\nx-request-id: "),
        "{text}"
    );
    status.parse().unwrap()
}

#[tokio::test]
async fn a_chunked_body_is_capped_on_a_real_connection() {
    let served = Served::start().await;
    assert_eq!(chunked(served.addr, &padded_ping(307_200)).await, 200);
    assert_eq!(chunked(served.addr, &padded_ping(307_201)).await, 413);
}

/// Reads one HTTP/1.1 response head; returns the status and the lower-cased head.
async fn read_head(stream: &mut TcpStream) -> (u16, String) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).await.unwrap();
        assert_eq!(n, 1, "connection closed inside the response head: {head:?}");
        head.push(byte[0]);
    }
    let text = String::from_utf8(head).unwrap().to_ascii_lowercase();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    (status, text)
}

#[tokio::test]
async fn a_bad_token_is_answered_before_a_large_body_is_sent() {
    let served = Served::start().await;
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        served.addr,
        1 << 20
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // not one body byte sent: the answer must come anyway, and be 401 rather than 413
    let (status, text) =
        tokio::time::timeout(std::time::Duration::from_secs(5), read_head(&mut stream))
            .await
            .expect("no answer before the body");
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("\r\nwww-authenticate: bearer"), "{text}");
}
