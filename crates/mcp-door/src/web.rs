//! What every product's server-rendered pages share below their templates: HTML escaping for
//! markup built in code (an SVG chart, the authorization server's pages), a POSTed form's
//! pairs ([`Form`]), the security headers every page and redirect carries, and the two
//! answers that carry them (an HTML page, a 303). Each product keeps its own policy text (CSP),
//! templates and CSRF check.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};

/// The pairs of a form body or query string, in order, repeated names kept.
#[derive(Debug, Default)]
pub struct Form(Vec<(String, String)>);

impl Form {
    /// Parses `application/x-www-form-urlencoded` bytes (a body or a raw query string); bytes
    /// that are not UTF-8 become U+FFFD, so no CSRF token or code they carry matches.
    pub fn parse(body: &[u8]) -> Self {
        Self(url::form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, or empty.
    pub fn text(&self, name: &str) -> String {
        self.get(name).unwrap_or("").to_owned()
    }

    /// Every value of `name`, in order (checkboxes sharing a name).
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// How many times `name` is given.
    pub fn count(&self, name: &str) -> usize {
        self.0.iter().filter(|(k, _)| k == name).count()
    }

    /// The first value of `name` with every whitespace character removed, empty when absent:
    /// a one-time code as typed (`123 456`) or pasted with a line break.
    pub fn compact(&self, name: &str) -> String {
        self.get(name)
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }
}

/// `response` with each of `headers` set to its fixed value (replacing one already there).
pub fn with_headers<const N: usize>(
    mut response: Response,
    headers: [(header::HeaderName, &'static str); N],
) -> Response {
    for (name, value) in headers {
        response
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    response
}

/// An HTML page (`text/html; charset=utf-8`) answered `status`, with the
/// [`secure_page_headers`] of `csp`.
pub fn html_page(status: StatusCode, html: String, csp: HeaderValue) -> Response {
    let mut response = Response::new(Body::from(html));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure_page_headers(response.headers_mut(), csp);
    response
}

/// A 303 to `location` setting `cookies`, with the [`secure_page_headers`] of `csp`. A
/// `location` that cannot be a header value is a 500 without `Location` (a redirect never
/// loses its target silently); a cookie that cannot be one is left out.
pub fn see_other<'a>(
    location: &str,
    cookies: impl IntoIterator<Item = &'a str>,
    csp: HeaderValue,
) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    match HeaderValue::from_str(location) {
        Ok(v) => {
            response.headers_mut().insert(header::LOCATION, v);
        }
        Err(_) => *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR,
    }
    for cookie in cookies {
        if let Ok(v) = HeaderValue::from_str(cookie) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    secure_page_headers(response.headers_mut(), csp);
    response
}

/// Escapes text for HTML content and double-quoted attributes: `&`, `<`, `>`, `"` and `'`.
pub fn escape_html(text: &str) -> String {
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

/// Sets the headers every page and redirect carries: `csp` as the
/// `Content-Security-Policy`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`,
/// `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.
pub fn secure_page_headers(headers: &mut HeaderMap, csp: HeaderValue) {
    headers.insert(header::CONTENT_SECURITY_POLICY, csp);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_characters_and_keeps_the_rest() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a> żółć"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; żółć"
        );
    }

    #[test]
    fn page_headers() {
        let mut h = HeaderMap::new();
        secure_page_headers(&mut h, HeaderValue::from_static("default-src 'none'"));
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], "default-src 'none'");
        assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
        assert_eq!(h[header::CACHE_CONTROL], "no-store");
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }

    #[test]
    fn form_pairs_in_order_with_repeats() {
        let form = Form::parse(b"scope=a&code=12+3%0A456&scope=b&empty=&x=%3C%26%3E&bad=%FF");
        assert_eq!(form.get("code"), Some("12 3\n456"));
        assert_eq!(form.text("code"), "12 3\n456");
        assert_eq!(form.text("missing"), "");
        assert_eq!(form.compact("code"), "123456");
        assert_eq!(form.all("scope"), ["a", "b"]);
        assert_eq!(form.count("scope"), 2);
        assert_eq!(form.get("x"), Some("<&>"));
        assert_eq!(form.get("bad"), Some("\u{FFFD}"));
        assert_eq!(form.get("empty"), Some(""));
        assert!(Form::parse(b"").all("scope").is_empty());
    }

    #[test]
    fn pages_and_redirects_carry_the_headers() {
        let csp = || HeaderValue::from_static("default-src 'none'");
        let page = html_page(StatusCode::FORBIDDEN, "<p>no</p>".into(), csp());
        assert_eq!(page.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            page.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        assert_eq!(page.headers()[header::X_FRAME_OPTIONS], "DENY");
        let to = see_other("/next", ["a=1; Path=/", "b=2; Path=/"], csp());
        assert_eq!(to.status(), StatusCode::SEE_OTHER);
        assert_eq!(to.headers()[header::LOCATION], "/next");
        let cookies: Vec<_> = to.headers().get_all(header::SET_COOKIE).iter().collect();
        assert_eq!(cookies, ["a=1; Path=/", "b=2; Path=/"]);
        assert_eq!(
            to.headers()[header::CONTENT_SECURITY_POLICY],
            "default-src 'none'"
        );
        let set = with_headers(
            Response::new(Body::empty()),
            [
                (header::CACHE_CONTROL, "no-cache"),
                (header::VARY, "origin"),
            ],
        );
        assert_eq!(set.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(set.headers()[header::VARY], "origin");
        let broken = see_other("/a\nb", [], csp());
        assert_eq!(broken.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(broken.headers().get(header::LOCATION).is_none());
    }
}
