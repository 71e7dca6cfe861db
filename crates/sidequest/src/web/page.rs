//! What every page shares: the visitor ([`Visitor`]: language, session, CSRF token), the
//! templates and their rendering, the form body and its CSRF check, the security headers and
//! the common answers (303, error pages, a refused call's field errors) with [`Page`], a
//! handler's answer whose early exits are `?`. The session and its CSRF token are the REST API's
//! (`http::session`): the web sign-in opens the same session and keeps the token in a second
//! cookie, so the pages write it into their forms and a POST is checked against the digest the
//! session stores, exactly as `X-CSRF-Token` is.

use std::sync::OnceLock;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use minijinja::{Environment, UndefinedBehavior};
use serde_json::{Value, json};

use crate::domain::token::digest;
use crate::domain::{Language, Millis, User};
use crate::http::error::ApiError;
use crate::http::session::{self, digest_eq};
use crate::i18n::web::{field_message, page_texts, text};
use crate::state::AppState;

/// The cookie that remembers the page language (`en` or `pl`).
pub const LANG_COOKIE: &str = "sq_lang";
/// The cookie that holds the session's CSRF token for the pages to write into their forms.
pub const CSRF_COOKIE: &str = "sq_csrf";
/// The form field that carries the CSRF token.
pub const CSRF_FIELD: &str = "csrf";

/// The one policy of every page: the stylesheet and the script are files of the site, nothing
/// inline, nothing from elsewhere, no framing, forms post to the site only.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                       frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The templates, embedded in the binary.
const TEMPLATES: &[(&str, &str)] = &[
    ("layout.html", include_str!("../../templates/layout.html")),
    ("macros.html", include_str!("../../templates/macros.html")),
    ("message.html", include_str!("../../templates/message.html")),
    ("signin.html", include_str!("../../templates/signin.html")),
    ("home.html", include_str!("../../templates/home.html")),
    (
        "scenario.html",
        include_str!("../../templates/scenario.html"),
    ),
    ("version.html", include_str!("../../templates/version.html")),
    (
        "new_play.html",
        include_str!("../../templates/new_play.html"),
    ),
    ("play.html", include_str!("../../templates/play.html")),
    ("review.html", include_str!("../../templates/review.html")),
    ("report.html", include_str!("../../templates/report.html")),
    (
        "author_tokens.html",
        include_str!("../../templates/author_tokens.html"),
    ),
];

/// The template environment, built once. A missing variable or phrase is an error (a page
/// test fails) rather than an empty string.
pub fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        for (name, source) in TEMPLATES {
            if let Err(e) = env.add_template(name, source) {
                tracing::error!(template = name, error = %e, "template does not compile");
            }
        }
        env
    })
}

/// A signed-in visitor: the user, the session's store key and its CSRF token.
#[derive(Debug, Clone)]
pub struct Signed {
    pub user: User,
    pub key: String,
    pub csrf: String,
}

/// Who is asking: the page language, the session if any, and the path asked for (the language
/// switch leads back to it).
#[derive(Debug, Clone)]
pub struct Visitor {
    pub lang: Language,
    pub signed: Option<Signed>,
    pub path: String,
    /// The site's own origin as the browser reached it (for the MCP client configuration).
    pub origin: String,
    /// Whether cookies must be `Secure`.
    pub secure: bool,
    /// The `Sec-Fetch-Site` / `Origin` verdict: the request comes from one of our pages (or
    /// from a client that sends neither header).
    pub same_origin: bool,
}

/// The language a visitor reads: the remembered choice, else the browser's first preference
/// among ours, else English.
pub fn language_of(headers: &HeaderMap) -> Language {
    if let Some(l) = mcp_door::cookie(headers, LANG_COOKIE).and_then(Language::parse) {
        return l;
    }
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    for part in accept.split(',') {
        let tag = part
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if tag.starts_with("pl") {
            return Language::Pl;
        }
        if tag.starts_with("en") {
            return Language::En;
        }
    }
    Language::En
}

