//! What the product decides: its public origin, its scopes and which of them are offered
//! ticked or never offered unasked, lifetimes, limits and the server secret. Validated once
//! by [`AuthServerConfig::validate`]; everything else reads it.

use std::time::Duration;

use mcp_door::AddressSource;

use crate::error::ConfigError;

/// A server secret (the HMAC key of the six-digit codes and refresh successors). `Debug`
/// never shows it.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// At least 32 bytes, random; keep it stable across restarts and instances.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self(bytes.into())
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The one-time email code.
#[derive(Debug, Clone)]
pub struct EmailCodePolicy {
    /// Number of decimal digits (6).
    pub digits: u32,
    /// Life of a code (15 minutes).
    pub ttl: Duration,
    /// Wrong entries after which the flow is dead (5).
    pub max_attempts: i64,
    /// Codes sent to one address (email) per hour (5).
    pub sends_per_email_per_hour: i64,
    /// Codes requested from one client address per hour (20).
    pub sends_per_address_per_hour: i64,
}

impl Default for EmailCodePolicy {
    fn default() -> Self {
        Self {
            digits: 6,
            ttl: Duration::from_secs(15 * 60),
            max_attempts: 5,
            sends_per_email_per_hour: 5,
            sends_per_address_per_hour: 20,
        }
    }
}

/// Dynamic client registration limits and client life.
#[derive(Debug, Clone)]
pub struct RegistrationPolicy {
    /// Registrations per client address per (clock) hour (20).
    pub per_address_per_hour: i64,
    /// Registrations per (UTC) day of clients that are never used (200): a client's slot is
    /// given back the first time a consent issues it a code, and the purge frees the slots of
    /// the ones it deletes, so the cap holds back throwaway registrations, not real clients.
    pub per_day: i64,
    /// A client no consent has issued a code to is refused this long after registering, and
    /// deleted by the next [`AuthServer::purge`](crate::AuthServer::purge) (1 hour).
    pub unused_client_ttl: Duration,
    /// A client unused this long is gone (365 days).
    pub client_life: Duration,
}

impl Default for RegistrationPolicy {
    fn default() -> Self {
        Self {
            per_address_per_hour: 20,
            per_day: 200,
            unused_client_ttl: Duration::from_secs(3600),
            client_life: Duration::from_secs(365 * 24 * 3600),
        }
    }
}

/// The authorization server's configuration. Build with [`AuthServerConfig::new`], then
/// adjust the public fields.
#[derive(Debug, Clone)]
pub struct AuthServerConfig {
    /// The public origin, e.g. `https://example.com` (no trailing slash); the `issuer`.
    pub issuer: String,
    /// The name people see on the consent page and in the code email.
    pub service_name: String,
    /// Every scope the server defines, in canonical order.
    pub scopes: Vec<String>,
    /// Offered ticked and granted when a client names no scope; advertised by 401 challenges.
    pub default_scopes: Vec<String>,
    /// Never offered unless the client asks, never in a 401 challenge, never widened into.
    pub unasked_scopes: Vec<String>,
    /// The scope that lets `/oauth/userinfo` answer the address (`account:email`).
    pub email_scope: String,
    /// The door the root protected-resource document describes, e.g. `https://example.com/mcp`.
    pub root_resource: String,
    /// Access-token life (3600 s).
    pub access_ttl: Duration,
    /// Refresh-token life from its issue (each rotation issues a new one) (90 days).
    pub refresh_ttl: Duration,
    /// When set, replaying an already-rotated refresh token within this long after its
    /// rotation returns the same successor pair instead of revoking the grant. Off by default.
    pub refresh_grace: Option<Duration>,
    /// Authorization-code life (300 s).
    pub code_ttl: Duration,
    /// Life of a pending authorization (the consent page's flow) (30 minutes).
    pub pending_ttl: Duration,
    /// Consent flows (valid `GET /oauth/authorize` requests, each a stored pending row) one
    /// client address may start per clock hour (60): a person needs a few; a loop filling the
    /// table gets a 429 page instead.
    pub flows_per_address_per_hour: i64,
    pub email_code: EmailCodePolicy,
    pub registration: RegistrationPolicy,
    /// Accept HTTPS `client_id` URLs naming a Client ID Metadata Document.
    pub client_id_metadata_documents: bool,
    /// The browser-session cookie (`__Host-mcp_session`; `mcp_session` on a plain-http issuer).
    pub session_cookie: String,
    /// Browser-session life (30 days).
    pub session_ttl: Duration,
    /// Where the client address comes from.
    pub address_source: AddressSource,
    /// Human descriptions of scopes for the consent page (scope, text); scopes without one
    /// show their name alone.
    pub scope_descriptions: Vec<(String, String)>,
    /// `From:` of the code email.
    pub mail_from: String,
    /// Prefixes of authorization codes, access tokens and refresh tokens.
    pub code_prefix: String,
    pub access_prefix: String,
    pub refresh_prefix: String,
    pub secret: Secret,
}

