//! Reading a request's `Cookie:` headers: the value of one cookie by name. What a value must
//! look like, and setting cookies (`Set-Cookie` attributes), stay with each product.

use http::{HeaderMap, header};

/// The value of the cookie `name` in `headers`: the first `name=value` pair of every `Cookie:`
/// header (pairs separated by `;`, surrounding spaces ignored), trimmed. `None` when no pair
/// has that name, or the first one has an empty value. A later pair of the same name is never
/// read, so a caller's own check of the value sees the one a browser sends first.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&'static str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::COOKIE, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn finds_a_cookie_among_others() {
        let h = headers(&["theme=dark; sid=abc123 ; x=1"]);
        assert_eq!(cookie(&h, "sid"), Some("abc123"));
        assert_eq!(cookie(&h, "theme"), Some("dark"));
        assert_eq!(cookie(&h, "x"), Some("1"));
    }

    #[test]
    fn reads_every_cookie_header() {
        let h = headers(&["theme=dark", "sid=abc"]);
        assert_eq!(cookie(&h, "sid"), Some("abc"));
    }

    #[test]
    fn the_first_pair_of_a_name_wins_even_when_empty() {
        assert_eq!(cookie(&headers(&["sid=one; sid=two"]), "sid"), Some("one"));
        assert_eq!(cookie(&headers(&["sid=; sid=two"]), "sid"), None);
    }

    #[test]
    fn names_match_exactly() {
        let h = headers(&["xsid=1; SID=2; sid2=3; sid =4"]);
        assert_eq!(cookie(&h, "sid"), None);
        assert_eq!(cookie(&headers(&["a=b=c"]), "a"), Some("b=c"));
    }

    #[test]
    fn no_cookie_header_or_a_pair_without_value_is_none() {
        assert_eq!(cookie(&HeaderMap::new(), "sid"), None);
        assert_eq!(cookie(&headers(&["sid"]), "sid"), None);
        assert_eq!(cookie(&headers(&["sid=   "]), "sid"), None);
    }

    #[test]
    fn a_header_that_is_not_text_is_skipped() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_bytes(b"sid=\xff").unwrap(),
        );
        h.append(header::COOKIE, HeaderValue::from_static("sid=ok"));
        assert_eq!(cookie(&h, "sid"), Some("ok"));
    }
}