/// Whether a POST comes from our own pages, by the headers browsers set and pages cannot:
/// `Sec-Fetch-Site`, when sent, is `same-origin` or `none` (it is the browser's own verdict,
/// right behind a TLS-terminating proxy too); without it, `Origin`, when sent, names our host
/// (over http or https).
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let get = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
    match get("sec-fetch-site") {
        Some(site) => site == "same-origin" || site == "none",
        None => get("origin").is_none_or(|o| {
            o.strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"))
                .is_some_and(|h| h == host)
        }),
    }
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let lang = language_of(&parts.headers);
        let secure = session::secure(state, &parts.headers);
        let host = parts
            .headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .filter(|h| {
                h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
            })
            .unwrap_or("localhost");
        let origin = format!("{}://{host}", if secure { "https" } else { "http" });
        let path = parts
            .uri
            .path_and_query()
            .map_or("/".to_owned(), |p| p.as_str().to_owned());
        let mut visitor = Visitor {
            lang,
            signed: None,
            same_origin: same_origin(&parts.headers, host),
            path,
            origin,
            secure,
        };
        let live = session::live_session(state, &parts.headers)
            .await
            .map_err(|e| visitor.api_error(e))?;
        if let Some((key, record)) = live {
            // The pages need the token in plaintext; the store keeps only its digest, so a
            // session opened elsewhere (the REST login) without the cookie is not a page
            // session: the visitor signs in again.
            let csrf = mcp_door::cookie(&parts.headers, CSRF_COOKIE)
                .filter(|c| digest_eq(&digest(c), &record.csrf_digest));
            if let Some(csrf) = csrf {
                visitor.signed = Some(Signed {
                    user: record.user,
                    key,
                    csrf: csrf.to_owned(),
                });
            }
        }
        Ok(visitor)
    }
}

/// A page handler's answer: the page, or the answer that ended it early (the sign-in
/// redirect, the CSRF refusal, the not-found page, a refused service call), so a handler's
/// steps read as `?` rather than a `match` each. Either side is sent as it is.
pub type Page = Result<Response, Response>;

/// A form body's pairs: the platform's (unparsable bytes match no CSRF token).
pub use mcp_door::web::Form;

impl Visitor {
    /// The signed-in visitor, or a 303 to the sign-in page (which leads back here).
    pub fn require(&self) -> Result<&Signed, Response> {
        self.signed.as_ref().ok_or_else(|| {
            let next =
                serde_urlencoded::to_string([("next", self.path.as_str())]).unwrap_or_default();
            see_other(&format!("/signin?{next}"), &[])
        })
    }

    /// A path's resource id: a UUID, or the not-found page.
    pub fn path_id(&self, id: &str) -> Result<uuid::Uuid, Response> {
        uuid::Uuid::parse_str(id).map_err(|_| self.api_error(ApiError::NotFound))
    }

    /// A form POST on one resource: the form, its signed-in sender checked as
    /// [`Visitor::check_post`] does, and the path's id ([`Visitor::path_id`]), in that order.
    pub fn post_on(&self, body: &[u8], id: &str) -> Result<(Form, &Signed, uuid::Uuid), Response> {
        let form = Form::parse(body);
        let signed = self.check_post(&form)?;
        let id = self.path_id(id)?;
        Ok((form, signed, id))
    }

    /// A service call's answer, or the error page of its failure ([`Visitor::api_error`]).
    pub fn ok_or_page<T, E: Into<ApiError>>(&self, answer: Result<T, E>) -> Result<T, Response> {
        answer.map_err(|e| self.api_error(e.into()))
    }

