//! mcp-oauth's endpoints on a real 127.0.0.1:0 listener refuse an oversized body (413, past
//! the 16 KiB form limit, before the body is read) so that the async `httpx` client of the MCP
//! Python SDK and Node's `fetch` read the refusal — with `Content-Length` and chunked — instead
//! of a reset connection: the staged close drains the rest of the body first.

use testkit::clients::{Case, Framing, assert_both_read};

use crate::harness::Harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_clients_read_the_413_of_every_endpoint() {
    let h = Harness::sqlite().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let _stop = testkit::serve::spawn(listener, h.router.clone());
    let mut cases = Vec::new();
    for framing in [Framing::ContentLength, Framing::Chunked] {
        for (path, content_type) in [
            ("/oauth/token", "application/x-www-form-urlencoded"),
            ("/oauth/register", "application/json"),
            ("/oauth/authorize", "application/x-www-form-urlencoded"),
        ] {
            let case = Case::new(
                format!("{path} {framing:?}"),
                format!("{base}{path}"),
                2 * 1024 * 1024,
                framing,
            )
            .header("content-type", content_type);
            cases.push((case, 413));
        }
    }
    assert_both_read(&cases).await;
}
