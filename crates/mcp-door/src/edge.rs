//! A door's edge, checked before the pre-auth gate: the DNS-rebinding rule of the MCP
//! transport specification (an `Origin` that is neither the public URL's nor an allowed one is
//! 403; with [`OriginPolicy::check_host`], a `Host` that is neither the public URL's host nor a
//! loopback name is 403), the CORS preflight and response headers for the allowed origins,
//! 415 for a POST that is not `application/json`, and the staged close of a body the door
//! leaves unread ([`crate::drain`]). [`door_layers`] puts them around a door's router.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};

use crate::around::{Around, AroundLayer};
use crate::drain::{DrainLimits, staged_close};
use crate::jsonrpc;

/// The request headers a browser-based client may send to a door it was allowed from.
pub const CORS_ALLOW_HEADERS: &str = "Authorization, Content-Type, MCP-Protocol-Version";
/// The response headers such a client may read.
pub const CORS_EXPOSE_HEADERS: &str = "WWW-Authenticate";
/// How long a browser may cache a preflight, in seconds.
const CORS_MAX_AGE: &str = "600";

/// A bad origin given to [`OriginPolicy::new`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an origin (scheme://host[:port]): {0}")]
pub struct BadOrigin(pub String);

/// Which origins and hosts a door accepts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OriginPolicy {
    /// The public URL's origin (`scheme://host[:port]`, default port dropped), if there is one.
    public: Option<String>,
    /// The public URL's host name, lowercase, without port.
    public_host: Option<String>,
    /// Origins allowed besides the public one; they get CORS answers.
    allowed: Vec<String>,
    /// Whether `Host` is checked (the server is bound to a loopback address).
    pub check_host: bool,
}

impl OriginPolicy {
    /// The policy of a server reached at `public_url` (when it has one), allowing `allowed`
    /// origins besides it, checking `Host` when `check_host`. Without a public URL, origins
    /// on a loopback host (`localhost`, `127.0.0.1`, `[::1]`) count as the server's own.
    pub fn new(
        public_url: Option<&str>,
        allowed: &[String],
        check_host: bool,
    ) -> Result<Self, BadOrigin> {
        let (public, public_host) = match public_url {
            Some(u) => {
                let parsed = url::Url::parse(u).map_err(|_| BadOrigin(u.to_owned()))?;
                let origin = parsed.origin();
                if !origin.is_tuple() {
                    return Err(BadOrigin(u.to_owned()));
                }
                let host = parsed.host_str().map(str::to_ascii_lowercase);
                (Some(origin.ascii_serialization()), host)
            }
            None => (None, None),
        };
        let allowed = allowed
            .iter()
            .map(|a| normalize_origin(a).ok_or_else(|| BadOrigin(a.clone())))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            public,
            public_host,
            allowed,
            check_host,
        })
    }

    /// The origins allowed besides the public one, normalized.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// Why `headers` are refused, if they are.
    fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        if self.check_host
            && let Some(host) = headers.get(header::HOST)
        {
            let name = host.to_str().ok().and_then(host_name);
            let ok = name
                .as_deref()
                .is_some_and(|n| is_loopback_name(n) || self.public_host.as_deref() == Some(n));
            if !ok {
                return Some(format!(
                    "Forbidden: Host {} is not this server's",
                    String::from_utf8_lossy(host.as_bytes())
                ));
            }
        }
        let origin = headers.get(header::ORIGIN)?;
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        match normalize_origin(&text) {
            Some(o) if self.public.as_deref() == Some(o.as_str()) => None,
            Some(o) if self.allowed.contains(&o) => None,
            Some(o) if self.public.is_none() && origin_is_loopback(&o) => None,
            _ => Some(format!("Forbidden: Origin {text} is not allowed")),
        }
    }

    /// The origin of `headers` when it is one of the allowed (CORS) origins.
    fn cors_origin(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let origin = headers.get(header::ORIGIN)?;
        let normalized = normalize_origin(origin.to_str().ok()?)?;
        self.allowed.contains(&normalized).then(|| origin.clone())
    }
}

