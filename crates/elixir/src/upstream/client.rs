//! The HTTP client of the Clash Royale API: one GET with the bearer token, the status, the
//! parsed `Retry-After` and the body (capped). What the status means is the budget's and the
//! fetcher's business; this module only talks HTTP.

use std::time::Duration;

use super::budget::parse_retry_after;
use super::error::UpstreamError;
use crate::domain::Millis;

/// The largest body read; the biggest real payloads (boards, battle logs) are far below it.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// One answer of the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// `Retry-After` in milliseconds, when present as delay-seconds.
    pub retry_after_ms: Option<Millis>,
    /// `Cache-Control: max-age` in milliseconds, when sent.
    pub max_age_ms: Option<Millis>,
    pub body: Vec<u8>,
}

/// The API client: a base URL (`https://api.clashroyale.com/v1`) and a bearer token.
#[derive(Clone)]
pub struct CrClient {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl std::fmt::Debug for CrClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrClient")
            .field("base", &self.base)
            .field("token", &"<redacted>")
            .finish()
    }
}

impl CrClient {
    /// A client for `base_url` (http or https, without a trailing slash needed).
    pub fn new(base_url: &str, token: &str, timeout: Duration) -> Result<Self, UpstreamError> {
        let parsed = url::Url::parse(base_url)
            .map_err(|e| UpstreamError::Config(format!("API URL {base_url:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(UpstreamError::Config(format!(
                "API URL {base_url:?} is not http or https"
            )));
        }
        if token.trim().is_empty() {
            return Err(UpstreamError::Config("the API token is empty".into()));
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("elixir/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| UpstreamError::Config(format!("HTTP client: {e}")))?;
        Ok(Self {
            http,
            base: base_url.trim_end_matches('/').to_owned(),
            token: token.trim().to_owned(),
        })
    }

    /// GETs `path` (starting with `/`, already percent-encoded).
    pub async fn get(&self, path: &str) -> Result<Answer, UpstreamError> {
        let mut response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| UpstreamError::Transport(e.without_url().to_string()))?;
        let status = response.status().as_u16();
        let retry_after_ms = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let max_age_ms = response
            .headers()
            .get(http::header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok())
            .and_then(max_age);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| UpstreamError::Transport(e.without_url().to_string()))?
        {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(UpstreamError::Payload(format!(
                    "the body of {path} exceeds {MAX_BODY_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            retry_after_ms,
            max_age_ms,
            body,
        })
    }
}

/// `max-age=N` of a `Cache-Control` value, in milliseconds.
fn max_age(value: &str) -> Option<Millis> {
    value.split(',').find_map(|part| {
        let seconds = part
            .trim()
            .strip_prefix("max-age=")?
            .trim()
            .parse::<i64>()
            .ok()?;
        (seconds >= 0).then_some(seconds.saturating_mul(1000))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_age_is_read_from_cache_control() {
        assert_eq!(max_age("max-age=60"), Some(60_000));
        assert_eq!(max_age("public, max-age=120"), Some(120_000));
        assert_eq!(max_age("no-cache"), None);
        assert_eq!(max_age("max-age=-1"), None);
        assert_eq!(max_age("max-age=soon"), None);
    }

    #[test]
    fn configuration_is_checked_and_the_token_never_shows() {
        let client = CrClient::new(
            "https://api.clashroyale.com/v1/",
            "secret-token",
            Duration::from_secs(5),
        )
        .unwrap();
        let debug = format!("{client:?}");
        assert!(
            debug.contains("https://api.clashroyale.com/v1\""),
            "{debug}"
        );
        assert!(!debug.contains("secret-token"), "{debug}");
        for (url, token) in [
            ("ftp://example.com", "t"),
            ("not a url", "t"),
            ("https://api.clashroyale.com/v1", "  "),
        ] {
            assert!(matches!(
                CrClient::new(url, token, Duration::from_secs(5)),
                Err(UpstreamError::Config(_))
            ));
        }
    }
}
