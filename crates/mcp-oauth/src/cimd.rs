//! Client ID Metadata Documents: a `client_id` that is an HTTPS URL names a JSON document
//! describing the client. This module owns the SSRF guard (HTTPS only, no private, loopback
//! or link-local addresses, a size and a time limit), the document's checks (its `client_id`
//! equals its URL; redirect URIs as registration accepts them) and a cache. Fetching is
//! behind [`MetadataFetcher`] so tests inject a fake; the real HTTPS fetcher is
//! [`HttpsFetcher`] under the `cimd-fetch` feature.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::redirect;
use async_trait::async_trait;

/// The largest document accepted (the draft's recommendation is 5 kB).
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// How long one fetch may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
const CACHE_OK_MS: i64 = 60 * 60 * 1000;
const CACHE_ERR_MS: i64 = 5 * 60 * 1000;
const CACHE_MAX: usize = 1024;

/// A client described by its metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientMetadata {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
}

/// Why a metadata document could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL is not an acceptable `client_id` (not HTTPS, a private address, ...).
    #[error("client_id URL refused: {0}")]
    Refused(String),
    /// The fetch failed (network, status, timeout, size).
    #[error("metadata fetch failed: {0}")]
    Failed(String),
    /// The document is not a valid client metadata document for this URL.
    #[error("metadata document invalid: {0}")]
    Invalid(String),
}

/// Fetches the bytes at an already-checked HTTPS URL. The real implementation must resolve
/// the host itself and refuse non-public addresses ([`is_public_ip`]), follow no redirects,
/// and stop at [`MAX_DOCUMENT_BYTES`] and [`FETCH_TIMEOUT`].
#[async_trait]
pub trait MetadataFetcher: Send + Sync + 'static {
    async fn fetch(&self, url: &url::Url) -> Result<Vec<u8>, FetchError>;
}

/// Whether `client_id` is shaped like a metadata-document URL (rather than a registered id).
pub fn looks_like_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// The URL checks done before any network traffic: HTTPS, a host name or public IP, no
/// userinfo, no fragment, a path, no dot segments, at most 2000 characters.
pub fn check_client_id_url(client_id: &str) -> Result<url::Url, FetchError> {
    let refuse = |m: &str| Err(FetchError::Refused(m.to_owned()));
    if client_id.len() > redirect::MAX_LEN || client_id.contains('#') {
        return refuse("too long or has a fragment");
    }
    let Ok(url) = url::Url::parse(client_id) else {
        return refuse("not a URL");
    };
    if url.scheme() != "https" {
        return refuse("client_id URLs must be https");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("client_id URLs must not carry userinfo");
    }
    if url.as_str() != client_id {
        return refuse("client_id URL is not in normal form");
    }
    if url.path() == "/" || url.path().split('/').any(|s| s == "." || s == "..") {
        return refuse("client_id URLs need a path without dot segments");
    }
    match url.host() {
        Some(url::Host::Domain(d))
            if d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost") =>
        {
            refuse("loopback host")
        }
        Some(url::Host::Domain(_)) => Ok(url),
        Some(url::Host::Ipv4(ip)) if is_public_ip(IpAddr::V4(ip)) => Ok(url),
        Some(url::Host::Ipv6(ip)) if is_public_ip(IpAddr::V6(ip)) => Ok(url),
        _ => refuse("non-public address"),
    }
}

/// Whether `ip` is a globally routable unicast address (not loopback, private, link-local,
/// shared, documentation, benchmarking, multicast, reserved or unspecified).
///
/// IPv6 must be global unicast (`2000::/3`) outside the special-purpose ranges within it. An
/// address embedding IPv4 is judged by that IPv4 address when the embedding is
/// deterministic (IPv4-mapped `::ffff:0:0/96`, the NAT64 well-known prefix `64:ff9b::/96`);
/// the relay- or operator-dependent transition ranges (6to4 `2002::/16`, Teredo and the rest
/// of `2001::/23`, local-use NAT64 `64:ff9b:1::/48`, SIIT `::ffff:0:0:0/96`, IPv4-compatible
/// `::/96`) are refused whole: where they lead is decided by a relay, not by the address.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || a >= 240
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 192 && b == 88 && c == 99)
                || (a == 198 && (b == 18 || b == 19)))
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let [.., a, b, c, d] = v6.octets();
            let embedded = std::net::Ipv4Addr::new(a, b, c, d);
            // IPv4-mapped ::ffff:a.b.c.d: the IPv4 address itself.
            if s[..5].iter().all(|&x| x == 0) && s[5] == 0xffff {
                return is_public_ip(IpAddr::V4(embedded));
            }
            // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): translated to the embedded
            // IPv4 address by any NAT64 on the path.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0) {
                return is_public_ip(IpAddr::V4(embedded));
            }
            let global_unicast = (s[0] & 0xe000) == 0x2000;
            global_unicast
                // 2001::/23 IETF protocol assignments, Teredo 2001::/32 among them.
                && !(s[0] == 0x2001 && s[1] < 0x0200)
                // 2001:db8::/32 documentation.
                && !(s[0] == 0x2001 && s[1] == 0x0db8)
                // 2002::/16 6to4.
                && s[0] != 0x2002
                // 3fff::/20 documentation (RFC 9637).
                && !(s[0] == 0x3fff && s[1] < 0x1000)
        }
    }
}