/// A command-line `--allowed-origin` value: `scheme://host[:port]` (normalized: lowercase,
/// default port dropped), or why it is not one.
pub fn parse_origin(text: &str) -> Result<String, String> {
    normalize_origin(text.trim()).ok_or_else(|| {
        format!("{text:?} is not an origin: give scheme://host[:port], without path, query or credentials")
    })
}

/// `scheme://host[:port]` of `text` (lowercase, default port dropped); `None` for `null`,
/// opaque origins and anything with a path, query or credentials.
fn normalize_origin(text: &str) -> Option<String> {
    let parsed = url::Url::parse(text).ok()?;
    let bare = parsed.path() == "/" || parsed.path().is_empty();
    if !bare || parsed.query().is_some() || parsed.fragment().is_some() {
        return None;
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return None;
    }
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// The host name of a `Host` value (lowercase, port and IPv6 brackets kept as written).
fn host_name(host: &str) -> Option<Cow<'_, str>> {
    let host = host.trim();
    if host.is_empty() {
        return None;
    }
    let name = if host.starts_with('[') {
        host.get(..=host.find(']')?)?
    } else {
        host.split(':').next().unwrap_or(host)
    };
    // Copied only when there is something to lowercase: a request's Host usually has not.
    Some(if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    })
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name.ends_with(".localhost")
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn origin_is_loopback(origin: &str) -> bool {
    url::Url::parse(origin)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| is_loopback_name(&h))
}

/// A door's edge: its origin policy and the bounds of the staged close.
#[derive(Debug, Clone, Default)]
pub struct DoorEdge {
    pub origins: Arc<OriginPolicy>,
    pub drain: DrainLimits,
}

/// `router` (one door) behind the staged close, then the origin, host, CORS and media-type
/// checks: one tower layer ([`Around`] for [`DoorEdge`]) where two `from_fn` layers each
/// cloned and boxed a service and boxed a future per request.
pub fn door_layers<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    edge: DoorEdge,
) -> Router<S> {
    router.layer(AroundLayer(edge))
}

impl Around for DoorEdge {
    async fn around<N, F>(self, request: Request, next: N) -> Response
    where
        N: FnOnce(Request) -> F + Send,
        F: Future<Output = Response> + Send,
    {
        staged_close(self.drain, request, |request| {
            guard(&self.origins, request, next)
        })
        .await
    }
}

/// A JSON-RPC error response (id `null`) of `status`.
fn refusal(status: StatusCode, message: &str, hint: &str) -> Response {
    let body = jsonrpc::error(
        &Value::Null,
        jsonrpc::SERVER_ERROR,
        message,
        Some(json!({"hint": hint})),
    );
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Like every door answer, a refusal carries a request id, logged with its reason.
    let request_id = uuid::Uuid::new_v4();
    tracing::info!(%request_id, status = status.as_u16(), reason = message, "refused at the door's edge");
    if let Ok(value) = HeaderValue::from_str(&request_id.to_string()) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// Whether `headers` say the body is `application/json` (parameters such as `charset` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// The edge checks of one door request, in order: `Host` and `Origin` (403), a CORS
/// preflight from an allowed origin (204), a POST that is not JSON (415); then the door, with
/// the CORS response headers added for an allowed origin.
async fn guard<F, Fut>(policy: &OriginPolicy, request: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let headers = request.headers();
    if let Some(message) = policy.refusal(headers) {
        return refusal(
            StatusCode::FORBIDDEN,
            &message,
            "Send requests from this server's own origin or one it allows (--allowed-origin), to its public host.",
        );
    }
    let cors = policy.cors_origin(headers);
    if request.method() == Method::OPTIONS
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        let Some(origin) = cors else {
            return refusal(
                StatusCode::FORBIDDEN,
                "Forbidden: cross-origin requests are not allowed from this origin",
                "Ask the operator to allow the origin with --allowed-origin.",
            );
        };
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("POST"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static(CORS_MAX_AGE),
        );
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        return response;
    }
    if request.method() == Method::POST && !is_json(headers) {
        let mut response = refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: the body must be a JSON-RPC message sent as application/json",
            "Send Content-Type: application/json.",
        );
        response
            .headers_mut()
            .insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        add_cors(&mut response, cors);
        return response;
    }
    let mut response = next(request).await;
    add_cors(&mut response, cors);
    response
}

