//! What every product's server-rendered pages share below their templates: HTML escaping for
//! markup built in code (an SVG chart, the authorization server's pages) and the security
//! headers every page and redirect carries. Each product keeps its own policy text (CSP).

use http::{HeaderMap, HeaderValue, header};

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
}