/// Checks a fetched document against its URL.
pub fn parse_document(client_id: &str, bytes: &[u8]) -> Result<ClientMetadata, FetchError> {
    let invalid = |m: &str| Err(FetchError::Invalid(m.to_owned()));
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return invalid("document too large");
    }
    let Ok(serde_json::Value::Object(doc)) = serde_json::from_slice::<serde_json::Value>(bytes)
    else {
        return invalid("not a JSON object");
    };
    if doc.get("client_id").and_then(|v| v.as_str()) != Some(client_id) {
        return invalid("the document's client_id is not its URL");
    }
    if doc.contains_key("client_secret") || doc.contains_key("client_secret_expires_at") {
        return invalid("a metadata document must not carry a secret");
    }
    match doc.get("token_endpoint_auth_method") {
        None => {}
        Some(v) if v.as_str() == Some("none") => {}
        Some(_) => return invalid("token_endpoint_auth_method must be none"),
    }
    let strings = |key: &str| -> Option<Vec<String>> {
        doc.get(key)?
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    if let Some(v) = doc.get("grant_types") {
        let ok = strings("grant_types").is_some_and(|g| {
            g.iter()
                .all(|g| g == "authorization_code" || g == "refresh_token")
        });
        if !ok || !v.is_array() {
            return invalid("grant_types may only be authorization_code and refresh_token");
        }
    }
    if doc.get("response_types").is_some()
        && !strings("response_types").is_some_and(|r| r.iter().all(|r| r == "code"))
    {
        return invalid("response_types may only be code");
    }
    let Some(redirect_uris) = strings("redirect_uris").filter(|r| !r.is_empty() && r.len() <= 20)
    else {
        return invalid("redirect_uris must be a non-empty array of strings");
    };
    for uri in &redirect_uris {
        if let Err(why) = redirect::check_registrable(uri) {
            return Err(FetchError::Invalid(why));
        }
    }
    let host = url::Url::parse(client_id)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let client_name = match doc.get("client_name") {
        None => host,
        Some(serde_json::Value::String(n)) if !n.trim().is_empty() && n.chars().count() <= 200 => {
            n.trim().to_owned()
        }
        Some(_) => return invalid("client_name must be 1 to 200 characters"),
    };
    Ok(ClientMetadata {
        client_id: client_id.to_owned(),
        client_name,
        redirect_uris,
    })
}

type CacheEntry = (i64, Result<ClientMetadata, FetchError>);

/// Resolves `client_id` URLs to checked documents, with a per-instance cache (an hour for a
/// good document, five minutes for a failure, so a bad URL is not hammered).
pub(crate) struct Resolver {
    fetcher: Arc<dyn MetadataFetcher>,
    cache: Mutex<HashMap<String, CacheEntry>>,
}