fn add_cors(response: &mut Response, origin: Option<HeaderValue>) {
    let Some(origin) = origin else { return };
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(CORS_EXPOSE_HEADERS),
    );
    h.append(header::VARY, HeaderValue::from_static("Origin"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn origins_normalize() {
        assert_eq!(
            normalize_origin("https://Elixir.Example:443").as_deref(),
            Some("https://elixir.example")
        );
        assert_eq!(
            normalize_origin("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(normalize_origin("null"), None);
        assert_eq!(normalize_origin("https://a.example/path"), None);
        assert_eq!(normalize_origin("https://u:p@a.example"), None);
        assert!(OriginPolicy::new(None, &["not an origin".into()], true).is_err());
    }

    #[test]
    fn the_public_origin_and_the_allowed_ones_pass_others_are_refused() {
        let p = OriginPolicy::new(
            Some("https://elixir.example/"),
            &["https://inspector.example".into()],
            true,
        )
        .unwrap();
        assert_eq!(p.refusal(&headers(&[])), None);
        assert_eq!(
            p.refusal(&headers(&[("origin", "https://elixir.example")])),
            None
        );
        assert_eq!(
            p.refusal(&headers(&[("origin", "https://inspector.example")])),
            None
        );
        for bad in [
            "http://elixir.example",
            "https://evil.example",
            "null",
            "http://localhost:3000",
        ] {
            assert!(p.refusal(&headers(&[("origin", bad)])).is_some(), "{bad}");
        }
    }

    #[test]
    fn the_host_is_checked_only_when_asked() {
        let p = OriginPolicy::new(Some("https://elixir.example"), &[], true).unwrap();
        for ok in [
            "elixir.example",
            "ELIXIR.example:443",
            "127.0.0.1:8080",
            "localhost",
            "LocalHost:3000",
            "[::1]:80",
            "[::1]",
        ] {
            assert_eq!(p.refusal(&headers(&[("host", ok)])), None, "{ok}");
        }
        for bad in [
            "evil.example.com",
            "elixir.example.evil.com",
            "10.0.0.1:80",
            "[::1",
            "[::2]:80",
            "",
        ] {
            assert!(p.refusal(&headers(&[("host", bad)])).is_some(), "{bad}");
        }
        let open = OriginPolicy::new(Some("https://elixir.example"), &[], false).unwrap();
        assert_eq!(
            open.refusal(&headers(&[("host", "evil.example.com")])),
            None
        );
    }

    #[test]
    fn without_a_public_url_loopback_origins_are_the_servers_own() {
        let p = OriginPolicy::new(None, &[], true).unwrap();
        assert_eq!(
            p.refusal(&headers(&[("origin", "http://127.0.0.1:8080")])),
            None
        );
        assert_eq!(
            p.refusal(&headers(&[("origin", "http://localhost:8080")])),
            None
        );
        assert!(
            p.refusal(&headers(&[("origin", "http://evil.example.com")]))
                .is_some()
        );
    }

    #[test]
    fn json_media_types() {
        assert!(is_json(&headers(&[("content-type", "application/json")])));
        assert!(is_json(&headers(&[(
            "content-type",
            "Application/JSON; charset=utf-8"
        )])));
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json-seq",
        ] {
            assert!(!is_json(&headers(&[("content-type", bad)])), "{bad}");
        }
        assert!(!is_json(&headers(&[])));
    }
}
