//! DNS-rebinding protection for a local server without credentials (the suite's
//! `dns-rebinding-protection`): a request whose `Host` or `Origin` names anything but
//! `localhost`, `127.0.0.1` or `[::1]` (any port) is 403 with a JSON-RPC error and no id.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use serde_json::json;

/// Whether `authority` (`host[:port]`) is a loopback name.
fn loopback(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((h, tail)) if tail.is_empty() || tail.starts_with(':') => h,
            _ => return false,
        }
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

fn origin_is_local(origin: &str) -> bool {
    origin
        .split_once("://")
        .is_some_and(|(scheme, rest)| matches!(scheme, "http" | "https") && loopback(rest))
}

/// The middleware: refuses a foreign `Host` or `Origin` before the door sees the request.
pub async fn only_local(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host_ok = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .is_some_and(loopback);
    let origin_ok = headers
        .get(header::ORIGIN)
        .is_none_or(|v| v.to_str().is_ok_and(origin_is_local));
    if host_ok && origin_ok {
        return next.run(request).await;
    }
    (
        StatusCode::FORBIDDEN,
        axum::Json(json!({"jsonrpc": "2.0", "error": {"code": -32600,
            "message": "Forbidden: this local server answers only Host and Origin localhost, 127.0.0.1 or [::1]"}})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_or_without_a_port() {
        for ok in [
            "localhost",
            "localhost:3000",
            "127.0.0.1:9",
            "[::1]",
            "[::1]:80",
        ] {
            assert!(loopback(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "127.0.0.1.evil.com",
            "[::2]",
            "localhost.evil:1",
            "[::1]x",
        ] {
            assert!(!loopback(bad), "{bad}");
        }
        assert!(origin_is_local("http://localhost:5173"));
        assert!(!origin_is_local("https://evil.com"));
        assert!(!origin_is_local("null"));
    }
}
