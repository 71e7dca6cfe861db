//! The one page module of the site: what every page shares — the state the handlers read
//! ([`Web`]: services, the authorization server, the accounts glue), the browser session and
//! its CSRF token (an HMAC of the session, no storage), the same-origin rule of POSTs, form
//! parsing, HTML escaping, the layout, the security headers of the consent page and the common
//! answers (303, 403, 404, 503). Routing is `web`'s; each page's content is its own file's.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use mcp_oauth::crypto::{constant_time_eq, hmac_hex};

use crate::access::oauth::{ElixirAccounts, OAuthParts};
use crate::services::Services;

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// What the pages share.
#[derive(Clone)]
pub struct Web {
    pub(crate) services: Arc<Services>,
    pub(crate) oauth: OAuthParts,
    pub(crate) accounts: Arc<ElixirAccounts>,
}

impl Web {
    pub fn new(services: Arc<Services>, oauth: OAuthParts) -> Self {
        let accounts = Arc::new(ElixirAccounts {
            store: Arc::clone(&services.store),
            clock: Arc::clone(&services.clock),
            random: Arc::clone(&services.random),
        });
        Self {
            services,
            oauth,
            accounts,
        }
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.oauth.server.config().issuer
    }

    /// The raw value of the browser-session cookie.
    pub(crate) fn session_value<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        let name = &self.oauth.server.config().session_cookie;
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The CSRF token of the browser's session: an HMAC of the session value under the
    /// server secret, so it needs no storage and dies with the session.
    pub(crate) fn session_csrf(&self, headers: &HeaderMap) -> Option<String> {
        self.session_value(headers)
            .map(|v| hmac_hex(&self.oauth.secret, &["account-csrf", v])[..32].to_owned())
    }

    /// Whether a POST may act: same origin (by `Origin` / `Sec-Fetch-Site` when sent) and the
    /// session's CSRF token in the form.
    pub(crate) fn post_allowed(&self, headers: &HeaderMap, form: &Form) -> bool {
        self.same_origin(headers)
            && match (self.session_csrf(headers), form.get("csrf")) {
                (Some(expected), Some(given)) => constant_time_eq(&expected, given),
                _ => false,
            }
    }

    /// mcp-oauth's rule for its consent page, so both refuse the same requests.
    pub(crate) fn same_origin(&self, headers: &HeaderMap) -> bool {
        mcp_oauth::same_origin_post(headers, self.issuer())
    }

    /// The signed-in account's id, if the browser has a live session.
    pub(crate) async fn signed_in(
        &self,
        headers: &HeaderMap,
    ) -> Result<Option<uuid::Uuid>, Response> {
        match self.oauth.server.signed_in_account(headers).await {
            Ok(id) => Ok(id.and_then(|id| uuid::Uuid::parse_str(&id).ok())),
            Err(e) => {
                tracing::error!(error = %e, "session lookup failed");
                Err(unavailable())
            }
        }
    }
}

/// A parsed `application/x-www-form-urlencoded` body.
#[derive(Debug, Default)]
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    pub(crate) fn parse(body: &[u8]) -> Self {
        Self(url::form_urlencoded::parse(body).into_owned().collect())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// Escapes text for HTML content and double-quoted attributes.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;\
padding:0 1rem;line-height:1.45;color:#1b1b1b}h1{font-size:1.5rem}h2{font-size:1.2rem;\
margin-top:1.6rem}.box{border:1px solid #ccc;border-radius:8px;padding:.8rem 1.1rem;\
margin:.8rem 0}.err{color:#a00;font-weight:600}.ok{color:#060;font-weight:600}.muted{color:#555;\
font-size:.9rem}nav a{margin-right:1rem}label{display:block;margin:.25rem 0}\
input[type=email],input[type=text]{font-size:1rem;padding:.35rem;width:100%;box-sizing:border-box}\
button{font-size:.95rem;padding:.35rem .9rem;margin:.4rem .4rem 0 0}form.inline{display:inline}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;\
text-align:left;vertical-align:top}code,pre{background:#f4f4f4}pre{padding:.6rem;overflow-x:auto}\
code{word-break:break-all}";

/// A whole page: the title, the navigation (with sign-out when `csrf` is known) and `body`.
pub(crate) fn layout(title: &str, csrf: Option<&str>, body: &str) -> String {
    let nav = match csrf {
        Some(csrf) => format!(
            "<nav><a href=\"/account\">Account</a><a href=\"/account/connections\">Connections</a>\
             <a href=\"/account/agents\">Agents</a><a href=\"/account/activity\">Activity</a>\
             <a href=\"/account/refusals\">Refused credentials</a><a href=\"/docs\">Docs</a>\
             <form class=\"inline\" method=\"post\" action=\"/signout\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\">Sign out</button></form></nav>",
            esc(csrf)
        ),
        None => "<nav><a href=\"/\">Elixir</a><a href=\"/docs\">Docs</a>\
                 <a href=\"/signin\">Sign in</a></nav>"
            .to_owned(),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{title} · Elixir</title><style>{STYLE}</style></head>\
         <body>{nav}<h1>{title}</h1>\n{body}\n</body></html>\n",
        title = esc(title),
    )
}

/// The security headers of the consent page, on every page of the site.
fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// An HTML page.
pub(crate) fn html(status: StatusCode, page: String) -> Response {
    let mut r = Response::new(Body::from(page));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(r)
}

/// A 303 to `location` (a local path), optionally setting a cookie.
pub(crate) fn see_other(location: &str, set_cookie: Option<&str>) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    if let Some(v) = set_cookie.and_then(|c| HeaderValue::from_str(c).ok()) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    secure(r)
}

/// 403 for a POST without a valid CSRF token or from another origin.
pub(crate) fn forbidden() -> Response {
    html(
        StatusCode::FORBIDDEN,
        layout(
            "Refused",
            None,
            "<p class=\"err\">This form expired or came from another site. Go back, reload the \
             page and try again.</p>",
        ),
    )
}

pub(crate) fn unavailable() -> Response {
    html(
        StatusCode::SERVICE_UNAVAILABLE,
        layout(
            "Unavailable",
            None,
            "<p class=\"err\">Elixir cannot answer just now. Try again in a moment.</p>",
        ),
    )
}

pub(crate) fn not_found() -> Response {
    html(
        StatusCode::NOT_FOUND,
        layout("Not found", None, "<p>There is nothing here.</p>"),
    )
}