impl Resolver {
    pub(crate) fn new(fetcher: Arc<dyn MetadataFetcher>) -> Self {
        Self {
            fetcher,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The checked document of `client_id` at time `now` (milliseconds).
    pub(crate) async fn resolve(
        &self,
        client_id: &str,
        now: i64,
    ) -> Result<ClientMetadata, FetchError> {
        if let Ok(cache) = self.cache.lock()
            && let Some((until, entry)) = cache.get(client_id)
            && *until > now
        {
            return entry.clone();
        }
        let url = check_client_id_url(client_id)?;
        let result = match tokio::time::timeout(FETCH_TIMEOUT, self.fetcher.fetch(&url)).await {
            Err(_) => Err(FetchError::Failed("timed out".into())),
            Ok(Err(e)) => Err(e),
            Ok(Ok(bytes)) => parse_document(client_id, &bytes),
        };
        if let Err(e) = &result {
            tracing::info!(client_id, error = %e, "client metadata document refused");
        }
        let ttl = if result.is_ok() {
            CACHE_OK_MS
        } else {
            CACHE_ERR_MS
        };
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_MAX {
                cache.retain(|_, (until, _)| *until > now);
                if cache.len() >= CACHE_MAX {
                    cache.clear();
                }
            }
            cache.insert(client_id.to_owned(), (now + ttl, result.clone()));
        }
        result
    }
}

/// The real fetcher: resolves the host, refuses unless every address is public, connects
/// only to those addresses (no DNS rebinding between check and connect), follows no
/// redirects and reads at most [`MAX_DOCUMENT_BYTES`].
#[cfg(feature = "cimd-fetch")]
#[derive(Debug, Default, Clone)]
pub struct HttpsFetcher;

#[cfg(feature = "cimd-fetch")]
#[async_trait]
impl MetadataFetcher for HttpsFetcher {
    async fn fetch(&self, url: &url::Url) -> Result<Vec<u8>, FetchError> {
        let failed = |e: &dyn std::fmt::Display| FetchError::Failed(e.to_string());
        let host = url
            .host_str()
            .ok_or_else(|| FetchError::Refused("no host".into()))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| failed(&e))?
            .collect();
        if addrs.is_empty() || !addrs.iter().all(|a| is_public_ip(a.ip())) {
            return Err(FetchError::Refused(
                "the host resolves to a non-public address".into(),
            ));
        }
        // No proxy, whatever HTTPS_PROXY and friends say: a proxy would resolve the name
        // itself and connect wherever that leads, defeating the check above.
        let client = reqwest::Client::builder()
            .no_proxy()
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .resolve_to_addrs(&host, &addrs)
            .build()
            .map_err(|e| failed(&e))?;
        let mut response = client
            .get(url.as_str())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| failed(&e))?;
        if response.status() != http::StatusCode::OK {
            return Err(FetchError::Failed(format!("status {}", response.status())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(&e))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(FetchError::Failed("document too large".into()));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_guard() {
        assert!(check_client_id_url("https://app.example/oauth/client.json").is_ok());
        for bad in [
            "http://app.example/client.json",
            "https://app.example/",
            "https://app.example",
            "https://u@app.example/c.json",
            "https://app.example/c.json#x",
            "https://127.0.0.1/c.json",
            "https://10.1.2.3/c.json",
            "https://[::1]/c.json",
            "https://169.254.169.254/latest",
            "https://localhost/c.json",
            "https://app.example/a/../c.json",
        ] {
            assert!(check_client_id_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn public_addresses() {
        for ip in [
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::1111",
            "2a00:1450:4001:80b::200e",
            // Embeddings that name a public IPv4 address deterministically.
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(is_public_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    /// One test per refused range: `refused!(test_name, range, address...)`.
    macro_rules! refused {
        ($($name:ident: $range:literal => [$($ip:literal),+];)+) => {
            $(
                #[test]
                fn $name() {
                    for ip in [$($ip),+] {
                        assert!(!is_public_ip(ip.parse().unwrap()), "{}: {ip}", $range);
                    }
                }
            )+
        };
    }

    refused! {
        refuses_v4_this_network_0_8: "IPv4 this network 0/8" => ["0.1.2.3"];
        refuses_v4_unspecified: "IPv4 unspecified" => ["0.0.0.0"];
        refuses_v4_private_10_8: "IPv4 private 10/8" => ["10.0.0.1"];
        refuses_v4_shared_100_64_10: "IPv4 shared 100.64/10" => ["100.64.0.1", "100.127.255.254"];
        refuses_v4_loopback_127_8: "IPv4 loopback 127/8" => ["127.0.0.1"];
        refuses_v4_link_local_169_254_16: "IPv4 link-local 169.254/16" => ["169.254.169.254"];
        refuses_v4_private_172_16_12: "IPv4 private 172.16/12" => ["172.16.0.1", "172.31.255.254"];
        refuses_v4_ietf_assignments_192_0_0_24: "IPv4 IETF assignments 192.0.0/24" => ["192.0.0.8"];
        refuses_v4_documentation_192_0_2_24: "IPv4 documentation 192.0.2/24" => ["192.0.2.1"];
        refuses_v4_6to4_relay_anycast_192_88_99_24: "IPv4 6to4 relay anycast 192.88.99/24" => ["192.88.99.1"];
        refuses_v4_private_192_168_16: "IPv4 private 192.168/16" => ["192.168.1.1"];
        refuses_v4_benchmarking_198_18_15: "IPv4 benchmarking 198.18/15" => ["198.19.0.1"];
        refuses_v4_documentation_198_51_100_24: "IPv4 documentation 198.51.100/24" => ["198.51.100.7"];
        refuses_v4_documentation_203_0_113_24: "IPv4 documentation 203.0.113/24" => ["203.0.113.9"];
        refuses_v4_multicast_224_4: "IPv4 multicast 224/4" => ["239.1.2.3"];
        refuses_v4_reserved_240_4: "IPv4 reserved 240/4" => ["240.0.0.1"];
        refuses_v4_broadcast: "IPv4 broadcast" => ["255.255.255.255"];
        refuses_v6_unspecified: "IPv6 unspecified" => ["::"];
        refuses_v6_loopback: "IPv6 loopback" => ["::1"];
        refuses_v4_compatible_96: "IPv4-compatible ::/96" => ["::10.0.0.1", "::8.8.8.8"];
        refuses_v4_mapped: "IPv4-mapped" => ["::ffff:127.0.0.1", "::ffff:10.1.2.3"];
        refuses_siit_ffff_0_0_0_96: "SIIT ::ffff:0:0:0/96" => ["::ffff:0:808:808"];
        refuses_nat64_64_ff9b_96: "NAT64 64:ff9b::/96" => ["64:ff9b::a00:1", "64:ff9b::7f00:1"];
        refuses_nat64_local_use_64_ff9b_1_48: "NAT64 local-use 64:ff9b:1::/48" => ["64:ff9b:1::808:808"];
        refuses_nat64_64_ff9b_32_outside_the_96: "NAT64 64:ff9b::/32 outside the /96" => ["64:ff9b:0:1::808:808"];
        refuses_discard_only_100_64: "discard-only 100::/64" => ["100::1"];
        refuses_teredo_2001_32: "Teredo 2001::/32" => ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:a00:1::1"];
        refuses_ietf_assignments_2001_23_benchmarking: "IETF assignments 2001::/23 (benchmarking)" => ["2001:2::1"];
        refuses_ietf_assignments_2001_23_orchidv2: "IETF assignments 2001::/23 (ORCHIDv2)" => ["2001:20::1"];
        refuses_documentation_2001_db8_32: "documentation 2001:db8::/32" => ["2001:db8::1"];
        refuses_6to4_2002_16: "6to4 2002::/16" => ["2002:a00:1::1", "2002:808:808::1"];
        refuses_documentation_3fff_20: "documentation 3fff::/20" => ["3fff::1"];
        refuses_srv6_sids_5f00_16: "SRv6 SIDs 5f00::/16" => ["5f00::1"];
        refuses_unique_local_fc00_7: "unique local fc00::/7" => ["fd00::1", "fc00::1"];
        refuses_site_local_fec0_10: "site-local fec0::/10" => ["fec0::1"];
        refuses_link_local_fe80_10: "link-local fe80::/10" => ["fe80::1"];
        refuses_multicast_ff00_8: "multicast ff00::/8" => ["ff02::1"];
    }

    #[test]
    fn document_checks() {
        let id = "https://app.example/client.json";
        let good = format!(
            r#"{{"client_id":"{id}","client_name":"App","redirect_uris":["http://127.0.0.1/cb"]}}"#
        );
        let meta = parse_document(id, good.as_bytes()).unwrap();
        assert_eq!(meta.client_name, "App");
        let other = good.replace("client.json\"", "other.json\"");
        assert!(parse_document(id, other.as_bytes()).is_err());
        let js = good.replace("http://127.0.0.1/cb", "javascript:alert(1)");
        assert!(parse_document(id, js.as_bytes()).is_err());
        let secret = good.replace(
            "\"client_name\"",
            "\"token_endpoint_auth_method\":\"client_secret_basic\",\"client_name\"",
        );
        assert!(parse_document(id, secret.as_bytes()).is_err());
        assert!(parse_document(id, &vec![b' '; MAX_DOCUMENT_BYTES + 1]).is_err());
    }
}
