//! The security headers of every page and the two answers that carry them: an HTML page and
//! a 303. One Content-Security-Policy for the whole site (nothing but inline styles and
//! same-origin images, no framing, forms post to the site itself), widened only by the one
//! `form-action` source a consent form's redirect needs.

use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode};

/// `form-action` last, so a page can append the source its form's redirect leads to.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                   frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The Content-Security-Policy of a page. `form-action 'self'` always; Chrome and Firefox
/// also apply `form-action` to the redirect that follows a form submission, so a page whose
/// form is answered by a 303 elsewhere (the consent form's, to the client's `redirect_uri`)
/// names that target in `redirect_target` and the policy allows exactly its
/// [`form_action_source`] too.
pub fn content_security_policy(redirect_target: Option<&str>) -> String {
    match redirect_target.and_then(form_action_source) {
        Some(source) => format!("{CSP} {source}"),
        None => CSP.to_owned(),
    }
}

/// The CSP source expression matching redirects to `uri`: its origin for http and https
/// (`http://127.0.0.1:40123`), its scheme for a private-use scheme (`com.example.app:`). CSP
/// host sources cannot name an IPv6 literal, so a redirect to one (`http://[::1]:port`,
/// loopback) is allowed by its scheme. `None` for a relative path (`'self'` covers it) and
/// for anything that is not safe to put in the header.
pub fn form_action_source(uri: &str) -> Option<String> {
    let url = url::Url::parse(uri).ok()?;
    let scheme = url.scheme();
    if !scheme
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    match scheme {
        "http" | "https" => match url.host()? {
            url::Host::Ipv6(_) => Some(format!("{scheme}:")),
            url::Host::Domain(_) | url::Host::Ipv4(_) => {
                let origin = url.origin().ascii_serialization();
                let plain = origin
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b":/.-".contains(&b));
                plain.then_some(origin)
            }
        },
        _ => Some(format!("{scheme}:")),
    }
}

/// Sets the security headers every page and redirect of the site carries: the
/// [`content_security_policy`] for `redirect_target`, `Referrer-Policy: no-referrer`,
/// `Cache-Control: no-store`, `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.
pub fn secure(headers: &mut HeaderMap, redirect_target: Option<&str>) {
    mcp_door::web::secure_page_headers(headers, policy_value(redirect_target));
}

/// [`content_security_policy`] as a header value (the fixed policy if it cannot be one).
fn policy_value(redirect_target: Option<&str>) -> HeaderValue {
    HeaderValue::from_str(&content_security_policy(redirect_target))
        .unwrap_or_else(|_| HeaderValue::from_static(CSP))
}

/// An HTML page (`text/html; charset=utf-8`) with the security headers; `redirect_target` as
/// in [`content_security_policy`].
pub fn html_response(status: StatusCode, html: String, redirect_target: Option<&str>) -> Response {
    mcp_door::web::html_page(status, html, policy_value(redirect_target))
}

