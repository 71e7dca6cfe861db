//! The one page module of the site: what every page shares — the state the handlers read
//! ([`Web`]: services, the authorization server, the accounts glue), the browser session and
//! its CSRF token (an HMAC of the session, no storage), Elixir's navigation and the common
//! answers (303, 403, 404, 503), and the one table shape the account pages list rows in.
//! HTML escaping, the stylesheet and page shell, the security
//! headers, form parsing and the same-origin rule are mcp-oauth's [`mcp_oauth::web`], so the
//! consent page and these pages are built alike. Routing is `web`'s; each page's content is
//! its own file's.

use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};
use mcp_oauth::crypto::{constant_time_eq, hmac_hex};
use mcp_oauth::web;
pub(crate) use mcp_oauth::web::{Form, esc};

use crate::access::oauth::{ElixirAccounts, OAuthParts};
use crate::services::Services;

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
        mcp_door::cookie(headers, &self.oauth.server.config().session_cookie)
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
        web::same_origin_post(headers, self.issuer())
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

/// A whole page: the title, the navigation (with sign-out when `csrf` is known) and `body`.
pub(crate) fn layout(title: &str, csrf: Option<&str>, body: &str) -> String {
    let nav = match csrf {
        Some(csrf) => format!(
            "<nav><a href=\"/account\">Account</a><a href=\"/account/players\">Players</a>\
             <a href=\"/account/connections\">Connections</a>\
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
    web::page("Elixir", &nav, title, body)
}

/// A table with a heading row of `headings` and `rows` (each a `<tr>…</tr>`), or the muted
/// `empty` line when there are no rows.
pub(crate) fn table(
    empty: &str,
    headings: &[&str],
    rows: impl IntoIterator<Item = String>,
) -> String {
    let rows: Vec<String> = rows.into_iter().collect();
    if rows.is_empty() {
        return format!("<p class=\"muted\">{empty}</p>");
    }
    let mut out = String::from("<table><tr>");
    for h in headings {
        out.push_str(&format!("<th>{h}</th>"));
    }
    out.push_str("</tr>");
    out.extend(rows);
    out.push_str("</table>");
    out
}

/// An HTML page with the site's security headers (its forms post and redirect to the site).
pub(crate) fn html(status: StatusCode, page: String) -> Response {
    web::html_response(status, page, None)
}

/// A 303 to `location` (a local path), optionally setting a cookie.
pub(crate) fn see_other(location: &str, set_cookie: Option<&str>) -> Response {
    web::see_other(location, set_cookie, None)
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
