//! The HTTP envelope: unknown routes and methods in the JSON error shape, authentication before
//! the body, the 300 KB body limit (chunked too), malformed JSON (400) against a wrong shape (422).

use reqwest::Method;
use serde_json::{Value, json};

use super::{Browser, world};
use crate::support::Server;

async fn http_envelope(url: &str) {
    let w = world(url).await;
    let s = &w.server;
    let gm = Browser::new(s).login("gm").await;
    // unknown routes and methods answer in the JSON error shape
    let r = gm.get("/api/nothing-here").await;
    r.expect(404);
    assert_eq!(r.json()["error"], "not_found");
    let r = gm
        .send(Method::PATCH, "/api/plays/", Some(&json!({})), true)
        .await;
    r.expect(405);
    assert_eq!(r.json()["error"], "method_not_allowed");
    // authentication comes before the body is even looked at
    Browser::new(s)
        .send(Method::POST, "/api/plays/", Some(&json!("junk")), false)
        .await
        .expect(401);

    // 300 KB: 307,200 bytes are read (and judged on their content), one more is 413
    let frame = serde_json::to_string(&json!({"title": ""})).unwrap().len();
    let exact = format!("{{\"title\":\"{}\"}}", "x".repeat(307_200 - frame));
    assert_eq!(exact.len(), 307_200);
    let send_raw = |body: String| {
        gm.http
            .post(format!("{}/api/scenarios/", gm.base))
            .header(
                "cookie",
                format!("sq_session={}", gm.cookie.as_deref().unwrap()),
            )
            .header("x-csrf-token", gm.csrf.as_deref().unwrap())
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let r = send_raw(exact.clone()).await.unwrap();
    assert_eq!(r.status(), 422);
    let over = format!("{{\"title\":\"{}\"}}", "x".repeat(307_201 - frame));
    let r = send_raw(over).await.unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"],
        "payload_too_large"
    );
    // chunked (no Content-Length) counts the same
    assert_eq!(
        chunked_post(&gm, s, "/api/scenarios/", exact.as_bytes()).await,
        422
    );
    let over = format!("{{\"title\":\"{}\"}}", "x".repeat(307_201 - frame));
    assert_eq!(
        chunked_post(&gm, s, "/api/scenarios/", over.as_bytes()).await,
        413
    );

    // malformed JSON is 400; a JSON body of the wrong shape is 422
    let r = send_raw("{\"title\": ".into()).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "malformed_json");
    assert!(body.get("fields").is_none());
    let r = send_raw("[1, 2]".into()).await.unwrap();
    assert_eq!(r.status(), 422);
    assert!(r.json::<Value>().await.unwrap()["fields"].is_object());
}

/// POSTs `body` with `Transfer-Encoding: chunked` over a raw connection; gives the status.
async fn chunked_post(who: &Browser, server: &Server, path: &str, body: &[u8]) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: sidequest\r\nCookie: sq_session={}\r\nX-CSRF-Token: {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        who.cookie.as_deref().unwrap(),
        who.csrf.as_deref().unwrap()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    // the server may answer 413 and stop reading before the last chunk
    for chunk in body.chunks(4096) {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        if conn.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = conn.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = conn.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

crate::on_both_backends!(http_envelope);
