//! The client address of a request, for per-address limits and refusal counts: the TCP
//! peer, or the first item of a header a trusted proxy sets (with the port it may append
//! dropped), and the key a per-address limit counts it under (an IPv6 client by its /64).

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;

/// Where the client's address (for per-address limits and refusal counts) comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressSource {
    /// The TCP peer (`axum::extract::ConnectInfo<SocketAddr>`); "unknown" when absent.
    Peer,
    /// The first comma-separated item of this request header, set by a trusted proxy
    /// (e.g. `cloudfront-viewer-address`); falls back to the peer.
    Header(String),
}

impl AddressSource {
    /// The source a `--client-address-header` flag names: that header, or the peer.
    pub fn from_header(name: Option<String>) -> Self {
        name.map_or(Self::Peer, Self::Header)
    }
}

/// A `--client-address-header` value: a valid header name, lower-cased (a clap parser).
pub fn parse_header_name(value: &str) -> Result<String, String> {
    http::HeaderName::from_bytes(value.trim().as_bytes())
        .map(|h| h.as_str().to_owned())
        .map_err(|_| format!("{value:?} is not an HTTP header name"))
}

/// The client address of a request: the first comma-separated item of the trusted proxy's
/// header when [`AddressSource::Header`] names one and it is present, else the peer's IP,
/// else `unknown`. A port the proxy appends (CloudFront's `198.51.100.10:46532`,
/// `2001:db8::1:46532` or `[2001:db8::1]:46532`) is dropped, so per-address limits and counts
/// key on the address alone; an item that is no IP address is kept as sent (at most 64
/// characters).
pub fn client_address(source: &AddressSource, headers: &HeaderMap, peer: Option<IpAddr>) -> String {
    if let AddressSource::Header(name) = source
        && let Some(value) = headers.get(name.as_str()).and_then(|v| v.to_str().ok())
        && let Some(first) = value
            .split(',')
            .next()
            .map(str::trim)
            .filter(|v| !v.is_empty())
    {
        return match header_ip(first) {
            Some(ip) => ip.to_string(),
            None => first.chars().take(64).collect(),
        };
    }
    peer.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
}

/// The IP address of a proxy header item: a bare address, `ip:port`, `[ipv6]:port`, or
/// CloudFront's unbracketed `ipv6:port`.
fn header_ip(item: &str) -> Option<IpAddr> {
    if let Ok(ip) = item.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(socket) = item.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    let (address, port) = item.rsplit_once(':')?;
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    address.parse::<IpAddr>().ok()
}

/// The key a per-address limit or count files `address` (a [`client_address`] value)
/// under: an IPv4 address as it is, an IPv6 address by its /64 (`2001:db8:1:2::/64`), since
/// one subscriber is routinely handed a whole /64 and would otherwise count as 2^64 clients.
/// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) keys as its IPv4 address; a value that
/// is no IP address (a proxy's opaque item, `unknown`) is its own key.
pub fn limit_key(address: &str) -> String {
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                format!("{}/64", std::net::Ipv6Addr::from(prefix))
            }
        },
        Err(_) => address.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_header(value: &str) -> String {
        let mut headers = HeaderMap::new();
        headers.insert("cloudfront-viewer-address", value.parse().unwrap());
        client_address(
            &AddressSource::Header("cloudfront-viewer-address".into()),
            &headers,
            Some(IpAddr::from([10, 0, 0, 9])),
        )
    }

    #[test]
    fn limits_key_ipv6_on_the_slash_64() {
        assert_eq!(limit_key("198.51.100.10"), "198.51.100.10");
        assert_eq!(limit_key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(
            limit_key("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            "2001:db8:1:2::/64"
        );
        assert_ne!(limit_key("2001:db8:1:3::1"), limit_key("2001:db8:1:2::1"));
        assert_eq!(limit_key("::1"), "::/64");
        assert_eq!(limit_key("::ffff:192.0.2.1"), "192.0.2.1");
        assert_eq!(limit_key("unknown"), "unknown");
        assert_eq!(limit_key("edge-7"), "edge-7");
    }

    #[test]
    fn header_flags_are_header_names() {
        assert_eq!(
            parse_header_name(" CloudFront-Viewer-Address").as_deref(),
            Ok("cloudfront-viewer-address")
        );
        assert!(parse_header_name("not a header").is_err());
        assert!(parse_header_name("").is_err());
        assert_eq!(AddressSource::from_header(None), AddressSource::Peer);
        assert_eq!(
            AddressSource::from_header(Some("x-a".into())),
            AddressSource::Header("x-a".into())
        );
    }

    #[test]
    fn proxy_header_items_lose_their_port() {
        assert_eq!(from_header("198.51.100.10:46532"), "198.51.100.10");
        assert_eq!(from_header("198.51.100.10"), "198.51.100.10");
        assert_eq!(from_header("2001:db8::7:46532"), "2001:db8::7");
        assert_eq!(from_header("[2001:db8::7]:46532"), "2001:db8::7");
        assert_eq!(from_header("2001:db8::7"), "2001:db8::7");
        assert_eq!(from_header(" 203.0.113.5 , 10.0.0.1"), "203.0.113.5");
        assert_eq!(from_header("edge-7"), "edge-7");
        assert_eq!(from_header(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn the_peer_answers_without_the_header_or_without_the_setting() {
        let mut headers = HeaderMap::new();
        let peer = Some(IpAddr::from([10, 0, 0, 9]));
        assert_eq!(
            client_address(&AddressSource::Header("x-a".into()), &headers, peer),
            "10.0.0.9"
        );
        headers.insert("x-a", "198.51.100.1".parse().unwrap());
        assert_eq!(
            client_address(&AddressSource::Peer, &headers, peer),
            "10.0.0.9"
        );
        assert_eq!(
            client_address(&AddressSource::Peer, &headers, None),
            "unknown"
        );
    }
}
