//! A minimal MCP-over-HTTP client for tests: one POST per message, the raw status, headers and
//! JSON body kept so tests can assert on every layer.

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The raw answer to one POST.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// A header as text ("" when absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// `result` of a JSON-RPC success (panics with the body otherwise).
    pub fn result(&self) -> &Value {
        assert_eq!(self.status, 200, "HTTP status; body: {}", self.body);
        self.body
            .get("result")
            .unwrap_or_else(|| panic!("no result in {}", self.body))
    }

    /// The `isError` flag of a tool result.
    pub fn is_error(&self) -> bool {
        self.result()
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The first text content of a tool result.
    pub fn text(&self) -> String {
        self.result()["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text content in {}", self.body))
            .to_owned()
    }

    /// The structured (JSON) payload of a successful tool result, parsed from its text.
    pub fn json(&self) -> Value {
        assert!(!self.is_error(), "tool failed: {}", self.text());
        serde_json::from_str(&self.text())
            .unwrap_or_else(|e| panic!("tool text is not JSON ({e}): {}", self.text()))
    }
}

/// A client bound to one endpoint and optional bearer token.
#[derive(Debug, Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub url: String,
    pub token: Option<String>,
}

impl Client {
    pub fn new(url: impl Into<String>, token: Option<String>) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.into(),
            token,
        }
    }

    /// POSTs raw bytes.
    pub async fn post_raw(&self, body: impl Into<reqwest::Body>) -> Reply {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.body(body).send().await.expect("request failed");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends one JSON-RPC request.
    pub async fn request(&self, method: &str, params: Value) -> Reply {
        self.post_raw(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
        )
        .await
    }

    /// `initialize` with the given protocol version.
    pub async fn initialize(&self, version: &str) -> Reply {
        self.request("initialize", json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "testkit", "version": "0"}})).await
    }

    /// `tools/call`.
    pub async fn tool(&self, name: &str, arguments: Value) -> Reply {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }
}