    /// A refused service call's field errors, as [`field_errors`] shows them beside the
    /// calling page's form; any other refusal as its error page ([`Visitor::api_error`]).
    pub fn form_errors(&self, e: ApiError) -> Result<Value, Response> {
        match e {
            ApiError::Invalid(fields) => Ok(field_errors(self.lang, &fields)),
            other => Err(self.api_error(other)),
        }
    }

    /// The signed-in visitor whose POST carries the session's CSRF token and comes from our
    /// own pages; else 403 (the REST rule: no session is refused before a bad token).
    pub fn check_post(&self, form: &Form) -> Result<&Signed, Response> {
        let Some(signed) = self.signed.as_ref() else {
            return Err(self.message(StatusCode::FORBIDDEN, "csrf_title", text(self.lang, "csrf")));
        };
        let token_ok = form
            .get(CSRF_FIELD)
            .is_some_and(|t| digest_eq(&digest(t), &digest(&signed.csrf)));
        if token_ok && self.same_origin {
            Ok(signed)
        } else {
            Err(self.message(StatusCode::FORBIDDEN, "csrf_title", text(self.lang, "csrf")))
        }
    }

    /// The context every template reads: phrases, language, the user and the CSRF token, the
    /// language-switch links.
    fn base(&self, title: &str) -> Value {
        let back = serde_urlencoded::to_string([("back", self.path.as_str())]).unwrap_or_default();
        json!({
            "t": page_texts(self.lang),
            "lang": self.lang.as_str(),
            "title": title,
            "user": self.signed.as_ref().map(|s| json!({
                "username": s.user.username,
                "display_name": s.user.display_name,
                "is_gm": s.user.is_gm,
            })),
            "csrf": self.signed.as_ref().map(|s| s.csrf.clone()),
            "switch_en": format!("/language/en?{back}"),
            "switch_pl": format!("/language/pl?{back}"),
        })
    }

    /// Renders `template` with the base context and `page` merged in.
    pub fn render(&self, status: StatusCode, template: &str, title: &str, page: Value) -> Response {
        let mut ctx = self.base(title);
        if let (Some(c), Value::Object(p)) = (ctx.as_object_mut(), page) {
            c.extend(p);
        }
        let rendered = templates()
            .get_template(template)
            .and_then(|t| t.render(minijinja::Value::from_serialize(&ctx)));
        match rendered {
            Ok(html) => html_response(status, html),
            Err(e) => {
                tracing::error!(template, error = %e, "page did not render");
                html_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "<!DOCTYPE html><html><head><title>Error</title></head><body><p>Internal error.</p></body></html>".into(),
                )
            }
        }
    }

    /// A page with a heading and one message.
    pub fn message(&self, status: StatusCode, title_key: &str, message: &str) -> Response {
        self.render(
            status,
            "message.html",
            text(self.lang, title_key),
            json!({"message": message, "is_error": status.as_u16() >= 400}),
        )
    }

    /// The page for a failed service call (field errors are the calling page's to show).
    pub fn api_error(&self, e: ApiError) -> Response {
        let lang = self.lang;
        match e {
            ApiError::NotFound | ApiError::MethodNotAllowed => self.message(
                StatusCode::NOT_FOUND,
                "not_found_title",
                text(lang, "not_found"),
            ),
            ApiError::Forbidden(m) => self.message(StatusCode::FORBIDDEN, "forbidden_title", &m),
            ApiError::Csrf => self.message(StatusCode::FORBIDDEN, "csrf_title", text(lang, "csrf")),
            ApiError::Conflict { message, .. } => {
                self.message(StatusCode::CONFLICT, "conflict_title", &message)
            }
            ApiError::Invalid(fields) => {
                let lines: Vec<String> = fields
                    .iter()
                    .map(|(f, m)| format!("{f}: {}", field_message(lang, m)))
                    .collect();
                self.message(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid_title",
                    &lines.join("; "),
                )
            }
            ApiError::Unavailable(detail) => {
                tracing::warn!(error = %detail, "page: backend unavailable");
                self.message(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable_title",
                    text(lang, "unavailable"),
                )
            }
            ApiError::Unauthenticated => self.message(
                StatusCode::UNAUTHORIZED,
                "sign_in",
                text(lang, "signin_intro"),
            ),
            other => {
                tracing::error!(error = ?other, "page failed");
                self.message(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "error_title",
                    text(lang, "internal"),
                )
            }
        }
    }

    /// A `Set-Cookie` value for one of the page cookies (`max_age_secs` 0 clears it).
    pub fn cookie(&self, name: &str, value: &str, max_age_secs: i64, strict: bool) -> String {
        let mut c = format!(
            "{name}={value}; Path=/; Max-Age={max_age_secs}; HttpOnly; SameSite={}",
            if strict { "Strict" } else { "Lax" }
        );
        if self.secure {
            c.push_str("; Secure");
        }
        c
    }
}