/// `location` as a `Location` value: only ASCII. An absolute URI is written as the URL
/// standard serializes it (an internationalized host in punycode, other non-ASCII
/// percent-encoded as UTF-8); anything else (a relative reference) has each non-ASCII byte
/// and space percent-encoded. Raw UTF-8 in a header is obs-text that clients decode
/// differently, so a registered non-ASCII redirect URI would reach them garbled. A location
/// with an ASCII control character is returned as it is, so [`see_other`] refuses it.
pub fn location_value(location: &str) -> String {
    let plain = |b: u8| b.is_ascii_graphic();
    if location.bytes().all(plain) || location.bytes().any(|b| b.is_ascii_control()) {
        return location.to_owned();
    }
    if let Ok(url) = url::Url::parse(location) {
        return url.into();
    }
    let mut out = String::with_capacity(location.len() * 3);
    for b in location.bytes() {
        if plain(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A 303 to `location`, optionally setting a cookie, with the security headers;
/// `redirect_target` as in [`content_security_policy`]. A `location` that cannot be a header
/// value is a 500 (without `Location`): a redirect must never lose its target silently.
pub fn see_other(
    location: &str,
    set_cookie: Option<&str>,
    redirect_target: Option<&str>,
) -> Response {
    mcp_door::web::see_other(
        &location_value(location),
        set_cookie,
        policy_value(redirect_target),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header;

    #[test]
    fn locations_are_ascii() {
        for (given, written) in [
            (
                "https://client.example/cb?x=1",
                "https://client.example/cb?x=1",
            ),
            (
                "https://bücher.example/rückruf?state=ä",
                "https://xn--bcher-kva.example/r%C3%BCckruf?state=%C3%A4",
            ),
            ("com.example.app:/cb/é", "com.example.app:/cb/%C3%A9"),
            (
                "http://127.0.0.1:40123/callback",
                "http://127.0.0.1:40123/callback",
            ),
            ("/account?done=é", "/account?done=%C3%A9"),
        ] {
            assert_eq!(location_value(given), written, "{given}");
        }
        let response = see_other("https://client.example/ünïcode?code=x", None, None);
        assert_eq!(
            response.headers()[header::LOCATION],
            "https://client.example/%C3%BCn%C3%AFcode?code=x"
        );
    }

    #[test]
    fn form_action_sources() {
        for (uri, source) in [
            (
                "https://client.example/callback",
                Some("https://client.example"),
            ),
            (
                "https://client.example:8443/cb?x=1",
                Some("https://client.example:8443"),
            ),
            (
                "http://127.0.0.1:40123/callback",
                Some("http://127.0.0.1:40123"),
            ),
            ("http://localhost:5173/cb", Some("http://localhost:5173")),
            ("http://[::1]:40123/callback", Some("http:")),
            (
                "https://bücher.example/cb",
                Some("https://xn--bcher-kva.example"),
            ),
            ("com.example.app:/cb", Some("com.example.app:")),
            ("com.example.app:/cb;x", Some("com.example.app:")),
            ("/account?done=saved", None),
            ("not a url", None),
        ] {
            assert_eq!(form_action_source(uri).as_deref(), source, "{uri}");
        }
    }

    #[test]
    fn the_policy_with_and_without_a_redirect_target() {
        let base = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                    frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
        assert_eq!(content_security_policy(None), base);
        assert_eq!(content_security_policy(Some("/account")), base);
        assert_eq!(content_security_policy(Some("not a url")), base);
        assert_eq!(
            content_security_policy(Some("https://client.example/cb?code=1")),
            format!("{base} https://client.example")
        );
        assert_eq!(
            content_security_policy(Some("com.example.app:/cb")),
            format!("{base} com.example.app:")
        );
    }

    fn header<'r>(response: &'r Response, name: &str) -> &'r str {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name}"))
    }

    /// The header set every answer carries, pages and redirects alike.
    fn assert_secure(response: &Response, csp: &str) {
        assert_eq!(header(response, "content-security-policy"), csp);
        assert_eq!(header(response, "referrer-policy"), "no-referrer");
        assert_eq!(header(response, "cache-control"), "no-store");
        assert_eq!(header(response, "x-frame-options"), "DENY");
        assert_eq!(header(response, "x-content-type-options"), "nosniff");
    }

    #[test]
    fn pages_carry_the_security_headers() {
        let page = html_response(StatusCode::FORBIDDEN, "<p>x</p>".to_owned(), None);
        assert_eq!(page.status(), StatusCode::FORBIDDEN);
        assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
        assert_secure(&page, CSP);
        assert_eq!(page.headers().len(), 6);

        let consent = html_response(
            StatusCode::OK,
            String::new(),
            Some("http://127.0.0.1:40123/cb"),
        );
        assert_secure(&consent, &format!("{CSP} http://127.0.0.1:40123"));
    }

    #[test]
    fn redirects_carry_the_security_headers() {
        let local = see_other("/account", Some("sid=1; HttpOnly"), None);
        assert_eq!(local.status(), StatusCode::SEE_OTHER);
        assert_eq!(header(&local, "location"), "/account");
        assert_eq!(header(&local, "set-cookie"), "sid=1; HttpOnly");
        assert_secure(&local, CSP);

        let target = "https://client.example/cb?code=x";
        let away = see_other(target, None, Some(target));
        assert_eq!(header(&away, "location"), target);
        assert!(away.headers().get("set-cookie").is_none());
        assert_secure(&away, &format!("{CSP} https://client.example"));

        let broken = see_other("/a\nb", None, None);
        assert_eq!(broken.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(broken.headers().get("location").is_none());
        assert_secure(&broken, CSP);
    }
}
