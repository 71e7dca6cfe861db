//! What a page's POST brings: its `application/x-www-form-urlencoded` body ([`Form`], the
//! platform's) and
//! whether it comes from the site's own pages ([`same_origin_post`], by the headers alone).
//! Pure functions of the request, so the consent endpoint and a product's pages refuse the
//! same requests; each page checks its own CSRF token.

use http::HeaderMap;

/// A form body's or query string's pairs: the platform's, shared with the products' pages.
pub use mcp_door::web::Form;

/// Whether a form POST comes from one of the issuer's own pages, by the headers browsers set
/// and pages cannot: `Sec-Fetch-Site`, when sent, is `same-origin` or `none`; `Origin`, when
/// sent, is the issuer, or `null` vouched for by `Sec-Fetch-Site: same-origin`. Browsers send
/// `Origin: null` on every POST from a page served with `Referrer-Policy: no-referrer` (the
/// Fetch standard's origin serialization), which every consent and account page is.
pub fn same_origin_post(headers: &HeaderMap, issuer: &str) -> bool {
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{0}"));
    let fetch_site = header("sec-fetch-site");
    let fetch_ok = fetch_site.is_none_or(|s| s == "same-origin" || s == "none");
    let origin_ok = header("origin")
        .is_none_or(|o| o == issuer || (o == "null" && fetch_site == Some("same-origin")));
    origin_ok && fetch_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_pairs() {
        let form = Form::parse(b"scope=a&code=12+3%0A456&scope=b&empty=&x=%3C%26%3E");
        assert_eq!(form.get("code"), Some("12 3\n456"));
        assert_eq!(form.compact("code"), "123456");
        assert_eq!(form.compact("missing"), "");
        assert_eq!(form.all("scope"), ["a", "b"]);
        assert_eq!(form.count("scope"), 2);
        assert_eq!(form.count("missing"), 0);
        assert_eq!(form.get("empty"), Some(""));
        assert_eq!(form.get("x"), Some("<&>"));
        assert_eq!(form.get("missing"), None);
        assert!(Form::parse(b"").all("scope").is_empty());
    }

    #[test]
    fn same_origin_posts_by_origin_and_fetch_site() {
        const ISSUER: &str = "https://auth.example";
        let post = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            same_origin_post(&headers, ISSUER)
        };
        // Accepted: no headers (a non-browser client, CSRF token still required), our origin,
        // and what a browser sends from a no-referrer page of ours.
        assert!(post(&[]));
        assert!(post(&[("origin", ISSUER)]));
        assert!(post(&[
            ("origin", ISSUER),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(post(&[("sec-fetch-site", "none")]));
        assert!(post(&[
            ("origin", "null"),
            ("sec-fetch-site", "same-origin")
        ]));
        // Refused: another origin, or null that nothing vouches for, or another site.
        assert!(!post(&[("origin", "https://evil.example")]));
        assert!(!post(&[("origin", "https://auth.example:8443")]));
        assert!(!post(&[("origin", "null")]));
        assert!(!post(&[("origin", "null"), ("sec-fetch-site", "none")]));
        assert!(!post(&[
            ("origin", "null"),
            ("sec-fetch-site", "same-site")
        ]));
        assert!(!post(&[
            ("origin", "null"),
            ("sec-fetch-site", "cross-site")
        ]));
        assert!(!post(&[
            ("origin", ISSUER),
            ("sec-fetch-site", "cross-site")
        ]));
        assert!(!post(&[("sec-fetch-site", "same-site")]));
    }
}