impl AuthServerConfig {
    /// A configuration with the documented defaults. `default_scopes` starts as every scope
    /// and `unasked_scopes` empty; `root_resource` is `<issuer>/mcp`.
    pub fn new(issuer: impl Into<String>, secret: Secret, scopes: Vec<String>) -> Self {
        let issuer = issuer.into().trim_end_matches('/').to_owned();
        let host = issuer
            .split_once("://")
            .map_or(issuer.as_str(), |(_, rest)| rest)
            .to_owned();
        Self {
            root_resource: format!("{issuer}/mcp"),
            service_name: host.clone(),
            default_scopes: scopes.clone(),
            unasked_scopes: Vec::new(),
            email_scope: "account:email".to_owned(),
            scopes,
            access_ttl: Duration::from_secs(3600),
            refresh_ttl: Duration::from_secs(90 * 24 * 3600),
            refresh_grace: None,
            code_ttl: Duration::from_secs(300),
            pending_ttl: Duration::from_secs(30 * 60),
            flows_per_address_per_hour: 60,
            email_code: EmailCodePolicy::default(),
            registration: RegistrationPolicy::default(),
            client_id_metadata_documents: false,
            // `__Host-` cookies must be Secure, which a plain-http development origin cannot set.
            session_cookie: if issuer.starts_with("https://") {
                "__Host-mcp_session".to_owned()
            } else {
                "mcp_session".to_owned()
            },
            session_ttl: Duration::from_secs(30 * 24 * 3600),
            address_source: AddressSource::Peer,
            scope_descriptions: Vec::new(),
            mail_from: format!("no-reply@{}", host.split(':').next().unwrap_or("localhost")),
            code_prefix: "eac_".to_owned(),
            access_prefix: "eat_".to_owned(),
            refresh_prefix: "ert_".to_owned(),
            secret,
            issuer,
        }
    }

    /// Checks the invariants the server relies on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError(m.to_owned()));
        let origin_ok = url::Url::parse(&self.issuer).is_ok_and(|u| {
            matches!(u.scheme(), "https" | "http")
                && u.host().is_some()
                && u.path() == "/"
                && u.query().is_none()
                && u.fragment().is_none()
                && u.username().is_empty()
        });
        if !origin_ok || self.issuer.ends_with('/') {
            return bad("issuer must be an origin like https://example.com");
        }
        if self.scopes.is_empty() {
            return bad("at least one scope is required");
        }
        let known = |s: &String| self.scopes.contains(s);
        if !self.default_scopes.iter().all(known) || !self.unasked_scopes.iter().all(known) {
            return bad("default and unasked scopes must be among the scopes");
        }
        if self
            .default_scopes
            .iter()
            .any(|s| self.unasked_scopes.contains(s))
        {
            return bad("a scope cannot be both default and unasked");
        }
        if self.default_scopes.is_empty() {
            return bad("at least one default scope is required");
        }
        let token_chars = |s: &str| {
            s.bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
        };
        if !self.scopes.iter().all(|s| !s.is_empty() && token_chars(s)) {
            return bad("scopes are non-empty printable ASCII without quotes or backslashes");
        }
        if !self.root_resource.starts_with(&format!("{}/", self.issuer)) {
            return bad("root_resource must be a URL under the issuer");
        }
        if self.secret.bytes().len() < 32 {
            return bad("the secret must be at least 32 bytes");
        }
        let prefixes = [&self.code_prefix, &self.access_prefix, &self.refresh_prefix];
        if prefixes
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            || self.code_prefix == self.access_prefix
            || self.access_prefix == self.refresh_prefix
            || self.code_prefix == self.refresh_prefix
        {
            return bad("token prefixes must be distinct, non-empty [A-Za-z0-9_]");
        }
        if self.email_code.digits == 0 || self.email_code.digits > 9 {
            return bad("email codes have 1 to 9 digits");
        }
        Ok(())
    }

    pub(crate) fn authorization_endpoint(&self) -> String {
        format!("{}/oauth/authorize", self.issuer)
    }

    /// The path-inserted protected-resource metadata URL of `resource` (RFC 9728 §3.1).
    pub fn resource_metadata_url(&self, resource: &str) -> String {
        let path = resource
            .strip_prefix(&self.issuer)
            .unwrap_or("")
            .trim_end_matches('/');
        format!("{}/.well-known/oauth-protected-resource{path}", self.issuer)
    }

    /// Whether a browser talks to us over HTTPS (cookies get `Secure`).
    pub(crate) fn secure(&self) -> bool {
        self.issuer.starts_with("https://")
    }
}

/// Milliseconds in a duration, saturating.
pub(crate) fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AuthServerConfig {
        let mut c = AuthServerConfig::new(
            "https://auth.example/",
            Secret::new([7u8; 32]),
            vec!["read".into(), "write".into(), "account:email".into()],
        );
        c.default_scopes = vec!["read".into(), "write".into()];
        c.unasked_scopes = vec!["account:email".into()];
        c
    }

    #[test]
    fn defaults_validate() {
        let c = config();
        assert_eq!(c.issuer, "https://auth.example");
        assert_eq!(c.root_resource, "https://auth.example/mcp");
        c.validate().unwrap();
    }

    #[test]
    fn refuses_bad_settings() {
        let mut c = config();
        c.unasked_scopes.push("read".into());
        assert!(c.validate().is_err());
        let mut c = config();
        c.secret = Secret::new([1u8; 8]);
        assert!(c.validate().is_err());
        let mut c = config();
        c.issuer = "https://auth.example/x".into();
        assert!(c.validate().is_err());
        assert_eq!(format!("{:?}", c.secret), "Secret(<redacted>)");
    }

    #[test]
    fn metadata_url_inserts_the_path() {
        let c = config();
        assert_eq!(
            c.resource_metadata_url("https://auth.example/a/abc12345/mcp"),
            "https://auth.example/.well-known/oauth-protected-resource/a/abc12345/mcp"
        );
    }
}