/// Field errors as the pages show them: field → message in the visitor's language.
pub fn field_errors(lang: Language, fields: &std::collections::BTreeMap<String, String>) -> Value {
    fields
        .iter()
        .map(|(f, m)| (f.clone(), Value::String(field_message(lang, m))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Sets the security headers of every page and redirect.
pub fn secure_headers(headers: &mut HeaderMap) {
    mcp_door::web::secure_page_headers(headers, HeaderValue::from_static(CSP));
}

/// An HTML page with the security headers.
pub fn html_response(status: StatusCode, html: String) -> Response {
    mcp_door::web::html_page(status, html, HeaderValue::from_static(CSP))
}

/// A 303 to a local `location`, setting `cookies`.
pub fn see_other(location: &str, cookies: &[String]) -> Response {
    mcp_door::web::see_other(
        location,
        cookies.iter().map(String::as_str),
        HeaderValue::from_static(CSP),
    )
}

/// Whether `path` is a path of this site (so a redirect to it cannot leave the site).
pub fn local_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
}

/// A time as the pages show it: `2026-01-01 09:30 UTC`.
pub fn when(ms: Millis) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_compiles() {
        for (name, _) in TEMPLATES {
            assert!(templates().get_template(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn language_from_cookie_then_browser_then_english() {
        let mut h = HeaderMap::new();
        assert_eq!(language_of(&h), Language::En);
        h.insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("pl-PL,pl;q=0.9,en;q=0.8"),
        );
        assert_eq!(language_of(&h), Language::Pl);
        h.insert(header::COOKIE, HeaderValue::from_static("sq_lang=en"));
        assert_eq!(language_of(&h), Language::En);
        h.insert(header::COOKIE, HeaderValue::from_static("sq_lang=de"));
        assert_eq!(language_of(&h), Language::Pl);
    }

    #[test]
    fn local_paths_only() {
        assert!(local_path("/plays/1?offset=10"));
        assert!(!local_path("//evil.example/"));
        assert!(!local_path("https://evil.example/"));
        assert!(!local_path("/\\evil"));
        assert!(!local_path(""));
    }

    #[test]
    fn same_origin_posts() {
        let host = "127.0.0.1:8080";
        let check = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            same_origin(&h, host)
        };
        assert!(check(&[]));
        assert!(check(&[
            ("origin", "null"),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(check(&[
            ("origin", "https://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(check(&[("origin", "http://127.0.0.1:8080")]));
        assert!(check(&[("origin", "https://127.0.0.1:8080")]));
        assert!(!check(&[("origin", "https://evil.example")]));
        assert!(!check(&[("origin", "null")]));
        assert!(!check(&[("sec-fetch-site", "cross-site")]));
        assert!(!check(&[
            ("sec-fetch-site", "same-site"),
            ("origin", "http://127.0.0.1:8080")
        ]));
    }

    #[test]
    fn times_read_as_utc_minutes() {
        assert_eq!(when(1_767_225_600_000), "2026-01-01 00:00 UTC");
    }
}
