//! Redirect URIs: what registration accepts (HTTPS, loopback `http`, private-use schemes; never
//! `javascript:`/`data:`, fragments or userinfo) and how an authorization request's
//! `redirect_uri` matches a registered one (exact string, except loopback on any port,
//! RFC 8252 §7.3).

/// The longest redirect URI accepted.
pub const MAX_LEN: usize = 2000;

/// Schemes never accepted, whatever else the URI looks like.
const FORBIDDEN_SCHEMES: &[&str] = &[
    "javascript",
    "data",
    "vbscript",
    "file",
    "about",
    "blob",
    "filesystem",
    "ws",
    "wss",
    "ftp",
];

/// Why a redirect URI is refused at registration (the `error_description`).
pub fn check_registrable(uri: &str) -> Result<(), String> {
    if uri.is_empty() || uri.len() > MAX_LEN {
        return Err("a redirect URI must be 1 to 2000 characters".into());
    }
    if uri.bytes().any(|b| b <= 0x20 || b == 0x7f) {
        return Err("a redirect URI must not contain spaces or control characters".into());
    }
    if uri.contains('#') {
        return Err("a redirect URI must not contain a fragment".into());
    }
    let parsed =
        url::Url::parse(uri).map_err(|_| "a redirect URI must be an absolute URI".to_owned())?;
    let scheme = parsed.scheme();
    if FORBIDDEN_SCHEMES.contains(&scheme) {
        return Err(format!("the {scheme}: scheme is not allowed"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || authority_has_userinfo(uri) {
        return Err("a redirect URI must not contain userinfo".into());
    }
    match scheme {
        "https" => Ok(()),
        "http" if Loopback::parse(uri).is_some() => Ok(()),
        "http" => Err(
            "http redirect URIs are allowed only on loopback (127.0.0.1, [::1], localhost)".into(),
        ),
        // Private-use schemes of native apps (RFC 8252 §7.1), e.g. `com.example.app:/cb`.
        _ => Ok(()),
    }
}

/// Whether `presented` matches `registered`: the same string, or both loopback `http` URIs
/// with the same host, path and query on any port.
pub fn matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    match (Loopback::parse(registered), Loopback::parse(presented)) {
        (Some(r), Some(p)) => r.host == p.host && r.rest == p.rest,
        _ => false,
    }
}

/// Whether the authority part of an absolute URI (after `//`) contains `@`.
fn authority_has_userinfo(uri: &str) -> bool {
    uri.split_once("://").is_some_and(|(_, rest)| {
        rest.split(['/', '?', '#'])
            .next()
            .is_some_and(|authority| authority.contains('@'))
    })
}

/// A loopback `http` URI taken apart by hand, so nothing is normalized away.
#[derive(Debug, PartialEq, Eq)]
struct Loopback<'a> {
    host: &'a str,
    rest: &'a str,
}

impl<'a> Loopback<'a> {
    fn parse(uri: &'a str) -> Option<Self> {
        let after = uri.strip_prefix("http://")?;
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (authority, rest) = after.split_at(end);
        if rest.contains('#') || authority.contains('@') {
            return None;
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let close = v6.find(']')?;
            let host = &authority[..close + 2];
            (host, &v6[close + 1..])
        } else {
            match authority.split_once(':') {
                Some((host, _)) => (host, &authority[host.len()..]),
                None => (authority, ""),
            }
        };
        let port_ok = port.is_empty()
            || port.strip_prefix(':').is_some_and(|p| {
                !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
            });
        let loopback = matches!(host, "127.0.0.1" | "[::1]" | "localhost");
        (port_ok && loopback).then_some(Self { host, rest })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrable() {
        for ok in [
            "https://app.example/cb",
            "http://127.0.0.1/cb",
            "http://127.0.0.1:8080/cb",
            "http://[::1]:33418/callback",
            "http://localhost:6274/oauth/callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
            "com.example.app:/oauth2redirect",
        ] {
            assert_eq!(check_registrable(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://app.example/cb",
            "http://127.0.0.1.evil.example/cb",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,hi",
            "https://app.example/cb#frag",
            "https://user@app.example/cb",
            "https://user:pw@app.example/cb",
            "/relative",
            "",
            "https://app.example/a b",
        ] {
            assert!(check_registrable(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn matching() {
        let reg = "https://app.example/cb?x=1";
        assert!(matches(reg, reg));
        for other in [
            "https://app.example/cb?x=2",
            "https://app.example/cb/?x=1",
            "https://APP.example/cb?x=1",
            "https://app.example/c%62?x=1",
            "https://app.example/cb?x=1#f",
            "https://u@app.example/cb?x=1",
            "https://app.example/CB?x=1",
        ] {
            assert!(!matches(reg, other), "{other}");
        }
        assert!(matches("http://127.0.0.1/cb", "http://127.0.0.1:53124/cb"));
        assert!(matches("http://127.0.0.1:1/cb", "http://127.0.0.1:2/cb"));
        assert!(matches("http://[::1]:9/cb", "http://[::1]:10/cb"));
        assert!(matches("http://localhost/cb", "http://localhost:7/cb"));
        assert!(!matches("http://127.0.0.1/cb", "http://127.0.0.1:5/other"));
        assert!(!matches("http://127.0.0.1/cb", "http://localhost:5/cb"));
        assert!(!matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1.evil.example:5/cb"
        ));
        assert!(!matches("http://127.0.0.1/cb", "http://127.0.0.1:x/cb"));
        assert!(!matches(
            "http://127.0.0.1/cb",
            "http://evil@127.0.0.1:5/cb"
        ));
    }
}
